// The latency monitor: LATENCY LATEST, HISTORY, RESET, GRAPH and DOCTOR with
// latency-monitor-threshold, side by side with redis-server where the two must agree (what is
// recorded, the replies' shapes, the errors), then svc's own events that a test can provoke
// without timing anything: a batch of commands and the append-only file's writes, on a manual
// clock or with work that takes well over the 1 ms threshold on any machine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "../../../src/core/clock.ts";
import { AppendLog } from "../../../src/kv/aof/append-log.ts";
import { type CommandStats, CommandTiming } from "../../../src/kv/observe/command-timing.ts";
import { lookupCommand } from "../../../src/kv/server/command-table.ts";
import { activeExpireRun } from "../../../src/kv/server/expire.ts";
import { LatencyHistogram } from "../../../src/kv/observe/latency-histogram.ts";
import { LatencyMonitor, latencySamplesMax } from "../../../src/kv/observe/latency-monitor.ts";
import type { RespClient, RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";
import { harness } from "../harness.ts";

const servers = redisAndKvWithClients();
const both = () => [servers.redisClient, servers.kvClient] as const;
const unixNow = () => Math.floor(Date.now() / 1000);

/** Both servers' replies to one command, asserted equal, and returned. */
async function same(...argv: string[]): Promise<RespValue> {
  const [r, k] = await Promise.all(both().map((c) => c.call(...argv)));
  expect(k, argv.join(" ")).toEqual(r!);
  return k!;
}

async function onBoth(run: (client: RespClient) => Promise<void>): Promise<void> {
  for (const client of both()) await run(client);
}

/** Waits until the wall clock is in a new second, so the next sample starts a sample of its own. */
async function nextSecond(): Promise<void> {
  const second = unixNow();
  while (unixNow() === second) await Bun.sleep(20);
}

describe("side by side with redis-server", () => {
  beforeAll(async () => {
    await onBoth(async (c) => {
      expect(await c.call("LATENCY", "RESET")).toBeTypeOf("bigint");
    });
  });
  afterAll(async () => {
    await onBoth(async (c) => {
      await c.call("CONFIG", "SET", "latency-monitor-threshold", "0");
    });
  });

  test("off by default: a slow command records nothing", async () => {
    expect(await same("CONFIG", "GET", "latency-monitor-threshold")).toEqual(["latency-monitor-threshold", "0"]);
    await onBoth(async (c) => {
      expect(await c.call("DEBUG", "SLEEP", "0.06")).toEqual({ s: "OK" });
    });
    expect(await same("LATENCY", "LATEST")).toEqual([]);
    expect(await same("LATENCY", "HISTORY", "command")).toEqual([]);
  });

  test('a command at or over the threshold is recorded under "command": LATEST and HISTORY', async () => {
    expect(await same("CONFIG", "SET", "latency-monitor-threshold", "50")).toEqual({ s: "OK" });
    await onBoth(async (c) => {
      // Below the threshold: nothing.
      await c.call("DEBUG", "SLEEP", "0.01");
      expect(await c.call("LATENCY", "LATEST")).toEqual([]);
      const before = unixNow();
      await c.call("DEBUG", "SLEEP", "0.12");
      const latest = (await c.call("LATENCY", "LATEST")) as [string, bigint, bigint, bigint][];
      expect(latest).toHaveLength(1);
      const [event, time, ms, max] = latest[0]!;
      expect(event).toBe("command");
      expect(Number(time)).toBeGreaterThanOrEqual(before);
      expect(Number(time)).toBeLessThanOrEqual(unixNow());
      expect(Number(ms)).toBeGreaterThanOrEqual(120);
      expect(max).toBe(ms);
      expect(await c.call("LATENCY", "HISTORY", "command")).toEqual([[time, ms]]);
    });
  });

  test("one sample a second, the worst of it; the next second starts another; the worst ever stays", async () => {
    await onBoth(async (c) => {
      await c.call("LATENCY", "RESET");
      await nextSecond();
      await c.call("DEBUG", "SLEEP", "0.06");
      await c.call("DEBUG", "SLEEP", "0.15");
      const [first] = (await c.call("LATENCY", "HISTORY", "command")) as [bigint, bigint][];
      expect(Number(first![1])).toBeGreaterThanOrEqual(150);
      await nextSecond();
      await c.call("DEBUG", "SLEEP", "0.06");
      const history = (await c.call("LATENCY", "HISTORY", "command")) as [bigint, bigint][];
      expect(history).toHaveLength(2);
      expect(history[0]).toEqual(first!);
      expect(history[1]![0]).toBeGreaterThan(first![0]);
      expect(Number(history[1]![1])).toBeGreaterThanOrEqual(60);
      expect(Number(history[1]![1])).toBeLessThan(Number(first![1]));
      const [, , latestMs, maxMs] = ((await c.call("LATENCY", "LATEST")) as [string, bigint, bigint, bigint][])[0]!;
      expect(latestMs).toBe(history[1]![1]);
      expect(maxMs).toBe(first![1]);
    });
  });

  test("RESET counts the events it forgot, named ones or all", async () => {
    await onBoth(async (c) => {
      await c.call("DEBUG", "SLEEP", "0.06");
    });
    expect(await same("LATENCY", "RESET", "nope")).toBe(0n);
    // A name given twice is forgotten once.
    expect(await same("LATENCY", "RESET", "command", "nope", "command")).toBe(1n);
    expect(await same("LATENCY", "LATEST")).toEqual([]);
    await onBoth(async (c) => {
      await c.call("DEBUG", "SLEEP", "0.06");
    });
    expect(await same("LATENCY", "RESET")).toBe(1n);
    expect(await same("LATENCY", "RESET")).toBe(0n);
  });

  test("errors: an event with no samples to draw, arity, an unknown subcommand, a threshold out of range", async () => {
    expect(await same("LATENCY", "GRAPH", "nope")).toEqual({ e: "ERR No samples available for event 'nope'" });
    expect(await same("LATENCY", "HISTORY")).toEqual({ e: "ERR wrong number of arguments for 'latency|history' command" });
    expect(await same("LATENCY", "LATEST", "x")).toEqual({ e: "ERR wrong number of arguments for 'latency|latest' command" });
    expect(await same("LATENCY", "FOO")).toEqual({ e: "ERR unknown subcommand 'FOO'. Try LATENCY HELP." });
    expect(await same("CONFIG", "SET", "latency-monitor-threshold", "-1")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive",
    });
    expect(await same("CONFIG", "GET", "latency-monitor-threshold")).toEqual(["latency-monitor-threshold", "50"]);
  });

  test("GRAPH draws what HISTORY holds; DOCTOR names the event (svc's words)", async () => {
    const kv = servers.kvClient;
    await kv.call("DEBUG", "SLEEP", "0.08");
    const graph = String(await kv.call("LATENCY", "GRAPH", "command"));
    const history = (await kv.call("LATENCY", "HISTORY", "command")) as [bigint, bigint][];
    expect(graph.split("\n")[0]).toBe(`command - high ${history[0]![1]} ms, low ${history[0]![1]} ms (all time high ${history[0]![1]} ms)`);
    expect(graph).toContain(`  ${history[0]![1]} ms`);
    const doctor = String(await kv.call("LATENCY", "DOCTOR"));
    expect(doctor).toContain("command: 1 second with a spike");
    expect(doctor).toContain("SLOWLOG GET");
    await kv.call("LATENCY", "RESET");
    expect(String(await kv.call("LATENCY", "DOCTOR"))).toContain("No event has taken 50 ms or more");
    await kv.call("DEBUG", "SLEEP", "0.06");
    await kv.call("CONFIG", "SET", "latency-monitor-threshold", "0");
    expect(String(await kv.call("LATENCY", "DOCTOR"))).toContain("Latency spikes recorded while the monitor was on (it is off now)");
    await kv.call("LATENCY", "RESET");
    expect(String(await kv.call("LATENCY", "DOCTOR"))).toContain("The latency monitor is off");
    await kv.call("CONFIG", "SET", "latency-monitor-threshold", "50");
  });
});

