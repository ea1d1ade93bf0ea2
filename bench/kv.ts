/**
 * svc kv against redis-server on the same machine, with redis-benchmark driving both: the same
 * commands, clients and key range, one command at a time with the two servers interleaved (so a
 * noisy neighbour hurts both alike), without and with pipelining. Prints a markdown table of
 * requests per second and the ratio svc/redis, and the median ratio per pipeline depth — for svc
 * with each of its two RESP parsers (TypeScript and native), which is how the default is chosen.
 * Beside it, the CPU each request cost redis-server and svc (TypeScript parser) in the same runs:
 * throughput moves with the neighbours' load on a shared machine, CPU per request much less.
 *
 * Then memory: both servers load the same 1M small string keys (`key:<n>` → `value:<n>`) through
 * `redis-cli --pipe`, run MEMORY PURGE (jemalloc's purge for Redis, a full GC for us) and report
 * how much their resident set grew; then the same for 100k small hashes, lists, sets and sorted
 * sets of ten short items each.
 *
 * Then keys with a time to live, as a cache holds them (lib/kv-ttl.ts), Lua scripts run by
 * EVALSHA (lib/kv-scripts.ts), BullMQ's job queue, which runs on scripts (lib/kv-bullmq.ts), and
 * streams (lib/kv-streams.ts).
 *
 * Then persistence: both with their append-only files, appendfsync always and everysec
 * (lib/kv-aof.ts); the same data's BGREWRITEAOF and load times (lib/kv-aof-files.ts); and svc's
 * REST API against its own RESP (lib/kv-rest.ts).
 *
 * Every server first gets an unmeasured warm-up run of the same tests (lib/redis-benchmark.ts).
 *
 * SVC_BENCH_KV_REQUESTS lowers the request count for a quick look (default 500000);
 * SVC_BENCH_KV_MEMORY_KEYS the key count of the memory test (default 1000000);
 * SVC_BENCH_KV_PARTS runs only the parts it names, comma-separated, of: engine (the table and
 * memory), ttl, scripts, bullmq, streams, aof, aof-files, rest (default all of them).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKv, startRedis, type ServerProcess } from "../test/kv/support/servers.ts";
import { removeTempDirs } from "../test/support/temp-dir.ts";
import { aofComparison } from "./lib/kv-aof.ts";
import { aofFileComparison } from "./lib/kv-aof-files.ts";
import { cpuSeconds } from "./lib/process-cpu.ts";
import { restComparison } from "./lib/kv-rest.ts";
import { ttlComparison } from "./lib/kv-ttl.ts";
import { scriptComparison } from "./lib/kv-scripts.ts";
import { bullmqComparison } from "./lib/kv-bullmq.ts";
import { streamComparison } from "./lib/kv-streams.ts";
import { encodeCommand } from "../test/kv/support/resp-client.ts";
import { fmt, median, purgedRssBytes, redisBenchmark, redisCli, redisVersion, warmUp } from "./lib/redis-benchmark.ts";

const tests = ["set", "get", "incr", "lpush", "rpush", "lpop", "sadd", "hset", "zadd", "lrange_100", "mset"];
const requests = Number(process.env.SVC_BENCH_KV_REQUESTS ?? 500_000);
const clients = 50;
const keyRange = 100_000;
const pipelines = [1, 16];
/**
 * Interleaved rounds per test, each server's median taken. A -P 16 run of 500k requests lasts
 * under a second, so one scheduling hiccup of a shared machine swings it by a third (two svc
 * servers running the same code once measured 0.71× and 0.91× in one table); -P 1 runs last
 * several seconds and average their hiccups out. With 3 rounds, the -P 16 median of one
 * unchanged build still moved 0.98–1.05× between runs (2026-11-26); 5 cost ~40 s more.
 */
const roundsFor = (pipeline: number) => (pipeline === 1 ? 1 : 5);
const memoryKeys = Number(process.env.SVC_BENCH_KV_MEMORY_KEYS ?? 1_000_000);

const parts = ["engine", "ttl", "scripts", "bullmq", "streams", "aof", "aof-files", "rest"] as const;
const partsAsked = (process.env.SVC_BENCH_KV_PARTS ?? parts.join(",")).split(",").map((part) => part.trim());
for (const part of partsAsked) {
  if (!(parts as readonly string[]).includes(part)) throw new Error(`SVC_BENCH_KV_PARTS names '${part}': the parts are ${parts.join(", ")}`);
}
const runs = (part: (typeof parts)[number]) => partsAsked.includes(part);

async function main(): Promise<void> {
  if (runs("engine")) await engineComparison();
  if (runs("ttl")) await ttlComparison();
  if (runs("scripts")) await scriptComparison();
  if (runs("bullmq")) await bullmqComparison();
  if (runs("streams")) await streamComparison();
  if (runs("aof")) await aofComparison();
  if (runs("aof-files")) await aofFileComparison();
  if (runs("rest")) await restComparison();
}

