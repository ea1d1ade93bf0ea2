/**
 * One RESP2 client connection: bytes in → parser → engine → replies coalesced in one output
 * buffer → one socket write per read. It also carries the connection-level rules:
 *
 * - a blocked client's further commands wait, in order, until it is served or times out;
 * - a protocol error is answered and the connection closed, as Redis does;
 * - backpressure: while more than kvOutputPauseBytes of replies wait for the client to read, we
 *   stop reading from it, so a client that pipelines without reading stalls in the kernel instead
 *   of growing our memory; a subscriber more than kvPubsubOutputBytesMax behind is disconnected;
 * - a query buffer past kvQueryBufferBytesMax closes the connection.
 */
import type { Socket } from "bun";
import { kvOutputPauseBytes, kvPubsubOutputBytesMax, kvQueryBufferBytesMax } from "../core/limits.ts";
import type { Engine } from "./engine.ts";
import { RespParser } from "./resp/parser.ts";
import { RespWriter } from "./resp/writer.ts";
import { Session, type Transport } from "./session.ts";

/** Bun's TCP sockets have pause() and resume(); its type declarations do not list them yet. */
type PausableSocket = Socket<Connection> & { pause(): boolean; resume(): boolean };

export class Connection implements Transport {
  readonly writer = new RespWriter();
  readonly session: Session;
  readonly peer: string;
  readonly local: string;
  private readonly parser: RespParser;
  /** Commands that arrived while the client was blocked, from index waitingFrom on. */
  private readonly waiting: string[][] = [];
  private waitingFrom = 0;
  private flushQueued = false;
  private paused = false;
  private closed = false;

  constructor(
    private readonly engine: Engine,
    private readonly socket: Socket<Connection>,
    bulkBytesMax: number,
  ) {
    this.parser = new RespParser(bulkBytesMax);
    this.session = new Session(this.writer, this);
    this.peer = `${socket.remoteAddress}:${socket.remotePort}`;
    this.local = `${socket.localAddress}:${socket.localPort}`;
    engine.register(this.session);
  }

  onData(chunk: Uint8Array): void {
    if (this.closed) return;
    const { commands, error } = this.parser.feed(chunk);
    this.session.lastInteractionMs = this.engine.clock.nowMs();
    if (this.waitingFrom === this.waiting.length) this.run(commands, 0);
    else {
      for (const argv of commands) this.waiting.push(argv);
      this.runWaiting();
    }
    if (error !== null && !this.session.closing) {
      this.writer.error(error);
      this.session.closing = true;
    } else if (this.parser.pendingBytes > kvQueryBufferBytesMax) {
      this.engine.log.warn({ client: this.peer }, "closing client that reached max query buffer length");
      this.session.closing = true;
      this.waiting.length = this.waitingFrom = 0;
    }
    this.write();
  }

  /**
   * Runs `commands` from `from` until one blocks the client or asks to close it; the rest wait,
   * in order, for runWaiting.
   */
  private run(commands: string[][], from: number): void {
    const session = this.session;
    let i = from;
    let now = performance.now();
    while (i < commands.length && session.blocked === null && !session.closing) {
      now = this.engine.execute(session, commands[i++]!, session.reply, now);
    }
    if (i === commands.length || session.closing) return;
    for (; i < commands.length; i++) this.waiting.push(commands[i]!);
  }

  /** Runs waiting commands until one blocks or asks to close. */
  private runWaiting(): void {
    const session = this.session;
    while (this.waitingFrom < this.waiting.length && session.blocked === null && !session.closing) {
      this.engine.execute(session, this.waiting[this.waitingFrom++]!);
    }
    // Drop what has run; arrays do not shrink from the front cheaply, so do it once here.
    if (this.waitingFrom === this.waiting.length) this.waiting.length = this.waitingFrom = 0;
  }

  /** Transport.flush: after the current command (pub/sub delivery, a served blocked client). */
  flush(): void {
    if (this.flushQueued || this.closed) return;
    this.flushQueued = true;
    queueMicrotask(() => {
      this.flushQueued = false;
      this.runWaiting();
      this.write();
    });
  }

  close(): void {
    this.session.closing = true;
    this.flush();
  }

  /** Writes what the socket takes; pauses or drops the client if it is too far behind. */
  write(): void {
    if (this.closed) return;
    const w = this.writer;
    if (w.length > 0) {
      const written = this.socket.write(w.buffer, 0, w.length);
      if (written > 0) w.consume(written);
    }
    if (this.session.subscriptions > 0 && w.length > kvPubsubOutputBytesMax) {
      this.engine.log.warn({ client: this.peer, pendingBytes: w.length }, "closing subscriber past its output limit");
      this.socket.terminate();
      return;
    }
    if (w.length === 0 && this.session.closing) {
      this.socket.end();
      return;
    }
    const behind = w.length > kvOutputPauseBytes;
    if (behind !== this.paused) {
      this.paused = behind;
      const socket = this.socket as PausableSocket;
      if (behind) socket.pause();
      else socket.resume();
    }
  }

  onClose(): void {
    this.closed = true;
    this.engine.unregister(this.session);
  }
}
