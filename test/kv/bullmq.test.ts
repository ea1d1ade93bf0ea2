// BullMQ, the job queue many Node applications run on Redis, against svc kv and redis-server side
// by side: the same jobs through a real Queue and Worker on each. BullMQ does its work in Lua
// scripts (EVALSHA) that call some forty commands — hashes, sorted sets, lists, streams — and
// waits for jobs with BZPOPMIN on a marker key, so this checks what a user of it depends on: every
// job runs to completion once, with its result; delayed jobs wait, failing jobs are retried and
// then fail for good, priorities order the work, removeOnComplete removes; and the queue's counts
// come out the same on both servers.
import { describe, expect, test } from "bun:test";
import { type Job, Queue, Worker } from "bullmq";
import type { ServerProcess } from "./support/servers.ts";
import { withClient } from "./support/resp-client.ts";
import { redisAndKv } from "./support/side-by-side.ts";

const s = redisAndKv();

/** Jobs of the mixed run, by kind. */
const plainJobs = 200;
const delayedJobs = 40;
const retriedJobs = 30;
const failingJobs = 10;
/** Attempts a retried job needs: it fails every attempt before the last. */
const retriedAttempts = 3;
/** Attempts a failing job is given: all of them fail. */
const failingAttempts = 2;
/** Backoff between attempts: short, so that retries finish within the test. */
const retryBackoffMs = 20;
/** The longest delay a delayed job is given. */
const delayMaxMs = 300;
/** Jobs the mixed run's Worker runs at once. */
const workerConcurrency = 8;
/** Prioritised jobs, run one at a time so that their order is the queue's. */
const prioritisedJobs = 30;
/** BullMQ's priorities run from 1 (first) up. */
const prioritiesUsed = 5;
/** A bound on a whole scenario on a busy shared machine: it takes about a second when quiet. */
const scenarioTimeoutMs = 20_000;

interface JobData {
  n: number;
  kind: "plain" | "delayed" | "retried" | "failing";
  delayMs?: number;
}

/** What the processor saw, per job id, and what the Worker reported. */
interface RunRecord {
  attempts: Map<string, number>;
  successes: Map<string, number>;
  completedEvents: Map<string, number>;
  failedEvents: Map<string, number>;
  /** When each attempt started (ms since the epoch), per job id: delayed jobs must not start early. */
  startedAtMs: Map<string, number[]>;
}

const bump = (counts: Map<string, number>, id: string) => counts.set(id, (counts.get(id) ?? 0) + 1);

/** ioredis options for a server: BullMQ's workers require maxRetriesPerRequest null. */
const connectionTo = (server: ServerProcess) => ({ host: "127.0.0.1", port: server.port, maxRetriesPerRequest: null });

/** The job each data item asks for, with the options that make it that kind of job. */
function jobsToAdd(): { name: string; data: JobData; opts: Record<string, unknown> }[] {
  const jobs: { name: string; data: JobData; opts: Record<string, unknown> }[] = [];
  let n = 0;
  for (let i = 0; i < plainJobs; i++, n++) {
    // Every other plain job keeps its record once done, so its result can be read back.
    jobs.push({ name: "plain", data: { n, kind: "plain" }, opts: { removeOnComplete: i % 2 === 0 } });
  }
  for (let i = 0; i < delayedJobs; i++, n++) {
    const delayMs = 20 + ((i * 37) % delayMaxMs);
    jobs.push({ name: "delayed", data: { n, kind: "delayed", delayMs }, opts: { delay: delayMs } });
  }
  const backoff = { type: "fixed", delay: retryBackoffMs };
  for (let i = 0; i < retriedJobs; i++, n++) {
    jobs.push({ name: "retried", data: { n, kind: "retried" }, opts: { attempts: retriedAttempts, backoff } });
  }
  for (let i = 0; i < failingJobs; i++, n++) {
    jobs.push({ name: "failing", data: { n, kind: "failing" }, opts: { attempts: failingAttempts, backoff } });
  }
  return jobs;
}

/** The processor of the mixed run: a job's result is derived from its data, unless it is to fail this attempt. */
function processorRecording(record: RunRecord) {
  return async (job: Job<JobData>) => {
    const id = job.id!;
    bump(record.attempts, id);
    record.startedAtMs.set(id, [...(record.startedAtMs.get(id) ?? []), Date.now()]);
    const { n, kind } = job.data;
    if (kind === "failing") throw new Error(`job ${n} always fails`);
    if (kind === "retried" && job.attemptsMade + 1 < retriedAttempts) throw new Error(`job ${n} fails attempt ${job.attemptsMade + 1}`);
    bump(record.successes, id);
    return { doubled: n * 2, kind };
  };
}

/** Adds every job of the mixed run, runs a Worker until each has completed or failed for good, and reads the outcome back. */
async function mixedRun(server: ServerProcess) {
  const connection = connectionTo(server);
  const queue = new Queue<JobData>("mixed", { connection });
  const record: RunRecord = { attempts: new Map(), successes: new Map(), completedEvents: new Map(), failedEvents: new Map(), startedAtMs: new Map() };
  const toAdd = jobsToAdd();
  const settledJobsExpected = toAdd.length;
  let settled = 0;
  let allSettled!: () => void;
  const done = new Promise<void>((resolve) => (allSettled = resolve));
  const worker = new Worker<JobData>("mixed", processorRecording(record), { connection, concurrency: workerConcurrency, autorun: false });
  const settle = () => {
    if (++settled === settledJobsExpected) allSettled();
  };
  worker.on("completed", (job) => {
    bump(record.completedEvents, job.id!);
    settle();
  });
  worker.on("failed", (job) => {
    if (job === undefined) return;
    bump(record.failedEvents, job.id!);
    // A failure that will be retried is not the job's end.
    if (job.attemptsMade >= (job.opts.attempts ?? 1)) settle();
  });
  try {
    const added = await queue.addBulk(toAdd);
    void worker.run();
    await done;
    const counts = await queue.getJobCounts();
    const jobs = await Promise.all(added.map((job) => queue.getJob(job.id!)));
    return { record, added, counts, jobs };
  } finally {
    await worker.close();
    await queue.close();
  }
}

