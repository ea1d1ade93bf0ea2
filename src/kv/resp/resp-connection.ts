/**
 * One RESP client connection: bytes in → parser → engine → replies coalesced in one output
 * buffer → one socket write per turn of the event loop (end-of-turn.ts). It also carries the
 * connection-level rules:
 *
 * - a blocked client's further commands wait, in order, until it is served or times out, and so do
 *   those of a client whose script went busy, until it ends;
 * - a protocol error is answered and the connection closed, as Redis does;
 * - backpressure: once more than kvOutputPauseBytes of replies wait for the client to read, we
 *   stop running its commands and stop reading from it until it catches up, so a client that
 *   pipelines without reading stalls in the kernel instead of growing our memory; a subscriber
 *   more than kvPubsubOutputBytesMax behind is disconnected, and so is a monitor more than
 *   kvMonitorOutputBytesMax behind;
 * - a query buffer (unparsed bytes plus commands waiting to run) past client-query-buffer-limit
 *   closes the connection;
 * - durability: the append-only file gets the commands before their replies leave; with
 *   `appendfsync always`, replies wait until the file is synced (see AppendLog).
 */
import type { Socket } from "bun";
import { kvMonitorOutputBytesMax, kvOutputPauseBytes, kvPubsubOutputBytesMax } from "../../core/limits.ts";
import { type TurnWriter, writeAtEndOfTurn } from "../server/end-of-turn.ts";
import type { Engine } from "../server/engine.ts";
import type { InlineCommand, RequestParser } from "./parser.ts";
import { RespWriter } from "./writer.ts";
import { argvBytesOf, type ClientMemory, Session, type Transport } from "../server/session.ts";

/** Bun's TCP sockets have pause() and resume(); its type declarations do not list them yet. */
type PausableSocket = Socket<Connection> & { pause(): boolean; resume(): boolean };

export class Connection implements Transport, TurnWriter {
  readonly writer = new RespWriter();
  readonly session: Session;
  readonly peer: string;
  readonly local: string;
  /** Commands read but not yet run (the client is blocked, or behind), from waitingFrom on. */
  private readonly waiting: string[][] = [];
  private waitingFrom = 0;
  /**
   * Bytes in `waiting`, as each command is sent in RESP (`requestBytes`): with the parser's
   * pending bytes, the query buffer.
   */
  private waitingBytes = 0;
  /**
   * While a read's commands, or held ones, run: the query buffer when they started, which
   * CLIENT LIST shows until they are done, as Redis trims its buffer only then. -1 between.
   */
  private batchQueryBytes = -1;
  /** The command running (its arguments are CLIENT LIST's argv-mem); null between commands. */
  private runningArgv: string[] | null = null;
  private flushQueued = false;
  /**
   * With appendfsync always: output up to `upTo` (a writer endTotal) may leave once the file is
   * durable up to `seq`. In order of both; output before the first gate may leave now.
   */
  private readonly gates: { seq: number; upTo: number }[] = [];
  private releasedUpTo = 0;
  private waitingForDisk = false;
  private readonly onDurable = () => this.write();
  private readonly onWritten = () => this.write();
  /** CLIENT PAUSE holds this client's next command. */
  private heldByPause = false;
  private readonly onUnpause = () => {
    this.heldByPause = false;
    this.runWaiting();
    this.write();
  };
  /** Whether this connection is in the end-of-turn queue. */
  private writeQueued = false;
  private paused = false;
  private closed = false;
  /** This side ended the connection (QUIT, CLIENT KILL, an output limit), not the client. */
  private endedHere = false;

  constructor(
    private readonly engine: Engine,
    private readonly socket: Socket<Connection>,
    private readonly parser: RequestParser,
  ) {
    this.session = new Session(this.writer, this);
    this.writer.onError = (message) => engine.stats.errorReplied(message);
    this.peer = `${socket.remoteAddress}:${socket.remotePort}`;
    this.local = `${socket.localAddress}:${socket.localPort}`;
    engine.register(this.session);
  }

  memory(): ClientMemory {
    const queryBytes = this.batchQueryBytes >= 0 ? this.batchQueryBytes : this.parser.pendingBytes + this.waitingBytes;
    const blocked = this.session.blocked?.command;
    const argv = this.runningArgv ?? blocked?.argv;
    const argvBytes = argv !== undefined ? argvBytesOf(argv) : this.parser.partialArgBytes;
    return {
      queryBytes,
      queryFreeBytes: Math.max(0, this.parser.capacityBytes - queryBytes),
      argvBytes,
      outputBytes: this.writer.pendingBytes,
      replyBufferBytes: this.writer.buffer.length,
    };
  }