describe("LATENCY HISTOGRAM side by side", () => {
  test("a command's calls land in Redis's buckets: one 40 ms DEBUG SLEEP is {calls 1, 67633 µs: 1} in both", async () => {
    await onBoth(async (c) => {
      expect(await c.call("CONFIG", "RESETSTAT")).toEqual({ s: "OK" });
      await c.call("DEBUG", "SLEEP", "0.04");
    });
    expect(await same("LATENCY", "HISTOGRAM", "debug")).toEqual(["debug", ["calls", 1n, "histogram_usec", [67633n, 1n]]]);
  });

  test("a container names its subcommands, an unknown name is skipped, latency-tracking no stops recording, RESETSTAT forgets", async () => {
    /** HISTOGRAM's reply as name → calls (the order of all commands is Redis's hash order). */
    const callsByName = (reply: RespValue) => {
      const flat = reply as RespValue[];
      return Object.fromEntries(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i] as string, (flat[2 * i + 1] as RespValue[])[1]]));
    };
    await onBoth(async (c) => {
      await c.call("CONFIG", "RESETSTAT");
      await c.call("CONFIG", "GET", "port");
      await c.call("CONFIG", "GET", "port");
    });
    const [redis, kv] = await Promise.all(both().map((c) => c.call("LATENCY", "HISTOGRAM", "config", "nope")));
    // RESETSTAT's own call is timed after it reset the statistics, in both.
    expect(callsByName(kv!)).toEqual({ "config|get": 2n, "config|resetstat": 1n });
    expect(callsByName(kv!)).toEqual(callsByName(redis!));
    expect(await same("LATENCY", "HISTOGRAM", "nope")).toEqual([]);
    await onBoth(async (c) => {
      await c.call("DEBUG", "SLEEP", "0.04");
      expect(await c.call("CONFIG", "SET", "latency-tracking", "no")).toEqual({ s: "OK" });
      await c.call("DEBUG", "SLEEP", "0.04");
    });
    expect(await same("LATENCY", "HISTOGRAM", "debug")).toEqual(["debug", ["calls", 1n, "histogram_usec", [67633n, 1n]]]);
    expect(await same("CONFIG", "SET", "latency-tracking", "yes")).toEqual({ s: "OK" });
    expect(await same("CONFIG", "SET", "latency-tracking", "maybe")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'latency-tracking') - argument must be 'yes' or 'no'",
    });
    expect(await same("CONFIG", "RESETSTAT")).toEqual({ s: "OK" });
    expect(await same("LATENCY", "HISTOGRAM", "debug", "get")).toEqual([]);
  });
});

