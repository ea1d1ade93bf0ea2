// `svc up` serves RESP: started as a user starts it, it runs `svc kv` as a child process, prints
// where it listens, that address answers Redis clients, and SIGTERM stops the child and frees the
// port. A port already in use is reported and `svc up` exits non-zero.
//
// `svc up` has no port flag of its own; each child reads its flags from the environment
// (SVC_KV_PORT for `svc kv --port`), which `svc up` passes on, so SVC_KV_PORT=0 gives kv a free
// port and the tests do not depend on 6379 being free.
//
// The tests run `bun src/cli.ts up` — what the ./svc bootstrap execs once the machine is ready —
// not ./svc itself: the bootstrap rebuilds native/ whenever its sources changed (a cargo build of
// minutes) and installs the result into native/dist, which a test must not do.
import { afterEach, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RespClient } from "./support/resp-client.ts";
import { isAlive } from "./support/servers.ts";
import { waitUntil } from "./support/wire.ts";
import { tempDir } from "../support/temp-dir.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");
/** How long `svc up` may take to stop after SIGTERM before the test kills it (a cleanup bound). */
const stopWaitMs = 5000;

interface Up {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stdout(): string;
  stderr(): string;
  /** Pids of the services, from the banner. */
  childPids: number[];
}

const started: Up[] = [];

function startUp(env: Record<string, string | undefined>, cwd = tempDir("svc-up-")): Up {
  const proc = Bun.spawn([process.execPath, cliPath, "up", "--only", "kv"], {
    cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    // REST on a free port unless a test says otherwise: 5020 may be taken on a shared machine.
    env: { ...process.env, SVC_LOG_LEVEL: "warn", SVC_KV_HTTP_PORT: "0", ...env },
  });
  let out = "";
  let err = "";
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }));
  };
  void pump(proc.stdout, (s) => (out += s));
  void pump(proc.stderr, (s) => (err += s));
  const up: Up = { proc, stdout: () => out, stderr: () => err, childPids: [] };
  started.push(up);
  return up;
}

/** Waits for the banner; returns kv's pid and port from its line. */
async function banner(up: Up): Promise<{ pid: number; port: number; line: string }> {
  await waitUntil(
    () => {
      if (up.stdout().includes("Ctrl-C stops everything")) return true;
      if (up.proc.exitCode !== null) throw new Error(`svc up exited ${up.proc.exitCode}:\n${up.stdout()}\n${up.stderr()}`);
      return undefined;
    },
    "svc up's banner",
    20_000,
  );
  const line = up
    .stdout()
    .split("\n")
    .find((l) => l.includes("kv (pid"))!;
  const m = /kv \(pid (\d+)\)\s+RESP2\s+127\.0\.0\.1:(\d+)\s+try: redis-cli -p (\d+) PING/.exec(line);
  expect(m, `banner line: ${line}`).not.toBeNull();
  const [pid, port, tryPort] = [Number(m![1]), Number(m![2]), Number(m![3])];
  expect(tryPort).toBe(port);
  up.childPids.push(pid);
  return { pid, port, line };
}

afterEach(async () => {
  // Whatever a test left running: SIGTERM (svc up stops its children), then SIGKILL for anything
  // still alive, children included, so no test leaves a process behind.
  for (const up of started.splice(0)) {
    if (up.proc.exitCode === null && up.proc.signalCode === null) {
      up.proc.kill("SIGTERM");
      await Promise.race([up.proc.exited, Bun.sleep(stopWaitMs)]);
      if (up.proc.exitCode === null && up.proc.signalCode === null) up.proc.kill("SIGKILL");
    }
    for (const pid of up.childPids) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  }
});

/** Whether something already listens on the port. */
function portTaken(port: number): boolean {
  try {
    Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
    return false;
  } catch {
    return true;
  }
}

async function canConnect(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

describe("svc up", () => {
  test("with SVC_KV_PORT=0 runs kv on a free port it prints, which answers RESP; SIGTERM stops it and frees the port", async () => {
    const up = startUp({ SVC_KV_PORT: "0" });
    const { pid, port } = await banner(up);
    expect(port).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(true);

    const client = await RespClient.connect(port);
    expect(await client.call("PING")).toEqual({ s: "PONG" });
    expect(await client.call("SET", "up:k", "hello")).toEqual({ s: "OK" });
    expect(await client.call("GET", "up:k")).toBe("hello");
    expect(await client.call("CONFIG", "GET", "port")).toEqual(["port", String(port)]);
    client.close();
    // The banner's try-it line works as printed.
    const cli = Bun.spawn(["redis-cli", "-p", String(port), "PING"], { stdout: "pipe", stderr: "pipe" });
    expect(await new Response(cli.stdout).text()).toBe("PONG\n");
    expect(await cli.exited).toBe(0);

    up.proc.kill("SIGTERM");
    expect(await up.proc.exited).toBe(0);
    expect(up.stderr()).toContain("stopped");
    await waitUntil(() => (isAlive(pid) ? undefined : true), "kv to exit");
    expect(await canConnect(port)).toBe(false);
  });

  test("persists under data/kv in the directory it runs in: a second svc up there has the data", async () => {
    const cwd = tempDir("svc-up-");
    const first = startUp({ SVC_KV_PORT: "0" }, cwd);
    const client = await RespClient.connect((await banner(first)).port);
    expect(await client.call("RPUSH", "up:list", "a", "b")).toBe(2n);
    client.close();
    first.proc.kill("SIGTERM");
    await first.proc.exited;
    expect(existsSync(join(cwd, "data/kv/appendonly.aof"))).toBe(true);
    const second = startUp({ SVC_KV_PORT: "0" }, cwd);
    const again = await RespClient.connect((await banner(second)).port);
    expect(await again.call("LRANGE", "up:list", "0", "-1")).toEqual(["a", "b"]);
    again.close();
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  });

  test("when kv's port is taken, svc up says kv did not start and exits 1", async () => {
    const squatter = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const up = startUp({ SVC_KV_PORT: String(squatter.port) });
      expect(await up.proc.exited).toBe(1);
      expect(up.stderr()).toContain("kv exited with code");
      expect(up.stdout()).not.toContain("svc is up");
    } finally {
      squatter.stop(true);
    }
  });

  const defaultPort = 6379;
  const defaultHttpPort = 5020;
  const defaultTaken = portTaken(defaultPort) || portTaken(defaultHttpPort);
  if (defaultTaken) console.warn(`svc-up.test.ts: port ${defaultPort} or ${defaultHttpPort} is taken on this machine; skipping the default-port test`);
  test.skipIf(defaultTaken)(`without port settings, kv serves RESP on ${defaultPort} and REST on ${defaultHttpPort} (skipped when taken)`, async () => {
    const up = startUp({ SVC_KV_PORT: undefined, SVC_KV_HTTP_PORT: undefined });
    const { port } = await banner(up);
    expect(port).toBe(defaultPort);
    const client = await RespClient.connect(port);
    expect(await client.call("SET", "up:rest", "seen")).toEqual({ s: "OK" });
    client.close();
    const response = await fetch(`http://127.0.0.1:${defaultHttpPort}/kv/up:rest`);
    expect(await response.json()).toEqual({ result: "seen" });
  });
});
