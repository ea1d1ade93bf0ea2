/**
 * Streams, as applications use them: appending events to many capped streams (`XADD … MAXLEN ~`)
 * and to one hot stream, reading the oldest and the newest entries of a long stream, and a
 * consumer group's reads (XREADGROUP `>`, each delivery becoming pending; each measurement starts
 * a new group, so every read finds entries), with and without
 * pipelining, against redis-server, interleaved. Persistence is off on both. Then the memory a
 * stream of a million two-field entries takes, on fresh servers. Part of `svc bench kv`.
 */
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { fmt, interleavedMedians, purgedRssBytes, redisBenchmark, redisCli } from "./redis-benchmark.ts";

const clients = 50;
const rounds = 5;
const requests = Number(process.env.SVC_BENCH_KV_STREAM_REQUESTS ?? 200_000);
/** Entries the read tests' stream starts with. */
const longStreamEntries = 300_000;
/** Capped streams the first test appends to, and the cap of each. */
const cappedStreams = 1000;
/** Entries of the memory test's stream. */
const memoryEntries = 1_000_000;

/** A case's command, and whether each measurement starts from a fresh group (its reads consume the stream). */
const cases: { name: string; command: string[]; freshGroup?: boolean }[] = [
  { name: "XADD to 1,000 capped streams", command: ["XADD", "events:__rand_int__", "MAXLEN", "~", "1000", "*", "type", "click", "user", "__rand_int__"] },
  { name: "XADD to one stream", command: ["XADD", "hot", "*", "type", "click", "user", "__rand_int__"] },
  { name: "XRANGE first 10", command: ["XRANGE", "long", "-", "+", "COUNT", "10"] },
  { name: "XREVRANGE last 10", command: ["XREVRANGE", "long", "+", "-", "COUNT", "10"] },
  { name: "XREADGROUP 1 new entry", command: ["XREADGROUP", "GROUP", "workers", "w__rand_int__", "COUNT", "1", "STREAMS", "long", ">"], freshGroup: true },
];

export async function streamComparison(): Promise<void> {
  let redis: ServerProcess | undefined;
  let kv: ServerProcess | undefined;
  try {
    [redis, kv] = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
    for (const server of [redis, kv]) {
      // The long stream, then a warm-up of every case, unmeasured (lib/redis-benchmark.ts: warmUp).
      await redisBenchmark({
        port: server.port,
        test: "",
        command: ["XADD", "long", "*", "type", "view", "user", "__rand_int__"],
        pipeline: 16,
        requests: longStreamEntries,
        clients,
        keyRange: 100_000,
      });
      for (const c of cases.slice(0, 4))
        await redisBenchmark({ port: server.port, test: "", command: c.command, pipeline: 16, requests: 100_000, clients, keyRange: cappedStreams });
    }
    console.log(
      `### kv: streams (redis-benchmark -c ${clients} -n ${fmt(requests)}; a ${fmt(longStreamEntries)}-entry stream for the reads), median of ${rounds} interleaved rounds\n`,
    );
    console.log("| test | redis ops/s | svc ops/s | svc/redis |");
    console.log("|---|---:|---:|---:|");
    for (const pipeline of [1, 16]) {
      for (const [i, c] of cases.entries()) {
        const measure = async (server: ServerProcess) => {
          if (c.freshGroup) {
            await redisCli(server.port, ["XGROUP", "DESTROY", "long", "workers"]);
            await redisCli(server.port, ["XGROUP", "CREATE", "long", "workers", "0"]);
          }
          return redisBenchmark({ port: server.port, test: "", command: c.command, pipeline, requests, clients, keyRange: cappedStreams });
        };
        const [r, k] = await interleavedMedians(redis, kv, i % 2 === 0, rounds, measure);
        console.log(`| ${c.name} -P ${pipeline} | ${fmt(r)} | ${fmt(k)} | ${(k / r).toFixed(2)}× |`);
      }
    }
    console.log("");
  } finally {
    await Promise.all([redis?.stop(), kv?.stop()]);
  }
  await memoryComparison();
}

/** RSS growth of a fresh server of each kind for one stream of memoryEntries entries, after MEMORY PURGE. */
async function memoryComparison(): Promise<void> {
  let redis: ServerProcess | undefined;
  let kv: ServerProcess | undefined;
  try {
    [redis, kv] = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
    const growth = new Map<ServerProcess, number>();
    for (const server of [redis, kv]) {
      const before = await purgedRssBytes(server);
      await redisBenchmark({
        port: server.port,
        test: "",
        command: ["XADD", "s", "*", "type", "click", "user", "__rand_int__"],
        pipeline: 16,
        requests: memoryEntries,
        clients,
        keyRange: 1_000_000,
      });
      growth.set(server, ((await purgedRssBytes(server)) - before) / memoryEntries);
    }
    console.log(`### kv: memory for one stream of ${fmt(memoryEntries)} entries (\`type click user <n>\`; RSS growth after MEMORY PURGE, fresh servers)\n`);
    console.log("| server | bytes/entry |");
    console.log("|---|---:|");
    console.log(`| redis-server | ${growth.get(redis)!.toFixed(0)} |`);
    console.log(`| svc kv | ${growth.get(kv)!.toFixed(0)} |`);
    console.log(`\nsvc/redis: ${(growth.get(kv)! / growth.get(redis)!).toFixed(2)}× (below 1 means svc uses less)\n`);
  } finally {
    await Promise.all([redis?.stop(), kv?.stop()]);
  }
}

if (import.meta.main) await streamComparison();