describe("INFO latencystats side by side", () => {
  test("each command's latency at latency-tracking-info-percentiles, in µs with three decimals; not in the default sections", async () => {
    await onBoth(async (c) => {
      await c.call("CONFIG", "RESETSTAT");
      await c.call("DEBUG", "SLEEP", "0.04");
    });
    const [redis, kv] = await Promise.all(both().map((c) => c.call("INFO", "latencystats")));
    for (const text of [redis, kv] as string[]) {
      const line = /^latency_percentiles_usec_debug:p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})\r$/m.exec(text);
      expect(line, text).not.toBeNull();
      // One call: every percentile is that call's bucket's highest value, 40 ms or a little more.
      expect(new Set(line!.slice(1)).size).toBe(1);
      expect(Number(line![1])).toBeGreaterThanOrEqual(40_000);
      expect(Number(line![1])).toBeLessThan(67_634);
    }
    for (const c of both()) expect(String(await c.call("INFO"))).not.toContain("latency_percentiles_usec_");
    const titles = async (c: RespClient) =>
      String(await c.call("INFO", "all"))
        .split("\r\n")
        .filter((l) => l.startsWith("# "));
    expect(await titles(servers.kvClient)).toEqual(await titles(servers.redisClient));
  });

  test("latency-tracking-info-percentiles: stored as Redis writes numbers, Redis's errors, and none at all", async () => {
    const name = "latency-tracking-info-percentiles";
    expect(await same("CONFIG", "GET", name)).toEqual([name, "50 99 99.9"]);
    expect(await same("CONFIG", "SET", name, "0 1e2 99.99")).toEqual({ s: "OK" });
    expect(await same("CONFIG", "GET", name)).toEqual([name, "0 100 99.99"]);
    expect(await same("CONFIG", "SET", name, "50 abc")).toEqual({
      e: `ERR CONFIG SET failed (possibly related to argument '${name}') - Invalid ${name} parameters`,
    });
    expect(await same("CONFIG", "SET", name, "100.5")).toEqual({
      e: `ERR CONFIG SET failed (possibly related to argument '${name}') - ${name} parameters should sit between [0.0,100.0]`,
    });
    expect(await same("CONFIG", "GET", name)).toEqual([name, "0 100 99.99"]);
    const kvLine = /^latency_percentiles_usec_debug:(.*)\r$/m.exec(String(await servers.kvClient.call("INFO", "latencystats")))![1]!;
    expect(kvLine).toMatch(/^p0=\d+\.\d{3},p100=\d+\.\d{3},p99\.99=\d+\.\d{3}$/);
    expect(await same("CONFIG", "SET", name, "")).toEqual({ s: "OK" });
    for (const c of both()) expect(String(await c.call("INFO", "latencystats"))).toContain("latency_percentiles_usec_debug:\r\n");
    expect(await same("CONFIG", "SET", name, "50 99 99.9")).toEqual({ s: "OK" });
  });
});

