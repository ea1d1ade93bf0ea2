/**
 * Durable produce over the SV01 binary protocol against HTTP and the raw disk, part of
 * `svc bench broker` (issue: the binary protocol). One broker with default durability
 * (--flush-every-records 1: every produce synced before its answer), batches of 1,000 keyless
 * records of 100 B and 1 KiB to a one-partition topic, in the same run:
 *
 * - binary: bench/sv01-load, a Rust load generator (so the client is not what is measured),
 *   `connections` connections with `depth` requests in flight on each, plain, gzip and lz4;
 * - HTTP: wrk with the same batch as a JSON body, `connections` connections (HTTP/1.1 has one
 *   request in flight per connection);
 * - raw: one writev + fdatasync of one request's frames at a time (raw-disk.ts).
 *
 * Targets (issue): binary at 1 KiB ≥ 80% of the raw disk's MB/s, and ≥ 2× HTTP's records/s at 100 B.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { type Codec, compress } from "../../src/broker/binary/compression.ts";
import { encodeProduceRequest } from "../../src/broker/binary/payloads.ts";
import { features, opcodes } from "../../src/broker/binary/wire.ts";
import { callBroker, startBenchBroker, wrkProduceScript } from "./broker-process.ts";
import { rawDisk, requestFrames } from "./raw-disk.ts";
import { fmt } from "./redis-benchmark.ts";
import { wrk } from "./wrk.ts";

const valueSizes = [100, 1024];
const batch = 1000;
const connections = 4;
/** Requests in flight per binary connection: as a Kafka producer's max.in.flight.requests.per.connection (5), near it. */
const depth = 4;
const rawShareTarget = 0.8;
const httpMultipleTarget = 2;
const bytesPerMB = 1e6;

const crate = join(import.meta.dir, "../sv01-load");

/** Builds bench/sv01-load into svc's cache on first use (cargo rebuilds only when its sources change). */
function buildLoadGenerator(): string {
  const cache = process.env.SVC_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "svc");
  const targetDir = join(cache, "sv01-load-target");
  const built = Bun.spawnSync(["cargo", "build", "--release", "--quiet", "--manifest-path", join(crate, "Cargo.toml"), "--target-dir", targetDir], {
    stdout: "inherit",
    stderr: "inherit",
  });
  if (built.exitCode !== 0) throw new Error("cargo build of bench/sv01-load failed");
  return join(targetDir, "release", "sv01-load");
}

interface LoadResult {
  requests_per_sec: number;
  p50_ms: number;
  p99_ms: number;
}

function runLoad(binary: string, address: string, payloadPath: string, codec: Codec | null, seconds: number): LoadResult {
  const argv = [
    binary,
    address,
    payloadPath,
    String(opcodes.produce),
    String(codec === null ? 0 : features[codec]),
    "-",
    String(connections),
    String(depth),
    String(seconds),
  ];
  const run = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`sv01-load failed: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as LoadResult;
}

/** Prints the table; answers whether both targets were met. */
export async function binaryProduce(seconds: number): Promise<boolean> {
  const loadGenerator = buildLoadGenerator();
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-binary-"));
  const broker = await startBenchBroker(join(dir, "data"), ["--bind-binary", "127.0.0.1:0"]);
  // The SV01 address is printed just after the HTTP one.
  let binaryAddress: string | undefined;
  for (let tries = 0; tries < 100 && binaryAddress === undefined; tries++) {
    binaryAddress = /broker: SV01 on (\S+)/.exec(broker.output())?.[1];
    if (binaryAddress === undefined) await Bun.sleep(20);
  }
  try {
    if (binaryAddress === undefined) throw new Error("the broker printed no SV01 address");
    console.log(
      `\n### broker: durable produce of ${fmt(batch)}-record batches over SV01 (bench/sv01-load, ${connections} connections × ${depth} in flight) vs HTTP (wrk -c ${connections}) vs the raw disk, ${seconds}s each\n`,
    );
    console.log("MB/s counts values. Raw: one writev + fdatasync of one request's frames at a time.\n");
    console.log("| value | transport | req/s | records/s | MB/s | p50 ms | p99 ms | of raw MB/s | vs HTTP records/s |");
    console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let met = true;
    for (const valueBytes of valueSizes) {
      const topic = `bench.bin${valueBytes}`;
      await callBroker(broker, "POST", "/topics", { name: topic, partitions: 1 });
      const rawBatches = await rawDisk(join(dir, "raw.log"), requestFrames(valueBytes, batch), seconds);
      const rawMBps = (rawBatches * batch * valueBytes) / bytesPerMB;
      const http = await wrk({
        url: broker.url,
        script: wrkProduceScript(topic, valueBytes, batch),
        scriptPath: join(dir, "produce.lua"),
        threads: 2,
        connections,
        seconds,
        timeoutSeconds: 10,
      });
      const httpRecords = http.requestsPerSec * batch;
      const row = (transport: string, rate: number, p50: number, p99: number) => {
        const records = rate * batch;
        const mbps = (records * valueBytes) / bytesPerMB;
        console.log(
          `| ${valueBytes} B | ${transport} | ${fmt(rate)} | ${fmt(records)} | ${mbps.toFixed(1)} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ${((mbps / rawMBps) * 100).toFixed(0)}% | ${(records / httpRecords).toFixed(2)}× |`,
        );
        return { records, mbps };
      };
      console.log(`| ${valueBytes} B | raw disk | ${fmt(rawBatches)} | ${fmt(rawBatches * batch)} | ${rawMBps.toFixed(1)} | | | 100% | |`);
      row("HTTP", http.requestsPerSec, http.p50Ms, http.p99Ms);
      const value = new Uint8Array(valueBytes).fill(0x78);
      const payload = encodeProduceRequest({
        topic,
        producerId: null,
        records: Array.from({ length: batch }, () => ({ key: null, value, partition: 0, sequence: null })),
      });
      for (const codec of [null, "gzip", "lz4"] as const) {
        const path = join(dir, `payload.${codec ?? "bin"}`);
        writeFileSync(path, codec === null ? payload : compress(codec, payload));
        const result = runLoad(loadGenerator, binaryAddress, path, codec, seconds);
        const { records, mbps } = row(codec === null ? "SV01" : `SV01 + ${codec}`, result.requests_per_sec, result.p50_ms, result.p99_ms);
        if (codec === null && valueBytes === 1024 && mbps < rawShareTarget * rawMBps) met = false;
        if (codec === null && valueBytes === 100 && records < httpMultipleTarget * httpRecords) met = false;
      }
    }
    console.log(
      `\n**Verdict:** SV01 produce at 1 KiB ≥ ${rawShareTarget * 100}% of the raw disk's MB/s and at 100 B ≥ ${httpMultipleTarget}× HTTP's records/s: ${met ? "met" : "NOT met"}.\n`,
    );
    return met;
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
