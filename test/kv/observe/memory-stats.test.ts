// MEMORY STATS, DOCTOR and MALLOC-STATS (src/kv/observe/memory-stats.ts): STATS has Redis 7.0's fields,
// in its order and with its types, compared with redis-server holding the same keys; its figures
// add up as Redis's do and follow the data (keys counted, a database listed once it has keys).
// DOCTOR and MALLOC-STATS are text in svc's words: the doctor is checked for what it must say
// about states the test sets (in process, not on this machine's allocator), and for judging an
// empty server and a full one as redis-server does.
import { describe, expect, test } from "bun:test";
import { type MemoryStats, memoryDoctor } from "../../../src/kv/observe/memory-stats.ts";
import { harness } from "../harness.ts";
import type { RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();
const mb = 1024 * 1024;

/** A RESP2 map reply as [name, value] pairs, nested maps too. */
function pairs(reply: RespValue): [string, RespValue][] {
  const items = reply as RespValue[];
  const out: [string, RespValue][] = [];
  for (let i = 0; i < items.length; i += 2) out.push([items[i] as string, items[i + 1]!]);
  return out;
}

/** Each field's name and the kind of its value: integer, double (a bulk number), or a nested map's names. */
function shape(reply: RespValue): unknown[] {
  return pairs(reply).map(([name, value]) =>
    Array.isArray(value) ? [name, pairs(value).map(([n, v]) => [n, typeof v])] : [name, typeof value === "bigint" ? "integer" : "double"],
  );
}

describe("MEMORY STATS side by side", () => {
  test("Redis's fields, order and types, with a db.N map for each database that has keys", async () => {
    for (const client of [servers.redisClient, servers.kvClient]) {
      await client.call("FLUSHALL");
      await client.call("SET", "a", "1");
      await client.call("SELECT", "3");
      await client.call("SET", "b", "2", "EX", "100");
      await client.call("SELECT", "0");
    }
    const [redis, kv] = await Promise.all([servers.redisClient.call("MEMORY", "STATS"), servers.kvClient.call("MEMORY", "STATS")]);
    expect(shape(kv)).toEqual(shape(redis));
    const names = pairs(kv).map(([name]) => name);
    expect(names.filter((n) => n.startsWith("db."))).toEqual(["db.0", "db.3"]);
    for (const client of [servers.redisClient, servers.kvClient]) await client.call("FLUSHALL");
  });

  test("arity and the unknown subcommand, as Redis answers them", async () => {
    for (const argv of [
      ["MEMORY", "STATS", "x"],
      ["MEMORY", "DOCTOR", "x"],
      ["MEMORY", "NOPE"],
    ]) {
      const [redis, kv] = await Promise.all([servers.redisClient.call(...argv), servers.kvClient.call(...argv)]);
      expect(kv, argv.join(" ")).toEqual(redis);
    }
  });
});

describe("MEMORY STATS figures", () => {
  /** STATS as a name → number record (doubles parsed), in process. */
  function stats(h: ReturnType<typeof harness>): Record<string, number> {
    const flat = h.run("MEMORY", "STATS") as (string | number | (string | number)[])[];
    const out: Record<string, number> = {};
    for (let i = 0; i < flat.length; i += 2) if (!Array.isArray(flat[i + 1])) out[flat[i] as string] = Number(flat[i + 1]);
    return out;
  }

  test("keys are counted, and the parts add up as Redis's do", () => {
    const h = harness();
    expect(stats(h)["keys.count"]).toBe(0);
    for (let i = 0; i < 1000; i++) h.run("SET", `k${i}`, "v");
    h.run("SELECT", "2");
    for (let i = 0; i < 500; i++) h.run("SET", `k${i}`, "v");
    const s = stats(h);
    expect(s["keys.count"]).toBe(1500);
    expect(s["overhead.total"]).toBeGreaterThanOrEqual(s["startup.allocated"]!);
    expect(s["dataset.bytes"]).toBe(Math.max(0, s["total.allocated"]! - s["overhead.total"]!));
    expect(s["keys.bytes-per-key"]).toBe(Math.floor((s["total.allocated"]! - s["startup.allocated"]!) / 1500));
    expect(s["peak.allocated"]).toBeGreaterThanOrEqual(s["total.allocated"]!);
    expect(s["allocator.active"]).toBeGreaterThanOrEqual(s["allocator.allocated"]!);
    expect(s["fragmentation.bytes"]).toBe(s["allocator.resident"]! - s["total.allocated"]!);
    const flat = h.run("MEMORY", "STATS") as unknown[];
    const db2 = flat[flat.indexOf("db.2") + 1] as unknown[];
    // The key table's slots: at least one pair of 4-byte words per key.
    expect(db2[0]).toBe("overhead.hashtable.main");
    expect(db2[1] as number).toBeGreaterThanOrEqual(500 * 8);
  });
});

describe("MEMORY DOCTOR and MALLOC-STATS", () => {
  /** A state the doctor judges, with nothing notable unless a test says so. */
  const state = (over: Partial<MemoryStats>): MemoryStats => ({
    peakBytes: 60 * mb,
    usedBytes: 60 * mb,
    startupBytes: 40 * mb,
    clientBytes: 0,
    aofBufferBytes: 0,
    scriptBytes: 0,
    databases: [],
    overheadBytes: 40 * mb,
    keys: 1000,
    activeBytes: 60 * mb,
    rssBytes: 70 * mb,
    scripts: 0,
    clients: 1,
    ...over,
  });

  test("little data is all the doctor says, whatever else stands out: no keys, or under 5 MB grown since start", () => {
    // A resident set 3.8 times the heap and a peak 3 times it: findings, were there data.
    const loud = { rssBytes: 64 * mb, usedBytes: 17 * mb, startupBytes: 12 * mb, peakBytes: 51 * mb };
    expect(memoryDoctor(state({ ...loud, keys: 1000 }))).toContain("The resident set");
    for (const quiet of [state({ ...loud, keys: 0 }), state({ ...loud, usedBytes: 16 * mb })]) {
      const report = memoryDoctor(quiet);
      expect(report).toContain("holds little data");
      expect(report).not.toContain("The resident set");
      expect(report).not.toContain("The peak");
    }
  });

  test("with data, each finding at its threshold and not below it", () => {
    expect(memoryDoctor(state({}))).toContain("No memory problem stands out");
    expect(memoryDoctor(state({ peakBytes: 91 * mb }))).toContain("The peak (91.00M) is 1.5 times");
    expect(memoryDoctor(state({ peakBytes: 90 * mb }))).not.toContain("The peak");
    // 1.4 times the heap and 10 MB over it, both needed.
    expect(memoryDoctor(state({ rssBytes: 85 * mb }))).toContain("The resident set (85.00M) is 1.42 times");
    expect(memoryDoctor(state({ rssBytes: 84 * mb }))).not.toContain("The resident set");
    expect(memoryDoctor(state({ usedBytes: 20 * mb, startupBytes: 10 * mb, peakBytes: 20 * mb, rssBytes: 29 * mb }))).not.toContain("The resident set");
    expect(memoryDoctor(state({ clientBytes: 201 * 1024 * 2, clients: 2 }))).toContain("Clients hold");
    expect(memoryDoctor(state({ clientBytes: 200 * 1024 * 2, clients: 2 }))).not.toContain("Clients hold");
    expect(memoryDoctor(state({ scripts: 1001 }))).toContain("1001 scripts are cached");
    expect(memoryDoctor(state({ scripts: 1000 }))).not.toContain("scripts are cached");
  });

  // On the server processes, side by side: an empty server and one holding 8 MB are judged as
  // Redis judges them (its words differ: its doctor is "empty" under 5 MB allocated in all).
  test("an empty server holds little data, one with 8 MB of values does not, as redis-server judges them", async () => {
    const judged = async () => {
      const [redis, kv] = await Promise.all([servers.redisClient.call("MEMORY", "DOCTOR"), servers.kvClient.call("MEMORY", "DOCTOR")]);
      return { redis: String(redis).includes("this instance is empty"), kv: String(kv).includes("holds little data") };
    };
    for (const client of [servers.redisClient, servers.kvClient]) await client.call("FLUSHALL");
    expect(await judged()).toEqual({ redis: true, kv: true });
    for (const client of [servers.redisClient, servers.kvClient]) {
      await client.pipeline(Array.from({ length: 800 }, (_, i) => ["SET", `a${i}`, `${i}`.padEnd(10_000, "y")]));
    }
    expect(await judged()).toEqual({ redis: false, kv: false });
    for (const client of [servers.redisClient, servers.kvClient]) await client.call("FLUSHALL");
  });

  test("MALLOC-STATS shows the heap's figures and mimalloc's statistics", () => {
    const text = harness().run("MEMORY", "MALLOC-STATS") as string;
    expect(text).toContain(`___ Begin Bun ${Bun.version} memory statistics ___`);
    expect(text).toMatch(/^heap used: \d+$/m);
    expect(text).toContain('"mimalloc_version"');
  });
});
