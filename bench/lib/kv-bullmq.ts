/**
 * BullMQ, a job queue built on Redis's Lua scripts, against svc kv and redis-server: a Queue adds
 * jobs in bulk while one Worker processes them, and the table gives jobs per second from the
 * first add to the last completion, and each server's CPU per job. Then one job at a time (add,
 * wait for its completion, add the next), where the Worker waits on BZPOPMIN between jobs and each
 * job costs a blocking wake-up. Then delayed jobs: how late each starts after its delay, which is
 * how soon the Worker's BZPOPMIN, given a timeout that ends at the next job's due time, returns.
 * Part of `svc bench kv`.
 *
 * Persistence as svc runs by default: the append-only file, fsynced every second, on both.
 * The BullMQ client runs in this process, the same for both servers; the two servers take turns.
 *
 * Afterwards it prints INFO commandstats of one bulk round from each: which commands BullMQ's
 * scripts run, how often, and what each costs on either server; then what the Lua that BullMQ's
 * scripts are made of costs on each (lib/kv-bullmq-lua.ts).
 *
 * SVC_BENCH_KV_BULLMQ_JOBS sets the jobs per round (default 5000).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Job, Queue, Worker } from "bullmq";
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { bullmqLuaCosts } from "./kv-bullmq-lua.ts";
import { cpuSeconds, mainThreadCpuSeconds } from "./process-cpu.ts";
import { fmt, median, redisCli, roundRatios } from "./redis-benchmark.ts";

const jobs = Number(process.env.SVC_BENCH_KV_BULLMQ_JOBS ?? 5000);
/**
 * Jobs the Worker runs at once. BullMQ's default is 1; a worker whose jobs wait on I/O runs many.
 * With 10, ten moveToFinished scripts are in flight, so the server's work per job sets the pace
 * rather than one round trip per job (with 1, both servers measure the client's turnaround).
 */
const workerConcurrency = 10;
/** Jobs per addBulk call: BullMQ sends each as one MULTI of that many EVALSHAs. */
const addBatch = 500;
/**
 * Interleaved rounds of the bulk and one-at-a-time cases, each server's median taken. On this
 * machine one server's rate moves by up to 40% from round to round (2026-12-01), as much as the
 * two servers differ: nine rounds make the medians steadier than five did, for ~10 s more.
 */
const rounds = 9;
/** Rounds of the delayed jobs, each ~1.2 s on each server. */
const delayedRounds = 5;
/**
 * Unmeasured warm-up rounds of `jobs` on each server, taking turns, before the measured ones: a
 * queue's server runs for days, and what it does then is what is compared. svc's JIT compiles
 * BullMQ's paths over its first ~25,000 jobs: its compiler thread took 0.76–0.78, 0.36–0.38,
 * 0.12–0.20, 0.11–0.13 and 0.07–0.09 s in the first five rounds of 5,000, then 0.00–0.08 s a
 * round (two runs, 2026-12-01). With three warm-up rounds, the first two measured rounds were
 * still compiling. The warm-up rounds' rates are printed too.
 */
const warmUpRounds = 6;
/** Jobs of the one-at-a-time case: each waits a round trip or more, so fewer are enough. */
const oneAtATimeJobs = 500;
/**
 * Unmeasured rounds of the one-at-a-time case on each server, taking turns, before its measured
 * ones. Its paths are not bulk's (the Worker's BZPOPMIN wake-up, moveToActive fetching a job, an
 * empty queue after each): after fifteen bulk rounds svc's JIT compiler thread still took 40, 20
 * and 30 ms in its first three rounds of 500 (40–80 µs a job, on the cores the client needs),
 * then 0–20 (one run, 2026-12-01).
 */
const oneAtATimeWarmUpRounds = 4;
/** Delayed jobs per round, one added every delayedAddGapMs, each due delayedSpreadMs or less after it is added. */
const delayedJobs = 300;
const delayedAddGapMs = 2;
const delayedSpreadMs = 500;
/** Rows of the commandstats table: the commands that took the most time on svc. */
const commandstatsRows = 25;

type Connection = { host: string; port: number; maxRetriesPerRequest: null };
const connectionTo = (server: ServerProcess): Connection => ({ host: "127.0.0.1", port: server.port, maxRetriesPerRequest: null });

interface Round {
  jobsPerSec: number;
  /** Server CPU per job (user + system, all threads), µs. */
  cpuMicrosPerJob: number;
  /** The same, of the server's main thread alone. */
  mainCpuMicrosPerJob: number;
}

/** Resolves once `count` jobs have completed on `worker`. */
function completions(worker: Worker, count: number): Promise<void> {
  let completed = 0;
  return new Promise((resolve) => {
    worker.on("completed", () => {
      if (++completed === count) resolve();
    });
  });
}

