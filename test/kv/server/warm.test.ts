// Warming a pipelined batch (src/kv/server/warm.ts) only reads: whatever the batch holds — commands
// with no arguments, keys that are missing, strings, lists, small and large sets, hashes and
// sorted sets,
// arguments that are not members — the data and every reply stay as they were.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { warmKeysMax } from "../../../src/kv/types/key-table.ts";
import { batchKeys, warmBatch } from "../../../src/kv/server/warm.ts";
import { harness, type Harness } from "../harness.ts";

/** Keys of every kind, large collections past the 128 members a small one holds. */
function filled(): Harness {
  const h = harness(1);
  h.run("SET", "str", "v");
  h.run("SET", "long", "x".repeat(100));
  h.run("RPUSH", "list", "a", "b");
  h.run("SADD", "small-set", "m1", "m2");
  h.run("HSET", "small-hash", "f1", "1");
  h.run("ZADD", "small-zset", "1", "z1");
  for (let i = 0; i < 300; i++) {
    h.run("SADD", "big-set", `m${i}`);
    h.run("HSET", "big-hash", `f${i}`, String(i));
    h.run("ZADD", "big-zset", String(i % 7), `z${i}`);
  }
  return h;
}

const word = fc.oneof(
  fc.constantFrom("str", "long", "list", "small-set", "small-hash", "small-zset", "big-set", "big-hash", "big-zset", "missing"),
  fc.integer({ min: 0, max: 400 }).map((i) => `m${i}`),
  fc.integer({ min: 0, max: 400 }).map((i) => `z${i}`),
  fc.integer({ min: 0, max: 400 }).map((i) => `f${i}`),
  fc.string({ maxLength: 3 }),
);
/** A command: a real name (one key, several, none, movable) or any word, then any words. */
const command = fc
  .tuple(
    fc.oneof(fc.constantFrom("GET", "mset", "MGET", "DEL", "SADD", "HSET", "ZADD", "ZSCORE", "ZUNIONSTORE", "PING"), word),
    fc.array(word, { maxLength: 6 }),
  )
  .map(([name, args]) => [name, ...args]);
const batch = fc.array(command, { maxLength: 300 });

/** What a client can see of the data. */
const contents = (h: Harness) => [
  h.run("DBSIZE"),
  h.run("GET", "str"),
  h.run("GET", "long"),
  h.run("LRANGE", "list", 0, -1),
  (h.run("SMEMBERS", "small-set") as string[]).sort(),
  (h.run("SMEMBERS", "big-set") as string[]).sort(),
  h.run("HGETALL", "small-hash"),
  (h.run("HGETALL", "big-hash") as string[]).join(","),
  h.run("ZRANGE", "small-zset", 0, -1, "WITHSCORES"),
  (h.run("ZRANGE", "big-zset", 0, -1, "WITHSCORES") as string[]).join(","),
  h.run("OBJECT", "ENCODING", "big-set"),
  h.run("OBJECT", "ENCODING", "big-hash"),
  h.run("OBJECT", "ENCODING", "big-zset"),
];

test("warming any batch changes nothing a client can see", () => {
  const h = filled();
  const before = contents(h);
  fc.assert(
    fc.property(batch, (commands) => {
      warmBatch(h.engine.dbs[0]!, commands);
      expect(contents(h)).toEqual(before);
    }),
    { numRuns: 100 },
  );
});

describe("the keys a batch warms", () => {
  const keysOf = (commands: string[][]) => {
    const out: string[] = [];
    return out.slice(0, batchKeys(commands, out));
  };

  test("are where each command declares them, in order", () => {
    expect(
      keysOf([
        ["MSET", "k1", "v1", "k2", "v2"],
        ["GET", "k3"],
        ["mget", "k4", "k5"],
        ["SADD", "s", "m"],
      ]),
    ).toEqual(["k1", "k2", "k3", "k4", "k5", "s"]);
    // Keys to the end, and keys up to a fixed last position, with the rest not taken as keys.
    expect(
      keysOf([
        ["DEL", "a", "b", "c"],
        ["LMOVE", "src", "dst", "LEFT", "RIGHT"],
      ]),
    ).toEqual(["a", "b", "c", "src", "dst"]);
  });

  test("a script's keys follow their count (EVALSHA, FCALL): its SHA-1, name and arguments are not keys", () => {
    const sha = "a".repeat(40);
    expect(
      keysOf([
        ["EVALSHA", sha, "2", "k1", "k2", "arg"],
        ["FCALL", "f", "1", "k3", "arg"],
        ["EVAL", "return 1", "0", "arg"],
      ]),
    ).toEqual(["k1", "k2", "k3"]);
    // A count that is not a number, or names more keys than there are words: none is taken.
    expect(
      keysOf([
        ["EVALSHA", sha, "x", "k1"],
        ["EVALSHA", sha, "3", "k1", "k2"],
        ["EVALSHA", sha, "01", "k4"],
      ]),
    ).toEqual(["k4"]);
  });

  test("a key repeating the one before it is taken once; a repeat further back is taken again", () => {
    expect(
      keysOf([
        ["LPUSH", "l", "a"],
        ["LPUSH", "l", "b"],
        ["DEL", "l", "l", "m"],
        ["GET", "l"],
      ]),
    ).toEqual(["l", "m", "l"]);
  });

  test("an unknown name or one without keys is taken to name its first argument; no argument, no key", () => {
    expect(keysOf([["NOSUCH", "x", "y"], ["PING", "hello"], ["PING"]])).toEqual(["x", "hello"]);
  });

  test("stop at warmKeysMax: at the limit all are taken, one past it the last is left out", () => {
    const pairs = (n: number) => Array.from({ length: n }, (_, i) => [`k${i}`, "v"]).flat();
    expect(keysOf([["MSET", ...pairs(warmKeysMax)]])).toHaveLength(warmKeysMax);
    const past = keysOf([["MSET", ...pairs(warmKeysMax + 1)]]);
    expect(past).toHaveLength(warmKeysMax);
    expect(past.at(-1)).toBe(`k${warmKeysMax - 1}`);
    expect(
      keysOf([
        ["MSET", ...pairs(warmKeysMax)],
        ["GET", "more"],
      ]),
    ).not.toContain("more");
  });
});
