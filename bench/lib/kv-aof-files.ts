/**
 * The append-only file itself, svc kv against redis-server on the same data: how long
 * BGREWRITEAOF takes and how large a file it leaves, and how long a server takes from its start to
 * answering, loading that file. Part of `svc bench kv`.
 *
 * The data: string keys, each set twice (so the log holds twice the commands its rewrite needs),
 * and hashes, lists, sets and sorted sets of 100 members each, loaded through `redis-cli --pipe`.
 * redis-server runs twice: as it ships (Redis 7 writes the rewritten file's base as an RDB
 * snapshot, `aof-use-rdb-preamble yes`) and with `aof-use-rdb-preamble no`, which writes commands
 * as svc does. Each server's key count after the load is checked against the data's.
 *
 * Automatic rewrites are off while the data goes in. A rewrite is timed from BGREWRITEAOF to INFO showing it finished (polled every few ms). Redis
 * notices its child's end in its timer (`hz` 10: up to 100 ms late), as its clients would. A load is
 * timed from spawning the process to its first readiness line, once with the file and once with an
 * empty directory: the difference is the load, the empty start the process's own start.
 *
 * SVC_BENCH_KV_FILE_KEYS sets the number of string keys (default 1,000,000).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeCommand } from "../../test/kv/support/resp-client.ts";
import { startKv, startRedis, type ServerProcess } from "../../test/kv/support/servers.ts";
import { fmt, redisCli } from "./redis-benchmark.ts";

const stringKeys = Number(process.env.SVC_BENCH_KV_FILE_KEYS ?? 1_000_000);
/** Collections of each kind (hash, list, set, sorted set). */
const collectionsPerKind = 1000;
const membersPerCollection = 100;
/** How often INFO is asked whether a rewrite is over. */
const rewritePollMs = 5;
/** Longest a rewrite may take before the bench gives up on it. */
const rewriteTimeoutMs = 120_000;

interface Contender {
  name: string;
  start(dir: string): Promise<ServerProcess>;
  /** Bytes of append-only file in `dir` (Redis 7 keeps several files under appendonlydir/). */
  fileBytes(dir: string): number;
}

const persistence = ["--appendonly", "yes", "--appendfsync", "everysec"];

const contenders: Contender[] = [
  { name: "svc kv", start: (dir) => startKv(["--dir", dir, ...persistence]), fileBytes: (dir) => statSync(join(dir, "appendonly.aof")).size },
  { name: "redis-server", start: (dir) => startRedis(["--dir", dir, ...persistence]), fileBytes: redisFileBytes },
  {
    name: "redis-server, aof-use-rdb-preamble no",
    start: (dir) => startRedis(["--dir", dir, ...persistence, "--aof-use-rdb-preamble", "no"]),
    fileBytes: redisFileBytes,
  },
];

function redisFileBytes(dir: string): number {
  const files = join(dir, "appendonlydir");
  return readdirSync(files).reduce((sum, name) => sum + statSync(join(files, name)).size, 0);
}

/** Writes the data as RESP commands to `path`; returns the number of keys it makes. */
function writeData(path: string): number {
  const parts: Buffer[] = [];
  for (let i = 0; i < stringKeys; i++) parts.push(encodeCommand(["SET", `key:${i}`, "first"]));
  for (let i = 0; i < stringKeys; i++) parts.push(encodeCommand(["SET", `key:${i}`, `value:${i}`]));
  const members = Array.from({ length: membersPerCollection }, (_, m) => `member:${m}`);
  for (let c = 0; c < collectionsPerKind; c++) {
    parts.push(encodeCommand(["HSET", `hash:${c}`, ...members.flatMap((m) => [m, `${m}:${c}`])]));
    parts.push(encodeCommand(["RPUSH", `list:${c}`, ...members]));
    parts.push(encodeCommand(["SADD", `set:${c}`, ...members]));
    parts.push(encodeCommand(["ZADD", `zset:${c}`, ...members.flatMap((m, i) => [String(i * 1.5), m])]));
  }
  writeFileSync(path, Buffer.concat(parts));
  return stringKeys + 4 * collectionsPerKind;
}

function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, "m").exec(info)?.[1]?.trim();
}

