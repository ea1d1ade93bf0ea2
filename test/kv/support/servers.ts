/**
 * Real servers for kv tests: `svc kv` started as its own process, exactly as a user starts it,
 * and Debian's redis-server as the reference it is compared with.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repoRoot = join(import.meta.dir, "../../..");

export interface ServerProcess {
  port: number;
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

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** Starts `svc kv --port 0` (plus `args`) and waits for the port it prints. */
export async function startKv(args: string[] = []): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), "svc-kv-"));
  const proc = Bun.spawn([process.execPath, join(repoRoot, "src/cli.ts"), "kv", "--port", "0", "--dir", dir, ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SVC_LOG_LEVEL: "warn" },
  });
  const output = await collect(proc);
  const port = await waitFor(() => {
    const m = /RESP2 on [\d.]+:(\d+)/.exec(output());
    if (m !== null) return Number(m[1]);
    if (proc.exitCode !== null) throw new Error(`svc kv exited ${proc.exitCode}:\n${output()}`);
    return undefined;
  }, "svc kv to print its port");
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

/** A free TCP port on loopback (for redis-server, which cannot pick its own and print it). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Starts Debian's redis-server with persistence off, on a free port. */
export async function startRedis(): Promise<ServerProcess> {
  const port = freePort();
  const proc = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const output = await collect(proc);
  await waitFor(() => {
    if (output().includes("Ready to accept connections")) return true;
    if (proc.exitCode !== null) throw new Error(`redis-server exited ${proc.exitCode}:\n${output()}`);
    return undefined;
  }, "redis-server to be ready");
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

/** Resident memory of a live process in bytes (VmRSS in /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}
