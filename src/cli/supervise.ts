/**
 * `svc up`'s supervisor: starts each service as a child process in our process group (so a
 * terminal's Ctrl-C reaches all of them at once), waits until each reports where it listens,
 * prints that, and stops them all — SIGTERM, then SIGKILL after a grace period — when we are
 * asked to stop or when any of them dies on its own.
 */
import type { Subprocess } from "bun";
import { serviceStartTimeoutMs, serviceStopTimeoutMs } from "../core/limits.ts";
import { type Endpoint, isReadyMessage, type ReadyMessage } from "../service.ts";

export interface ChildSpec {
  name: string;
  cmd: string[];
}

interface Child {
  spec: ChildSpec;
  process: Subprocess;
  ready: Promise<ReadyMessage>;
}

const say = (line: string) => process.stderr.write(`[svc] ${line}\n`);

function spawnChild(spec: ChildSpec): Child {
  const { promise: ready, resolve } = Promise.withResolvers<ReadyMessage>();
  const child = Bun.spawn(spec.cmd, {
    stdio: ["ignore", "inherit", "inherit"],
    ipc(message) {
      if (isReadyMessage(message)) resolve(message);
    },
  });
  return { spec, process: child, ready };
}

/** Resolves to the child's ready message, or rejects if it exits or takes too long first. */
function readyOrFailure(child: Child): Promise<ReadyMessage> {
  const exited = child.process.exited.then((code) => {
    throw new Error(`${child.spec.name} exited with code ${code} before it was ready`);
  });
  const timedOut = Bun.sleep(serviceStartTimeoutMs).then(() => {
    throw new Error(`${child.spec.name} did not report ready within ${serviceStartTimeoutMs} ms`);
  });
  return Promise.race([child.ready, exited, timedOut]);
}

async function stopChild(child: Child, graceMs: number): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill("SIGTERM");
  const stopped = await Promise.race([child.process.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!stopped) {
    say(`${child.spec.name} did not stop within ${graceMs} ms; killing it`);
    child.process.kill("SIGKILL");
    await child.process.exited;
  }
}

export function formatEndpoints(ready: ReadyMessage[]): string {
  const rows: [string, Endpoint][] = ready.flatMap((r) => r.endpoints.map((e): [string, Endpoint] => [`${r.service} (pid ${r.pid})`, e]));
  const width = (f: (row: [string, Endpoint]) => string) => Math.max(...rows.map((r) => f(r).length));
  const [w0, w1, w2] = [width((r) => r[0]), width((r) => r[1].protocol), width((r) => r[1].address)];
  return rows.map(([who, e]) => `  ${who.padEnd(w0)}  ${e.protocol.padEnd(w1)}  ${e.address.padEnd(w2)}  try: ${e.tryIt}`).join("\n");
}

/** Runs the children until a signal or a child's death; resolves to our exit code. */
export async function supervise(specs: ChildSpec[], stopGraceMs = serviceStopTimeoutMs): Promise<number> {
  const children = specs.map(spawnChild);
  const stopAll = () => Promise.all(children.map((c) => stopChild(c, stopGraceMs)));
  let ready: ReadyMessage[];
  try {
    ready = await Promise.all(children.map(readyOrFailure));
  } catch (error) {
    say((error as Error).message);
    await stopAll();
    return 1;
  }
  // Handlers first: whoever reads the banner may signal at once, and an unhandled SIGTERM would
  // kill us without stopping the children.
  const { promise: signalled, resolve: onSignal } = Promise.withResolvers<string>();
  process.once("SIGINT", () => onSignal("SIGINT"));
  process.once("SIGTERM", () => onSignal("SIGTERM"));
  process.stdout.write(`svc is up:\n${formatEndpoints(ready)}\nCtrl-C stops everything.\n`);
  const died = Promise.race(children.map((c) => c.process.exited.then((code) => ({ child: c, code }))));
  const outcome = await Promise.race([signalled, died]);
  if (typeof outcome === "string") {
    say(`${outcome}: stopping ${children.length} service(s)`);
    await stopAll();
    say("stopped");
    return 0;
  }
  say(`${outcome.child.spec.name} exited on its own (code ${outcome.code}); stopping the rest`);
  await stopAll();
  return 1;
}
