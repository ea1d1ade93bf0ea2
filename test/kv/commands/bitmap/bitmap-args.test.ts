// Argument parsing of the bitmap commands, fuzzed: arbitrary argument lists — keywords in any
// case and place, integers at and past every limit, field types, "#" offsets, bytes — sent to
// each command must get the same reply from svc kv as from redis-server 7.0 (the same error,
// checked in the same order), and leave the keys with the same bytes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { show } from "../../support/resp-client.ts";
import { redisAndKvWithClients } from "../../support/side-by-side.ts";

const servers = redisAndKvWithClients();

const runsPerCommand = Number(process.env.SVC_BITMAP_ARG_RUNS ?? 400);

const word = fc.constantFrom(
  "GET",
  "get",
  "SET",
  "set",
  "INCRBY",
  "incrby",
  "OVERFLOW",
  "overflow",
  "WRAP",
  "SAT",
  "FAIL",
  "fail",
  "sat",
  "BIT",
  "BYTE",
  "bit",
  "byte",
  "AND",
  "OR",
  "XOR",
  "NOT",
  "and",
  "not",
  "i8",
  "u8",
  "i64",
  "u63",
  "u64",
  "i1",
  "I8",
  "i0",
);
/**
 * Integers: small ones, and limits that are refused or cost nothing to allocate. Nothing between
 * 2^20 and 2^32 - 2: a write there would grow a string to hundreds of MiB on every run.
 */
const integer = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: -70, max: 70 }).map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "4294967296",
      "9223372036854775807",
      "-9223372036854775808",
      "9223372036854775808",
      "18446744073709551616",
      "-1",
      "0",
      "1",
      "01",
      "-0",
      "+1",
      "1.0",
      " 1",
      "1e3",
      "0x10",
      "#1",
      "#0",
      "#",
      "#-1",
      "#288230376151711744",
      "#144115188075855872",
    ),
  },
);
const bytes = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 5 });
const token = fc.oneof({ weight: 4, arbitrary: word }, { weight: 5, arbitrary: integer }, { weight: 1, arbitrary: bytes });
const key = fc.constantFrom("b0", "b1", "l", "missing");

/** The command's arguments after its name; BITOP's first is the operation, the rest keys mostly. */
const argsFor = (command: string): fc.Arbitrary<string[]> =>
  command === "BITOP"
    ? fc
        .tuple(fc.oneof(word, bytes), fc.array(fc.oneof({ weight: 4, arbitrary: key }, { weight: 1, arbitrary: token }), { maxLength: 4 }))
        .map(([op, rest]) => [op, ...rest])
    : fc.tuple(fc.oneof({ weight: 9, arbitrary: key }, { weight: 1, arbitrary: bytes }), fc.array(token, { maxLength: 8 })).map(([k, rest]) => [k, ...rest]);

const prelude = [["FLUSHALL"], ["SET", "b0", "\x00\xff\x0f\xf0abc"], ["SETBIT", "b1", "37", "1"], ["RPUSH", "l", "x"]];
const epilogue = [
  ["GET", "b0"],
  ["GET", "b1"],
  ["GET", "missing"],
  ["TYPE", "missing"],
];

async function runBoth(calls: string[][]): Promise<void> {
  const all = [...prelude, ...calls, ...epilogue];
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(all), servers.kvClient.pipeline(all)]);
  for (let i = 0; i < all.length; i++) {
    if (show(expected[i]!) === show(actual[i]!)) continue;
    throw new Error(`${all[i]!.map((a) => JSON.stringify(a)).join(" ")}\n  redis: ${show(expected[i]!)}\n  svc:   ${show(actual[i]!)}`);
  }
}

describe("bitmap argument parsing against redis-server", () => {
  for (const command of ["SETBIT", "GETBIT", "BITCOUNT", "BITPOS", "BITOP", "BITFIELD", "BITFIELD_RO"]) {
    test(`${command} with arbitrary arguments answers as Redis does`, async () => {
      const calls = fc.array(
        argsFor(command).map((args) => [command, ...args]),
        { minLength: 1, maxLength: 8 },
      );
      await fc.assert(fc.asyncProperty(calls, runBoth), { numRuns: runsPerCommand });
    }, 30_000);
  }
});

/**
 * A script that runs `calls` and returns how much each moved the server's count of changes
 * (INFO's rdb_changes_since_last_save, what SAVE-point rules and WATCH-free callers read).
 */
const changesScript = (calls: string[]) =>
  "local function changes() return tonumber(string.match(redis.call('info', 'persistence'), 'rdb_changes_since_last_save:(%d+)')) end " +
  "local moved = {} " +
  calls.map((call) => `local before = changes() ${call} moved[#moved + 1] = changes() - before `).join("") +
  "return moved";

describe("bitmap writes count changes as Redis does", () => {
  test("SETBIT and BITFIELD count one change a write that changed bits or made or grew the string; none for no change or a refused write", async () => {
    const calls = [
      "redis.call('del', 'foo', 'foo2', 'foo3')",
      // A new key, whose bits were already so: one change each.
      "redis.call('setbit', 'foo', 0, 0)",
      "redis.call('bitfield', 'foo2', 'set', 'i5', 0, 0)",
      // The same again: nothing.
      "redis.call('setbit', 'foo', 0, 0)",
      "redis.call('bitfield', 'foo2', 'set', 'i5', 0, 0)",
      // A change, then none.
      "redis.call('setbit', 'foo', 0, 1)",
      "redis.call('setbit', 'foo', 0, 1)",
      "redis.call('bitfield', 'foo2', 'set', 'i5', 0, 1, 'set', 'i5', 0, 1, 'get', 'u4', 0)",
      // INCRBY always changes; FAIL's overflow refuses the write.
      "redis.call('bitfield', 'foo3', 'incrby', 'i5', 0, 1)",
      "redis.call('bitfield', 'foo3', 'overflow', 'fail', 'incrby', 'i5', 0, 100)",
      "redis.call('bitfield', 'foo3', 'overflow', 'fail', 'incrby', 'i5', 0, 100, 'overflow', 'wrap', 'incrby', 'i5', 0, 1)",
      // Growing the string is a change, even writing zeros.
      "redis.call('setbit', 'foo', 90, 0)",
      "redis.call('bitfield', 'foo2', 'set', 'i5', 90, 0, 'set', 'u8', 0, 0)",
      "redis.call('bitfield_ro', 'foo2', 'get', 'i5', 0)",
    ];
    const [redis, kv] = await Promise.all([servers.redisClient, servers.kvClient].map((c) => c.call("EVAL", changesScript(calls), "0")));
    expect(show(kv!)).toBe(show(redis!));
  });
});
