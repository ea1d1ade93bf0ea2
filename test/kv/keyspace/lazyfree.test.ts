// Lazy freeing side by side with redis-server 7.0: INFO's lazyfreed_objects counts what UNLINK
// (and DEL under lazyfree-lazy-user-del) frees the lazy way — a value whose freeing is more than
// 64 allocations: a hash table, a set past its intset, a skiplist, a list of many nodes, a long
// stream — and each key of a database FLUSHDB/FLUSHALL ASYNC (or lazyfree-lazy-user-flush) empties,
// with lazyfree_pending_objects back at 0; CONFIG RESETSTAT zeroes it. And the memory comes back:
// used_memory drops by most of what a large value took once it is unlinked, or its database
// flushed asynchronously (measured on both servers, against what the value grew it by, so no
// allocator's exact numbers matter).
import { expect, test } from "bun:test";
import type { RespClient } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** An INFO field as a number. */
async function infoField(client: RespClient, field: string): Promise<number> {
  const text = String(await client.call("INFO", "all"));
  const m = new RegExp(`^${field}:(\\d+)`, "m").exec(text);
  if (m === null) throw new Error(`no ${field} in INFO`);
  return Number(m[1]);
}

/** lazyfreed_objects once nothing is pending (Redis's thread may still be at work for a moment). */
async function lazyfreed(client: RespClient): Promise<number> {
  for (let tries = 0; tries < 200 && (await infoField(client, "lazyfree_pending_objects")) !== 0; tries++) await Bun.sleep(10);
  return infoField(client, "lazyfreed_objects");
}

const range = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** Steps run on both servers, and how many objects each frees the lazy way (what Redis counts). */
const steps: [what: string, commands: string[][], freed: number][] = [
  [
    "UNLINK a hash of 1,000 fields (a hash table)",
    [
      ["HSET", "h", ...range(1000, (i) => [`f${i}`, "v"]).flat()],
      ["UNLINK", "h"],
    ],
    1,
  ],
  [
    "UNLINK a hash of 10 fields (a listpack)",
    [
      ["HSET", "h", ...range(10, (i) => [`f${i}`, "v"]).flat()],
      ["UNLINK", "h"],
    ],
    0,
  ],
  [
    "UNLINK a string of 1 MB",
    [
      ["SET", "s", "x".repeat(1 << 20)],
      ["UNLINK", "s"],
    ],
    0,
  ],
  [
    "UNLINK a set of 100 words (a hash table in 7.0)",
    [
      ["SADD", "w", ...range(100, (i) => `m${i}`)],
      ["UNLINK", "w"],
    ],
    1,
  ],
  [
    "UNLINK a set of 60 words (64 allocations or fewer)",
    [
      ["SADD", "w", ...range(60, (i) => `m${i}`)],
      ["UNLINK", "w"],
    ],
    0,
  ],
  [
    "UNLINK a set of 100 integers (an intset)",
    [
      ["SADD", "i", ...range(100, String)],
      ["UNLINK", "i"],
    ],
    0,
  ],
  [
    "UNLINK a sorted set of 200 members (a skiplist)",
    [
      ["ZADD", "z", ...range(200, (i) => [String(i), `m${i}`]).flat()],
      ["UNLINK", "z"],
    ],
    1,
  ],
  ["UNLINK a list of 100,000 items (hundreds of nodes)", [...range(10, (b) => ["RPUSH", "l", ...range(10_000, (i) => `item${b}:${i}`)]), ["UNLINK", "l"]], 1],
  [
    "UNLINK a list of 1,000 items (a few nodes)",
    [
      ["RPUSH", "l", ...range(1000, (i) => `item${i}`)],
      ["UNLINK", "l"],
    ],
    0,
  ],
  ["UNLINK a stream of 10,000 entries (100 nodes)", [...range(10_000, (i) => ["XADD", "x", `1-${i + 1}`, "f", "v"]), ["UNLINK", "x"]], 1],
  ["UNLINK a stream of 100 entries", [...range(100, (i) => ["XADD", "x", `1-${i + 1}`, "f", "v"]), ["UNLINK", "x"]], 0],
  [
    "UNLINK of several large values at once, and of a missing key",
    [
      ["HSET", "a", ...range(600, (i) => [`f${i}`, "v"]).flat()],
      ["SADD", "b", ...range(100, (i) => `m${i}`)],
      ["UNLINK", "a", "b", "nope"],
    ],
    2,
  ],
  [
    "DEL of a large hash: freed at once",
    [
      ["HSET", "h", ...range(1000, (i) => [`f${i}`, "v"]).flat()],
      ["DEL", "h"],
    ],
    0,
  ],
  [
    "DEL under lazyfree-lazy-user-del yes",
    [
      ["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"],
      ["HSET", "h", ...range(1000, (i) => [`f${i}`, "v"]).flat()],
      ["DEL", "h"],
      ["CONFIG", "SET", "lazyfree-lazy-user-del", "no"],
    ],
    1,
  ],
  [
    "FLUSHDB ASYNC of 500 keys (one object each)",
    [
      ["MSET", ...range(500, (i) => [`k${i}`, "v"]).flat()],
      ["FLUSHDB", "ASYNC"],
    ],
    500,
  ],
  [
    "FLUSHDB SYNC",
    [
      ["MSET", ...range(500, (i) => [`k${i}`, "v"]).flat()],
      ["FLUSHDB", "SYNC"],
    ],
    0,
  ],
  [
    "FLUSHALL ASYNC of keys in two databases",
    [
      ["MSET", "a", "1", "b", "2"],
      ["SELECT", "3"],
      ["MSET", "c", "3", "d", "4", "e", "5"],
      ["SELECT", "0"],
      ["FLUSHALL", "ASYNC"],
    ],
    5,
  ],
  ["FLUSHALL of an empty server, ASYNC", [["FLUSHALL", "ASYNC"]], 0],
  [
    "FLUSHALL under lazyfree-lazy-user-flush yes",
    [["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"], ["MSET", "a", "1", "b", "2"], ["FLUSHALL"], ["CONFIG", "SET", "lazyfree-lazy-user-flush", "no"]],
    2,
  ],
  [
    "FLUSHALL SYNC under lazyfree-lazy-user-flush yes",
    [
      ["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"],
      ["MSET", "a", "1", "b", "2"],
      ["FLUSHALL", "SYNC"],
      ["CONFIG", "SET", "lazyfree-lazy-user-flush", "no"],
    ],
    0,
  ],
] as [string, string[][], number][];

