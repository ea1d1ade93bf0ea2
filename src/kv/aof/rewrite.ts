/**
 * Rewriting the append-only file to the fewest commands that rebuild the data (BGREWRITEAOF, and
 * automatically once the file has doubled), while clients keep being served.
 *
 * Redis forks and writes the child's frozen copy of memory. We have no fork, so the rewrite walks
 * the live keyspace a slice at a time, between client commands, and keeps the snapshot consistent
 * with one rule: **a key is written to the new file before any command changes it.** Before a
 * write command runs, the keys it names that the walk has not reached yet are written first
 * (with their values as they are then), and marked done. Every command the old file receives from
 * the start of the rewrite is also kept aside and appended to the new file at the end. So every
 * kept command finds, in the new file, exactly the state it ran on, and replaying the new file
 * gives the current data. A command that does not name its keys (FLUSHALL, SWAPDB, MOVE, and
 * those whose keys move with a numkeys argument) makes the walk finish at once before it runs.
 *
 * At the end the new file is synced, renamed over the old one (atomic), and the log switches to
 * it (AppendLog.switchTo).
 */
import { closeSync, fdatasyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsyncDir } from "../../core/atomic-file.ts";
import type { Logger } from "../../core/log.ts";
import type { CommandSpec } from "../commands/spec.ts";
import { keysOf } from "../commands/spec.ts";
import type { Keyspace } from "../keyspace.ts";
import type { AppendLog } from "./append-log.ts";
import { CommandBuffer } from "./command-buffer.ts";
import { valueCommands } from "./value-commands.ts";

/** How long one slice of the walk may hold the event loop. */
const sliceBudgetMs = 2;
/** Write the new file in pieces of about this size rather than hold it all in memory. */
const writeChunkBytes = 1024 * 1024;

/** Write commands that touch keys their declaration does not name, or whole databases. */
const walkFinishingCommands = new Set(["flushall", "flushdb", "swapdb", "move", "copy"]);

export class AofRewrite {
  private readonly out = new CommandBuffer();
  private readonly fd: number;
  private readonly tempPath: string;
  /** "db\0key" of every key already written. */
  private readonly done = new Set<string>();
  private dbIndex = 0;
  private keys: Iterator<string>;
  private selected = -1;
  private finished = false;
  private readonly startedMs = Date.now();

  constructor(
    private readonly dbs: readonly Keyspace[],
    private readonly log: AppendLog,
    private readonly logger: Logger,
    private readonly onEnd: (ok: boolean) => void,
  ) {
    this.tempPath = join(dirname(log.path), `temp-rewriteaof-${process.pid}.aof`);
    this.fd = openSync(this.tempPath, "w");
    this.keys = walk(dbs[0]!);
    log.startTee();
    setImmediate(() => this.walkSlice());
  }

  /** Called before a write command runs: its keys go to the new file first, as they are now. */
  beforeWrite(dbIndex: number, spec: CommandSpec, argv: string[]): void {
    if (this.finished) return;
    if (spec.keys === undefined || spec.flags.includes("movablekeys") || walkFinishingCommands.has(spec.name)) {
      this.walkAll();
      return;
    }
    for (const key of keysOf(spec, argv)) this.writeKey(dbIndex, key);
  }

  /** Called before a blocked client is served from `key` (the served command is not a `run`). */
  beforeServe(dbIndex: number, key: string, destination?: string): void {
    if (this.finished) return;
    this.writeKey(dbIndex, key);
    if (destination !== undefined) this.writeKey(dbIndex, destination);
  }

  private writeKey(dbIndex: number, key: string): void {
    const id = `${dbIndex}\0${key}`;
    if (this.done.has(id)) return;
    this.done.add(id);
    const db = this.dbs[dbIndex]!;
    // Raw access: reading must not expire or touch the key (an expired one is written with its
    // past time and expires again when loaded).
    const slot = db.get(key);
    if (slot === undefined) return;
    if (this.selected !== dbIndex) {
      this.out.push(["SELECT", String(dbIndex)]);
      this.selected = dbIndex;
    }
    for (const argv of valueCommands(key, slot, db.expires.get(key))) this.out.push(argv);
    if (this.out.length >= writeChunkBytes) this.writeOut();
  }

  private walkSlice(): void {
    if (this.finished) return;
    const deadline = performance.now() + sliceBudgetMs;
    try {
      while (performance.now() < deadline) {
        if (!this.step()) return this.complete();
      }
    } catch (error) {
      return this.fail(error);
    }
    setImmediate(() => this.walkSlice());
  }

  /** Writes every key not written yet, now. */
  private walkAll(): void {
    try {
      while (this.step());
    } catch (error) {
      return this.fail(error);
    }
    this.complete();
  }

  /** Writes the next key of the walk; false once every database has been walked. */
  private step(): boolean {
    for (;;) {
      const next = this.keys.next();
      if (!next.done) {
        this.writeKey(this.dbIndex, next.value);
        return true;
      }
      if (++this.dbIndex >= this.dbs.length) return false;
      this.keys = walk(this.dbs[this.dbIndex]!);
    }
  }

  private writeOut(): void {
    const bytes = this.out.take();
    let at = 0;
    while (at < bytes.length) at += writeSync(this.fd, bytes, at, bytes.length - at);
  }

  /**
   * The walk is over: the commands kept aside follow the snapshot, the file is synced and
   * renamed over the old one, and the log continues in it.
   */
  private complete(): void {
    if (this.finished) return;
    this.finished = true;
    try {
      this.writeOut();
      const kept = this.log.stopTee();
      let at = 0;
      while (at < kept.length) at += writeSync(this.fd, kept, at, kept.length - at);
      fdatasyncSync(this.fd);
      closeSync(this.fd);
      renameSync(this.tempPath, this.log.path);
      fsyncDir(dirname(this.log.path));
      this.log.switchTo(this.log.path);
      this.logger.info({ path: this.log.path, bytes: this.log.sizeBytes, ms: Date.now() - this.startedMs }, "append-only file rewritten");
      this.onEnd(true);
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    this.finished = true;
    this.log.stopTee();
    try {
      closeSync(this.fd);
    } catch {}
    try {
      unlinkSync(this.tempPath);
    } catch {}
    this.logger.error({ err: error }, "append-only file rewrite failed; the old file stays in use");
    this.onEnd(false);
  }
}

/**
 * Whether the file has grown enough since its last rewrite to rewrite it again: by `percentage`
 * of its size then, and to at least `minBytes` (Redis's auto-aof-rewrite-percentage and
 * auto-aof-rewrite-min-size; a percentage of 0 turns it off).
 */
export function rewriteDue(sizeBytes: number, baseBytes: number, percentage: number, minBytes: number): boolean {
  if (!(percentage > 0) || sizeBytes < minBytes) return false;
  return sizeBytes >= baseBytes * (1 + percentage / 100);
}

/**
 * The keys of a database, a home slot at a time, as SCAN walks them: a key there from the start
 * of the walk to its end is met even if the table grows or shrinks meanwhile.
 */
function* walk(db: Keyspace): Generator<string> {
  const batch: string[] = [];
  let cursor = 0;
  do {
    cursor = db.table.scanStep(cursor, batch);
    yield* batch;
    batch.length = 0;
  } while (cursor !== 0);
}
