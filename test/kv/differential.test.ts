// Differential tests: the same generated command sequences go to Debian's redis-server and to a
// real `svc kv` process, and every reply must be identical — byte for byte in value and type,
// order-insensitive only where Redis itself is unordered, shape-only where Redis answers at
// random. A failure prints the shrunk sequence with both servers' replies.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import * as families from "./support/commands.ts";
import type { Compare, Generated } from "./support/commands.ts";
import { type RespValue, show } from "./support/resp-client.ts";
import { redisAndKvWithClients } from "./support/side-by-side.ts";

/** Runs per family: enough to cover each command's options and errors several times over. */
const runsPerFamily = Number(process.env.SVC_DIFF_RUNS ?? 150);
/** TTL and PTTL are read at slightly different moments on the two servers. */
const clockToleranceMs = 2000;

/** redis-server and svc kv with one client each, up from before the first test until after the last. */
const servers = redisAndKvWithClients();
/** Pauses the test for `ms`, letting the servers' timers run. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Long enough for an active expiry cycle (every 100 ms on both) to have run more than once. */
const expiryCyclesMs = 500;

// A key that expired stays until a command meets it, on both sides: otherwise whether a cycle
// ran between two commands of a sequence (DBSIZE after SET ... EXAT 1000) decides the reply.
beforeAll(async () => {
  for (const client of [servers.redisClient, servers.kvClient]) expect(await client.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")).toEqual({ s: "OK" });
});

const sortItems = (items: RespValue[]) => [...items].sort((a, b) => show(a).localeCompare(show(b)));

const stringEncodings = new Set(["int", "embstr", "raw"]);
/** OBJECT REFCOUNT of Redis's shared integers 0..9999 (INT_MAX). */
const sharedRefcount = 2147483647n;

function normalize(value: RespValue, compare: Compare): RespValue {
  // A RESP3 set is unordered by definition, whatever the command.
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
  if (isObject && "set" in value) return { set: sortItems(value.set) };
  if (compare === "unordered" && isObject && "map" in value) {
    const pairs = [];
    for (let i = 0; i < value.map.length; i += 2) pairs.push([value.map[i]!, value.map[i + 1]!]);
    return { map: sortItems(pairs).flat() };
  }
  if (compare === "encoding" && typeof value === "string" && stringEncodings.has(value)) return "int|embstr|raw";
  if (compare === "encoding" && value === sharedRefcount) return 1n;
  // Redis counts passing references too (inside EXEC, the commands it will log hold a new value:
  // 2); svc has none to count and answers 1 for any value it does not share.
  if (compare === "encoding" && typeof value === "bigint" && value > 1n) return 1n;
  if (!Array.isArray(value)) return value;
  if (compare === "unordered") return sortItems(value);
  if (compare === "scan" && value.length === 2 && Array.isArray(value[1])) return [value[0]!, normalize(value[1], "unordered")];
  return value;
}

function kind(v: RespValue): string {
  if (v === null) return "null";
  if (typeof v === "string") return "bulk";
  if (typeof v === "bigint") return "integer";
  if (Array.isArray(v)) return `array(${v.length})`;
  if ("s" in v) return "status";
  if ("e" in v) return `error ${v.e}`;
  if ("set" in v) return `set(${v.set.length})`;
  if ("map" in v) return `map(${v.map.length})`;
  return Object.keys(v)[0]!;
}

function same(a: RespValue, b: RespValue, compare: Compare): boolean {
  if (compare === "shape") return kind(a) === kind(b);
  if (compare === "clock" && typeof a === "bigint" && typeof b === "bigint") {
    if (a < 0n || b < 0n) return a === b;
    const diff = Number(a > b ? a - b : b - a);
    // Seconds-resolution replies (TTL, EXPIRETIME) are small numbers; allow one unit there.
    return diff <= (a < 1_000_000n ? 2 : clockToleranceMs);
  }
  return show(normalize(a, compare)) === show(normalize(b, compare));
}

const prelude: Generated[] = [
  { argv: ["RESET"], compare: "exact" },
  { argv: ["FLUSHALL"], compare: "exact" },
];
/** Switches the connection to RESP3; the reply holds the connection id, so compare its shape. */
const resp3: Generated = { argv: ["HELLO", "3"], compare: "shape" };

const isStatus = (v: RespValue, status: string) => v !== null && typeof v === "object" && !Array.isArray(v) && "s" in v && v.s === status;

async function runBoth(commands: Generated[], protocol: 2 | 3 = 2): Promise<void> {
  const all = [...prelude, ...(protocol === 3 ? [resp3] : []), ...commands];
  const argvs = all.map((g) => g.argv);
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(argvs), servers.kvClient.pipeline(argvs)]);
  // The compares of the commands queued since MULTI (as Redis answered QUEUED), for EXEC's reply.
  let queued: Compare[] | null = null;
  for (let i = 0; i < all.length; i++) {
    const name = all[i]!.argv[0]!.toUpperCase();
    const [reply, got] = [expected[i]!, actual[i]!];
    // EXEC's replies are each compared as their own command's would be (KEYS inside MULTI is unordered).
    const matches =
      name === "EXEC" && queued !== null && Array.isArray(reply) && Array.isArray(got) && reply.length === queued.length
        ? got.length === reply.length && queued.every((compare, j) => same(reply[j]!, got[j]!, compare))
        : same(reply, got, all[i]!.compare);
    if (name === "MULTI" && queued === null && isStatus(reply, "OK")) queued = [];
    else if (queued !== null && isStatus(reply, "QUEUED")) queued.push(all[i]!.compare);
    else if (name === "EXEC" || name === "DISCARD" || name === "RESET") queued = null;
    if (matches) continue;
    const transcript = all
      .slice(0, i + 1)
      .map(
        (g, j) =>
          `${j === i ? ">>" : "  "} ${g.argv.map((a) => JSON.stringify(a)).join(" ")}\n     redis: ${show(expected[j]!)}\n     svc:   ${show(actual[j]!)}`,
      )
      .join("\n");
    throw new Error(`reply ${i} differs (${all[i]!.compare}):\n${transcript}`);
  }
}