const processor = async (job: Job<{ n: number }>) => job.data.n * 2;

/** A Queue named `queueName` on `server`, and a Worker of concurrency workerConcurrency for it, not yet running. */
export function bulkQueueAndWorker(server: ServerProcess, queueName: string): { queue: Queue; worker: Worker } {
  const connection = connectionTo(server);
  return {
    queue: new Queue(queueName, { connection }),
    worker: new Worker(queueName, processor, { connection, concurrency: workerConcurrency, autorun: false }),
  };
}

/** Runs `worker` while `count` jobs are added in bulk (addBulk of addBatch); resolves once all have completed. */
export async function runJobsInBulk(queue: Queue, worker: Worker, count: number): Promise<void> {
  const done = completions(worker, count);
  void worker.run();
  for (let first = 0; first < count; first += addBatch) {
    const batch = Array.from({ length: Math.min(addBatch, count - first) }, (_, i) => ({
      name: "job",
      data: { n: first + i },
      opts: { removeOnComplete: true },
    }));
    await queue.addBulk(batch);
  }
  await done;
}

/** Adds `count` jobs in bulk while one Worker runs them; the time from the first add to the last completion. */
async function bulkRound(server: ServerProcess, queueName: string, count: number): Promise<Round> {
  const { queue, worker } = bulkQueueAndWorker(server, queueName);
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    const pid = server.proc.pid;
    const [cpuBefore, mainBefore] = [cpuSeconds(pid), mainThreadCpuSeconds(pid)];
    const started = performance.now();
    await runJobsInBulk(queue, worker, count);
    const seconds = (performance.now() - started) / 1000;
    const perJob = (cpuSecondsUsed: number) => (cpuSecondsUsed * 1e6) / count;
    return {
      jobsPerSec: count / seconds,
      cpuMicrosPerJob: perJob(cpuSeconds(pid) - cpuBefore),
      mainCpuMicrosPerJob: perJob(mainThreadCpuSeconds(pid) - mainBefore),
    };
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** Adds a job, waits for the Worker to complete it, then adds the next: jobs per second, and the server's CPU. */
async function oneAtATimeRound(server: ServerProcess, queueName: string): Promise<Round> {
  const connection = connectionTo(server);
  const queue = new Queue(queueName, { connection });
  const worker = new Worker(queueName, processor, { connection, concurrency: 1 });
  let next: (() => void) | null = null;
  worker.on("completed", () => next?.());
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    const pid = server.proc.pid;
    const [cpuBefore, mainBefore] = [cpuSeconds(pid), mainThreadCpuSeconds(pid)];
    const started = performance.now();
    for (let n = 0; n < oneAtATimeJobs; n++) {
      const completed = new Promise<void>((resolve) => (next = resolve));
      await queue.add("job", { n }, { removeOnComplete: true });
      await completed;
    }
    const seconds = (performance.now() - started) / 1000;
    const perJob = (cpuSecondsUsed: number) => (cpuSecondsUsed * 1e6) / oneAtATimeJobs;
    return {
      jobsPerSec: oneAtATimeJobs / seconds,
      cpuMicrosPerJob: perJob(cpuSeconds(pid) - cpuBefore),
      mainCpuMicrosPerJob: perJob(mainThreadCpuSeconds(pid) - mainBefore),
    };
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** Adds delayed jobs while a Worker runs them; how many ms after its due time each started, sorted. */
async function delayedRound(server: ServerProcess, queueName: string): Promise<number[]> {
  const connection = connectionTo(server);
  const queue = new Queue(queueName, { connection });
  const lateMs: number[] = [];
  let allStarted!: () => void;
  const started = new Promise<void>((resolve) => (allStarted = resolve));
  const worker = new Worker(
    queueName,
    async (job: Job) => {
      lateMs.push(Date.now() - (job.timestamp + job.opts.delay!));
      if (lateMs.length === delayedJobs) allStarted();
    },
    { connection, concurrency: workerConcurrency },
  );
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    for (let n = 0; n < delayedJobs; n++) {
      // A spread of delays, the same in every round and on both servers.
      await queue.add("job", { n }, { delay: 5 + ((n * 37) % delayedSpreadMs), removeOnComplete: true });
      await Bun.sleep(delayedAddGapMs);
    }
    await started;
    return lateMs.sort((a, b) => a - b);
  } finally {
    await worker.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/** The value at fraction `q` of sorted `values`. */
const quantile = (values: readonly number[], q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))]!;

/** INFO commandstats: calls, µs and µs per call by command. */
type Commandstats = Map<string, { calls: number; usecPerCall: number; usec: number }>;

async function commandstats(server: ServerProcess): Promise<Commandstats> {
  const stats: Commandstats = new Map();
  for (const line of (await redisCli(server.port, ["INFO", "commandstats"])).split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(line);
    if (match !== null) stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]), usecPerCall: Number(match[4]) });
  }
  return stats;
}