describe("LatencyHistogram", () => {
  test("cumulative counts at powers of two from 1,024 ns, labelled by each level's highest value in µs, only where they grow", () => {
    const h = new LatencyHistogram();
    for (const ns of [500, 500, 500, 1500, 40_000]) h.record(ns);
    // 1,024 + 8 − 1 ns → 1 µs; 2,048 + 16 − 1 → 2; 65,536 + 512 − 1 → 66 (4 … 33 add nothing).
    expect(h.cumulative()).toEqual([
      [1, 3],
      [2, 4],
      [66, 5],
    ]);
    expect(h.calls).toBe(5);
  });

  test("a percentile is the highest value of the bucket where the calls reach its share (the lowest for 0)", () => {
    const h = new LatencyHistogram();
    for (const ns of [500, 500, 500, 1500, 40_000]) h.record(ns);
    // 500 is in a bucket 2 ns wide, 1,500 in one 8 wide, 40,000 in one 256 wide from 39,936; the
    // share is rounded: 69% of 5 calls is the 3rd, 70% the 4th.
    expect([h.percentileNs(0), h.percentileNs(50), h.percentileNs(69), h.percentileNs(70), h.percentileNs(99), h.percentileNs(100)]).toEqual([
      500, 501, 501, 1503, 40_191, 40_191,
    ]);
  });

  test("values are clamped into 1 ns … 1 s, as Redis clamps them; a value at a level's edge counts there", () => {
    const h = new LatencyHistogram();
    h.record(0);
    h.record(1031); // the last value of 1,024's bucket (8 ns wide)
    h.record(1032); // the first past it
    h.record(5e9);
    expect(h.cumulative()).toEqual([
      [1, 2],
      [2, 3],
      [1_082_130, 4],
    ]);
  });
});

