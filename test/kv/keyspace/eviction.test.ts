// Eviction past maxmemory (CONFIG maxmemory-policy) on a real `svc kv` process: keys go instead of
// writes failing, by the policy's choice — the idle ones first under LRU, only keys with a time
// under volatile-*, the nearest expiry first under volatile-ttl — and when nothing may go,
// writes get Redis's OOM error. An evicted key is deleted as a DEL would delete it: the file
// records it, the "evicted" event goes out, client-side caches are told.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv } from "../support/servers.ts";
import { tempDir } from "../../support/temp-dir.ts";

let kv: ServerProcess;
let c: RespClient;

beforeAll(async () => {
  kv = await startKv(["--appendonly", "no"]);
  c = await RespClient.connect(kv.port);
});

afterAll(async () => {
  c?.close();
  await kv?.stop();
});

/** Bytes of each value written: distinct text, so that no two keys share a string. */
const valueBytes = 1000;
/** The data the limit leaves room for, above what the server used at start. */
const roomBytes = 4 * 1024 * 1024;

const value = (i: number) => `${i}:`.padEnd(valueBytes, ((i * 2654435761) >>> 0).toString(36));
const info = async (field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(String(await c.call("INFO", "everything")))![1]);

/** Sets `count` keys named `prefix<i>` in pipelines, with `extra` after the value; returns the error replies. */
async function fill(prefix: string, from: number, count: number, extra: string[] = []): Promise<string[]> {
  const errors: string[] = [];
  for (let i = from; i < from + count; i += 100) {
    const commands = Array.from({ length: Math.min(100, from + count - i) }, (_, j) => ["SET", `${prefix}${i + j}`, value(i + j), ...extra]);
    for (const reply of await c.pipeline(commands)) if (typeof reply === "object" && reply !== null && "e" in reply) errors.push((reply as { e: string }).e);
  }
  return errors;
}

/** Empties the server and sets the limit `roomBytes` above its memory at start, under `policy`. */
async function limit(policy: string): Promise<void> {
  await c.call("CONFIG", "SET", "maxmemory", "0");
  await c.call("FLUSHALL");
  await c.call("CONFIG", "SET", "maxmemory-policy", policy);
  await c.call("CONFIG", "RESETSTAT");
  await c.call("CONFIG", "SET", "maxmemory", String((await info("used_memory_startup")) + roomBytes));
}

async function exists(keys: string[]): Promise<number> {
  return Number(await c.call("EXISTS", ...keys));
}

