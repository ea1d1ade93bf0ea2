/**
 * The kv REST API against RESP on the same `svc kv` process: wrk drives GET /kv/{key} and
 * PUT /kv/{key}, redis-benchmark drives GET and SET, with the same number of connections, one
 * request in flight per connection (no pipelining: HTTP/1.1 clients do not pipeline), random keys
 * from the same range and the same 3-byte value. The runs interleave (REST, RESP, REST, …) so a
 * noisy neighbour hurts both alike; the table shows each side's median requests per second and
 * the ratio REST/RESP. Persistence is off: this compares the interfaces, not the disk.
 *
 * Part of `svc bench kv`. SVC_BENCH_KV_REST_SECONDS sets each wrk run's length (default 5); SVC_BENCH_KV_REST_ROUNDS the
 * number of interleaved rounds (default 3).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RespClient } from "../../test/kv/support/resp-client.ts";
import { type ServerProcess, startKv } from "../../test/kv/support/servers.ts";
import { fmt, median, redisBenchmark } from "./redis-benchmark.ts";
import { wrk } from "./wrk.ts";

const seconds = Number(process.env.SVC_BENCH_KV_REST_SECONDS ?? 5);
const rounds = Number(process.env.SVC_BENCH_KV_REST_ROUNDS ?? 3);
const connections = 50;
/** wrk's own default request timeout: a small GET or PUT never comes near it. */
const wrkTimeoutSeconds = 2;
/** wrk's threads: the machine has two cores, shared with the server. */
const wrkThreads = 2;
const keyRange = 100_000;
/** redis-benchmark's default value: 3 bytes. */
const value = "xxx";

/**
 * wrk scripts: each request names a random key of the range, spelt as redis-benchmark's -r spells
 * it (key:__rand_int__ is 12 zero-padded digits), so both sides touch the same keys.
 */
const scripts = {
  GET: `
request = function()
  return wrk.format("GET", string.format("/kv/key:%012d", math.random(0, ${keyRange - 1})))
end`,
  PUT: `
wrk.headers["Content-Type"] = "application/json"
local body = '{"value":"${value}"}'
request = function()
  return wrk.format("PUT", string.format("/kv/key:%012d", math.random(0, ${keyRange - 1})), nil, body)
end`,
};

/** Every key of the range exists before the GETs, so both sides answer values, not misses (404s). */
async function fill(port: number): Promise<void> {
  const client = await RespClient.connect(port);
  const batchKeys = 1000;
  const batches: string[][] = [];
  for (let first = 0; first < keyRange; first += batchKeys) {
    const argv = ["MSET"];
    for (let i = first; i < Math.min(keyRange, first + batchKeys); i++) argv.push(`key:${String(i).padStart(12, "0")}`, value);
    batches.push(argv);
  }
  await client.pipeline(batches);
  client.close();
}

export async function restComparison(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-kv-rest-"));
  let kv: ServerProcess | undefined;
  try {
    kv = await startKv(["--appendonly", "no"]);
    await fill(kv.port);
    const cases = [
      { name: "PUT /kv/{key} vs SET", rest: "PUT" as const, resp: "set" as const },
      { name: "GET /kv/{key} vs GET", rest: "GET" as const, resp: "get" as const },
    ];
    console.log(
      `### kv: REST (wrk -t ${wrkThreads} -c ${connections} -d ${seconds}s) vs RESP (redis-benchmark -c ${connections} -P 1), same process, keys from ${fmt(keyRange)}, median of ${rounds}\n`,
    );
    console.log("| operation | REST ops/s | RESP ops/s | REST/RESP |");
    console.log("|---|---:|---:|---:|");
    for (const c of cases) {
      const rest: number[] = [];
      const resp: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const run = await wrk({
          url: `http://127.0.0.1:${kv.httpPort}`,
          script: scripts[c.rest],
          scriptPath: join(dir, `${c.rest}.lua`),
          threads: wrkThreads,
          connections,
          seconds,
          timeoutSeconds: wrkTimeoutSeconds,
        });
        rest.push(run.requestsPerSec);
        // As many requests as REST managed in its run, at RESP's rate: runs of similar length.
        const requests = Math.max(50_000, Math.round(rest.at(-1)! * seconds * 2));
        resp.push(await redisBenchmark({ port: kv.port, test: c.resp, pipeline: 1, requests, clients: connections, keyRange }));
      }
      console.log(`| ${c.name} | ${fmt(median(rest))} | ${fmt(median(resp))} | ${(median(rest) / median(resp)).toFixed(2)}× |`);
    }
    console.log();
  } finally {
    await kv?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
