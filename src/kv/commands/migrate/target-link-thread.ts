/**
 * The thread MIGRATE's connections to other servers live on (target-link.ts). The server's own
 * thread blocks while a MIGRATE talks to its target, as Redis's does, and cannot run a socket
 * meanwhile: this thread does it for it — connects (or takes the connection it keeps for that
 * host and port), writes the request, reads the replies' first lines, posts them back on the port
 * it was given and wakes the waiting thread.
 *
 * Connections are kept for the next MIGRATE to the same target and closed after
 * `idleCloseMs` unused, at most `linksMax` at once (Redis's migrate socket cache). A kept
 * connection that fails before its first reply is opened again once, unless the failure was a
 * timeout, as Redis retries.
 */
import type { Socket } from "bun";

/** What the server's thread sends: the port answers go to (first), then exchanges. */
export type TargetLinkMessage = { answers: MessagePort } | TargetExchange;

export interface TargetExchange {
  /** Told back with the answer: one that comes after its exchange was given up on is skipped. */
  id: number;
  host: string;
  port: number;
  /** RESP commands, written as they are. */
  request: Uint8Array;
  /** How many reply lines to read. */
  replies: number;
  /** The longest each step (connecting, writing, each reply) may take. */
  timeoutMs: number;
  /** Set to 1 and notified once the answer has been posted. */
  done: SharedArrayBuffer;
}

/** The replies' lines (each without its CRLF), or where it failed, with the lines read before. */
export type TargetAnswer = { lines: string[] } | { failed: "connecting" | "writing" | "reading"; lines: string[] };

/** An answer as posted back: which exchange it answers. */
export interface NumberedAnswer {
  id: number;
  answer: TargetAnswer;
}

/** A kept connection is closed after this long unused (Redis's MIGRATE_SOCKET_CACHE_TTL). */
const idleCloseMs = 10_000;
/** At most this many connections are kept; past it, one is closed to make room (Redis's MIGRATE_SOCKET_CACHE_ITEMS). */
const linksMax = 64;
/** How often idle connections are looked for. */
const idleCheckMs = 1_000;

interface Link {
  socket: Socket<undefined>;
  /** Bytes received and not read yet. */
  pending: Buffer;
  /** Called when bytes arrive or the connection ends. */
  wake: (() => void) | null;
  closed: boolean;
  lastUseMs: number;
}

declare const self: Worker;

const links = new Map<string, Link>();
let answers: MessagePort | null = null;
let queue: Promise<void> = Promise.resolve();

class StepFailed extends Error {
  constructor(
    readonly step: "connecting" | "writing" | "reading",
    readonly timedOut: boolean,
  ) {
    super(`${step} failed`);
  }
}

/** Lines read before a failure: the replies the target gave before the connection broke. */
class PartialRead extends StepFailed {
  constructor(
    readonly lines: string[],
    timedOut: boolean,
  ) {
    super("reading", timedOut);
  }
}

/** Only as a Worker: imported on the main thread (a test importing every module), it does nothing. */
if (!Bun.isMainThread) {
  self.onmessage = (event: MessageEvent<TargetLinkMessage>) => {
    const message = event.data;
    if ("answers" in message) answers = message.answers;
    // One exchange at a time: one the server's thread gave up on still holds its connection.
    else queue = queue.then(() => exchange(message));
  };
  setInterval(closeIdle, idleCheckMs);
}

async function exchange(x: TargetExchange): Promise<void> {
  const name = `${x.host}:${x.port}`;
  let answer: TargetAnswer;
  try {
    answer = { lines: await attempt(x, name, true) };
  } catch (error) {
    answer = { failed: error instanceof StepFailed ? error.step : "reading", lines: error instanceof PartialRead ? error.lines : [] };
  }
  answers!.postMessage({ id: x.id, answer } satisfies NumberedAnswer);
  const done = new Int32Array(x.done);
  Atomics.store(done, 0, 1);
  Atomics.notify(done, 0);
}