const range = (prefix: string, from: number, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${from + i}`);

describe("maxmemory-policy", () => {
  for (const policy of ["allkeys-lru", "allkeys-lfu"]) {
    test(`${policy}: writes past the limit evict keys instead of failing, the ones read ${policy.endsWith("lru") ? "lately" : "often"} last`, async () => {
      await limit(policy);
      const hot = range("k", 0, 200);
      expect(await fill("k", 0, 2000)).toEqual([]);
      for (let round = 0; round < 10; round++) {
        await c.call("MGET", ...hot);
        await Bun.sleep(20);
        expect(await fill("k", 2000 + round * 1000, 1000)).toEqual([]);
      }
      const keys = Number(await c.call("DBSIZE"));
      const evicted = await info("evicted_keys");
      // 12,000 keys of ~1 KB against 4 MiB of room: most went, and the count adds up.
      expect(evicted).toBeGreaterThan(6000);
      expect(keys + evicted).toBe(12_000);
      expect(keys * valueBytes).toBeLessThan(roomBytes * 1.25);
      // Read every round, the hot keys were rarely the longest idle (or least read) of a sample:
      // only against keys written since they were read (a write is a use under LRU).
      expect(await exists(hot)).toBeGreaterThanOrEqual(150);
      expect(await exists(range("k", 200, 1800))).toBeLessThan(900);
    }, 60_000);
  }

  test("allkeys-lru counts a write as a use: keys just written outlast keys read a while ago", async () => {
    await limit("allkeys-lru");
    expect(await fill("old", 0, 2000)).toEqual([]);
    await c.call("MGET", ...range("old", 0, 2000));
    await Bun.sleep(50);
    expect(await fill("new", 0, 6000)).toEqual([]);
    const oldShare = (await exists(range("old", 0, 2000))) / 2000;
    const newShare = (await exists(range("new", 0, 6000))) / 6000;
    expect(await info("evicted_keys")).toBeGreaterThan(3000);
    expect(oldShare).toBeLessThan(newShare);
  }, 60_000);

  test("allkeys-random evicts without regard to reads; noeviction refuses writes with Redis's OOM error", async () => {
    await limit("allkeys-random");
    expect(await fill("r", 0, 12_000)).toEqual([]);
    expect(await info("evicted_keys")).toBeGreaterThan(6000);
    await limit("noeviction");
    const errors = await fill("n", 0, 12_000);
    expect(errors.length).toBeGreaterThan(0);
    expect(new Set(errors)).toEqual(new Set(["OOM command not allowed when used memory > 'maxmemory'."]));
    expect(await info("evicted_keys")).toBe(0);
    // Reads and deletes still run past the limit.
    expect(await c.call("GET", "n0")).toBe(value(0));
    expect(await c.call("DEL", "n0")).toBe(1n);
  }, 60_000);

  test("volatile-*: only keys with a time go; with none left, writes fail with OOM", async () => {
    for (const policy of ["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"]) {
      await limit(policy);
      expect(await fill("keep", 0, 1500)).toEqual([]);
      const errors = await fill("tmp", 0, 8000, ["EX", "1000"]);
      expect({ policy, errors: errors.length }).toEqual({ policy, errors: 0 });
      expect(await info("evicted_keys")).toBeGreaterThan(3000);
      // Not one key without a time went.
      expect({ policy, kept: await exists(range("keep", 0, 1500)) }).toEqual({ policy, kept: 1500 });
      const past = await fill("plain", 0, 8000);
      expect(past.length).toBeGreaterThan(0);
      expect(past[0]).toBe("OOM command not allowed when used memory > 'maxmemory'.");
    }
  }, 120_000);

  test("volatile-ttl: the keys whose time runs out first go first", async () => {
    await limit("volatile-ttl");
    expect(await fill("soon", 0, 2000, ["EX", "100"])).toEqual([]);
    expect(await fill("late", 0, 6000, ["EX", "100000"])).toEqual([]);
    const soon = await exists(range("soon", 0, 2000));
    const late = await exists(range("late", 0, 6000));
    // Of the two kinds, the near-expiry keys were picked first from each sample.
    expect(soon / 2000).toBeLessThan(late / 6000);
    expect(soon).toBeLessThan(1000);
  }, 60_000);

  test('an evicted key is an "evicted" event, and a tracking client is told', async () => {
    await limit("allkeys-random");
    await c.call("CONFIG", "SET", "notify-keyspace-events", "Ee");
    const sub = await RespClient.connect(kv.port);
    await sub.call("SUBSCRIBE", "__keyevent@0__:evicted");
    const tracker = await RespClient.connect(kv.port);
    await tracker.call("HELLO", "3");
    await tracker.call("CLIENT", "TRACKING", "on");
    await tracker.call("MGET", ...range("e", 0, 2000));
    expect(await fill("e", 0, 8000)).toEqual([]);
    const evicted = await info("evicted_keys");
    expect(evicted).toBeGreaterThan(3000);
    const first = (await sub.read()) as RespValue[];
    expect(first.slice(0, 2)).toEqual(["message", "__keyevent@0__:evicted"]);
    const pushed = (await tracker.read()) as { push: RespValue[] };
    expect(pushed.push[0]).toBe("invalidate");
    await c.call("CONFIG", "SET", "notify-keyspace-events", "");
    sub.close();
    tracker.close();
  }, 60_000);

  test("CONFIG: Redis's words and errors", async () => {
    await c.call("CONFIG", "SET", "maxmemory", "0");
    expect(await c.call("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU")).toEqual({ s: "OK" });
    expect(await c.call("CONFIG", "GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "allkeys-lru"]);
    expect(await c.call("CONFIG", "SET", "maxmemory-policy", "bogus")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction",
    });
    expect(await c.call("CONFIG", "SET", "maxmemory-policy", "volatile-lfu")).toEqual({ s: "OK" });
    expect(await c.call("CONFIG", "GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "volatile-lfu"]);
    expect(await c.call("CONFIG", "SET", "maxmemory-samples", "0")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 and 2147483647 inclusive",
    });
    expect(await c.call("CONFIG", "SET", "maxmemory-samples", "10")).toEqual({ s: "OK" });
    await c.call("CONFIG", "SET", "maxmemory-samples", "5");
    await c.call("CONFIG", "SET", "maxmemory-policy", "noeviction");
  });
});

describe("the append-only file", () => {
  test("records each eviction as a DEL: a restart after kill -9 has none of the evicted keys back", async () => {
    const dir = tempDir("svc-evict-");
    const server = await startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"]);
    const client = await RespClient.connect(server.port);
    const startup = Number(/used_memory_startup:(\d+)/.exec(String(await client.call("INFO", "memory")))![1]);
    await client.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
    await client.call("CONFIG", "SET", "maxmemory", String(startup + roomBytes));
    for (let i = 0; i < 8000; i += 100) {
      await client.pipeline(Array.from({ length: 100 }, (_, j) => ["SET", `f${i + j}`, value(i + j)]));
    }
    // No more evictions from here on: what the file holds is what the client saw last.
    await client.call("CONFIG", "SET", "maxmemory", "0");
    const before = Number(await client.call("DBSIZE"));
    expect(before).toBeLessThan(8000);
    const keys = range("f", 0, 8000);
    const present = await client.call("EXISTS", ...keys);
    client.close();
    server.proc.kill(9);
    await server.proc.exited;
    const again = await startKv(["--dir", dir, "--appendonly", "yes"]);
    try {
      const reader = await RespClient.connect(again.port);
      expect(await reader.call("DBSIZE")).toBe(BigInt(before));
      expect(await reader.call("EXISTS", ...keys)).toBe(present);
      reader.close();
    } finally {
      await again.stop();
    }
  }, 60_000);
});
