/**
 * Two parts of `svc bench broker` about access control and groups (issue: keys, quotas, groups):
 *
 * - What authentication, grants and quotas cost: the same produce and consume load (wrk) against
 *   a broker with `--auth off` and one with `--auth required` whose key holds a prefix grant and
 *   produce and consume quotas high enough never to refuse (so every request is metered, none is
 *   throttled). Runs alternate off, on, off, on so drift on a shared machine hurts both alike; the
 *   ratio of the medians is printed with the CPU each request cost the broker. Target: ≤ 5% slower.
 * - How long a 50-member group takes to settle after a 51st member joins: members are simulated
 *   in this process, each heartbeating every `heartbeatMs` at its own phase and fetching its
 *   assignment on `rebalance_required`; settled is when the last member holds the new generation.
 *   A member learns of a rebalance only at its next heartbeat, so the target is < 100 ms plus the
 *   heartbeat interval, and what is printed beside it is the time past the interval.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchBroker, callBroker, startBenchBroker, wrkHeaders, wrkProduceScript } from "./broker-process.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { fmt } from "./redis-benchmark.ts";
import { wrk } from "./wrk.ts";

const wrkThreads = 2;
const connections = 4;
const wrkTimeoutSeconds = 10;
/** Records per produce and their value size: a typical batched producer. */
const produceBatch = 100;
const valueBytes = 100;
/** Records per consume. */
const consumeRecords = 1000;
/** Alternating runs per side. */
const rounds = 2;
/** The overhead target of the issue. */
const overheadTarget = 0.05;
/** Quotas far above what this machine can move, so every request is metered and none refused. */
const unthrottledBytesPerSec = 1e12;

const groupMembers = 50;
const groupPartitions = 100;
/** Each simulated member's heartbeat interval; the documented 3 s would make the bench slow, not different. */
const heartbeatMs = 1000;
const settleTrials = 5;
const settleTargetPastHeartbeatMs = 100;

type Broker = BenchBroker;

const start = startBenchBroker;
const call = async (broker: Broker, method: string, path: string, body?: unknown, headers = broker.headers): Promise<any> => {
  const text = await callBroker(broker, method, path, body, headers);
  return text === "" ? null : JSON.parse(text);
};

function consumeScript(headers: Record<string, string>, span: number): string {
  return `
${wrkHeaders(headers)}
local n = 0
request = function()
  local offset = (n * ${consumeRecords}) % ${span}
  n = n + 1
  return wrk.format("GET", "/topics/bench.access/consume?partition=0&offset=" .. offset .. "&max_records=${consumeRecords}")
end
`;
}

interface Sample {
  rate: number;
  cpuUsPerRequest: number;
}

