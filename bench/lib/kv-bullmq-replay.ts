/**
 * BullMQ's own commands replayed: where a job's script time goes, with no client in the way
 * (docs/kv.md, "BullMQ's own commands replayed"). It records one bulk run on redis-server with
 * MONITOR — the top-level commands: BullMQ's EVALSHAs, and the EVALs that first loaded its
 * scripts — then replays them round after round, FLUSHALL between rounds:
 * - over a socket into redis-server and svc kv, the servers taking turns, each timing the scripts
 *   itself (INFO commandstats: EVALSHA's µs a job);
 * - in process, into an Engine (no sockets, no append-only file), timed around each round: the
 *   loop to profile or instrument (bun --cpu-prof, or perf with jit-perf-map.ts).
 *
 *   bun bench/lib/kv-bullmq-replay.ts [jobs] [rounds]
 *
 * Not part of `svc bench kv`, whose BullMQ table (kv-bullmq.ts) is the measure: this is the
 * microscope. Both ends of a replay reach the same state (the same keys left), which it checks.
 */
import { createLogger } from "../../src/core/log.ts";
import { Engine } from "../../src/kv/server/engine.ts";
import { Session } from "../../src/kv/server/session.ts";
import { RespWriter } from "../../src/kv/resp/writer.ts";
import { RespClient } from "../../test/kv/support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../../test/kv/support/servers.ts";
import { bulkQueueAndWorker, runJobsInBulk } from "./kv-bullmq.ts";
import { median } from "./redis-benchmark.ts";

/** Rounds run before those measured (svc's JIT settles over the first ones). */
const warmUpRounds = 10;
/** Commands sent in one pipeline while replaying over a socket. */
const pipelineCommands = 50;
/** What the replay leaves out: the clients' own housekeeping, and the Worker's wait for work. */
const notReplayed: ReadonlySet<string> = new Set(["info", "client", "quit", "bzpopmin"]);

/** A MONITOR line's words, C escapes undone: `<time> [<db> <client>] "word" "word" …`. */
function monitorWords(line: string): { client: string; words: string[] } | null {
  const head = /^\d+\.\d+ \[\d+ ([^\]]+)\] /.exec(line);
  if (head === null) return null;
  const words: string[] = [];
  let i = head[0].length;
  while (i < line.length) {
    if (line[i] === " ") {
      i++;
      continue;
    }
    if (line[i] !== '"') throw new Error(`a MONITOR line with an unquoted word: ${line.slice(0, 80)}`);
    i++;
    let word = "";
    while (line[i] !== '"') {
      if (line[i] !== "\\") {
        word += line[i++];
        continue;
      }
      const c = line[i + 1]!;
      if (c === "x") {
        word += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
        i += 4;
        continue;
      }
      word += escapes[c] ?? c;
      i += 2;
    }
    i++;
    words.push(word);
  }
  return { client: head[1]!, words };
}

const escapes: Readonly<Record<string, string>> = { n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b", '"': '"', "\\": "\\" };

/** The top-level commands of a MONITOR transcript that change or read the queue, in order. */
export function replayableCommands(transcript: string): string[][] {
  const out: string[][] = [];
  for (const line of transcript.split("\n")) {
    const parsed = monitorWords(line);
    // A script's own commands show as [<db> lua]: the script runs them again when replayed.
    if (parsed === null || parsed.client === "lua") continue;
    if (!notReplayed.has(parsed.words[0]!.toLowerCase())) out.push(parsed.words);
  }
  return out;
}

/** Runs `jobs` BullMQ jobs in bulk on redis-server, recording them with redis-cli MONITOR. */
async function record(jobs: number): Promise<string[][]> {
  const redis = await startRedis();
  const monitor = Bun.spawn(["redis-cli", "-p", String(redis.port), "monitor"], { stdout: "pipe" });
  await Bun.sleep(200);
  const { queue, worker } = bulkQueueAndWorker(redis, "replay");
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    await runJobsInBulk(queue, worker, jobs);
  } finally {
    await worker.close();
    await queue.close();
    await Bun.sleep(200);
    monitor.kill();
  }
  const transcript = await new Response(monitor.stdout).text();
  await redis.stop();
  return replayableCommands(transcript);
}