export async function bullmqComparison(): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), "svc-bench-bullmq-")), mkdtempSync(join(tmpdir(), "svc-bench-bullmq-"))];
  const persistence = ["--appendonly", "yes", "--appendfsync", "everysec"];
  let redis: ServerProcess | undefined;
  let kv: ServerProcess | undefined;
  try {
    [redis, kv] = await Promise.all([startRedis(["--dir", dirs[0]!, ...persistence]), startKv(["--dir", dirs[1]!, ...persistence])]);
    const servers = [redis, kv] as const;
    const turns = (round: number) => (round % 2 === 0 ? servers : servers.toReversed());
    const warmUp = new Map<ServerProcess, number[]>(servers.map((s) => [s, []]));
    for (let round = 0; round < warmUpRounds; round++) {
      for (const server of turns(round)) warmUp.get(server)!.push((await bulkRound(server, `warm-up-${round}`, jobs)).jobsPerSec);
    }
    const runs = new Map<ServerProcess, Round[]>(servers.map((s) => [s, []]));
    const oneAtATime = new Map<ServerProcess, Round[]>(servers.map((s) => [s, []]));
    const lateness = new Map<ServerProcess, number[]>(servers.map((s) => [s, []]));
    // Each case's rounds together, the servers taking turns (the other first each round). With
    // the three cases in every round, svc's bulk rounds after the first took 186–288 µs of CPU a
    // job against 132 for the first (one run, 2026-11-29; 126–160 back to back by hand), as if its
    // compiled code had to adapt to each case again.
    let stats: [Commandstats, Commandstats] | undefined;
    for (let round = 0; round < rounds; round++) {
      const last = round === rounds - 1;
      if (last) await Promise.all(servers.map((s) => redisCli(s.port, ["CONFIG", "RESETSTAT"])));
      for (const server of turns(round)) runs.get(server)!.push(await bulkRound(server, `bulk-${round}`, jobs));
      // The commandstats of one bulk round on each: read before anything else runs.
      if (last) stats = [await commandstats(redis), await commandstats(kv)];
    }
    const oneAtATimeWarmUp = new Map<ServerProcess, number[]>(servers.map((s) => [s, []]));
    for (let round = 0; round < oneAtATimeWarmUpRounds; round++) {
      for (const server of turns(round)) oneAtATimeWarmUp.get(server)!.push((await oneAtATimeRound(server, `single-warm-up-${round}`)).jobsPerSec);
    }
    for (let round = 0; round < rounds; round++) {
      for (const server of turns(round)) oneAtATime.get(server)!.push(await oneAtATimeRound(server, `single-${round}`));
    }
    for (let round = 0; round < delayedRounds; round++) {
      for (const server of turns(round)) lateness.get(server)!.push(...(await delayedRound(server, `delayed-${round}`)));
    }
    const med = (server: ServerProcess, pick: (r: Round) => number) => median(runs.get(server)!.map(pick));
    const [redisRate, kvRate] = servers.map((s) => med(s, (r) => r.jobsPerSec)) as [number, number];
    const [redisCpu, kvCpu] = servers.map((s) => med(s, (r) => r.cpuMicrosPerJob)) as [number, number];
    const [redisMainCpu, kvMainCpu] = servers.map((s) => med(s, (r) => r.mainCpuMicrosPerJob)) as [number, number];
    const medSingle = (server: ServerProcess, pick: (r: Round) => number) => median(oneAtATime.get(server)!.map(pick));
    const [redisSingle, kvSingle] = servers.map((s) => medSingle(s, (r) => r.jobsPerSec)) as [number, number];
    const [redisSingleCpu, kvSingleCpu] = servers.map((s) => medSingle(s, (r) => r.cpuMicrosPerJob)) as [number, number];
    const [redisSingleMainCpu, kvSingleMainCpu] = servers.map((s) => medSingle(s, (r) => r.mainCpuMicrosPerJob)) as [number, number];
    console.log(
      `### kv: BullMQ (${fmt(jobs)} jobs added in bulk, one Worker of concurrency ${workerConcurrency}; appendonly yes, appendfsync everysec on both), median of ${rounds} interleaved rounds\n`,
    );
    console.log("| case | redis jobs/s | svc jobs/s | svc/redis | svc/redis round by round, lowest–highest |");
    console.log("|---|---:|---:|---:|---:|");
    const bulkRates = servers.map((s) => runs.get(s)!.map((r) => r.jobsPerSec)) as [number[], number[]];
    const singleRates = servers.map((s) => oneAtATime.get(s)!.map((r) => r.jobsPerSec)) as [number[], number[]];
    console.log(`| ${fmt(jobs)} jobs in bulk | ${fmt(redisRate)} | ${fmt(kvRate)} | ${(kvRate / redisRate).toFixed(2)}× | ${roundRatios(...bulkRates)} |`);
    console.log(
      `| one at a time (${oneAtATimeJobs}, concurrency 1) | ${fmt(redisSingle)} | ${fmt(kvSingle)} | ${(kvSingle / redisSingle).toFixed(2)}× | ${roundRatios(...singleRates)} |\n`,
    );
    const [redisWarmUp, kvWarmUp] = servers.map((s) => warmUp.get(s)!.map(fmt).join(", "));
    const [redisSingleWarmUp, kvSingleWarmUp] = servers.map((s) => oneAtATimeWarmUp.get(s)!.map(fmt).join(", "));
    console.log(
      `The unmeasured warm-up rounds before them, jobs/s in order: ${warmUpRounds} in bulk, redis ${redisWarmUp}; svc ${kvWarmUp}. ` +
        `${oneAtATimeWarmUpRounds} one at a time, redis ${redisSingleWarmUp}; svc ${kvSingleWarmUp}.\n`,
    );
    const [redisLate, kvLate] = servers.map((s) => lateness.get(s)!.sort((a, b) => a - b));
    console.log(
      `Delayed jobs (${delayedJobs} a round, due 5–${delayedSpreadMs + 5} ms after they are added, ${delayedRounds} rounds together), how late they started:\n`,
    );
    console.log("| lateness | redis ms | svc ms |");
    console.log("|---|---:|---:|");
    for (const [name, q] of [
      ["median", 0.5],
      ["90th percentile", 0.9],
      ["99th percentile", 0.99],
    ] as const) {
      console.log(`| ${name} | ${quantile(redisLate!, q)} | ${quantile(kvLate!, q)} |`);
    }
    console.log("");
    console.log(
      `Server CPU per job in bulk (user + system, all threads): redis ${redisCpu.toFixed(0)} µs, svc ${kvCpu.toFixed(0)} µs, svc/redis ${(kvCpu / redisCpu).toFixed(2)}×;`,
      `the main thread alone: redis ${redisMainCpu.toFixed(0)} µs, svc ${kvMainCpu.toFixed(0)} µs, ${(kvMainCpu / redisMainCpu).toFixed(2)}× (the rest of svc's`,
      "is its other threads: the JIT compiler, the collector's and the allocator's helpers).\n",
    );
    // One at a time, each request finds the server asleep and its caches cold: a job costs both
    // servers two to three times its CPU in bulk.
    console.log(
      `Server CPU per job one at a time (user + system, all threads): redis ${redisSingleCpu.toFixed(0)} µs, svc ${kvSingleCpu.toFixed(0)} µs, svc/redis ${(kvSingleCpu / redisSingleCpu).toFixed(2)}×;`,
      `the main thread alone: redis ${redisSingleMainCpu.toFixed(0)} µs, svc ${kvSingleMainCpu.toFixed(0)} µs, ${(kvSingleMainCpu / redisSingleMainCpu).toFixed(2)}×.\n`,
    );
    printCommandstats(...stats!);
    await bullmqLuaCosts(redis, kv);
  } finally {
    await Promise.all([redis?.stop(), kv?.stop()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** One bulk round's INFO commandstats of both, the commands that took svc the most time first. */
function printCommandstats(fromRedis: Commandstats, fromKv: Commandstats): void {
  console.log(`INFO commandstats of the last bulk round (${fmt(jobs)} jobs), by svc's total time. A script's`);
  console.log("commands count on their own rows too; svc times fast commands in batches (src/kv/observe/command-timing.ts), so inside a");
  console.log("script its µs per call for them include the Lua between them.\n");
  console.log("| command | redis calls | svc calls | redis µs/call | svc µs/call | svc/redis µs |");
  console.log("|---|---:|---:|---:|---:|---:|");
  const names = [...fromKv.keys()].filter((name) => fromRedis.has(name)).sort((a, b) => fromKv.get(b)!.usec - fromKv.get(a)!.usec);
  for (const name of names.slice(0, commandstatsRows)) {
    const r = fromRedis.get(name)!;
    const k = fromKv.get(name)!;
    console.log(
      `| ${name} | ${fmt(r.calls)} | ${fmt(k.calls)} | ${r.usecPerCall.toFixed(2)} | ${k.usecPerCall.toFixed(2)} | ${(k.usecPerCall / r.usecPerCall).toFixed(2)}× |`,
    );
  }
  console.log("");
}

if (import.meta.main) await bullmqComparison();