/** The table of redis-benchmark's tests on both servers, then memory. */
async function engineComparison(): Promise<void> {
  let redis: ServerProcess | undefined;
  let kvTs: ServerProcess | undefined;
  let kvNative: ServerProcess | undefined;
  try {
    // Persistence off on both sides, as redis-server runs here: this table compares the engines.
    const noAof = ["--appendonly", "no"];
    [redis, kvTs, kvNative] = await Promise.all([startRedis(), startKv(["--resp-parser", "ts", ...noAof]), startKv(["--resp-parser", "native", ...noAof])]);
    const servers = [redis, kvTs, kvNative];
    await warmUp(
      servers.map((s) => s.port),
      tests,
      keyRange,
    );
    console.log(`### kv: svc kv vs redis-server ${await redisVersion()} (redis-benchmark -c ${clients} -n ${requests} -r ${keyRange})\n`);
    console.log("svc runs twice: with the TypeScript RESP parser and with the native (napi-rs) one.\n");
    for (const pipeline of pipelines) {
      const rounds = roundsFor(pipeline);
      if (rounds > 1) console.log(`Median of ${rounds} interleaved rounds per server.\n`);
      console.log(`| -P ${pipeline} | redis ops/s | svc ts ops/s | svc native ops/s | ts/redis | native/redis |`);
      console.log("|---|---:|---:|---:|---:|---:|");
      const tsRatios: number[] = [];
      const nativeRatios: number[] = [];
      const cpuRows: string[] = [];
      const cpuRatios: number[] = [];
      for (const [i, test] of tests.entries()) {
        // Rotate which server goes first, so warm caches and drift do not favour one side.
        const order = servers.map((_, j) => servers[(i + j) % servers.length]!);
        const runs = new Map<ServerProcess, { opsPerSec: number; cpuMicrosPerRequest: number }[]>(servers.map((s) => [s, []]));
        for (let round = 0; round < rounds; round++) {
          for (const server of order) {
            const cpuBefore = cpuSeconds(server.proc.pid);
            const opsPerSec = await redisBenchmark({ port: server.port, test, pipeline, requests, clients, keyRange });
            runs.get(server)!.push({ opsPerSec, cpuMicrosPerRequest: ((cpuSeconds(server.proc.pid) - cpuBefore) * 1e6) / requests });
          }
        }
        const medianOf = (server: ServerProcess) => ({
          opsPerSec: median(runs.get(server)!.map((r) => r.opsPerSec)),
          cpuMicrosPerRequest: median(runs.get(server)!.map((r) => r.cpuMicrosPerRequest)),
        });
        const base = medianOf(redis);
        const ts = medianOf(kvTs);
        const native = medianOf(kvNative);
        tsRatios.push(ts.opsPerSec / base.opsPerSec);
        nativeRatios.push(native.opsPerSec / base.opsPerSec);
        console.log(
          `| ${test} | ${fmt(base.opsPerSec)} | ${fmt(ts.opsPerSec)} | ${fmt(native.opsPerSec)} | ${tsRatios.at(-1)!.toFixed(2)}× | ${nativeRatios.at(-1)!.toFixed(2)}× |`,
        );
        cpuRatios.push(base.cpuMicrosPerRequest / ts.cpuMicrosPerRequest);
        cpuRows.push(`| ${test} | ${base.cpuMicrosPerRequest.toFixed(2)} | ${ts.cpuMicrosPerRequest.toFixed(2)} | ${cpuRatios.at(-1)!.toFixed(2)}× |`);
      }
      console.log(`| **median** | | | | **${median(tsRatios).toFixed(2)}×** | **${median(nativeRatios).toFixed(2)}×** |\n`);
      console.log(`Server CPU per request (user + system, all threads, µs), same runs; redis/svc above 1 means svc spends less:\n`);
      console.log(`| -P ${pipeline} | redis | svc ts | redis/svc |`);
      console.log("|---|---:|---:|---:|");
      for (const row of cpuRows) console.log(row);
      console.log(`| **median** | | | **${median(cpuRatios).toFixed(2)}×** |\n`);
      await Promise.all(servers.map((s) => redisCli(s.port, ["FLUSHALL"])));
    }
    await memory(redis, kvTs);
  } finally {
    await Promise.all([redis?.stop(), kvTs?.stop(), kvNative?.stop()]);
  }
}

/** Items in each key of the small collections' memory test. */
const collectionItems = 10;
/** Each collection type's command filling key `i` with collectionItems short items. */
const collectionFills: Record<string, (i: number) => string[]> = {
  hash: (i) => ["HSET", `hash:${i}`, ...Array.from({ length: collectionItems }, (_, j) => [`field${j}`, `value${j}`]).flat()],
  list: (i) => ["RPUSH", `list:${i}`, ...Array.from({ length: collectionItems }, (_, j) => `item${j}`)],
  set: (i) => ["SADD", `set:${i}`, ...Array.from({ length: collectionItems }, (_, j) => `member${j}`)],
  zset: (i) => ["ZADD", `zset:${i}`, ...Array.from({ length: collectionItems }, (_, j) => [String(j), `member${j}`]).flat()],
};

