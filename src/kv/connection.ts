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
  private readonly waiting: string[][] = [];
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
    for (const argv of commands) this.waiting.push(argv);
    this.runWaiting();
    if (error !== null && !this.session.closing) {
      this.writer.error(error);
      this.session.closing = true;
    } else if (this.parser.pendingBytes > kvQueryBufferBytesMax) {
      this.engine.log.warn({ client: this.peer }, "closing client that reached max query buffer length");
      this.session.closing = true;
      this.waiting.length = 0;
    }
    this.write();
  }

  /** Runs queued commands until one blocks or asks to close. */
  private runWaiting(): void {
    while (this.waiting.length > 0 && this.session.blocked === null && !this.session.closing) {
      this.engine.execute(this.session, this.waiting.shift()!);
    }
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