  outputMark(): number {
    return this.writer.endTotal;
  }

  dropOutputFrom(mark: number): void {
    this.writer.discardFrom(mark);
  }

  onData(chunk: Uint8Array): void {
    if (this.closed) return;
    const stats = this.engine.stats;
    stats.readsProcessed++;
    stats.netInputBytes += chunk.length;
    const limits = this.engine.clientLimits;
    this.parser.bulkBytesMax = limits.bulkBytesMax;
    const queryBytesBefore = this.parser.pendingBytes + this.waitingBytes;
    const { commands, error } = this.parser.feed(chunk);
    this.session.lastInteractionMs = this.engine.clock.nowMs();
    this.batchQueryBytes = queryBytesBefore + chunk.length;
    if (this.waitingFrom === this.waiting.length) this.run(commands);
    else {
      for (const argv of commands) this.hold(argv);
      this.runWaiting();
    }
    this.batchQueryBytes = -1;
    if (error !== null && !this.session.closing) {
      this.writer.error(error);
      this.session.closing = true;
    } else if (this.parser.pendingBytes + this.waitingBytes > limits.queryBufferBytesMax) {
      this.engine.log.warn({ client: this.peer }, "closing client that reached max query buffer length");
      this.session.closing = true;
      this.waiting.length = this.waitingFrom = this.waitingBytes = 0;
    }
    // This read's replies leave at the end of the turn, with every other client's (and after
    // the turn's one append-only file write, which the log queued when it was appended to).
    if (this.writeQueued) return;
    this.writeQueued = true;
    writeAtEndOfTurn(this);
  }

  writeAtTurnEnd(): void {
    this.writeQueued = false;
    this.write();
  }

  /**
   * Whether the next command may run now: not blocked or paused, its own script not busy, not
   * closing, replies not piling up.
   */
  private get mayRun(): boolean {
    return (
      this.session.blocked === null &&
      !this.heldByPause &&
      !this.session.closing &&
      this.writer.pendingBytes <= kvOutputPauseBytes &&
      this.engine.busyScript?.session !== this.session
    );
  }

  /**
   * Whether CLIENT PAUSE holds `argv`: if so it stays, with what follows it, until the pause is
   * over, and then the client goes on.
   */
  private pausedAt(argv: string[]): boolean {
    if (!this.engine.pauseHolds(this.session, argv)) return false;
    this.heldByPause = true;
    this.engine.clientPause.whenOver(this.onUnpause);
    return true;
  }

  /** Runs the commands of one read until one blocks, closes or fills the output; holds the rest. */
  private run(commands: string[][]): void {
    const session = this.session;
    this.engine.warmKeys(session, commands);
    this.engine.beginCommandRun();
    let i = 0;
    while (i < commands.length && this.mayRun && !this.pausedAt(commands[i]!)) this.execute(commands[i++]!);
    this.engine.settleTiming();
    if (session.closing) return;
    for (; i < commands.length; i++) this.hold(commands[i]!);
  }

  /**
   * Runs one command; with CLIENT REPLY OFF, or the command after CLIENT REPLY SKIP, what it
   * answered is dropped — except its pushes (writePush: subscription confirmations, messages it
   * published to itself), which Redis writes whatever CLIENT REPLY says. Invalidations are
   * written at the end of the turn, after this.
   */
  private execute(argv: string[]): void {
    this.runningArgv = argv;
    this.executeCommand(argv);
    this.runningArgv = null;
  }

  private executeCommand(argv: string[]): void {
    const session = this.session;
    if (!session.repliesOff && !session.skipNextReply) return this.engine.execute(session, argv);
    session.skippingReply = session.skipNextReply;
    session.skipNextReply = false;
    session.silencedFrom = this.outputMark();
    this.engine.execute(session, argv);
    // A script gone busy answers when it ends: that reply is skipped then.
    const busy = this.engine.busyScript;
    if (session.skippingReply && busy?.session === session) busy.dropsReply = true;
    // CLIENT REPLY ON's own OK is sent: it turned replies back on, and ended a skip, before answering.
    if (session.skippingReply || session.repliesOff) this.dropOutputFrom(session.silencedFrom);
    session.skippingReply = false;
    session.silencedFrom = null;
  }

  private hold(argv: string[]): void {
    this.waiting.push(argv);
    this.waitingBytes += requestBytes(argv);
  }