function differential(name: string, commandFamilies: fc.Arbitrary<Generated>[], blocks: fc.Arbitrary<Generated[]>[] = [], protocol: 2 | 3 = 2) {
  test(`${name}: generated sequences get identical replies from svc kv and redis-server`, async () => {
    await fc.assert(
      fc.asyncProperty(families.sequence(commandFamilies, blocks), (commands) => runBoth(commands, protocol)),
      {
        numRuns: runsPerFamily,
        endOnFailure: false,
      },
    );
  }, 120_000);
}

/** Every command family at once, transactions included, for the mixed runs. */
const everyFamily = [
  ...families.keyCommands,
  ...families.stringCommands,
  ...families.listCommands,
  ...families.hashCommands,
  ...families.setCommands,
  ...families.zsetCommands,
  ...families.transactionCommands,
];
const everyBlockingFamily = [families.blockingListCommands, families.blockingZsetCommands];

describe("differential against redis-server", () => {
  // First: a failed property can leave a client mid-MULTI or in RESP3.
  test("the servers under test are the real ones", async () => {
    const { redisClient, kvClient } = servers;
    const info = await redisClient.call("INFO", "server");
    expect(typeof info === "string" && info.includes("redis_version:7.")).toBe(true);
    expect(await kvClient.call("PING")).toEqual({ s: "PONG" });
  });
  test("DEBUG SET-ACTIVE-EXPIRE 0 keeps an expired key until it is met, 1 lets the cycle delete it; bad DEBUG calls are refused alike", async () => {
    await runBoth([
      { argv: ["SET", "gone", "v", "PX", "1"], compare: "exact" },
      { argv: ["DEBUG", "SET-ACTIVE-EXPIRE"], compare: "exact" },
      { argv: ["DEBUG", "SLEEP"], compare: "exact" },
      { argv: ["DEBUG", "sleep", "0", "1"], compare: "exact" },
      { argv: ["DEBUG", "NOSUCH"], compare: "exact" },
    ]);
    await pause(expiryCyclesMs);
    // Still counted, not yet deleted: the cycle is off.
    for (const client of [servers.redisClient, servers.kvClient]) {
      expect(await client.call("DBSIZE")).toBe(1n);
      expect(await client.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")).toEqual({ s: "OK" });
    }
    await pause(expiryCyclesMs);
    for (const client of [servers.redisClient, servers.kvClient]) {
      expect(await client.call("DBSIZE")).toBe(0n);
      expect(await client.call("DEBUG", "SET-ACTIVE-EXPIRE", "no")).toEqual({ s: "OK" }); // atoi("no") is 0: off again
    }
  });
  test("GETEX with an EXAT or PXAT already past deletes the key, as SET with one does not", async () => {
    const sequence = (argv: string[]) => [
      { argv: ["SET", "k", "v"], compare: "exact" as const },
      { argv, compare: "exact" as const },
      { argv: ["DBSIZE"], compare: "exact" as const },
      { argv: ["GET", "k"], compare: "exact" as const },
    ];
    for (const at of [
      ["EXAT", "1000"],
      ["PXAT", "1"],
    ])
      await runBoth(sequence(["GETEX", "k", ...at]));
    await runBoth(sequence(["SET", "k", "w", "EXAT", "1000"]));
    // Relative times must be positive: the key and its value stay.
    await runBoth(sequence(["GETEX", "k", "PX", "0"]));
  });
  test("SCAN expires the past-due keys its MATCH lets through, not the ones it passes over, then filters by TYPE", async () => {
    const steps = (scan: string[]) => [
      { argv: ["SET", "k0", "a", "EXAT", "1000"], compare: "exact" as const },
      { argv: ["SET", "k2", "b", "EXAT", "1000"], compare: "exact" as const },
      { argv: ["SET", "k3", "c"], compare: "exact" as const },
      { argv: ["SCAN", "0", ...scan, "COUNT", "1000"], compare: "scan" as const },
      { argv: ["DBSIZE"], compare: "exact" as const },
    ];
    // Passed over by the pattern, k0 is still counted: 3, then 2 once k2 was met.
    await runBoth(steps(["MATCH", "k[2-3]"]));
    await runBoth(steps(["MATCH", "k[2-3]", "TYPE", "list"]));
    await runBoth(steps(["TYPE", "string"]));
  });
  test("a -0 score is answered as -0 in RESP2 and RESP3 alike", async () => {
    const steps = [
      { argv: ["ZADD", "z", "1.5", "a", "-0", "a", "1.5", "b"], compare: "exact" as const },
      // 0 weighted by -2: -0, which only ZUNION's reply shows (a stored set keeps 0).
      { argv: ["ZUNION", "2", "none", "z", "WEIGHTS", "1.5", "-2", "WITHSCORES"], compare: "exact" as const },
      { argv: ["ZINTER", "1", "z", "WEIGHTS", "-1", "WITHSCORES"], compare: "exact" as const },
      { argv: ["ZSCORE", "z", "a"], compare: "exact" as const },
    ];
    await runBoth(steps, 2);
    await runBoth(steps, 3);
  });
  test("INCRBY and DECRBY at the edges of a step added as a plain number (15 chars, and 16) and of int64", async () => {
    const exact = (...argv: string[]) => ({ argv, compare: "exact" as const });
    await runBoth([
      exact("DECRBY", "a", "0"),
      exact("SET", "b", "999999999999999"),
      exact("INCRBY", "b", "999999999999999"),
      exact("INCRBY", "b", "-999999999999999"),
      exact("DECRBY", "b", "-1000000000000000"),
      exact("DECRBY", "b", "1000000000000000"),
      exact("SET", "c", "9223372036854775800"),
      exact("INCRBY", "c", "7"),
      exact("INCRBY", "c", "1"),
      exact("DECRBY", "d", "-9223372036854775808"),
      exact("DECRBY", "d", "9223372036854775807"),
      exact("DECR", "d"),
      exact("DECR", "d"),
      exact("INCRBY", "e", "-0"),
      exact("INCRBY", "e", "0000000000000001"),
      exact("SET", "f", "-5"),
      exact("DECRBY", "f", "-5"),
      exact("INCR", "f"),
      exact("GET", "f"),
    ]);
  });
  differential("keys and strings", [...families.keyCommands, ...families.stringCommands]);
  differential("lists", [...families.listCommands, ...families.keyCommands.slice(0, 3)], [families.blockingListCommands]);
  differential("hashes", [...families.hashCommands, ...families.keyCommands.slice(0, 3)]);
  differential("sets", [...families.setCommands, ...families.keyCommands.slice(0, 3)]);
  differential("sorted sets", [...families.zsetCommands, ...families.keyCommands.slice(0, 3), families.setCommands[0]!], [families.blockingZsetCommands]);
  differential("everything, with transactions", everyFamily, everyBlockingFamily);
  differential("everything over RESP3", everyFamily, everyBlockingFamily, 3);
  // Last: every error reply above went to both servers, so each counted the same by code.
  test("the error replies of every run above are counted alike by code (INFO errorstats, total_error_replies)", async () => {
    const errorLines = async (client: typeof servers.kvClient) => {
      // Back to RESP2 (the last run may have left RESP3), where INFO is a plain bulk string.
      await client.call("RESET");
      const stats = (await client.call("INFO", "stats")) as string;
      return [(await client.call("INFO", "errorstats")) as string, /total_error_replies:\d+/.exec(stats)![0]];
    };
    const [redis, kv] = [await errorLines(servers.redisClient), await errorLines(servers.kvClient)];
    expect(kv).toEqual(redis);
    expect(kv[0]).toContain("errorstat_WRONGTYPE:count=");
  });
});
