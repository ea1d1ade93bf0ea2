/**
 * The append-only file as it is written: every command that changed data, in the order it ran,
 * as RESP, with SELECT where the database changes and MULTI/EXEC around a transaction's writes.
 *
 * When a write is acknowledged depends on the fsync policy, as in Redis:
 * - every policy writes the commands to the file (the page cache) before their replies leave, so
 *   an acknowledged write survives the process being killed;
 * - `always` also waits for fdatasync before the replies leave, so it survives the machine
 *   failing. The sync runs on a native worker thread, and everything appended while one sync is
 *   in flight goes to disk together in the next (group commit): many clients share one sync;
 * - `everysec` syncs once a second on the worker thread; `no` leaves syncing to the kernel.
 *
 * Under `always` the file keeps space written ahead of its end, which makes each sync cheaper
 * (log-file.ts: the file's bytes on disk).
 *
 * When the file cannot be written or synced (a full disk, say), svc does what Redis does. Under
 * `everysec` and `no` the commands stay in memory, their replies leave, and the write is retried
 * every second; until it succeeds, write commands and PING are refused with MISCONF (engine.ts),
 * so nothing more is acknowledged that the file may never hold. Under `always` an acknowledgement
 * promises the disk, so the process exits instead (`onFatal`), as Redis does: everything it
 * acknowledged is already synced.
 *
 * Progress is counted in sequence numbers: `appendedSeq` counts appends, `durableSeq` the
 * appends the policy's promise covers. Connections hold replies until durableSeq reaches the
 * appendedSeq they saw (connection.ts).
 */
import { fdatasyncSync } from "node:fs";
import type { LatencyMonitor } from "../observe/latency-monitor.ts";
import type { Logger } from "../../core/log.ts";
import { systemErrorText } from "../../core/system-error.ts";
import { appendChunks, writeChunksAt } from "../../native/append.ts";
import { type TurnWriter, writeAtEndOfTurn } from "../server/end-of-turn.ts";
import { CommandBuffer } from "./command-buffer.ts";
import { LogFile } from "./log-file.ts";

export type FsyncPolicy = "always" | "everysec" | "no";
export const fsyncPolicies: readonly FsyncPolicy[] = ["always", "everysec", "no"];

/** How often `everysec` syncs. */
const everysecIntervalMs = 1000;
/** How often a write or sync that failed is tried again (Redis retries in its once-a-second cron). */
const retryIntervalMs = 1000;
/** Longest an `always` sync waits, by default, for the writers the last one answered to write again. */
const gatherMaxMsDefault = 1;
export interface AppendLogOptions {
  /** Where a write or sync that failed, and the recovery, are logged. */
  logger?: Logger;
  /** Longest an `always` sync waits for the writers the last one answered (default 1 ms). */
  gatherMaxMs?: number;
  /**
   * Called when `always` cannot keep its promise (a write or sync failed); the service logs it
   * and exits. Nothing after the failed sync may be acknowledged, and retrying a failed fdatasync
   * is not safe: the kernel may have dropped the dirty pages it could not write.
   */
  onFatal?: (error: unknown) => void;
  /**
   * The file is being started on a running server (CONFIG SET appendonly yes): it holds nothing
   * until a rewrite writes the whole dataset into it (switchTo). Until then commands reach only
   * that rewrite, and replies wait for nothing, as in Redis (its AOF_WAIT_REWRITE).
   */
  awaitingBase?: boolean;
  /** Where the writes and `always` syncs that took long are recorded (LATENCY: aof-write, aof-fsync-always). */
  latency?: LatencyMonitor;
}

