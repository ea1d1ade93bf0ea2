// Argument parsing of the GEO commands against redis-server: arbitrary argument lists — option
// words in any case and order, missing and repeated values, numbers Redis accepts or refuses
// (hex, inf, overflow, NaN, spaces), missing, wrong-type and existing keys, bytes after a NUL —
// must get the same reply from both servers, error text included, and leave the same keys.
import { describe, test } from "bun:test";
import fc from "fast-check";
import { show } from "../test/kv/support/resp-client.ts";
import { redisAndKvWithClients } from "../test/kv/support/side-by-side.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 1500 : 300;

const servers = redisAndKvWithClients();

const commandNames = [
  "GEOADD",
  "GEOPOS",
  "GEOHASH",
  "GEODIST",
  "GEORADIUS",
  "GEORADIUS_RO",
  "GEORADIUSBYMEMBER",
  "GEORADIUSBYMEMBER_RO",
  "GEOSEARCH",
  "GEOSEARCHSTORE",
];
const words = [
  "WITHDIST",
  "WITHHASH",
  "WITHCOORD",
  "ANY",
  "ASC",
  "DESC",
  "COUNT",
  "STORE",
  "STOREDIST",
  "FROMMEMBER",
  "FROMLONLAT",
  "BYRADIUS",
  "BYBOX",
  "NX",
  "XX",
  "CH",
  "GT",
  "INCR",
  "m",
  "km",
  "ft",
  "mi",
  "cm",
];
const numbers = [
  "0",
  "1",
  "2",
  "-1",
  "1.5",
  "10",
  "100",
  "5000",
  "abc",
  "",
  "inf",
  "-inf",
  "+inf",
  "nan",
  "1e400",
  "1e-400",
  "180",
  "-180",
  "180.0000001",
  "85.05112878",
  "85.05112879",
  "-85.05112878",
  "90",
  "9223372036854775807",
  "9223372036854775808",
  "-0",
  " 1",
  "1 ",
  "0x10",
  "1e3",
  "00",
  "+5",
];
const members = ["a", "b", "c", "d", "nope"];
const keys = ["g", "nokey", "s", "dst"];

/** Random case, as clients may send option words. */
const anyCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch.toLowerCase())).join(""));

const token = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...words).chain(anyCase) },
  { weight: 6, arbitrary: fc.constantFrom(...numbers) },
  { weight: 3, arbitrary: fc.constantFrom(...members) },
  { weight: 2, arbitrary: fc.constantFrom(...keys) },
  { weight: 1, arbitrary: fc.constantFrom("withdist\0x", "km\0", "COUNT\0", "m\0zz") },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

/** A command: a name, usually a key, then arbitrary tokens; sometimes a well-formed prefix first. */
const command = fc
  .tuple(
    fc.constantFrom(...commandNames).chain(anyCase),
    fc.constantFrom(...keys),
    fc.constantFrom([], ["FROMLONLAT", "1", "2"], ["FROMMEMBER", "a"], ["1", "2", "a"], ["1", "2", "100", "km"]),
    fc.array(token, { maxLength: 10 }),
  )
  .map(([name, key, prefix, rest]) => {
    // GEOSEARCHSTORE takes a destination before its source key.
    const keyArgs = name.toUpperCase() === "GEOSEARCHSTORE" ? ["dst", key] : [key];
    return [name, ...keyArgs, ...prefix, ...rest];
  });

const setup = [
  ["FLUSHALL"],
  ["GEOADD", "g", "1", "2", "a", "1.001", "2.001", "b", "-179.99", "85", "c", "179.99", "-85", "d"],
  ["SET", "s", "x"],
  ["GEOADD", "dst", "0", "0", "old"],
];
const after = [
  ["TYPE", "dst"],
  ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
  ["ZRANGE", "g", "0", "-1", "WITHSCORES"],
];

describe("GEO argument parsing against redis-server", () => {
  test("arbitrary argument lists get the same reply and leave the same keys", async () => {
    await fc.assert(
      fc.asyncProperty(command, async (argv) => {
        const all = [...setup, argv, ...after];
        const [expected, actual] = await Promise.all([servers.redisClient.pipeline(all), servers.kvClient.pipeline(all)]);
        for (let i = 0; i < all.length; i++) {
          if (show(expected[i]!) === show(actual[i]!)) continue;
          throw new Error(
            `reply ${i} differs for ${JSON.stringify(all[i])} after ${JSON.stringify(argv)}\n  redis: ${show(expected[i]!)}\n  svc:   ${show(actual[i]!)}`,
          );
        }
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
