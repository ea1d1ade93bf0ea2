/**
 * kv with its append-only file against redis-server with its own, same settings on both sides:
 * redis-benchmark SET, INCR and LPUSH, with and without pipelining, for appendfsync always and
 * everysec, the two servers interleaved, each warmed up first. Part of `svc bench kv`.
 *
 * `always` runs fewer requests: every reply waits for an fdatasync (shared by whatever arrived
 * meanwhile), so a run takes seconds per thousand requests on a slow disk.
 *
 * `everysec` also runs the null server (null-server.ts), interleaved with the two: a server that
 * does no work. At -P 16 it shows how far the servers are from what the client can drive. At
 * -P 1 on two cores it gets no more than they do, often less: there the rate is set by the
 * client and the scheduler (docs/kv.md, "Append-only file"), not by what a request costs the
 * server, and the ratio cannot show a margin either way.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { startNullServer } from "./null-server.ts";
import { fmt, median, redisBenchmark, warmUp } from "./redis-benchmark.ts";

const tests = ["set", "incr", "lpush"];
const pipelines = [1, 16];
const clients = 50;
const keyRange = 100_000;
/**
 * Interleaved rounds per test, each server's median taken: with one, a single run of the
 * everysec LPUSH -P 16 test read 0.98× where the same build gave 1.11× and 1.19–1.23× in
 * scripts run around it (2026-11-26). With three, the `always` -P 1 rows of one build read
 * 0.89–1.09× in one run and 0.98–1.06× in the next (2026-11-27), and Redis's own rate moved
 * 47k–66k between back-to-back runs: five rounds of twice the requests cost ~2 minutes more.
 */
const rounds = 5;
const requestsByPolicy: Record<string, number> = {
  always: Number(process.env.SVC_BENCH_KV_AOF_ALWAYS_REQUESTS ?? 100_000),
  everysec: Number(process.env.SVC_BENCH_KV_REQUESTS ?? 500_000),
};

export async function aofComparison(): Promise<void> {
  for (const [policy, requests] of Object.entries(requestsByPolicy)) {
    const dirs = [mkdtempSync(join(tmpdir(), "svc-bench-aof-")), mkdtempSync(join(tmpdir(), "svc-bench-aof-"))];
    const settings = ["--appendonly", "yes", "--appendfsync", policy];
    // A server that writes nothing has nothing to compare with `always`, whose cost is the disk.
    const withNullServer = policy === "everysec";
    let redis: ServerProcess | undefined;
    let kv: ServerProcess | undefined;
    let nullServer: ServerProcess | undefined;
    try {
      [redis, kv, nullServer] = await Promise.all([
        startRedis(["--dir", dirs[0]!, ...settings]),
        startKv(["--dir", dirs[1]!, ...settings]),
        withNullServer ? startNullServer() : undefined,
      ]);
      await warmUp([redis.port, kv.port], tests, keyRange);
      console.log(
        `### kv: append-only file, appendfsync ${policy} (redis-benchmark -c ${clients} -n ${requests} -r ${keyRange}), median of ${rounds} interleaved rounds\n`,
      );
      if (nullServer === undefined) {
        console.log("| test | redis ops/s | svc ops/s | svc/redis |");
        console.log("|---|---:|---:|---:|");
      } else {
        console.log("| test | redis ops/s | svc ops/s | svc/redis | null server ops/s | null/redis |");
        console.log("|---|---:|---:|---:|---:|---:|");
      }
      const ratios: number[] = [];
      for (const pipeline of pipelines) {
        for (const [i, test] of tests.entries()) {
          const servers = nullServer === undefined ? [redis, kv] : [redis, kv, nullServer];
          const order = i % 2 === 0 ? servers : servers.toReversed();
          const runs = new Map<ServerProcess, number[]>(order.map((s) => [s, []]));
          for (let round = 0; round < rounds; round++) {
            for (const server of order) runs.get(server)!.push(await redisBenchmark({ port: server.port, test, pipeline, requests, clients, keyRange }));
          }
          const rate = (server: ServerProcess) => median(runs.get(server)!);
          ratios.push(rate(kv) / rate(redis));
          const row = `| ${test} -P ${pipeline} | ${fmt(rate(redis))} | ${fmt(rate(kv))} | ${ratios.at(-1)!.toFixed(2)}× |`;
          console.log(nullServer === undefined ? row : `${row} ${fmt(rate(nullServer))} | ${(rate(nullServer) / rate(redis)).toFixed(2)}× |`);
        }
      }
      console.log(`| **median** | | | **${median(ratios).toFixed(2)}×** |${nullServer === undefined ? "" : " | |"}\n`);
      if (nullServer !== undefined) {
        console.log("The null server answers +OK to every command and does nothing else (bench/null-server): the rate the client");
        console.log("reaches when a request costs the server nothing.\n");
      }
    } finally {
      await Promise.all([redis?.stop(), kv?.stop(), nullServer?.stop()]);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (import.meta.main) await aofComparison();