/** Scripts a replay runs: two a job (the add, and moveToFinished, which also fetches the next). */
const scriptsOf = (commands: readonly string[][]) => commands.filter((c) => /^eval(sha)?$/i.test(c[0]!)).length;

/** µs of EVALSHA a job, as `server` times it, for each of `rounds` replays after warmUpRounds; and the keys left. */
async function overSocket(server: ServerProcess, commands: readonly string[][], rounds: number): Promise<{ micros: number[]; keysLeft: number }> {
  const client = await RespClient.connect(server.port);
  const jobs = scriptsOf(commands) / 2;
  const micros: number[] = [];
  let keysLeft = 0;
  try {
    for (let round = 0; round < warmUpRounds + rounds; round++) {
      await client.call("FLUSHALL");
      await client.call("CONFIG", "RESETSTAT");
      for (let i = 0; i < commands.length; i += pipelineCommands) {
        for (const reply of await client.pipeline(commands.slice(i, i + pipelineCommands))) {
          if (reply !== null && typeof reply === "object" && "e" in reply) throw new Error(`the replay failed: ${reply.e}`);
        }
      }
      const stats = /cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(String(await client.call("INFO", "commandstats")));
      if (round >= warmUpRounds) micros.push(Number(stats![1]) / jobs);
      keysLeft = Number(await client.call("DBSIZE"));
    }
  } finally {
    client.close();
  }
  return { micros, keysLeft };
}

/** µs a job, timed around each of `rounds` replays into an Engine in this process after warmUpRounds; and the keys left. */
function inProcess(commands: readonly string[][], rounds: number): { micros: number[]; keysLeft: number } {
  const engine = new Engine({ databases: 16, log: createLogger({ level: "silent" }) });
  const out = new RespWriter();
  const session = new Session(out, null);
  engine.register(session);
  const run = (argv: string[]) => {
    out.start = 0;
    out.length = 0;
    engine.execute(session, argv);
    engine.settleTiming();
    if (out.buffer[0] === 0x2d) throw new Error(`the replay failed: ${out.buffer.latin1Slice(0, out.length)}`);
  };
  const jobs = scriptsOf(commands) / 2;
  const micros: number[] = [];
  for (let round = 0; round < warmUpRounds + rounds; round++) {
    run(["FLUSHALL"]);
    const started = Bun.nanoseconds();
    for (const argv of commands) run(argv);
    if (round >= warmUpRounds) micros.push((Bun.nanoseconds() - started) / 1000 / jobs);
  }
  return { micros, keysLeft: engine.dbs[0]!.size };
}

const range = (values: number[]) => `median ${median(values).toFixed(1)}, ${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;

if (import.meta.main) {
  const jobs = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 10);
  const commands = await record(jobs);
  console.log(`recorded ${commands.length} commands of ${jobs} jobs; ${rounds} rounds after ${warmUpRounds} of warm-up`);
  const [redis, kv] = await Promise.all([startRedis(), startKv(["--appendonly", "no"])]);
  try {
    const fromRedis = await overSocket(redis, commands, rounds);
    const fromKv = await overSocket(kv, commands, rounds);
    console.log(`redis-server, timed by itself: ${range(fromRedis.micros)} µs of scripts a job (${fromRedis.keysLeft} keys left)`);
    console.log(`svc kv, timed by itself:       ${range(fromKv.micros)} µs of scripts a job (${fromKv.keysLeft} keys left)`);
  } finally {
    await Promise.all([redis.stop(), kv.stop()]);
  }
  const local = inProcess(commands, rounds);
  console.log(`svc's engine in this process:  ${range(local.micros)} µs a job (${local.keysLeft} keys left)`);
}