export class AppendLog implements TurnWriter {
  private readonly latency: LatencyMonitor | null;
  private readonly pending = new CommandBuffer();
  /** While a rewrite runs, a copy of every command appended, for the end of the new file. */
  private tee: CommandBuffer | null = null;
  private file: LogFile;
  /** The database the file's commands last selected; -1 makes the next append select one. */
  private selectedDb = -1;
  private transaction: "none" | "open" | "written" = "none";
  appendedSeq = 0;
  durableSeq = 0;
  /** The `always` sync or `everysec` sync on the worker thread, while one runs. */
  private inFlight: Promise<void> | null = null;
  private syncedSinceWrite = true;
  private readonly durableListeners = new Set<() => void>();
  private readonly writtenListeners = new Set<() => void>();
  private writeScheduled = false;
  /** An `always` sync is queued for the end of this loop turn. */
  private syncQueued = false;
  /** A busy log's next `always` sync waits for more writers, at the latest until this fires. */
  private gatherTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * How many writers (connections and REST requests) waited on the last `always` sync: as many
   * are worth waiting for. Writers, not commands: a client's EXEC or pipelined batch appends
   * several commands, but it is one writer, and counting its commands would make its next lone
   * write wait for writers that do not exist.
   */
  private lastSyncWriters = 0;
  /** fdatasync calls made so far. */
  syncCount = 0;
  /** close() has begun: no more syncs are scheduled. */
  private closing = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private currentPolicy: FsyncPolicy;
  /** The last write or sync that failed, until one succeeds: what MISCONF and INFO report. */
  private failure: { op: "write" | "sync"; reason: string } | null = null;
  /** Bytes of commands whose write failed: written ahead of anything pending on the next try. */
  private unwritten: Uint8Array | null = null;
  private retryTimer: ReturnType<typeof setInterval> | null = null;
  private readonly logger: Logger | null;
  private readonly gatherMaxMs: number;
  private readonly onFatal: (error: unknown) => void;
  /** See AppendLogOptions.awaitingBase; false from the first rewrite on. */
  awaitingBase: boolean;
  /**
   * aof-timestamp-enabled: a `#TS:<unix seconds>` annotation goes before the first command of
   * each second, as Redis 7 writes it, so `redis-check-aof --truncate-to-timestamp` can cut the
   * file back to a point in time. Loaders skip it.
   */
  timestamps = false;
  private stampedSecond = -1;

  constructor(
    readonly path: string,
    policy: FsyncPolicy,
    sizeBytes: number,
    options: AppendLogOptions = {},
  ) {
    this.logger = options.logger ?? null;
    this.gatherMaxMs = options.gatherMaxMs ?? gatherMaxMsDefault;
    this.onFatal =
      options.onFatal ??
      ((error) => {
        throw error;
      });
    this.awaitingBase = options.awaitingBase ?? false;
    this.latency = options.latency ?? null;
    this.file = new LogFile(path, sizeBytes);
    this.currentPolicy = policy;
    this.setPolicy(policy);
  }

  /** Bytes of commands the file holds: where the next append lands. */
  get sizeBytes(): number {
    return this.file.sizeBytes;
  }

  get policy(): FsyncPolicy {
    return this.currentPolicy;
  }

  /** Changes the fsync policy at once (CONFIG SET appendfsync). */
  setPolicy(policy: FsyncPolicy): void {
    this.currentPolicy = policy;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = policy === "everysec" ? setInterval(() => this.syncInBackground(), everysecIntervalMs) : null;
    // Commands appended under the old policy and not yet written (or kept from a write that
    // failed) now wait for `always`'s sync.
    if (policy === "always" && this.bufferedBytes > 0) this.syncInBackground();
  }

  /** Whether replies must wait for fdatasync, not just for the write. */
  get syncsEveryWrite(): boolean {
    return this.policy === "always" && !this.awaitingBase;
  }

  /** Appends the commands one command on database `dbIndex` stands for. */
  append(dbIndex: number, commands: readonly (readonly string[])[]): void {
    // A closing log takes nothing more: the file is being stopped (CONFIG SET appendonly no, and
    // what runs after that is not logged) or the server is, and clients are gone.
    if (commands.length === 0 || this.closing) return;
    // Not between MULTI and EXEC: a cut there would leave half a transaction.
    if (this.timestamps && this.transaction !== "written") this.stampTime();
    if (this.transaction === "open") {
      this.push(["MULTI"]);
      this.transaction = "written";
    }
    if (dbIndex !== this.selectedDb) {
      this.push(["SELECT", String(dbIndex)]);
      this.selectedDb = dbIndex;
    }
    for (const argv of commands) this.push(argv);
    this.appendedSeq++;
    // Nothing is promised before the file holds the dataset: these commands reach the rewrite.
    if (this.awaitingBase) this.advanceDurable(this.appendedSeq);
    else if (this.policy === "always") this.scheduleSync();
    else this.scheduleWrite();
  }

