/**
 * Lua scripts, as applications use them: a rate limiter (INCR, and EXPIRE on the first hit) and
 * a compare-and-set, each run by EVALSHA over 100k keys, and the rate limiter as a Redis 7
 * function run by FCALL, with and without pipelining, against redis-server, interleaved.
 * Persistence is off on both: this compares the script engines and the way each hands a
 * script's commands to the server. Part of `svc bench kv`.
 */
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { fmt, interleavedRuns, median, redisBenchmark, redisCli, roundRatios } from "./redis-benchmark.ts";

const clients = 50;
const keyRange = 100_000;
/**
 * Interleaved rounds, each server's median taken. At -P 1 both servers spend ~65% of their CPU in
 * the kernel's TCP and are at par (2026-12-01: 93,414 and 93,132 requests/s, the same syscalls),
 * so single rounds fall either side: nine make the median steadier than five did.
 */
const rounds = 9;
const requests = Number(process.env.SVC_BENCH_KV_SCRIPT_REQUESTS ?? 200_000);

const scripts = [
  {
    name: "rate limiter",
    body: "local n = redis.call('incr', KEYS[1]) if n == 1 then redis.call('expire', KEYS[1], 60) end return n",
    args: ["1", "rate:__rand_int__"],
  },
  {
    name: "compare-and-set",
    body: "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2]) end return redis.call('set', KEYS[1], ARGV[1])",
    args: ["1", "cas:__rand_int__", "a", "b"],
  },
];

/** The rate limiter as a library's function, which FCALL runs. */
const rateLimiterLibrary = `#!lua name=ratelimit
redis.register_function('ratelimit', function(keys)
  local n = redis.call('incr', keys[1]) if n == 1 then redis.call('expire', keys[1], 60) end return n
end)`;

export async function scriptComparison(): Promise<void> {
  let redis: ServerProcess | undefined;
  let kv: ServerProcess | undefined;
  try {
    [redis, kv] = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
    const shas: string[] = [];
    for (const script of scripts) {
      const [fromRedis, fromKv] = await Promise.all([redis, kv].map((s) => redisCli(s.port, ["SCRIPT", "LOAD", script.body])));
      if (fromRedis!.trim() !== fromKv!.trim()) throw new Error(`the servers name a script differently: ${fromRedis} and ${fromKv}`);
      shas.push(fromKv!.trim());
    }
    await Promise.all([redis, kv].map((s) => redisCli(s.port, ["FUNCTION", "LOAD", rateLimiterLibrary])));
    const cases = [
      ...scripts.map((script, i) => ({ name: script.name, command: ["EVALSHA", shas[i]!, ...script.args] })),
      { name: "rate limiter by FCALL", command: ["FCALL", "ratelimit", "1", "rate:__rand_int__"] },
    ];
    for (const server of [redis, kv]) {
      for (const { command } of cases) await redisBenchmark({ port: server.port, test: "", command, pipeline: 16, requests: keyRange, clients, keyRange });
    }
    console.log(
      `### kv: Lua scripts by EVALSHA, and a function by FCALL (redis-benchmark -c ${clients} -n ${fmt(requests)} -r ${fmt(keyRange)}), median of ${rounds} interleaved rounds after one unmeasured round each\n`,
    );
    console.log("| script | redis ops/s | svc ops/s | svc/redis | svc/redis round by round, lowest–highest |");
    console.log("|---|---:|---:|---:|---:|");
    for (const pipeline of [1, 16]) {
      for (const [i, { name, command }] of cases.entries()) {
        const measure = (server: ServerProcess) => redisBenchmark({ port: server.port, test: "", command, pipeline, requests, clients, keyRange });
        // One unmeasured round on each first: svc's compiled code settles again when the script
        // or the pipeline depth changes (its first five rate limiter rounds at -P 16 after those
        // at -P 1 ran 293k, 238k, 309k, 326k, 325k a second, 2026-11-30).
        for (const server of [redis, kv]) await measure(server);
        const runs = await interleavedRuns(redis, kv, i % 2 === 0, rounds, measure);
        const [r, k] = [median(runs.redis), median(runs.kv)];
        console.log(`| ${name} -P ${pipeline} | ${fmt(r)} | ${fmt(k)} | ${(k / r).toFixed(2)}× | ${roundRatios(runs.redis, runs.kv)} |`);
      }
    }
    console.log("");
  } finally {
    await Promise.all([redis?.stop(), kv?.stop()]);
  }
}

if (import.meta.main) await scriptComparison();