  /** Runs held commands while the client may run them. */
  private runWaiting(): void {
    const outerBatch = this.batchQueryBytes >= 0;
    if (!outerBatch) this.batchQueryBytes = this.parser.pendingBytes + this.waitingBytes;
    this.engine.beginCommandRun();
    while (this.waitingFrom < this.waiting.length && this.mayRun && !this.pausedAt(this.waiting[this.waitingFrom]!)) {
      const argv = this.waiting[this.waitingFrom++]!;
      this.waitingBytes -= requestBytes(argv);
      this.execute(argv);
    }
    if (!outerBatch) this.batchQueryBytes = -1;
    this.engine.settleTiming();
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

  /**
   * Writes what the socket takes, runs held commands as the client catches up, and pauses
   * reading — or drops a subscriber — while it is too far behind. Called at the end of a turn
   * with reads, and on each drain.
   */
  write(): void {
    if (this.closed) return;
    const w = this.writer;
    const aof = this.engine.aof;
    if (aof?.hasUnwritten) return aof.whenWritten(this.onWritten);
    for (;;) {
      const sendable = this.sendableBytes();
      if (sendable > 0) {
        const written = this.socket.write(w.buffer, w.start, sendable);
        this.engine.stats.writesProcessed++;
        if (written > 0) {
          w.consume(written);
          this.engine.stats.netOutputBytes += written;
        }
      }
      if (w.pendingBytes > 0 || this.waitingFrom === this.waiting.length || !this.mayRun) break;
      this.runWaiting();
    }
    if (this.session.subscribed && w.pendingBytes > kvPubsubOutputBytesMax) {
      this.engine.log.warn({ client: this.peer, pendingBytes: w.pendingBytes }, "closing subscriber past its output limit");
      this.endedHere = true;
      this.socket.terminate();
      return;
    }
    if (w.pendingBytes > kvMonitorOutputBytesMax && this.engine.monitors.has(this.session)) {
      this.engine.log.warn({ client: this.peer, pendingBytes: w.pendingBytes }, "closing monitor past its output limit");
      this.endedHere = true;
      this.socket.terminate();
      return;
    }
    if (w.pendingBytes === 0 && this.session.closing) {
      this.endedHere = true;
      this.socket.end();
      return;
    }
    // Commands held back for output (not for blocking) mean the client is behind: reading more
    // would only hold more.
    const held = this.waitingFrom < this.waiting.length && this.session.blocked === null;
    const behind = w.pendingBytes > kvOutputPauseBytes || held;
    if (behind !== this.paused) {
      this.paused = behind;
      const socket = this.socket as PausableSocket;
      if (behind) socket.pause();
      else socket.resume();
    }
  }

  /** How much of the pending output may leave now: all of it, unless it waits for the disk. */
  private sendableBytes(): number {
    const aof = this.engine.aof;
    const w = this.writer;
    if (aof === null || !aof.syncsEveryWrite) return w.pendingBytes;
    // Output made while writes wait for their sync could show those writes (a reply to the
    // writer, or to anyone reading the key): it waits too.
    if (aof.durableSeq < aof.appendedSeq && w.endTotal > (this.gates.at(-1)?.upTo ?? w.consumedTotal)) {
      if (this.gates.length === 0) this.releasedUpTo = w.consumedTotal;
      this.gates.push({ seq: aof.appendedSeq, upTo: w.endTotal });
    }
    while (this.gates.length > 0 && this.gates[0]!.seq <= aof.durableSeq) this.releasedUpTo = this.gates.shift()!.upTo;
    const waiting = this.gates.length > 0;
    if (waiting !== this.waitingForDisk) {
      this.waitingForDisk = waiting;
      if (waiting) aof.onDurable(this.onDurable);
      else aof.offDurable(this.onDurable);
    }
    return waiting ? this.releasedUpTo - w.consumedTotal : w.pendingBytes;
  }

  onClose(): void {
    // A client that hung up was last read as an end of stream, which Redis counts as a read.
    if (!this.endedHere && !this.closed) this.engine.stats.readsProcessed++;
    if (this.waitingForDisk) this.engine.aof?.offDurable(this.onDurable);
    this.closed = true;
    this.engine.clientPause.forget(this.onUnpause);
    this.engine.unregister(this.session);
  }
}

/** Decimal digits of a non-negative integer. */
const digits = (n: number) => (n < 10 ? 1 : Math.floor(Math.log10(n)) + 1);

/**
 * What a held command occupied in the query buffer: its line if it came inline, else `argv` as a
 * RESP array of bulk strings (`*N\r\n` then `$len\r\n…\r\n` each), as client libraries send it.
 */
export function requestBytes(argv: InlineCommand): number {
  if (argv.inlineBytes !== undefined) return argv.inlineBytes;
  let bytes = 3 + digits(argv.length);
  for (const arg of argv) bytes += 5 + digits(arg.length) + arg.length;
  return bytes;
}
