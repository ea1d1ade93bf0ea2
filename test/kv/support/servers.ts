/**
 * Real servers for kv tests: `svc kv` started as its own process, exactly as a user starts it,
 * and Debian's redis-server as the reference it is compared with.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitUntil } from "./wire.ts";

const repoRoot = join(import.meta.dir, "../../..");
/** How long a server may take to print that it is ready. */
const serverStartMs = 20_000;

export interface ServerProcess {
  port: number;
  /** svc kv's REST port (--http-port); undefined for redis-server. */
  httpPort?: number;
  proc: Subprocess;
  /** Everything the process printed so far. */
  output(): string;
  stop(): Promise<void>;
}

async function collect(proc: Subprocess<"ignore", "pipe", "pipe">): Promise<() => string> {
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  return () => text;
}

/**
 * Spawns a server with its output collected and waits until `readyPort` finds in that output the
 * port it serves on; a server that exits first fails the start with what it printed.
 */
async function spawnServer(name: string, argv: string[], env: Record<string, string | undefined>, readyPort: (output: string) => number | undefined): Promise<ServerProcess> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  const output = await collect(proc);
  const port = await waitUntil(() => {
    const port = readyPort(output());
    if (port !== undefined) return port;
    if (proc.exitCode !== null) throw new Error(`${name} exited ${proc.exitCode}:\n${output()}`);
    return undefined;
  }, `${name} to be ready`, serverStartMs);
  return {
    port,
    proc,
    output,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/**
 * Starts `svc kv --port 0 --http-port 0` (plus `args`, whose flags win) and waits for the ports it
 * prints: RESP's and the REST API's, each on its own endpoint line.
 */
export async function startKv(args: string[] = []): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), "svc-kv-"));
  const argv = [process.execPath, join(repoRoot, "src/cli.ts"), "kv", "--port", "0", "--http-port", "0", "--dir", dir, ...args];
  let httpPort: number | undefined;
  const server = await spawnServer("svc kv", argv, { ...process.env, SVC_LOG_LEVEL: "warn" }, (output) => {
    const resp = /RESP2 on [\d.]+:(\d+)/.exec(output);
    const rest = /REST on http:\/\/[^\s/]+:(\d+)/.exec(output);
    if (resp === null || rest === null) return undefined;
    httpPort = Number(rest[1]);
    return Number(resp[1]);
  });
  return { ...server, httpPort };
}

/** A free TCP port on loopback (for redis-server, which cannot pick its own and print it). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Starts Debian's redis-server with persistence off, on a free port, with `args` (e.g. --requirepass). */
export async function startRedis(args: string[] = []): Promise<ServerProcess> {
  const port = freePort();
  const argv = ["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", ...args];
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
