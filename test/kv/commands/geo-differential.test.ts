// GEO commands against redis-server: generated populations (uniform points, tight clusters with
// duplicate positions, points on and near the poles' Mercator limits and the date line) and
// generated queries of every command and option must get identical replies from both servers —
// exactly, including the order of unsorted searches (Redis's is deterministic: cell by cell in a
// fixed order, by score within a cell) and the order of ties at equal distances (which depends on
// the sorting algorithm). Stored results are compared with ZRANGE WITHSCORES, which shows
// STOREDIST's distances to 17 digits, so the distance arithmetic is checked to the last bit.
import { describe, test } from "bun:test";
import fc from "fast-check";
import { show } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 1000 : 150;

/** redis-server and svc kv with one client each, up from before the first test until after the last. */
const servers = redisAndKvWithClients();

// ---- generators -----------------------------------------------------------------------------------

/** Members are drawn from a small pool, so queries name existing members and GEOADD updates some. */
const membersMax = 150;
const member = fc.integer({ min: 0, max: membersMax }).map((n) => `m${n}`);
/** Decimal text with up to `digits` places, as clients send coordinates. */
const decimal = (min: number, max: number, digits = 6) => fc.double({ min, max, noNaN: true }).map((v) => String(Number(v.toFixed(digits))));

const latitudeLimit = "85.05112878";
const centres: readonly [number, number][] = [
  [13.36, 38.11],
  [-73.98, 40.75],
  [179.9, 10],
  [-179.95, -33],
  [0, 0],
  [2.35, 84.9],
  [-120, -84.99],
  [151.2, -33.87],
];

/** A longitude, latitude pair as text; some invalid (out of range) pairs on purpose. */
const position: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(decimal(-180, 180), decimal(-85.05, 85.05)) },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom(...centres), fc.double({ min: -0.05, max: 0.05, noNaN: true }), fc.double({ min: -0.05, max: 0.05, noNaN: true }), fc.boolean())
      .map(([[lon, lat], dx, dy, exact]) => {
        // Exact centres give many members at one position: ties at equal distances.
        if (exact) return [String(lon), String(lat)] as [string, string];
        return [
          String(Math.max(-180, Math.min(180, Number((lon + dx).toFixed(5))))),
          String(Math.max(-85.05, Math.min(85.05, Number((lat + dy).toFixed(5))))),
        ] as [string, string];
      }),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom("180", "-180", "179.99999", "-179.99999", "0", "-0"), decimal(-85.05, 85.05, 3)) },
  {
    weight: 2,
    arbitrary: fc.tuple(decimal(-180, 180, 3), fc.constantFrom(latitudeLimit, `-${latitudeLimit}`, "85.0511287", "-85.05", "85", "84.99999", "66.5", "-80.5")),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom("180.0000001", "-181", "inf", "abc", "1e400"), fc.constantFrom("0", "85.05112879", "-90", "nan")) },
);

const unit = fc.constantFrom("m", "km", "ft", "mi", "KM", "Mi");
/** Radii from nothing to half the planet, in any unit. */
const radius = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom("0", "1", "0.5", "20000000", "1e9", "inf") },
  { weight: 6, arbitrary: fc.double({ min: 0, max: 7, noNaN: true }).map((e) => String(Number((10 ** e).toPrecision(4)))) },
);
const geoAdd = fc
  .tuple(fc.subarray(["NX", "XX", "CH"]), fc.array(fc.tuple(position, member), { minLength: 1, maxLength: 30 }))
  .map(([options, items]) => ["GEOADD", "g", ...options, ...items.flatMap(([[lon, lat], m]) => [lon, lat, m])]);

/** GEOADD commands that fill `g` with valid positions only (the bulk of a population). */
const population = fc.array(fc.tuple(position, member), { minLength: 20, maxLength: 300, size: "max" }).map((items) => {
  const valid = items.filter(([[lon, lat]]) => Math.abs(Number(lon)) <= 180 && Math.abs(Number(lat)) <= Number(latitudeLimit));
  const args = valid.flatMap(([[lon, lat], m]) => [lon, lat, m]);
  return args.length === 0 ? [] : [["GEOADD", "g", ...args]];
});

const from = fc.oneof(
  member.map((m) => ["FROMMEMBER", m]),
  position.map(([lon, lat]) => ["FROMLONLAT", lon, lat]),
);
const by = fc.oneof(
  fc.tuple(radius, unit).map(([r, u]) => ["BYRADIUS", r, u]),
  fc.tuple(radius, radius, unit).map(([w, h, u]) => ["BYBOX", w, h, u]),
);
const withs = fc.subarray(["WITHCOORD", "WITHDIST", "WITHHASH"]);
const order = fc.constantFrom<string[]>([], [], ["ASC"], ["DESC"]);
const count = fc.option(
  fc.tuple(fc.constantFrom("1", "2", "3", "5", "10", "50", "1000"), fc.boolean()).map(([n, any]) => (any ? ["COUNT", n, "ANY"] : ["COUNT", n])),
  { nil: [] as string[] },
);
const shuffled = (parts: fc.Arbitrary<string[]>[]) =>
  fc
    .tuple(...parts)
    .chain((p) => fc.shuffledSubarray(p, { minLength: p.length, maxLength: p.length }))
    .map((p) => p.flat());

const georadiusStore = fc.option(fc.tuple(fc.constantFrom("STORE", "STOREDIST"), fc.constant("dst")), { nil: [] as string[] });