  private stampTime(): void {
    const second = Math.floor(Date.now() / 1000);
    if (second === this.stampedSecond) return;
    this.stampedSecond = second;
    if (!this.awaitingBase) this.pending.annotate(`TS:${second}`);
    this.tee?.annotate(`TS:${second}`);
  }

  private push(argv: readonly string[]): void {
    if (!this.awaitingBase) this.pending.push(argv);
    this.tee?.push(argv);
  }

  /** A rewrite begins: from now on every command is also kept for the new file. */
  startTee(): void {
    this.tee = new CommandBuffer();
    // The new file's snapshot ends in whatever database it wrote last: select explicitly.
    this.selectedDb = -1;
    // A rewrite started inside EXEC sees the rest of the transaction: open it in the new file too.
    if (this.transaction === "written") this.tee.push(["MULTI"]);
  }

  /** Whether close() has begun: a rewrite finishing after it leaves the file as close left it. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** The commands kept since startTee, and no more keeping. */
  stopTee(): Uint8Array {
    const kept = this.tee?.take() ?? new Uint8Array(0);
    this.tee = null;
    return kept;
  }

  /**
   * Continues in the file at `path`, which already holds everything appended so far (a rewrite
   * wrote the kept commands into it and synced it): nothing pending is written twice.
   */
  switchTo(path: string): void {
    const old = this.file;
    this.file = new LogFile(path);
    this.awaitingBase = false;
    this.pending.clear();
    this.syncedSinceWrite = true;
    // A sync or fill in flight still uses the old descriptors; close them once it is done.
    void (this.inFlight ?? Promise.resolve()).finally(() => old.closeInBackground());
    this.advanceDurable(this.appendedSeq);
  }

  /** EXEC begins: its writes, if any, are wrapped in MULTI/EXEC so a replay applies all or none. */
  beginTransaction(): void {
    this.transaction = "open";
  }

  endTransaction(): void {
    if (this.transaction === "written") {
      this.push(["EXEC"]);
      this.appendedSeq++;
    }
    this.transaction = "none";
  }

  /**
   * Whether replies must wait for commands to be written to the file: the write happens once per
   * turn of the event loop for every client served in it (Redis writes its AOF buffer once per
   * loop too, in beforeSleep), not once per client.
   */
  get hasUnwritten(): boolean {
    return this.pending.length > 0 && this.policy !== "always";
  }

  /** Calls `listener` once the commands pending now are in the file. */
  whenWritten(listener: () => void): void {
    this.writtenListeners.add(listener);
    this.scheduleWrite();
  }

  /**
   * Queues this turn's one write with the connections' replies (end-of-turn.ts). Queued at the
   * first append of the turn, it comes before the replies of the clients that appended, so they
   * find their commands written; a reply queued earlier (a read) waits for it as a listener.
   */
  private scheduleWrite(): void {
    if (this.writeScheduled) return;
    this.writeScheduled = true;
    writeAtEndOfTurn(this);
  }

  writeAtTurnEnd(): void {
    this.writeScheduled = false;
    this.writePending();
    const listeners = [...this.writtenListeners];
    this.writtenListeners.clear();
    for (const l of listeners) l();
  }

  /**
   * Writes what is pending to the file, on this thread: a write to the page cache, which is what
   * makes an acknowledged write survive kill -9. Called before replies are sent.
   */
  writePending(): void {
    if (this.policy === "always" || (this.pending.length === 0 && this.unwritten === null)) return;
    if (this.tryWrite() === null) this.syncedSinceWrite = false;
    // Without `always`, a write in the page cache is all the policy promises. A write that failed
    // is answered too, as Redis does: the commands ran, and they stay in memory to be written
    // when the disk takes them; what follows is refused until then.
    this.advanceDurable(this.appendedSeq);
  }

  /**
   * Writes what a failed write left, then everything pending, at the log's end and returns null;
   * or keeps those bytes for the next try (writeFailed) and returns the error. The pending bytes
   * are written from their buffer in place, and copied out only for a write that failed: a copy
   * every turn, in a new array, was ~2% of a server's time under BullMQ (perf, 2026-11-30).
   */
  private tryWrite(): unknown {
    const unwritten = this.unwritten === null ? null : this.takeUnwritten();
    const startedMs = this.latency?.on ? performance.now() : -1;
    try {
      if (unwritten !== null) this.file.write(unwritten);
      else this.file.write(this.pending.settled(), this.pending.length);
      if (startedMs >= 0) this.latency!.consider("aof-write", performance.now() - startedMs);
    } catch (error) {
      this.writeFailed(unwritten ?? this.pending.take(), error);
      return error;
    }
    if (unwritten === null) this.pending.clear();
    this.succeeded("write");
    return null;
  }