describe("svc's events", () => {
  const fast = lookupCommand("get")!;
  const set = lookupCommand("set")!;

  test("a batch of fast commands is one fast-command sample of the whole batch; with a SET in it, a command sample", () => {
    const clock = new ManualClock();
    const monitor = new LatencyMonitor(clock);
    monitor.thresholdMs = 5;
    const timing = new CommandTiming(clock, monitor);
    const stats = { calls: 0, usec: 0, rejectedCalls: 0, failedCalls: 0, latency: null };
    // 4 ms: under the threshold.
    timing.startBatched();
    clock.advance(4);
    timing.finishBatched(stats, fast);
    timing.settle();
    expect(monitor.events.size).toBe(0);
    // Three commands, 2 ms each: no one of them reaches 5 ms, the batch they waited in does.
    timing.startBatched();
    for (let i = 0; i < 3; i++) {
      clock.advance(2);
      timing.finishBatched(stats, fast);
    }
    timing.settle();
    expect([...monitor.events.keys()]).toEqual(["fast-command"]);
    expect(monitor.events.get("fast-command")!.latest.ms).toBe(6);
    clock.advance(1000);
    timing.startBatched();
    timing.finishBatched(stats, fast);
    clock.advance(7);
    timing.finishBatched(stats, set);
    timing.settle();
    expect(monitor.events.get("command")!.latest.ms).toBe(7);
  });

  test("each call of a batch is recorded in its command's histogram at its share of the batch", () => {
    const clock = new ManualClock();
    const timing = new CommandTiming(clock);
    const stats: CommandStats = { calls: 0, usec: 0, rejectedCalls: 0, failedCalls: 0, latency: null };
    timing.startBatched();
    for (let i = 0; i < 3; i++) {
      clock.advance(2);
      timing.finishBatched(stats, fast);
    }
    timing.settle();
    // 2 ms each: in [2^20, 2^21) ns, whose level is labelled 2,097,152 + 16,384 − 1 ns → 2,113 µs.
    expect(stats.latency!.cumulative()).toEqual([[2113, 3]]);
    timing.tracksLatency = false;
    timing.startBatched();
    timing.finishBatched(stats, fast);
    timing.settle();
    expect(stats.latency!.calls).toBe(3);
  });

  test("at most latencySamplesMax seconds are kept per event, the oldest dropped first", () => {
    const clock = new ManualClock();
    const monitor = new LatencyMonitor(clock);
    monitor.thresholdMs = 1;
    for (let i = 0; i <= latencySamplesMax; i++) {
      monitor.consider("command", 10 + i);
      clock.advance(1000);
    }
    const samples = monitor.events.get("command")!.samples;
    expect(samples).toHaveLength(latencySamplesMax);
    expect(samples[0]!.ms).toBe(11);
    expect(samples.at(-1)!.ms).toBe(10 + latencySamplesMax);
    // Off again: nothing more is kept.
    monitor.thresholdMs = 0;
    monitor.consider("command", 10_000);
    expect(monitor.events.get("command")!.maxMs).toBe(10 + latencySamplesMax);
  });

  test("the append-only file's writes: aof-write (everysec) and aof-fsync-always, for 64 MiB that take well over 1 ms", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-latency-aof-"));
    const big = "x".repeat(64 * 1024 * 1024);
    try {
      for (const [policy, event] of [
        ["everysec", "aof-write"],
        ["always", "aof-fsync-always"],
      ] as const) {
        const monitor = new LatencyMonitor(new ManualClock());
        monitor.thresholdMs = 1;
        const log = new AppendLog(join(dir, `${policy}.aof`), policy, 0, { latency: monitor });
        log.append(0, [["SET", "k", big]]);
        await log.covered();
        // Before close, whose own write of what is left (nothing) is not this test's.
        expect([...monitor.events.keys()], policy).toEqual([event]);
        expect(monitor.events.get(event)!.latest.ms).toBeGreaterThanOrEqual(1);
        await log.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an expiry cycle that deletes 100,000 keys is an expire-cycle sample; one with nothing to do is none", () => {
    const kv = harness();
    kv.run("CONFIG", "SET", "latency-monitor-threshold", "1");
    const cursors = new Map();
    activeExpireRun(kv.engine, cursors, 1000);
    expect(kv.engine.latency.events.size).toBe(0);
    // Off while the keys are written: on a busy machine one SET (a table growing) can take
    // over 1 ms and be a command sample, which is not what this test is about.
    kv.run("CONFIG", "SET", "latency-monitor-threshold", "0");
    for (let i = 0; i < 100_000; i += 1000) {
      for (let j = i; j < i + 1000; j++) kv.run("SET", `e${j}`, "v", "PX", "10");
    }
    kv.run("CONFIG", "SET", "latency-monitor-threshold", "1");
    kv.clock.advance(20);
    // A budget no loaded machine runs out of: what is checked is that a cycle which deletes
    // everything is sampled, not how fast it is (at 1 s, a busy CI machine stopped it part way).
    activeExpireRun(kv.engine, cursors, 60_000);
    expect(kv.engine.dbs[0]!.size).toBe(0);
    expect([...kv.engine.latency.events.keys()]).toEqual(["expire-cycle"]);
  });

  test("a memory check that evicts 10,000 keys at once is an eviction-cycle sample", () => {
    const kv = harness();
    for (let i = 0; i < 100_000; i += 1000) kv.run("MSET", ...Array.from({ length: 1000 }, (_, j) => [`k${i + j}`, "v".repeat(100)]).flat());
    kv.run("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
    kv.run("CONFIG", "SET", "latency-monitor-threshold", "1");
    kv.run("CONFIG", "SET", "maxmemory", "1mb");
    expect(kv.engine.dbs[0]!.size).toBeLessThan(100_000);
    expect([...kv.engine.latency.events.keys()]).toContain("eviction-cycle");
  });
});
