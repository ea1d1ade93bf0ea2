// Bitmap commands against redis-server 7.0: generated sequences of SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP, BITFIELD and BITFIELD_RO over a few keys (plain strings, bitmaps grown in place,
// a list for WRONGTYPE) must get identical replies from both servers, and every key must end
// with identical bytes. Offsets at and past 2^32 bits are generated only where they do not
// allocate; one test writes the last bit of a 512 MiB bitmap on purpose.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type RespValue, show } from "../../support/resp-client.ts";
import { redisAndKvWithClients } from "../../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** Runs per property; each run is one pipelined sequence of up to ~40 commands. */
const runs = Number(process.env.SVC_BITMAP_RUNS ?? 400);

const bitKeys = ["b0", "b1", "b2"];
const key = fc.constantFrom(...bitKeys, "b0", "l");
const lit = (s: string) => fc.constant(s);
const tuple = (...parts: fc.Arbitrary<string | string[]>[]) => fc.tuple(...parts).map((p) => p.flat());
const byte = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
/** Values biased towards all-zero and all-one bytes, which BITPOS skips over. */
const value = fc.oneof(
  fc.string({ unit: byte, maxLength: 12 }),
  fc.string({ unit: fc.constantFrom("\x00", "\xff", "\x01", "\x80", "\x7f"), maxLength: 40 }),
  fc.constantFrom("", "abc", "\xff\xff\xff", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"),
);

/** Bit offsets that never grow a string by more than a few bytes, or are refused. */
const writeOffset = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 100 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("-1", "4294967296", "18446744073709551616", "abc", "", "01", "+3", "#3", "1.0") },
);
/** For reads any offset is cheap: the last bit of a 512 MiB string is only looked at. */
const readOffset = fc.oneof({ weight: 6, arbitrary: writeOffset }, { weight: 1, arbitrary: fc.constantFrom("4294967295", "4294967294", "4294967296") });

const index = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -30, max: 30 }).map(String) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("9223372036854775807", "-9223372036854775808", "-9223372036854775807", "abc", "", "1.5", "4294967295", "-4294967296"),
  },
);
const unit = fc.constantFrom("BIT", "BYTE", "bit", "byte", "Bit", "bits", "");

const types = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom("i", "u", "I", "U"), fc.integer({ min: 1, max: 64 })).map(([s, n]) => `${s}${n}`) },
  { weight: 1, arbitrary: fc.constantFrom("u64", "i65", "i0", "u0", "x8", "i", "", "i08", "i-1", "u63", "i64", "i8\x00x", "i+8") },
);
const fieldOffset = (offsets: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 4, arbitrary: offsets }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 12 }).map((n) => `#${n}`) });
const fieldValue = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -300, max: 300 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "9223372036854775807",
      "-9223372036854775808",
      "9223372036854775806",
      "-9223372036854775807",
      "4611686018427387903",
      "4611686018427387904",
      "-4611686018427387905",
      "-4611686018427387904",
      "2147483647",
      "2147483648",
      "-2147483649",
      "x",
      "1.5",
    ),
  },
);
const fieldOp = fc.oneof(
  { weight: 3, arbitrary: tuple(fc.constantFrom("GET", "get"), types, fieldOffset(readOffset)) },
  { weight: 3, arbitrary: tuple(fc.constantFrom("SET", "INCRBY", "incrby"), types, fieldOffset(writeOffset), fieldValue) },
  { weight: 2, arbitrary: tuple(lit("OVERFLOW"), fc.constantFrom("WRAP", "SAT", "FAIL", "sat", "fail", "nope")) },
  { weight: 1, arbitrary: fc.constantFrom(["GET", "u8"], ["SET", "i8", "0"], ["OVERFLOW"], ["nope"]) },
);
const fieldOps = fc.array(fieldOp, { maxLength: 4 }).map((ops) => ops.flat());