/** Adds prioritised jobs before any Worker runs, then runs them one at a time; returns the order they ran in. */
async function priorityRun(server: ServerProcess): Promise<{ ran: number[]; priorities: number[] }> {
  const connection = connectionTo(server);
  const queue = new Queue<{ n: number }>("prioritised", { connection });
  // A deterministic spread of priorities, each used several times (ties run first in, first out).
  const priorities = Array.from({ length: prioritisedJobs }, (_, n) => 1 + ((n * 7) % prioritiesUsed));
  const ran: number[] = [];
  let allRan!: () => void;
  const done = new Promise<void>((resolve) => (allRan = resolve));
  const worker = new Worker<{ n: number }>(
    "prioritised",
    async (job) => {
      ran.push(job.data.n);
      if (ran.length === prioritisedJobs) allRan();
    },
    { connection, concurrency: 1, autorun: false },
  );
  try {
    await queue.addBulk(priorities.map((priority, n) => ({ name: "p", data: { n }, opts: { priority, removeOnComplete: true } })));
    void worker.run();
    await done;
    return { ran, priorities };
  } finally {
    await worker.close();
    await queue.close();
  }
}

describe("BullMQ on svc kv, side by side with redis-server", () => {
  test(
    "every job completes once with its result; delays, retries, failures and removeOnComplete as on Redis",
    async () => {
      const [onRedis, onKv] = await Promise.all([mixedRun(s.redis), mixedRun(s.kv)]);
      for (const run of [onRedis, onKv]) {
        const { record, added, jobs } = run;
        expect(added.length).toBe(plainJobs + delayedJobs + retriedJobs + failingJobs);
        for (const [i, job] of added.entries()) {
          const id = job.id!;
          const { kind, n, delayMs } = job.data;
          const stored = jobs[i];
          if (kind === "failing") {
            expect(record.attempts.get(id)).toBe(failingAttempts);
            expect(record.successes.get(id)).toBeUndefined();
            expect(record.completedEvents.get(id)).toBeUndefined();
            expect(record.failedEvents.get(id)).toBe(failingAttempts);
            expect(stored?.failedReason).toBe(`job ${n} always fails`);
            expect(stored?.attemptsMade).toBe(failingAttempts);
            continue;
          }
          // Exactly once: one successful run and one completion, whatever the attempts before it.
          expect(record.successes.get(id)).toBe(1);
          expect(record.completedEvents.get(id)).toBe(1);
          expect(record.attempts.get(id)).toBe(kind === "retried" ? retriedAttempts : 1);
          if (kind === "delayed") expect(record.startedAtMs.get(id)![0]! - job.timestamp).toBeGreaterThanOrEqual(delayMs!);
          const removed = kind === "plain" && n % 2 === 0;
          if (removed) expect(stored).toBeUndefined();
          else expect(stored?.returnvalue).toEqual({ doubled: n * 2, kind });
        }
      }
      const keptPlain = plainJobs / 2;
      expect(onKv.counts).toEqual(onRedis.counts);
      expect(onKv.counts).toMatchObject({
        completed: keptPlain + delayedJobs + retriedJobs,
        failed: failingJobs,
        waiting: 0,
        active: 0,
        delayed: 0,
        prioritized: 0,
      });
      // The same ids, results and reasons on both: the servers ran the same scripts to the same data.
      const outcome = (jobs: (Job | undefined)[]) =>
        jobs.map((job) => job && { id: job.id, returnvalue: job.returnvalue, failedReason: job.failedReason, attemptsMade: job.attemptsMade });
      expect(outcome(onKv.jobs)).toEqual(outcome(onRedis.jobs));
      // And svc ran BullMQ's scripts compiled (docs/kv.md, "Scripts compiled to JavaScript"),
      // none left to Lua: this run checked the compiled path, not only Lua's.
      const stats = (await withClient(s.kv.port, (c) => c.call("INFO", "svc"))) as string;
      const field = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(stats)?.[1]);
      // At least one compiled run a job (two scripts or more run each).
      const jobCount = onKv.added.length;
      expect({ runs: field("compiled_script_runs") >= jobCount, bails: field("compiled_script_bails") }).toEqual({ runs: true, bails: 0 });
    },
    scenarioTimeoutMs,
  );

  test(
    "prioritised jobs run highest priority first, first in first out within a priority",
    async () => {
      const [onRedis, onKv] = await Promise.all([priorityRun(s.redis), priorityRun(s.kv)]);
      const byPriority = onKv.priorities
        .map((priority, n) => ({ priority, n }))
        .sort((a, b) => a.priority - b.priority || a.n - b.n)
        .map((job) => job.n);
      expect(onKv.ran).toEqual(byPriority);
      expect(onKv.ran).toEqual(onRedis.ran);
    },
    scenarioTimeoutMs,
  );
});