async function measure(broker: Broker, script: string, scriptPath: string, seconds: number): Promise<Sample> {
  const cpuBefore = cpuSeconds(broker.proc.pid);
  const result = await wrk({ url: broker.url, script, scriptPath, threads: wrkThreads, connections, seconds, timeoutSeconds: wrkTimeoutSeconds });
  const cpu = cpuSeconds(broker.proc.pid) - cpuBefore;
  return { rate: result.requestsPerSec, cpuUsPerRequest: (cpu * 1e6) / (result.requestsPerSec * seconds) };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The auth on/off table; answers whether the target was met. */
export async function accessOverhead(seconds: number): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-access-"));
  const brokers: Broker[] = [];
  try {
    const off = await start(join(dir, "off"), []);
    brokers.push(off);
    const on = await start(join(dir, "on"), ["--auth", "required"]);
    brokers.push(on);
    const admin = { authorization: `Bearer ${readFileSync(join(on.dataDir, "bootstrap.key"), "utf8").trim()}` };
    const key = await call(
      on,
      "POST",
      "/admin/keys",
      {
        name: "bench",
        acls: [{ action: "write", topic_prefix: "bench." }],
        produce_bytes_per_sec: unthrottledBytesPerSec,
        consume_bytes_per_sec: unthrottledBytesPerSec,
      },
      admin,
    );
    on.headers = { authorization: `Bearer ${key.secret}` };
    for (const b of [off, on]) await call(b, "POST", "/topics", { name: "bench.access", partitions: 1 }, b === on ? admin : {});

    console.log(
      `\n### broker: authentication, grants and quotas on vs off (wrk -t ${wrkThreads} -c ${connections} -d ${seconds}s, ${rounds} alternating runs each, medians)\n`,
    );
    console.log("On: `--auth required`, a key with a prefix grant and produce and consume quotas that meter every request and refuse none.\n");
    console.log("| load | off req/s | on req/s | on/off | off CPU µs/req | on CPU µs/req | CPU on/off |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    let met = true;
    for (const load of ["produce", "consume"] as const) {
      const samples: Record<"off" | "on", Sample[]> = { off: [], on: [] };
      for (let round = 0; round < rounds; round++) {
        for (const [side, broker] of [
          ["off", off],
          ["on", on],
        ] as const) {
          const script =
            load === "produce"
              ? wrkProduceScript("bench.access", valueBytes, produceBatch, broker.headers)
              : consumeScript(
                  broker.headers,
                  Math.floor((await call(broker, "GET", "/topics/bench.access")).partition_details[0].high_watermark / consumeRecords) * consumeRecords,
                );
          samples[side].push(await measure(broker, script, join(dir, `${load}.lua`), seconds));
        }
      }
      const rate = { off: median(samples.off.map((s) => s.rate)), on: median(samples.on.map((s) => s.rate)) };
      const cpu = { off: median(samples.off.map((s) => s.cpuUsPerRequest)), on: median(samples.on.map((s) => s.cpuUsPerRequest)) };
      const ratio = rate.on / rate.off;
      if (ratio < 1 - overheadTarget) met = false;
      console.log(
        `| ${load} (${load === "produce" ? `${produceBatch} × ${valueBytes} B` : `${consumeRecords} records`}) | ${fmt(rate.off)} | ${fmt(rate.on)} | ${ratio.toFixed(3)}× | ` +
          `${cpu.off.toFixed(0)} | ${cpu.on.toFixed(0)} | ${(cpu.on / cpu.off).toFixed(3)}× |`,
      );
    }
    console.log(`\n**Verdict:** access control costs ${met ? "within" : "MORE than"} ${overheadTarget * 100}% of the request rate.`);
    return met;
  } finally {
    for (const b of brokers) await b.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Member {
  id: string;
  generation: number;
  partitions: number;
  /** When it last fetched a new assignment (performance.now()). */
  updatedAt: number;
}

/** The group settle table; answers whether the target was met. */
export async function groupSettle(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-groups-"));
  const broker = await start(join(dir, "data"), []);
  try {
    await call(broker, "POST", "/topics", { name: "bench.groups", partitions: groupPartitions });
    console.log(
      `\n### broker: a ${groupMembers}-member group settling after one more joins (${groupPartitions} partitions, heartbeat every ${heartbeatMs} ms, ${settleTrials} trials)\n`,
    );
    console.log("| trial | join ms | settled after ms | past the heartbeat interval ms | shares |");
    console.log("|---:|---:|---:|---:|---|");
    const worst: number[] = [];
    for (let trial = 1; trial <= settleTrials; trial++) {
      const group = `settle-${trial}`;
      const members: Member[] = [];
      for (let i = 0; i < groupMembers; i++) {
        const joined = await call(broker, "POST", `/groups/${group}/join`, { topics: ["bench.groups"] });
        members.push({ id: joined.member_id, generation: joined.generation, partitions: joined.assignment.length, updatedAt: 0 });
      }
      // Everyone catches up with the last join before the clock starts.
      for (const m of members) {
        const now = await call(broker, "GET", `/groups/${group}/assignment?member_id=${m.id}`);
        m.generation = now.generation;
        m.partitions = now.assignment.length;
      }
      let stop = false;
      const beat = async (m: Member, phaseMs: number) => {
        await Bun.sleep(phaseMs);
        while (!stop) {
          const answer = await call(broker, "POST", `/groups/${group}/heartbeat`, { member_id: m.id, generation: m.generation });
          if (answer.status === "rebalance_required") {
            const now = await call(broker, "GET", `/groups/${group}/assignment?member_id=${m.id}`);
            m.generation = now.generation;
            m.partitions = now.assignment.length;
            m.updatedAt = performance.now();
          }
          await Bun.sleep(heartbeatMs);
        }
      };
      const loops = members.map((m, i) => beat(m, (i * heartbeatMs) / groupMembers));
      await Bun.sleep(heartbeatMs);
      const joinStart = performance.now();
      const newcomer = await call(broker, "POST", `/groups/${group}/join`, { topics: ["bench.groups"] });
      const joinMs = performance.now() - joinStart;
      while (members.some((m) => m.generation < newcomer.generation)) await Bun.sleep(10);
      stop = true;
      await Promise.all(loops);
      const settledMs = Math.max(...members.map((m) => m.updatedAt)) - joinStart;
      const past = settledMs - heartbeatMs;
      worst.push(past);
      const shares = [...members.map((m) => m.partitions), newcomer.assignment.length];
      const total = shares.reduce((a, b) => a + b, 0);
      console.log(
        `| ${trial} | ${joinMs.toFixed(1)} | ${settledMs.toFixed(0)} | ${past.toFixed(0)} | ${Math.min(...shares)}–${Math.max(...shares)} each, ${total} in all |`,
      );
      for (const m of members) await call(broker, "POST", `/groups/${group}/leave`, { member_id: m.id });
    }
    const met = Math.max(...worst) < settleTargetPastHeartbeatMs;
    console.log(
      `\n**Verdict:** the slowest trial settled ${Math.max(...worst).toFixed(0)} ms past the heartbeat interval (target < ${settleTargetPastHeartbeatMs} ms): ${met ? "met" : "NOT met"}.\n`,
    );
    return met;
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
