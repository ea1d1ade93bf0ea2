// The latency monitor's expire-cycle event side by side with redis-server 7.0: 200,000 keys that
// expire together keep the active expiry cycle busy past a 1 ms threshold, and both servers then
// report expire-cycle in LATENCY LATEST and its samples in LATENCY HISTORY; with the cycle
// switched off (DEBUG SET-ACTIVE-EXPIRE 0), or the monitor off, there is no such event.
import { expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

const keys = 200_000;
const batch = 10_000;
/** Each round loads 200,000 keys into a server and waits for them to go. */
const roundsTimeoutMs = 60_000;

/** Sets `keys` keys that expire in 200 ms, then waits (at most 10 s) for the server to have none left or for `untilMs`. */
async function expireMany(client: RespClient, untilMs = 10_000): Promise<void> {
  for (let i = 0; i < keys; i += batch) await client.pipeline(Array.from({ length: batch }, (_, j) => ["SET", `k${i + j}`, "v", "PX", "200"]));
  const deadline = Date.now() + untilMs;
  while (Date.now() < deadline && (await client.call("DBSIZE")) !== 0n) await Bun.sleep(50);
}

/** LATENCY LATEST's event names, and LATENCY HISTORY of expire-cycle, after expireMany under `setup`. */
async function after(port: number, setup: string[][], untilMs?: number): Promise<{ events: string[]; samples: RespValue[][] }> {
  const client = await RespClient.connect(port);
  await client.pipeline([["FLUSHALL"], ["LATENCY", "RESET"], ...setup]);
  await expireMany(client, untilMs);
  const latest = (await client.call("LATENCY", "LATEST")) as RespValue[][];
  const samples = (await client.call("LATENCY", "HISTORY", "expire-cycle")) as RespValue[][];
  await client.pipeline([["CONFIG", "SET", "latency-monitor-threshold", "0"], ["DEBUG", "SET-ACTIVE-EXPIRE", "1"], ["FLUSHALL"], ["LATENCY", "RESET"]]);
  client.close();
  return { events: latest.map((event) => event[0] as string), samples };
}

test(
  "a busy expiry cycle past the threshold is an expire-cycle event in both servers",
  async () => {
    const setup = [["CONFIG", "SET", "latency-monitor-threshold", "1"]];
    const [redis, kv] = [await after(servers.redis.port, setup), await after(servers.kv.port, setup)];
    expect(redis.events).toContain("expire-cycle");
    expect(kv.events).toContain("expire-cycle");
    // Each sample: a Unix time in seconds and the worst cycle of that second in ms, at the threshold or over.
    for (const samples of [redis.samples, kv.samples]) {
      expect(samples.length).toBeGreaterThan(0);
      for (const [time, ms] of samples) {
        expect(typeof time).toBe("bigint");
        expect(ms as bigint).toBeGreaterThanOrEqual(1n);
      }
    }
  },
  roundsTimeoutMs,
);

test(
  "with the expiry cycle off, or the monitor off, there is no expire-cycle event in either server",
  async () => {
    for (const setup of [
      [
        ["CONFIG", "SET", "latency-monitor-threshold", "1"],
        ["DEBUG", "SET-ACTIVE-EXPIRE", "0"],
      ],
      [["CONFIG", "SET", "latency-monitor-threshold", "0"]],
    ]) {
      // Long enough for a cycle to have run had it been on: the keys are set and expire meanwhile.
      const [redis, kv] = [await after(servers.redis.port, setup, 500), await after(servers.kv.port, setup, 500)];
      expect(kv.events.includes("expire-cycle")).toBe(redis.events.includes("expire-cycle"));
      expect(kv.events).not.toContain("expire-cycle");
      expect(kv.samples).toEqual([]);
    }
  },
  roundsTimeoutMs,
);
