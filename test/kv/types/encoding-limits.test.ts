// OBJECT ENCODING under thresholds set by CONFIG (hash-max-listpack-*, zset-max-listpack-* and
// their ziplist names), side by side with redis-server 7.0.15: lowered, a value leaves its listpack
// at once and for good; raised past svc's own packing limits, what Redis would still hold in a
// listpack is reported as one (and ZSCAN answers it whole); values made before a change keep
// their encoding; COPY keeps it; store results and ZRANGESTORE choose theirs as Redis does.
import { expect, test } from "bun:test";
import type { RespValue } from "../support/resp-client.ts";
import { pipelineOnBoth, redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

/** The thresholds' defaults: each sequence ends by setting them back (a pipeline runs it whatever came before). */
const defaults = [
  "hash-max-listpack-entries",
  "512",
  "hash-max-listpack-value",
  "64",
  "zset-max-listpack-entries",
  "128",
  "zset-max-listpack-value",
  "64",
  "set-max-intset-entries",
  "512",
];

/** Runs `commands` on both servers; returns each reply labelled with its command. */
async function onBoth(commands: string[][]): Promise<[RespValue[], RespValue[]]> {
  const label = (replies: RespValue[]) => replies.map((reply, i) => [commands[i]!.slice(0, 4).join(" "), reply]);
  const [redis, kv] = await pipelineOnBoth(s, commands);
  return [label(redis), label(kv)];
}

const many = (from: number, count: number, value: (i: number) => string) => Array.from({ length: count }, (_, i) => [String(from + i), value(from + i)]).flat();

test("sorted sets: encodings by the configured limits, lowered and raised", async () => {
  const [redis, kv] = await onBoth([
    ["FLUSHALL"],
    ["ZADD", "before", "1", "a"],
    ["CONFIG", "SET", "zset-max-ziplist-entries", "0"],
    ["CONFIG", "GET", "zset-max-listpack-entries"],
    ["ZADD", "none", "1", "a"],
    ["OBJECT", "ENCODING", "none"],
    ["OBJECT", "ENCODING", "before"],
    ["ZADD", "before", "2", "b"],
    ["OBJECT", "ENCODING", "before"],
    ["COPY", "none", "copied"],
    ["OBJECT", "ENCODING", "copied"],
    ["CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "4"],
    ["ZADD", "short", "1", "abcd"],
    ["ZADD", "long", "1", "abcde"],
    ["ZADD", "grows", "1", "abc", "2", "abcdef"],
    ["OBJECT", "ENCODING", "short"],
    ["OBJECT", "ENCODING", "long"],
    ["OBJECT", "ENCODING", "grows"],
    // Raised past svc's packing limits: still a listpack to Redis, scanned whole.
    ["CONFIG", "SET", "zset-max-listpack-entries", "300", "zset-max-listpack-value", "100"],
    ["ZADD", "big", ...many(0, 200, (i) => `m${i}`)],
    ["ZADD", "wide", "1", "x".repeat(90)],
    ["OBJECT", "ENCODING", "big"],
    ["OBJECT", "ENCODING", "wide"],
    ["ZSCAN", "big", "0", "COUNT", "10"],
    ["ZADD", "big", ...many(200, 101, (i) => `m${i}`)],
    ["OBJECT", "ENCODING", "big"],
    // Store results: made as Redis makes them, then small enough or not.
    ["CONFIG", "SET", "zset-max-listpack-entries", "2", "zset-max-listpack-value", "64"],
    ["ZUNIONSTORE", "union", "2", "short", "long"],
    ["OBJECT", "ENCODING", "union"],
    ["ZUNIONSTORE", "union3", "3", "short", "long", "grows"],
    ["OBJECT", "ENCODING", "union3"],
    ["CONFIG", "SET", "zset-max-listpack-entries", "1"],
    ["ZRANGESTORE", "ranked", "big", "0", "1"],
    ["OBJECT", "ENCODING", "ranked"],
    ["ZRANGESTORE", "scored", "big", "0", "1", "BYSCORE"],
    ["OBJECT", "ENCODING", "scored"],
    ["CONFIG", "SET", ...defaults],
  ]);
  expect(kv).toEqual(redis);
  expect(kv[5]).toEqual(["OBJECT ENCODING none", "skiplist"]);
});

test("hashes: encodings by the configured limits, lowered and raised", async () => {
  const [redis, kv] = await onBoth([
    ["FLUSHALL"],
    ["CONFIG", "SET", "hash-max-listpack-value", "8"],
    ["HSET", "small", "tmp", "0"],
    ["HSET", "big", "tmp", "0"],
    ["HINCRBYFLOAT", "small", "tmp", "0.000005"],
    ["HINCRBYFLOAT", "big", "tmp", "0.0000005"],
    ["OBJECT", "ENCODING", "small"],
    ["OBJECT", "ENCODING", "big"],
    ["HSET", "field", "longfield", "1"],
    ["OBJECT", "ENCODING", "field"],
    ["HSET", "pairs", "a", "1", "b", "123456789"],
    ["OBJECT", "ENCODING", "pairs"],
    ["CONFIG", "SET", "hash-max-ziplist-entries", "2", "hash-max-listpack-value", "64"],
    ["HSET", "three", "a", "1", "b", "2", "c", "3"],
    ["HSET", "two", "a", "1", "b", "2"],
    ["OBJECT", "ENCODING", "three"],
    ["OBJECT", "ENCODING", "two"],
    ["HSET", "two", "c", "3"],
    ["OBJECT", "ENCODING", "two"],
    ["HDEL", "two", "c"],
    ["OBJECT", "ENCODING", "two"],
    // Raised past svc's packing limits: what Redis would still hold in a listpack.
    ["CONFIG", "SET", "hash-max-listpack-entries", "1000", "hash-max-listpack-value", "200"],
    ["HSET", "wide", ...many(0, 600, (i) => "v".repeat(100 + (i % 50)))],
    ["OBJECT", "ENCODING", "wide"],
    ["CONFIG", "GET", "hash-max-ziplist-entries"],
    ["CONFIG", "SET", ...defaults],
  ]);
  expect(kv).toEqual(redis);
  expect(kv[6]).toEqual(["OBJECT ENCODING small", "listpack"]);
  expect(kv[7]).toEqual(["OBJECT ENCODING big", "hashtable"]);
});

test("sets: intset up to set-max-intset-entries members, lowered and raised, and for good once past it", async () => {
  const ints = (from: number, count: number) => Array.from({ length: count }, (_, i) => String(from + i));
  const [redis, kv] = await onBoth([
    ["FLUSHALL"],
    ["CONFIG", "SET", "set-max-intset-entries", "4"],
    ["SADD", "four", ...ints(0, 4)],
    ["SADD", "five", ...ints(0, 5)],
    ["OBJECT", "ENCODING", "four"],
    ["OBJECT", "ENCODING", "five"],
    ["SREM", "five", "0", "1", "2"],
    ["OBJECT", "ENCODING", "five"],
    ["SADD", "four", "4"],
    ["OBJECT", "ENCODING", "four"],
    ["SINTERSTORE", "stored", "five"],
    ["OBJECT", "ENCODING", "stored"],
    ["CONFIG", "SET", "set-max-intset-entries", "1000"],
    ["SADD", "big", ...ints(0, 800)],
    ["OBJECT", "ENCODING", "big"],
    ["SADD", "big", "x"],
    ["OBJECT", "ENCODING", "big"],
    ["CONFIG", "SET", ...defaults],
  ]);
  expect(kv).toEqual(redis);
  expect(kv[5]).toEqual(["OBJECT ENCODING five", "hashtable"]);
});