const query: fc.Arbitrary<string[][]> = fc.oneof(
  { weight: 3, arbitrary: fc.array(member, { minLength: 1, maxLength: 5 }).map((ms) => [["GEOPOS", "g", ...ms]]) },
  { weight: 2, arbitrary: fc.array(member, { minLength: 1, maxLength: 5 }).map((ms) => [["GEOHASH", "g", ...ms]]) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(member, member, fc.option(unit, { nil: undefined }))
      .map(([a, b, u]) => [u === undefined ? ["GEODIST", "g", a, b] : ["GEODIST", "g", a, b, u]]),
  },
  { weight: 12, arbitrary: shuffled([from, by, withs, order, count]).map((args) => [["GEOSEARCH", "g", ...args]]) },
  {
    weight: 4,
    arbitrary: fc.tuple(shuffled([from, by, order, count]), fc.boolean()).map(([args, dist]) => [
      ["GEOSEARCHSTORE", "dst", "g", ...args, ...(dist ? ["STOREDIST"] : [])],
      ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
    ]),
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom("GEORADIUS", "GEORADIUS_RO"), position, radius, unit, shuffled([withs, order, count]))
      .map(([name, [lon, lat], r, u, opts]) => [[name, "g", lon, lat, r, u, ...opts]]),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"), member, radius, unit, shuffled([withs, order, count]))
      .map(([name, m, r, u, opts]) => [[name, "g", m, r, u, ...opts]]),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom("GEORADIUS", "GEORADIUSBYMEMBER"), position, member, radius, unit, shuffled([order, count, georadiusStore]))
      .map(([name, [lon, lat], m, r, u, opts]) => [
        name === "GEORADIUS" ? [name, "g", lon, lat, r, u, ...opts] : [name, "g", m, r, u, ...opts],
        ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
      ]),
  },
  { weight: 2, arbitrary: geoAdd.map((c) => [c]) },
  {
    weight: 1,
    arbitrary: fc.constant<string[][]>([
      ["ZRANGE", "g", "0", "-1", "WITHSCORES"],
      ["OBJECT", "ENCODING", "g"],
      ["TYPE", "g"],
    ]),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(member, fc.constantFrom("0", "1", "-1", "1.5", "4503599627370496", "9007199254740992", "1e20", "inf"))
      .map(([m, s]) => [["ZADD", "g", s, m]]),
  },
);

// ---- the property ---------------------------------------------------------------------------------

async function runBoth(commands: string[][], ignore: (argv: string[]) => boolean = () => false): Promise<void> {
  const all = [["FLUSHALL"], ...commands];
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(all), servers.kvClient.pipeline(all)]);
  for (let i = 0; i < all.length; i++) {
    if (ignore(all[i]!) || show(expected[i]!) === show(actual[i]!)) continue;
    const argv = all[i]!.length > 16 ? [...all[i]!.slice(0, 16), `... (${all[i]!.length} args)`] : all[i]!;
    throw new Error(
      `reply ${i} differs for ${JSON.stringify(argv)}\n  redis: ${show(expected[i]!).slice(0, 3000)}\n  svc:   ${show(actual[i]!).slice(0, 3000)}`,
    );
  }
}

const queries = fc.array(query, { minLength: 20, maxLength: 80, size: "max" }).map((q) => q.flat());

describe("GEO commands against redis-server", () => {
  test("generated populations and queries get identical replies (RESP2)", async () => {
    await fc.assert(
      fc.asyncProperty(population, queries, async (fill, commands) => runBoth([...fill, ...commands])),
      { numRuns: runs, endOnFailure: true },
    );
  }, 120_000);

  test("RESP3 replies are identical too (coordinates are RESP3 doubles with 17 decimals)", async () => {
    const isHello = (argv: string[]) => argv[0] === "HELLO";
    await fc.assert(
      fc.asyncProperty(population, queries, async (fill, commands) => runBoth([["HELLO", "3"], ...fill, ...commands, ["HELLO", "2"]], isHello)),
      { numRuns: Math.ceil(runs / 3), endOnFailure: true },
    );
  }, 120_000);

  test("a search on a large set (skiplist encoding, many members per cell) matches, sorted and unsorted", async () => {
    const big: string[] = ["GEOADD", "g"];
    for (let i = 0; i < 3000; i++) {
      const [lon, lat] = centres[i % centres.length]!;
      // Deterministic spread with many exact duplicates (i % 7 == 0 shares its centre's position).
      const dx = i % 7 === 0 ? 0 : (((i * 7919) % 1000) - 500) / 5000;
      const dy = i % 7 === 0 ? 0 : (((i * 104729) % 1000) - 500) / 5000;
      big.push(String(Math.max(-180, Math.min(180, lon + dx))), String(Math.max(-85.05, Math.min(85.05, lat + dy))), `p${i}`);
    }
    const searches: string[][] = [];
    for (const [lon, lat] of centres) {
      for (const r of ["5", "50", "500"]) {
        searches.push(["GEOSEARCH", "g", "FROMLONLAT", String(lon), String(lat), "BYRADIUS", r, "km", "WITHDIST"]);
        searches.push(["GEOSEARCH", "g", "FROMLONLAT", String(lon), String(lat), "BYBOX", r, r, "km", "ASC", "WITHHASH"]);
        searches.push(["GEOSEARCH", "g", "FROMLONLAT", String(lon), String(lat), "BYRADIUS", r, "km", "COUNT", "17", "DESC"]);
        searches.push(["GEOSEARCH", "g", "FROMLONLAT", String(lon), String(lat), "BYRADIUS", r, "km", "COUNT", "60"]);
        searches.push(["GEOSEARCH", "g", "FROMLONLAT", String(lon), String(lat), "BYRADIUS", r, "km", "COUNT", "5", "ANY", "ASC"]);
      }
    }
    await runBoth([big, ...searches]);
  }, 60_000);
});