/** BITCOUNT's and BITPOS's optional range: none, an incomplete one, a full one, one argument too many. */
const range = fc.oneof(fc.constant<string[]>([]), tuple(index), tuple(index, index), tuple(index, index, unit), tuple(index, index, unit, index));

const bitCommand: fc.Arbitrary<string[]> = fc.oneof(
  {
    weight: 4,
    arbitrary: tuple(
      lit("SETBIT"),
      key,
      writeOffset,
      fc.oneof({ weight: 6, arbitrary: fc.constantFrom("0", "1") }, { weight: 1, arbitrary: fc.constantFrom("2", "-1", "x", "") }),
    ),
  },
  { weight: 3, arbitrary: tuple(lit("GETBIT"), key, readOffset) },
  { weight: 3, arbitrary: tuple(lit("BITCOUNT"), key, range) },
  { weight: 4, arbitrary: tuple(lit("BITPOS"), key, fc.constantFrom("0", "1", "0", "1", "2", "-1", "x"), range) },
  {
    weight: 3,
    arbitrary: tuple(
      lit("BITOP"),
      fc.constantFrom("AND", "OR", "XOR", "NOT", "and", "not", "nand"),
      key,
      fc.array(fc.constantFrom(...bitKeys, "l", "missing"), { minLength: 1, maxLength: 3 }),
    ),
  },
  { weight: 4, arbitrary: tuple(lit("BITFIELD"), key, fieldOps) },
  { weight: 2, arbitrary: tuple(lit("BITFIELD_RO"), key, fieldOps) },
  // Plain strings, strings of other origins, TTLs and deletion, around the bit commands.
  { weight: 3, arbitrary: tuple(lit("SET"), fc.constantFrom(...bitKeys), value) },
  { weight: 1, arbitrary: tuple(lit("APPEND"), fc.constantFrom(...bitKeys), value) },
  { weight: 1, arbitrary: tuple(lit("SETRANGE"), fc.constantFrom(...bitKeys), fc.integer({ min: 0, max: 20 }).map(String), value) },
  { weight: 1, arbitrary: tuple(fc.constantFrom("GET", "STRLEN", "DEL", "TYPE", "INCR"), key) },
  { weight: 1, arbitrary: tuple(lit("EXPIRE"), fc.constantFrom(...bitKeys), lit("1000")) },
  { weight: 1, arbitrary: tuple(lit("TTL"), fc.constantFrom(...bitKeys)) },
);

/**
 * WATCH, a bit command, then a transaction: EXEC is nil exactly when the command changed the key.
 * Not a BITFIELD under OVERFLOW FAIL: when all its writes are refused, Redis creates or grows the
 * string without telling WATCH, and svc does tell it (docs/kv.md).
 */
const watchedCommand = bitCommand.filter((c) => !(c[0] === "BITFIELD" && c.some((a) => a.toLowerCase() === "fail")));
const watched: fc.Arbitrary<string[][]> = fc
  .tuple(fc.constantFrom(...bitKeys), watchedCommand)
  .map(([k, command]) => [["WATCH", k], command, ["MULTI"], ["PING"], ["EXEC"]]);

const sequence = fc
  .array(fc.oneof({ weight: 10, arbitrary: bitCommand.map((c) => [c]) }, { weight: 1, arbitrary: watched }), { minLength: 1, maxLength: 30 })
  .map((parts) => parts.flat());

const prelude = [["RESET"], ["FLUSHALL"], ["RPUSH", "l", "x"]];
const epilogue = [...bitKeys.map((k) => ["GET", k]), ...bitKeys.map((k) => ["TYPE", k])];

/** TTL is read at slightly different moments: compare it as "same sign, within a second". */
function same(argv: readonly string[], a: RespValue, b: RespValue): boolean {
  if (argv[0] === "TTL" && typeof a === "bigint" && typeof b === "bigint" && a > 0n && b > 0n) return a - b <= 1n && b - a <= 1n;
  return show(a) === show(b);
}