/** Runs BGREWRITEAOF and waits until INFO says the rewrite is over; returns milliseconds. */
async function timeRewrite(port: number): Promise<number> {
  const before = Number(infoField(await redisCli(port, ["INFO", "persistence"]), "aof_rewrites"));
  const started = performance.now();
  const reply = await redisCli(port, ["BGREWRITEAOF"]);
  if (!reply.includes("rewriting started")) throw new Error(`BGREWRITEAOF answered ${reply}`);
  for (;;) {
    const info = await redisCli(port, ["INFO", "persistence"]);
    const done = Number(infoField(info, "aof_rewrites")) > before && infoField(info, "aof_rewrite_in_progress") === "0";
    if (done) {
      if (infoField(info, "aof_last_bgrewrite_status") !== "ok") throw new Error(`rewrite failed:\n${info}`);
      return performance.now() - started;
    }
    if (performance.now() - started > rewriteTimeoutMs) throw new Error(`rewrite not over after ${rewriteTimeoutMs} ms`);
    await Bun.sleep(rewritePollMs);
  }
}

/** Milliseconds from spawning a server on `dir` to its readiness; the server is stopped after. */
async function timeStart(contender: Contender, dir: string, expectedKeys: number): Promise<number> {
  const started = performance.now();
  const server = await contender.start(dir);
  const elapsed = performance.now() - started;
  try {
    const keys = Number((await redisCli(server.port, ["DBSIZE"])).trim());
    if (keys !== expectedKeys) throw new Error(`${contender.name} loaded ${keys} keys, expected ${expectedKeys}`);
  } finally {
    await server.stop();
  }
  return elapsed;
}

export async function aofFileComparison(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "svc-bench-aof-files-"));
  try {
    const dataPath = join(work, "data.resp");
    const keys = writeData(dataPath);
    const commands = 2 * stringKeys + 4 * collectionsPerKind;
    console.log(
      `### kv: append-only file rewrite and load (${fmt(stringKeys)} string keys each set twice, ${fmt(4 * collectionsPerKind)} collections of ${membersPerCollection}: ${fmt(commands)} commands)\n`,
    );
    console.log("| server | file before | BGREWRITEAOF | file after | start with the file | start, empty | load |");
    console.log("|---|---:|---:|---:|---:|---:|---:|");
    const results = new Map<string, { rewriteMs: number; loadMs: number }>();
    for (const [i, contender] of contenders.entries()) {
      const dir = join(work, `server-${i}`);
      const emptyDir = join(work, `empty-${i}`);
      for (const d of [dir, emptyDir]) mkdirSync(d);
      const server = await contender.start(dir);
      let rewriteMs: number;
      let before: number;
      try {
        // No automatic rewrite while the data goes in: the one timed is BGREWRITEAOF's.
        await redisCli(server.port, ["CONFIG", "SET", "auto-aof-rewrite-percentage", "0"]);
        const piped = await redisCli(server.port, ["--pipe"], dataPath);
        if (!piped.includes(`errors: 0, replies: ${commands}`)) throw new Error(`loading the data into ${contender.name} failed:\n${piped}`);
        before = contender.fileBytes(dir);
        rewriteMs = await timeRewrite(server.port);
      } finally {
        await server.stop();
      }
      const after = contender.fileBytes(dir);
      const withFile = await timeStart(contender, dir, keys);
      const empty = await timeStart(contender, emptyDir, 0);
      results.set(contender.name, { rewriteMs, loadMs: withFile - empty });
      const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
      const ms = (n: number) => `${fmt(n)} ms`;
      console.log(`| ${contender.name} | ${mib(before)} | ${ms(rewriteMs)} | ${mib(after)} | ${ms(withFile)} | ${ms(empty)} | ${ms(withFile - empty)} |`);
    }
    const ours = results.get("svc kv")!;
    for (const name of [...results.keys()].filter((n) => n !== "svc kv")) {
      const theirs = results.get(name)!;
      console.log(
        `\nagainst ${name}: rewrite ${(theirs.rewriteMs / ours.rewriteMs).toFixed(2)}×, load ${(theirs.loadMs / ours.loadMs).toFixed(2)}× (theirs/ours: above 1 means svc is faster)`,
      );
    }
    console.log("");
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
