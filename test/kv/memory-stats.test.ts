// MEMORY STATS, DOCTOR and MALLOC-STATS (src/kv/memory-stats.ts): STATS has Redis 7.0's fields,
// in its order and with its types, compared with redis-server holding the same keys; its figures
// add up as Redis's do and follow the data (keys counted, a database listed once it has keys).
// DOCTOR and MALLOC-STATS are text in svc's words, checked for what they must say.
import { describe, expect, test } from "bun:test";
import { harness } from "./harness.ts";
import type { RespValue } from "./support/resp-client.ts";
import { redisAndKvWithClients } from "./support/side-by-side.ts";

const servers = redisAndKvWithClients();

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
    for (const argv of [["MEMORY", "STATS", "x"], ["MEMORY", "DOCTOR", "x"], ["MEMORY", "NOPE"]]) {
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
  // On the server process, not in process: the doctor's judgements are ratios of the whole
  // heap, which in the test runner holds every other test's memory too.
  test("the doctor waits for data, then reports what stands out or that nothing does", async () => {
    const kv = servers.kvClient;
    const big = (prefix: string, count: number) => kv.pipeline(Array.from({ length: count }, (_, i) => ["SET", `${prefix}${i}`, `${i}`.padEnd(10_000, "y")]));
    await kv.call("FLUSHALL");
    await kv.call("MEMORY", "PURGE");
    expect(String(await kv.call("MEMORY", "DOCTOR"))).toContain("holds little data");
    // 8 MB of values: past the 5 MB the doctor waits for.
    await big("a", 800);
    const report = String(await kv.call("MEMORY", "DOCTOR"));
    expect(report).not.toContain("holds little data");
    expect(report).not.toContain("The peak");
    // 48 MB more, seen at its peak, then dropped and collected: the peak, well over 1.5 times
    // what is left (the runtime's ~40 MB of heap and the 8 MB), stands out.
    await kv.call("SELECT", "1");
    for (let i = 0; i < 6; i++) await big(`b${i}:`, 800);
    await kv.call("MEMORY", "STATS");
    await kv.call("FLUSHDB");
    await kv.call("SELECT", "0");
    await kv.call("MEMORY", "PURGE");
    expect(String(await kv.call("MEMORY", "DOCTOR"))).toContain("The peak");
    await kv.call("FLUSHALL");
  });

  test("MALLOC-STATS shows the heap's figures and mimalloc's statistics", () => {
    const text = harness().run("MEMORY", "MALLOC-STATS") as string;
    expect(text).toContain(`___ Begin Bun ${Bun.version} memory statistics ___`);
    expect(text).toMatch(/^heap used: \d+$/m);
    expect(text).toContain('"mimalloc_version"');
  });
});