async function runBoth(commands: string[][], hello3 = false): Promise<void> {
  const all = [...prelude, ...(hello3 ? [["HELLO", "3"]] : []), ...commands, ...epilogue];
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(all), servers.kvClient.pipeline(all)]);
  for (let i = 0; i < all.length; i++) {
    // HELLO's reply holds the connection id and server details.
    if (all[i]![0] === "HELLO" || same(all[i]!, expected[i]!, actual[i]!)) continue;
    const transcript = all
      .slice(0, i + 1)
      .map(
        (argv, j) =>
          `${j === i ? ">>" : "  "} ${argv.map((a) => JSON.stringify(a)).join(" ")}\n     redis: ${show(expected[j]!)}\n     svc:   ${show(actual[j]!)}`,
      )
      .join("\n");
    throw new Error(`reply ${i} differs:\n${transcript}`);
  }
}

describe("bitmap commands against redis-server", () => {
  test("generated sequences get identical replies and leave identical bytes (RESP2)", async () => {
    await fc.assert(
      fc.asyncProperty(sequence, (commands) => runBoth(commands)),
      { numRuns: runs, endOnFailure: false },
    );
  }, 60_000);

  test("generated sequences get identical replies in RESP3, where a refused BITFIELD write is a null", async () => {
    await fc.assert(
      fc.asyncProperty(sequence, (commands) => runBoth(commands, true)),
      { numRuns: Math.ceil(runs / 3), endOnFailure: false },
    );
  }, 60_000);

  test("BITFIELD at the limits of i64 and u63 under each overflow policy", async () => {
    const commands: string[][] = [];
    for (const policy of ["WRAP", "SAT", "FAIL"]) {
      for (const type of ["i64", "u63", "i63", "u62", "i8", "u8", "i1", "u1", "i2", "i32", "u32"]) {
        for (const v of ["9223372036854775807", "-9223372036854775808", "4611686018427387904", "-4611686018427387905", "-1", "1", "255", "-129"]) {
          commands.push([
            "BITFIELD",
            "b0",
            "OVERFLOW",
            policy,
            "SET",
            type,
            "3",
            v,
            "GET",
            type,
            "3",
            "INCRBY",
            type,
            "3",
            "1",
            "INCRBY",
            type,
            "3",
            "-1",
            "INCRBY",
            type,
            "3",
            v,
          ]);
        }
      }
    }
    await runBoth(commands);
  });

  test("SETBIT at bit 2^32-1 grows a 512 MiB string and the other commands read its end", async () => {
    await runBoth([
      ["SETBIT", "b0", "4294967295", "1"],
      ["STRLEN", "b0"],
      ["GETBIT", "b0", "4294967295"],
      ["BITCOUNT", "b0"],
      ["BITCOUNT", "b0", "-1", "-1"],
      ["BITCOUNT", "b0", "4294967290", "4294967295", "BIT"],
      ["BITPOS", "b0", "1"],
      ["BITPOS", "b0", "0", "-1"],
      ["BITPOS", "b0", "1", "536870000"],
      ["BITFIELD", "b0", "GET", "u8", "#536870911", "GET", "i64", "4294967288", "SET", "u8", "#536870911", "3"],
      ["SETBIT", "b0", "4294967296", "1"],
      ["BITFIELD", "b0", "SET", "u8", "#536870912", "1"],
      ["BITOP", "NOT", "b1", "missing"],
      ["GETRANGE", "b0", "-2", "-1"],
      ["DEL", "b0"],
    ]);
  }, 30_000);

  test("the servers under test are the real ones", async () => {
    const info = await servers.redisClient.call("INFO", "server");
    expect(typeof info === "string" && info.includes("redis_version:7.")).toBe(true);
    expect(await servers.kvClient.call("BITCOUNT", "nokey")).toBe(0n);
  });
});