async function memory(redis: ServerProcess, kv: ServerProcess): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-kv-"));
  const servers = [
    ["redis-server", redis],
    ["svc kv", kv],
  ] as const;
  try {
    const file = join(dir, "keys.resp");
    const parts: Buffer[] = [];
    for (let i = 0; i < memoryKeys; i++) parts.push(encodeCommand(["SET", `key:${i}`, `value:${i}`]));
    writeFileSync(file, Buffer.concat(parts));
    console.log(`### kv: memory for ${fmt(memoryKeys)} small string keys (RSS growth after MEMORY PURGE)\n`);
    console.log("| server | RSS before | RSS after | growth | bytes/key |");
    console.log("|---|---:|---:|---:|---:|");
    const growth = new Map<ServerProcess, number>();
    for (const [name, server] of servers) {
      const { before, after } = await rssAround(server, name, file, memoryKeys);
      growth.set(server, after - before);
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      console.log(`| ${name} | ${mib(before)} | ${mib(after)} | ${mib(after - before)} | ${((after - before) / memoryKeys).toFixed(0)} |`);
    }
    console.log(`| **svc/redis** | | | **${(growth.get(kv)! / growth.get(redis)!).toFixed(2)}×** | |\n`);

    // The same keys with a time to live, as a cache holds them: Redis keeps the time in a second
    // dict, svc in the key's entry (docs/kv.md).
    const ttlParts: Buffer[] = [];
    for (let i = 0; i < memoryKeys; i++) ttlParts.push(encodeCommand(["SET", `key:${i}`, `value:${i}`, "EX", "36000"]));
    writeFileSync(file, Buffer.concat(ttlParts));
    console.log(`### kv: memory for ${fmt(memoryKeys)} small string keys set with EX (RSS growth after MEMORY PURGE, fresh servers)\n`);
    console.log("| server | growth | bytes/key |");
    console.log("|---|---:|---:|");
    const freshForTtl = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
    try {
      const ttlGrowth: number[] = [];
      for (const [i, server] of freshForTtl.entries()) {
        const { before, after } = await rssAround(server, servers[i]![0], file, memoryKeys);
        ttlGrowth.push(after - before);
        console.log(`| ${servers[i]![0]} | ${((after - before) / 1024 / 1024).toFixed(1)} MiB | ${((after - before) / memoryKeys).toFixed(0)} |`);
      }
      console.log(`| **svc/redis** | **${(ttlGrowth[1]! / ttlGrowth[0]!).toFixed(2)}×** | |\n`);
    } finally {
      await Promise.all(freshForTtl.map((server) => server.stop()));
    }

    const keys = Math.round(memoryKeys / 10);
    console.log(`### kv: memory for ${fmt(keys)} small collections of ${collectionItems} short items each (RSS growth after MEMORY PURGE, bytes/key)\n`);
    console.log("| type | redis-server | svc kv | svc/redis |");
    console.log("|---|---:|---:|---:|");
    for (const [type, fill] of Object.entries(collectionFills)) {
      const fills: Buffer[] = [];
      for (let i = 0; i < keys; i++) fills.push(encodeCommand(fill(i)));
      writeFileSync(file, Buffer.concat(fills));
      // Fresh servers for each type: memory the last type freed may not have gone back to the
      // OS yet (Redis once measured a negative growth so), and would hide in the baseline.
      const fresh = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
      const perKey: number[] = [];
      try {
        for (const [i, server] of fresh.entries()) {
          const { before, after } = await rssAround(server, servers[i]![0], file, keys);
          perKey.push((after - before) / keys);
        }
      } finally {
        await Promise.all(fresh.map((server) => server.stop()));
      }
      console.log(`| ${type} | ${perKey[0]!.toFixed(0)} | ${perKey[1]!.toFixed(0)} | ${(perKey[1]! / perKey[0]!).toFixed(2)}× |`);
    }
    console.log("");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The server's resident set before and after it runs the `replies` commands in `file`, on an empty, purged dataset. */
async function rssAround(server: ServerProcess, name: string, file: string, replies: number): Promise<{ before: number; after: number }> {
  await redisCli(server.port, ["FLUSHALL"]);
  const before = await purgedRssBytes(server);
  const piped = await redisCli(server.port, ["--pipe"], file);
  if (!piped.includes(`errors: 0, replies: ${replies}`)) throw new Error(`loading keys into ${name} failed:\n${piped}`);
  return { before, after: await purgedRssBytes(server) };
}

try {
  await main();
} finally {
  // The directories of the servers the parts started (test/kv/support/servers.ts makes them).
  removeTempDirs();
}