async function attempt(x: TargetExchange, name: string, mayRetry: boolean): Promise<string[]> {
  const kept = links.get(name);
  const link = kept !== undefined && !kept.closed ? kept : await connect(x, name);
  link.lastUseMs = Date.now();
  const lines: string[] = [];
  try {
    await writeAll(link, x.request, x.timeoutMs);
    while (lines.length < x.replies) lines.push(await readLine(link, x.timeoutMs));
    return lines;
  } catch (error) {
    drop(name, link);
    const failure = error as StepFailed;
    // A kept connection the target has since closed: open it again, once, if nothing was answered.
    if (link === kept && mayRetry && lines.length === 0 && !failure.timedOut) return attempt(x, name, false);
    if (failure.step === "reading") throw new PartialRead(lines, failure.timedOut);
    throw failure;
  }
}

async function connect(x: TargetExchange, name: string): Promise<Link> {
  if (links.size >= linksMax) {
    const [oldest, link] = links.entries().next().value as [string, Link];
    drop(oldest, link);
  }
  const link: Link = { socket: null as unknown as Socket<undefined>, pending: Buffer.alloc(0), wake: null, closed: false, lastUseMs: Date.now() };
  const ended = () => {
    link.closed = true;
    link.wake?.();
  };
  const connecting = Bun.connect({
    hostname: x.host,
    port: x.port,
    socket: {
      data(_socket, bytes) {
        link.pending = link.pending.length === 0 ? Buffer.from(bytes) : Buffer.concat([link.pending, bytes]);
        link.wake?.();
      },
      drain() {
        link.wake?.();
      },
      close: ended,
      error: ended,
      connectError: ended,
    },
  });
  const socket = await withTimeout(connecting, x.timeoutMs, "connecting").catch((error: unknown) => {
    // A connection that comes after its time is closed rather than kept.
    void connecting.then((late) => late.end()).catch(() => {});
    if (error instanceof StepFailed) throw error;
    // Redis connects without blocking and takes a refused connection for one made, whose first
    // write then fails: it answers "writing" for it, and "connecting" for a timeout or a bad address.
    throw new StepFailed((error as { code?: string }).code === "ECONNREFUSED" ? "writing" : "connecting", false);
  });
  socket.setNoDelay(true);
  link.socket = socket;
  links.set(name, link);
  return link;
}

async function writeAll(link: Link, bytes: Uint8Array, timeoutMs: number): Promise<void> {
  let at = 0;
  while (at < bytes.length) {
    if (link.closed) throw new StepFailed("writing", false);
    const written = link.socket.write(bytes.subarray(at));
    if (written < 0) throw new StepFailed("writing", false);
    at += written;
    if (at < bytes.length) await waitForWake(link, timeoutMs, "writing");
  }
}

/** The next line the target sent, without its line end (Redis's syncReadLine). */
async function readLine(link: Link, timeoutMs: number): Promise<string> {
  for (;;) {
    const end = link.pending.indexOf(0x0a);
    if (end >= 0) {
      const line = link.pending.toString("latin1", 0, end > 0 && link.pending[end - 1] === 0x0d ? end - 1 : end);
      link.pending = link.pending.subarray(end + 1);
      return line;
    }
    if (link.closed) throw new StepFailed("reading", false);
    await waitForWake(link, timeoutMs, "reading");
  }
}

function waitForWake(link: Link, timeoutMs: number, step: "writing" | "reading"): Promise<void> {
  return withTimeout(
    new Promise<void>((resolve) => {
      link.wake = resolve;
    }),
    timeoutMs,
    step,
  ).finally(() => {
    link.wake = null;
  });
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, step: "connecting" | "writing" | "reading"): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StepFailed(step, true)), timeoutMs);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function drop(name: string, link: Link): void {
  if (links.get(name) === link) links.delete(name);
  link.closed = true;
  link.socket?.end();
}

function closeIdle(): void {
  const now = Date.now();
  for (const [name, link] of links) if (now - link.lastUseMs > idleCloseMs) drop(name, link);
}