  /** The bytes a failed write left, then everything pending. */
  private takeUnwritten(): Uint8Array {
    const pending = this.pending.take();
    const unwritten = this.unwritten;
    this.unwritten = null;
    if (unwritten === null) return pending;
    if (pending.length === 0) return unwritten;
    const bytes = new Uint8Array(unwritten.length + pending.length);
    bytes.set(unwritten);
    bytes.set(pending, unwritten.length);
    return bytes;
  }

  /** Bytes of commands not yet in the file: pending, and kept from a write that failed. */
  get bufferedBytes(): number {
    return this.pending.length + (this.unwritten?.length ?? 0);
  }

  /** Whether a sync (or an `always` write and sync) runs on the worker now. */
  get syncInFlight(): boolean {
    return this.inFlight !== null;
  }

  /** Why the file cannot be written or synced now, as strerror words; null while it can. */
  get failureReason(): string | null {
    return this.failure?.reason ?? null;
  }

  /**
   * A write of `bytes` failed: any part of them that reached the file is cut off, they are kept,
   * and the write is retried every second.
   */
  private writeFailed(bytes: Uint8Array, error: unknown): void {
    this.unwritten = bytes;
    try {
      this.file.cutAtEnd();
    } catch {}
    this.failed("write", error);
  }

  private failed(op: "write" | "sync", error: unknown): void {
    const first = this.failure === null;
    this.failure = { op, reason: systemErrorText(error) };
    if (first) this.logger?.warn({ path: this.path, op, err: error }, "cannot persist to the append-only file; refusing writes until it can");
    this.retryTimer ??= setInterval(() => this.retry(), retryIntervalMs);
  }

  private retry(): void {
    if (this.failure?.op === "write") this.writePending();
    // A failed sync is tried again by the everysec timer, which finds the file not synced.
  }

  /** A write or a sync worked: a failure of that kind is over. */
  private succeeded(op: "write" | "sync"): void {
    if (this.failure?.op !== op) return;
    this.failure = null;
    if (this.retryTimer !== null) clearInterval(this.retryTimer);
    this.retryTimer = null;
    this.logger?.warn({ path: this.path }, "the append-only file can be written again; accepting writes");
  }

