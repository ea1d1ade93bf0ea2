/**
 * Real servers for kv tests: `svc kv` started as its own process, exactly as a user starts it,
 * and Debian's redis-server as the reference it is compared with.
 */
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, spawnServer as spawnProcess } from "../../support/spawn.ts";
import { tempDir } from "../../support/temp-dir.ts";

const repoRoot = join(import.meta.dir, "../../..");

export interface ServerProcess {
  port: number;
  /** svc kv's REST port (--http-port); undefined for redis-server. */
  httpPort?: number;
  proc: Subprocess;
  /** Everything the process printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** A spawned server as the kv tests see it: its port, found in its output. */
async function spawnServer(
  name: string,
  argv: string[],
  env: Record<string, string | undefined>,
  readyPort: (output: string) => number | undefined,
): Promise<ServerProcess> {
  const server = await spawnProcess(name, argv, readyPort, { env });
  return { port: server.where, proc: server.proc, output: server.output, stop: server.stop };
}

export interface KvStartOptions {
  /**
   * A soft limit on the size of any file the server writes (RLIMIT_FSIZE), with SIGXFSZ ignored:
   * a write past it fails with EFBIG, as one on a full disk fails with ENOSPC, without needing a
   * small filesystem (which only root can mount). liftFileSizeLimit removes it.
   */
  fileSizeLimitBytes?: number;
}

/**
 * Starts `svc kv --port 0 --http-port 0` (plus `args`, whose flags win) and waits for the ports it
 * prints: RESP's and the REST API's, each on its own endpoint line. DEBUG is allowed from this
 * machine, as startRedis allows it (tests sleep and switch active expiry with it).
 */
export async function startKv(args: string[] = [], options: KvStartOptions = {}): Promise<ServerProcess> {
  const dir = tempDir("svc-kv-");
  const defaults = ["--port", "0", "--http-port", "0", "--dir", dir, "--enable-debug-command", "local"];
  let argv = [process.execPath, join(repoRoot, "src/cli.ts"), "kv", ...defaults, ...args];
  if (options.fileSizeLimitBytes !== undefined) {
    // The shell sets the limit on itself, then becomes the server (exec keeps the pid), which
    // inherits the limit and the ignored signal. ulimit counts 512-byte blocks.
    const blocks = Math.floor(options.fileSizeLimitBytes / 512);
    argv = ["sh", "-c", `trap '' XFSZ; ulimit -S -f ${blocks}; exec "$0" "$@"`, ...argv];
  }
  let httpPort: number | undefined;
  // Scripts compiled at their first run: the side-by-side suites run most scripts once, and are
  // to check the compiled path (docs/kv.md, "Scripts compiled to JavaScript") as much as Lua's.
  const env = { SVC_KV_COMPILED_SCRIPTS: "first", ...process.env, SVC_LOG_LEVEL: "warn" };
  const server = await spawnServer("svc kv", argv, env, (output) => {
    const resp = /RESP2 on [\d.]+:(\d+)/.exec(output);
    const rest = /REST on http:\/\/[^\s/]+:(\d+)/.exec(output);
    if (resp === null || rest === null) return undefined;
    httpPort = Number(rest[1]);
    return Number(resp[1]);
  });
  return { ...server, httpPort };
}

/** Removes the soft file-size limit KvStartOptions set on a running server (util-linux's prlimit). */
export function liftFileSizeLimit(pid: number): void {
  const lifted = Bun.spawnSync(["prlimit", `--pid=${pid}`, "--fsize=unlimited:"]);
  if (lifted.exitCode !== 0) throw new Error(`prlimit failed: ${lifted.stderr.toString()}`);
}

/** A free TCP port on loopback (for redis-server, which cannot pick its own and print it). */
export { freePort };

/**
 * Starts Debian's redis-server with persistence off, on a free port, with `args` (e.g. --requirepass).
 * Its directory is a fresh temporary one (args may name another), so a test that runs SAVE or
 * BGREWRITEAOF leaves nothing in the working directory. DEBUG is allowed from loopback, as svc
 * allows it (Redis 7 refuses it by default).
 */
export async function startRedis(args: string[] = []): Promise<ServerProcess> {
  const port = freePort();
  const dir = tempDir("svc-redis-");
  const argv = [
    "redis-server",
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--enable-debug-command",
    "local",
    ...args,
  ];
  return spawnServer("redis-server", argv, process.env, (output) => (output.includes("Ready to accept connections") ? port : undefined));
}

/** Resident memory of a live process in bytes (VmRSS in /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