test("lazyfreed_objects counts what redis-server counts, step by step, and CONFIG RESETSTAT zeroes it", async () => {
  for (const client of [servers.redisClient, servers.kvClient]) await client.pipeline([["FLUSHALL"], ["CONFIG", "RESETSTAT"]]);
  let total = 0;
  for (const [what, commands, freed] of steps) {
    const counts: number[] = [];
    for (const client of [servers.redisClient, servers.kvClient]) {
      const before = await lazyfreed(client);
      const replies = await client.pipeline(commands);
      expect({ what, errors: replies.filter((r) => typeof r === "object" && r !== null && "e" in r) }).toEqual({ what, errors: [] });
      counts.push((await lazyfreed(client)) - before);
    }
    expect({ what, kv: counts[1] }).toEqual({ what, kv: counts[0] });
    expect({ what, kv: counts[1] }).toEqual({ what, kv: freed });
    total += freed;
  }
  expect(await lazyfreed(servers.kvClient)).toBe(total);
  expect(await infoField(servers.kvClient, "lazyfree_pending_objects")).toBe(0);
  for (const client of [servers.redisClient, servers.kvClient]) await client.call("CONFIG", "RESETSTAT");
  expect(await infoField(servers.kvClient, "lazyfreed_objects")).toBe(await infoField(servers.redisClient, "lazyfreed_objects"));
  expect(await infoField(servers.kvClient, "lazyfreed_objects")).toBe(0);
}, 30_000);

/**
 * used_memory before `fill`, after it, and — polled for up to 5 s — after `free`, on one server;
 * returns the share of what `fill` grew it by that `free` gave back.
 */
async function reclaimedShare(client: RespClient, fill: string[][], free: string[]): Promise<number> {
  await client.call("FLUSHALL");
  const base = await infoField(client, "used_memory");
  for (const command of fill) await client.call(...command);
  const full = await infoField(client, "used_memory");
  expect(full - base).toBeGreaterThan(10 << 20);
  await client.call(...free);
  let share = 0;
  for (let tries = 0; tries < 50 && share < 0.8; tries++) {
    await Bun.sleep(100);
    share = (full - (await infoField(client, "used_memory"))) / (full - base);
  }
  return share;
}

/**
 * Ten sets of 50,000 members. Ten rather than one: JSC scans the stack conservatively, so a stale
 * pointer there can keep one object alive past a collection, and with it all it holds, until the
 * stack moves on; what is asserted is that most of the memory comes back, not any one value.
 */
const bigSets = range(10, (s) => range(5, (b) => ["SADD", `big${s}`, ...range(10_000, (i) => `member:${b}:${i}`)])).flat();
const manyKeys = range(50, (b) => ["MSET", ...range(5_000, (i) => [`key:${b}:${i}`, `value:${i}`]).flat()]);

test("unlinking ten sets of 50,000 members gives most of their memory back, as in redis-server", async () => {
  for (const client of [servers.redisClient, servers.kvClient]) {
    expect(await reclaimedShare(client, bigSets, ["UNLINK", ...range(10, (s) => `big${s}`)])).toBeGreaterThan(0.5);
  }
}, 30_000);

test("FLUSHALL ASYNC of 250,000 keys gives most of their memory back, as in redis-server", async () => {
  for (const client of [servers.redisClient, servers.kvClient]) expect(await reclaimedShare(client, manyKeys, ["FLUSHALL", "ASYNC"])).toBeGreaterThan(0.5);
}, 30_000);
