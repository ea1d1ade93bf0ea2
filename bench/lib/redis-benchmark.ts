/**
 * redis-benchmark and redis-cli as the kv benchmarks drive them, and the small helpers their
 * tables share.
 */
import { rssBytes, type ServerProcess } from "../../test/kv/support/servers.ts";

export interface BenchmarkRun {
  port: number;
  /** A redis-benchmark test name (-t), or "" with `command`. */
  test: string;
  /** A command line to run instead of a named test; `__rand_int__` in it takes a random key number. */
  command?: string[];
  pipeline: number;
  requests: number;
  clients: number;
  keyRange: number;
}

/** Requests per second redis-benchmark reports for one test against one server. */
export async function redisBenchmark(r: BenchmarkRun): Promise<number> {
  const test = r.command === undefined ? ["-t", r.test] : [];
  const args = ["-p", r.port, ...test, "-r", r.keyRange, "-c", r.clients, "-n", r.requests, "-P", r.pipeline].map(String);
  const proc = Bun.spawn(["redis-benchmark", ...args, "--csv", ...(r.command ?? [])], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`redis-benchmark failed: ${await new Response(proc.stderr).text()}`);
  // CSV: "test","rps",... — one data row per test (lrange_100 reports as LRANGE_100 (first 100 elements)).
  const row = out.split("\n").find((line) => line.startsWith('"') && !line.startsWith('"test"'));
  if (row === undefined) throw new Error(`no result in redis-benchmark output:\n${out}`);
  return Number(row.split(",")[1]!.replaceAll('"', ""));
}

/** Requests per test in a warm-up run. */
const warmUpRequests = 100_000;

/**
 * Runs `tests` once against every server, pipelined, without measuring, then empties them.
 * svc runs on a JIT: its first hundred thousand requests are partly interpreted while the
 * compiler tiers its hot functions up, which a server that has been up for a minute is long past.
 * Measuring from a cold start would time the compiler, not the server; redis-server gets the
 * same run so both are measured from the same state.
 */
export async function warmUp(ports: number[], tests: string[], keyRange: number): Promise<void> {
  for (const port of ports) {
    for (const test of tests) await redisBenchmark({ port, test, pipeline: 16, requests: warmUpRequests, clients: 50, keyRange });
    await redisCli(port, ["FLUSHALL"]);
  }
}

export async function redisCli(port: number, args: string[], stdinFile?: string): Promise<string> {
  const proc = Bun.spawn(["redis-cli", "-p", String(port), ...args], {
    stdin: stdinFile === undefined ? "ignore" : Bun.file(stdinFile),
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`redis-cli ${args.join(" ")} failed: ${await new Response(proc.stderr).text()}`);
  return out;
}

/** Time for freed pages to go back to the OS after MEMORY PURGE before RSS is read. */
const purgeSettleMs = 2000;

/**
 * A server's resident set once MEMORY PURGE (jemalloc's purge for Redis, a full GC for svc) has
 * given back what it can, for the memory tables.
 */
export async function purgedRssBytes(server: ServerProcess): Promise<number> {
  await redisCli(server.port, ["MEMORY", "PURGE"]);
  await Bun.sleep(purgeSettleMs);
  return rssBytes(server.proc.pid);
}

export async function redisVersion(): Promise<string> {
  const out = await new Response(Bun.spawn(["redis-server", "--version"], { stdout: "pipe" }).stdout).text();
  return /v=([\d.]+)/.exec(out)?.[1] ?? "unknown";
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/**
 * `rounds` measurements of redis-server and of svc, taken in turns (svc first unless
 * `redisFirst`) so that a change in the machine's load falls on both: `measure` runs once
 * against the server it is given. Each server's, in order.
 */
export async function interleavedRuns<S>(
  redis: S,
  kv: S,
  redisFirst: boolean,
  rounds: number,
  measure: (server: S) => Promise<number>,
): Promise<{ redis: number[]; kv: number[] }> {
  const runs = { redis: [] as number[], kv: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    for (const which of redisFirst ? (["redis", "kv"] as const) : (["kv", "redis"] as const)) {
      runs[which].push(await measure(which === "redis" ? redis : kv));
    }
  }
  return runs;
}

/** The median of each server's interleavedRuns. */
export async function interleavedMedians<S>(
  redis: S,
  kv: S,
  redisFirst: boolean,
  rounds: number,
  measure: (server: S) => Promise<number>,
): Promise<[redis: number, kv: number]> {
  const runs = await interleavedRuns(redis, kv, redisFirst, rounds, measure);
  return [median(runs.redis), median(runs.kv)];
}

/** The lowest and highest of svc's measure over redis-server's in the same round, as "0.95–1.10×". */
export function roundRatios(redisRuns: readonly number[], kvRuns: readonly number[]): string {
  const ratios = kvRuns.map((k, i) => k / redisRuns[i]!);
  return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
}
