/**
 * Raw TCP for protocol tests: the exact bytes a server sent and whether it closed the
 * connection — nothing parsed, nothing hidden — plus what the kernel says about a socket.
 */
import type { Socket } from "bun";
import { readFileSync } from "node:fs";
import { waitUntil } from "../../support/wait.ts";

/** Bun's TCP sockets have pause() and resume(); its type declarations do not list them yet. */
type PausableSocket = Socket<undefined> & { pause(): void; resume(): void };

/** Lives in test/support/wait.ts now (the media tests poll with it too). */
export { waitUntil };

/**
 * Bytes waiting to be written to a socket. Bun's socket.write does not buffer: it takes what the
 * kernel accepts and reports how much, so the rest waits here for the socket's next drain.
 */
export class WriteQueue {
  private readonly chunks: Buffer[] = [];

  get isEmpty(): boolean {
    return this.chunks.length === 0;
  }

  /** Queues bytes (a string is latin1, one byte per character). */
  push(bytes: string | Uint8Array): void {
    this.chunks.push(typeof bytes === "string" ? Buffer.from(bytes, "latin1") : Buffer.from(bytes));
  }

  /** Writes queued bytes until the kernel takes no more (a closed socket takes nothing). */
  writeTo(socket: { write(bytes: Uint8Array): number }): void {
    while (this.chunks.length > 0) {
      const head = this.chunks[0]!;
      const written = socket.write(head);
      if (written < head.length) {
        if (written > 0) this.chunks[0] = head.subarray(written);
        return;
      }
      this.chunks.shift();
    }
  }
}

export class RawConnection {
  private chunks: Buffer[] = [];
  /** Every byte received so far. */
  bytesReceived = 0;
  closed = false;
  private lastActivityMs = performance.now();
  private readonly outgoing = new WriteQueue();
  private socket!: PausableSocket;
  /** Called with each chunk as it arrives; by default chunks are kept for `received`. */
  onChunk: ((chunk: Buffer) => void) | null = null;

  static async open(port: number): Promise<RawConnection> {
    const conn = new RawConnection();
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_s, chunk) => conn.onData(chunk),
        drain: () => conn.pump(),
        close: () => {
          conn.closed = true;
        },
        error: () => {
          conn.closed = true;
        },
      },
    });
    socket.setNoDelay(true);
    conn.socket = socket as PausableSocket;
    return conn;
  }

  private onData(chunk: Buffer): void {
    this.bytesReceived += chunk.length;
    this.lastActivityMs = performance.now();
    if (this.onChunk !== null) this.onChunk(chunk);
    else this.chunks.push(Buffer.from(chunk));
  }

  /** The port of our end, to find the socket in /proc/net/tcp. */
  get localPort(): number {
    return this.socket.localPort;
  }

  /** Everything received so far (unless `onChunk` consumed it). */
  get received(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Queues bytes; they go out as fast as the kernel takes them (Bun's write does not buffer). */
  write(bytes: string | Uint8Array): void {
    this.outgoing.push(bytes);
    this.pump();
  }

  private pump(): void {
    if (this.closed || this.outgoing.isEmpty) return;
    this.outgoing.writeTo(this.socket);
    this.lastActivityMs = performance.now();
  }

  /** Resolves once every queued byte is in the kernel. */
  async flushed(): Promise<void> {
    await waitUntil(() => (this.outgoing.isEmpty || this.closed ? true : undefined), "queued bytes to be written", 30_000);
  }

  /** Stops reading: replies pile up in the kernel, as with a client that never reads. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /**
   * Waits until the server is done with what we sent: the connection closed, or at least
   * `atLeast` bytes arrived and then nothing more for `quietMs`. Waiting for a close or for bytes
   * gives up after `deadlineMs` (short of a test's 5 s timeout, so a failure shows what arrived);
   * only "nothing more arrives" needs the quiet period.
   */
  async settle(options: { atLeast?: number; expectClose?: boolean; quietMs?: number; deadlineMs?: number } = {}): Promise<void> {
    const { atLeast = 0, expectClose = false, quietMs = 250, deadlineMs = 3000 } = options;
    const deadline = performance.now() + deadlineMs;
    for (;;) {
      if (this.closed) return;
      const now = performance.now();
      if (now > deadline) return;
      const enough = this.bytesReceived >= atLeast && !expectClose;
      if (enough && this.outgoing.isEmpty && now - this.lastActivityMs >= quietMs) return;
      await Bun.sleep(5);
    }
  }

  close(): void {
    this.socket.end();
  }

  /** Closes with a reset, dropping anything unread. */
  terminate(): void {
    this.socket.terminate();
  }
}

/** One write, and whether to wait for the server's answer before the next. */
export interface Step {
  bytes: string | Uint8Array;
  /** Wait for the server to settle after this write and record what it sent (default true). */
  settle?: boolean;
  /** Pause before the next write, so the server reads the writes separately. */
  gapMs?: number;
  /**
   * How long the server must be silent to count as settled (settle's quietMs): longer for a step
   * whose command takes the server a while (a million arguments), so that a slow, loaded machine
   * is not read as a server with nothing to say.
   */
  quietMs?: number;
}

/** What the server had sent (latin1, byte for byte) and whether it had closed, after a step. */
export interface Observed {
  replies: string;
  closed: boolean;
}

/**
 * Plays `steps` on a new connection and records what the server had sent after each settled
 * step. With `reference` (another server's observations of the same steps) it waits for as many
 * bytes, or for the close, that the reference saw, so only silence depends on the quiet period.
 */
export async function observe(port: number, steps: readonly Step[], reference?: readonly Observed[]): Promise<Observed[]> {
  const conn = await RawConnection.open(port);
  const observed: Observed[] = [];
  try {
    for (const step of steps) {
      conn.write(step.bytes);
      if (step.gapMs !== undefined) {
        await conn.flushed();
        await Bun.sleep(step.gapMs);
      }
      if (step.settle === false) continue;
      const ref = reference?.[observed.length];
      await conn.flushed();
      const quietMs = step.quietMs;
      await conn.settle({
        atLeast: ref?.replies.length ?? 0,
        expectClose: ref?.closed ?? false,
        ...(quietMs === undefined ? {} : { quietMs, deadlineMs: quietMs + 3000 }),
      });
      observed.push({ replies: conn.received.toString("latin1"), closed: conn.closed });
      if (conn.closed) break;
    }
  } finally {
    conn.close();
  }
  return observed;
}

/**
 * Bytes the kernel holds for a socket that its owner has not read yet (rx_queue in
 * /proc/net/tcp), found by our end's port; undefined once the socket is gone.
 */
export function unreadBytes(localPort: number): number | undefined {
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 5 || Number.parseInt(cols[1]!.split(":")[1]!, 16) !== localPort) continue;
      // Our end is the one whose local address has this port and that is connected (state 01).
      if (cols[3] !== "01") continue;
      return Number.parseInt(cols[4]!.split(":")[1]!, 16);
    }
  }
  return undefined;
}
