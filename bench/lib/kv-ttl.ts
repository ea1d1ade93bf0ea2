/**
 * Keys with a time to live, as a cache holds them: both servers are filled with 100k keys set
 * with EX, then redis-benchmark runs GET over them and SET … EX on them, with and without
 * pipelining, the two servers interleaved. Persistence is off on both: this compares the engines.
 * Part of `svc bench kv`.
 *
 * Every read of such a key checks its time; until 2026-11-27 svc looked it up in a second map for
 * that, and GET here ran at 0.65–0.75× Redis.
 */
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { fmt, interleavedMedians, redisBenchmark } from "./redis-benchmark.ts";

const clients = 50;
const keyRange = 100_000;
/** Long enough to outlast the run: nothing expires while it is measured. */
const ttlSeconds = "36000";
const rounds = 5;
const requests = Number(process.env.SVC_BENCH_KV_REQUESTS ?? 500_000);
/** redis-benchmark's own key name for __rand_int__, so GET (-t get) reads the keys SET wrote. */
const setWithTtl = ["SET", "key:__rand_int__", "xxx", "EX", ttlSeconds];

const cases = [
  { name: "get", test: "get", command: undefined },
  { name: "set … ex", test: "", command: setWithTtl },
];

export async function ttlComparison(): Promise<void> {
  let redis: ServerProcess | undefined;
  let kv: ServerProcess | undefined;
  try {
    [redis, kv] = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
    // Fill (and warm up): enough random SETs that nearly every key of the range has a time.
    for (const server of [redis, kv]) {
      await redisBenchmark({ port: server.port, test: "", command: setWithTtl, pipeline: 16, requests: 10 * keyRange, clients, keyRange });
      await redisBenchmark({ port: server.port, test: "get", pipeline: 16, requests: 2 * keyRange, clients, keyRange });
    }
    console.log(
      `### kv: keys with a time to live (${fmt(keyRange)} keys set with EX; redis-benchmark -c ${clients} -n ${fmt(requests)} -r ${fmt(keyRange)}), median of ${rounds} interleaved rounds\n`,
    );
    console.log("| test | redis ops/s | svc ops/s | svc/redis |");
    console.log("|---|---:|---:|---:|");
    for (const pipeline of [1, 16]) {
      for (const [i, c] of cases.entries()) {
        const measure = (server: ServerProcess) =>
          redisBenchmark({ port: server.port, test: c.test, command: c.command, pipeline, requests, clients, keyRange });
        const [r, k] = await interleavedMedians(redis, kv, i % 2 === 0, rounds, measure);
        console.log(`| ${c.name} -P ${pipeline} | ${fmt(r)} | ${fmt(k)} | ${(k / r).toFixed(2)}× |`);
      }
    }
    console.log("");
  } finally {
    await Promise.all([redis?.stop(), kv?.stop()]);
  }
}
