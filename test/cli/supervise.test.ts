// `svc up`'s supervisor with real child processes: it prints where each listens, forwards a stop
// to all of them, and brings everything down when one dies or never becomes ready.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { isAlive } from "../kv/support/servers.ts";

const upFixture = join(import.meta.dir, "../fixtures/up.ts");

/** Starts the supervisor over fixture services; collects its output as it arrives. */
function startUp(modes: string[]) {
  const proc = Bun.spawn([process.execPath, upFixture, ...modes], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, STOP_GRACE_MS: "500" },
  });
  const output = { stdout: "", stderr: "" };
  const pump = async (stream: ReadableStream<Uint8Array>, key: "stdout" | "stderr") => {
    for await (const chunk of stream) output[key] += new TextDecoder().decode(chunk);
  };
  const drained = Promise.all([pump(proc.stdout, "stdout"), pump(proc.stderr, "stderr")]);
  return { proc, output, drained };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

/** The pids and ports the banner lists. */
function parseBanner(stdout: string): { pids: number[]; ports: number[] } {
  const pids = [...stdout.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1]));
  const ports = [...stdout.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
  return { pids, ports: [...new Set(ports)] };
}

describe("svc up supervisor", () => {
  test("prints each service's address and try-it line once all are ready, and they answer", async () => {
    const up = startUp(["ok", "ok"]);
    await waitFor(() => up.output.stdout.includes("Ctrl-C stops everything"), "the banner");
    const { pids, ports } = parseBanner(up.output.stdout);
    expect(pids).toHaveLength(2);
    expect(up.output.stdout).toContain("try: nc 127.0.0.1");
    for (const port of ports) {
      const reply = Promise.withResolvers<string>();
      await Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          open(s) {
            s.write("ping");
          },
          data(_s, d) {
            reply.resolve(d.toString());
          },
        },
      });
      expect(await reply.promise).toBe("pong\n");
    }
    up.proc.kill("SIGTERM");
    await up.drained;
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} stops every child and exits 0`, async () => {
      const up = startUp(["ok", "ok"]);
      await waitFor(() => up.output.stdout.includes("Ctrl-C stops everything"), "the banner");
      const { pids } = parseBanner(up.output.stdout);
      up.proc.kill(signal);
      expect(await up.proc.exited).toBe(0);
      await up.drained;
      expect(up.output.stderr).toContain(`${signal}: stopping 2 service(s)`);
      for (const pid of pids) expect(isAlive(pid)).toBe(false);
    });
  }

  test("a child that ignores SIGTERM is killed after the grace period", async () => {
    const up = startUp(["ok", "ignore-sigterm"]);
    await waitFor(() => up.output.stdout.includes("Ctrl-C stops everything"), "the banner");
    const { pids } = parseBanner(up.output.stdout);
    up.proc.kill("SIGTERM");
    expect(await up.proc.exited).toBe(0);
    await up.drained;
    expect(up.output.stderr).toContain("fixture-1-ignore-sigterm did not stop within 500 ms; killing it");
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  test("a child that dies on its own brings the others down and the supervisor exits 1", async () => {
    const up = startUp(["ok", "crash-after-ready"]);
    expect(await up.proc.exited).toBe(1);
    await up.drained;
    expect(up.output.stderr).toMatch(/fixture-1-crash-after-ready exited on its own \(code 3\)/);
    for (const pid of parseBanner(up.output.stdout).pids) expect(isAlive(pid)).toBe(false);
  });

  test("a child that exits before it is ready fails the start, naming it and its code", async () => {
    const up = startUp(["ok", "exit-before-ready"]);
    expect(await up.proc.exited).toBe(1);
    await up.drained;
    expect(up.output.stderr).toContain("fixture-1-exit-before-ready exited with code 7 before it was ready");
    expect(up.output.stdout).not.toContain("svc is up");
  });
});