  /**
   * Resolves once everything appended so far is as durable as the policy promises: written in
   * this turn's one write (whenWritten), and with `always` also synced. For callers that wait on
   * a whole answer (a REST request); connections gate their output byte by byte instead.
   */
  async covered(): Promise<void> {
    const target = this.appendedSeq;
    if (this.hasUnwritten) await new Promise<void>((resolve) => this.whenWritten(resolve));
    if (this.durableSeq >= target) return;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (this.durableSeq < target) return;
        this.offDurable(check);
        resolve();
      };
      this.onDurable(check);
    });
  }

  /**
   * Calls `listener` each time durableSeq advances, until it is removed. Every writer waiting for
   * the disk registers one (a connection while it holds replies back, a REST request), so the
   * listeners are the writers an `always` sync gathers: one more may complete the gathering.
   */
  onDurable(listener: () => void): void {
    this.durableListeners.add(listener);
    if (this.policy === "always" && this.appendedSeq > this.durableSeq) this.scheduleSync();
  }

  offDurable(listener: () => void): void {
    this.durableListeners.delete(listener);
  }

  /**
   * Starts the next `always` sync at the end of this turn of the event loop or, when the log is
   * busy, once as many writers wait as waited on the last sync (at most gatherMaxMs later).
   *
   * Many clients writing at once take turns with the disk. A sync started the moment the last one
   * ended would carry only the writes that arrived during it, while the clients it just answered
   * write again a round trip later and wait out a whole sync more: the clients split into two
   * halves that alternate, each sync carrying half of them. Waiting for the answered clients to
   * come back keeps them in one group, each sync carrying all of them — PostgreSQL's commit_delay
   * and Linux's journal do the same, and Redis gets it by syncing on its one thread. A lone
   * writer never waits.
   */
  private scheduleSync(): void {
    if (this.inFlight !== null || this.closing || this.syncQueued) return;
    const gathered = this.lastSyncWriters <= 1 || this.durableListeners.size >= this.lastSyncWriters;
    if (gathered) {
      this.syncQueued = true;
      setImmediate(() => this.startScheduledSync());
    } else {
      this.gatherTimer ??= setTimeout(() => this.startScheduledSync(), this.gatherMaxMs);
    }
  }

  private startScheduledSync(): void {
    if (this.gatherTimer !== null) clearTimeout(this.gatherTimer);
    this.gatherTimer = null;
    this.syncQueued = false;
    if (!this.closing) this.syncInBackground();
  }

  /**
   * `always`: writes and syncs everything pending on the worker thread; what is appended
   * meanwhile waits for the next sync (scheduleSync). `everysec`: syncs what was written since
   * the last sync.
   */
  private syncInBackground(): void {
    if (this.inFlight !== null) return;
    this.inFlight = this.sync()
      .catch((error: unknown) => {
        if (this.policy === "always") this.onFatal(error);
        else {
          // everysec: the next tick tries again; writes are refused until a sync succeeds.
          this.syncedSinceWrite = false;
          this.failed("sync", error);
        }
      })
      .finally(() => {
        this.inFlight = null;
        if (this.policy === "always" && this.bufferedBytes > 0) this.scheduleSync();
      });
  }

  private async sync(): Promise<void> {
    if (this.policy === "always") {
      if (this.bufferedBytes === 0) return;
      const seq = this.appendedSeq;
      const bytes = this.takeUnwritten();
      const file = this.file;
      const position = file.claim(bytes.length);
      this.syncCount++;
      // Everyone waiting now wrote before this sync's bytes were taken: it answers them all.
      this.lastSyncWriters = this.durableListeners.size;
      const startedMs = this.latency?.on ? performance.now() : -1;
      await writeChunksAt(file.fd, [bytes], position, true);
      if (startedMs >= 0) this.latency!.consider("aof-fsync-always", performance.now() - startedMs);
      // A failure kept from before a switch to `always` is over once a write and sync succeed.
      this.succeeded("write");
      this.succeeded("sync");
      this.advanceDurable(seq);
      // A rewrite may have switched files meanwhile: the new one gets its fill at its next sync.
      if (this.policy === "always" && !this.closing && file === this.file) await file.fillAhead();
    } else if (!this.syncedSinceWrite) {
      this.syncedSinceWrite = true;
      this.syncCount++;
      await appendChunks(this.file.fd, [], true);
      this.succeeded("sync");
    }
  }

  private advanceDurable(seq: number): void {
    if (seq <= this.durableSeq) return;
    this.durableSeq = seq;
    for (const listener of [...this.durableListeners]) listener();
  }

  /** Writes and syncs everything appended so far, off this thread (BGSAVE). */
  async syncNow(): Promise<void> {
    this.writePending();
    await this.inFlight;
    if (this.policy !== "always") this.syncedSinceWrite = false;
    this.syncInBackground();
    await this.inFlight;
  }

  /** Writes and syncs everything pending, on this thread (shutdown, and SAVE-like waits). */
  flushSync(): void {
    const writeError = this.tryWrite();
    if (writeError !== null) throw writeError;
    try {
      fdatasyncSync(this.file.fd);
    } catch (error) {
      this.syncedSinceWrite = false;
      this.failed("sync", error);
      throw error;
    }
    this.succeeded("sync");
    this.syncCount++;
    this.advanceDurable(this.appendedSeq);
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    if (this.retryTimer !== null) clearInterval(this.retryTimer);
    this.closing = true;
    if (this.gatherTimer !== null) clearTimeout(this.gatherTimer);
    // A sync in flight writes bytes taken before anything still pending: let it land first.
    await this.inFlight;
    // The fill goes: a stopped server leaves plain RESP, as Redis's own file is.
    this.file.cutAtEnd();
    try {
      this.flushSync();
    } catch (error) {
      this.logger?.error({ path: this.path, err: error }, "could not write the append-only file while stopping: the writes since it failed are lost");
    }
    this.file.close();
  }
}
