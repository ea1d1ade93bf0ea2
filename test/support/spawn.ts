/**
 * Starting a server as its own process, as a user would, for tests and benchmarks: its output is
 * collected, and the start waits until that output says where it serves (or fails with what it
 * printed if it exits first or takes too long). No bun:test here, so benchmarks can use it too.
 */
import type { Subprocess } from "bun";

/** How long a server may take to say it is ready (a bound on a loaded machine, not a timing claim). */
const serverStartMs = 20_000;
const pollMs = 20;
/** How long an exited server's last output may take to arrive (its pipes may outlive it in a child). */
const outputDrainMs = 2_000;

export interface SpawnedServer<T> {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** What `ready` found in the output: a port, an address. */
  where: T;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: no chance to flush or close anything. */
  kill(): Promise<void>;
}

/** Spawns `argv` and waits until `ready` finds in its output where it serves. */
export async function spawnServer<T>(
  name: string,
  argv: string[],
  ready: (output: string) => T | undefined,
  options: { env?: Record<string, string | undefined>; cwd?: string } = {},
): Promise<SpawnedServer<T>> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: options.env ?? process.env, cwd: options.cwd });
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const pumped = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const deadline = Date.now() + serverStartMs;
  let where = ready(text);
  while (where === undefined) {
    if (proc.exitCode !== null) {
      // The exit can be seen before the last of the output is read: read to the pipes' end
      // first, so the error carries what the process said on its way out.
      await Promise.race([pumped, Bun.sleep(outputDrainMs)]);
      throw new Error(`${name} exited ${proc.exitCode}:\n${text}`);
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become ready within ${serverStartMs} ms:\n${text}`);
    await Bun.sleep(pollMs);
    where = ready(text);
  }
  const ended = async (signal: "SIGTERM" | "SIGKILL") => {
    proc.kill(signal);
    await proc.exited;
  };
  return { proc, where, output: () => text, stop: () => ended("SIGTERM"), kill: () => ended("SIGKILL") };
}

/** A free TCP port on loopback, for a server that cannot pick its own and print it (redis-server, postgres). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Finds the address an HTTP service prints once it serves ("<service>: HTTP on host:port", or HTTPS). */
export function httpAddress(service: string): (output: string) => string | undefined {
  const line = new RegExp(`${service}: HTTPS? on (\\S+)`);
  return (output) => line.exec(output)?.[1];
}

export const brokerAddress = httpAddress("broker");
/** The broker's HTTP and binary (SV01) addresses, once it has printed both. */
export function brokerAddresses(output: string): { http: string; binary: string } | undefined {
  const http = brokerAddress(output);
  const binary = /broker: SV01(?:\+TLS)? on (\S+)/.exec(output)?.[1];
  return http === undefined || binary === undefined ? undefined : { http, binary };
}
export const crmAddress = httpAddress("crm");
export const mediaAddress = httpAddress("media");
