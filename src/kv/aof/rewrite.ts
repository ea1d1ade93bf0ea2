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
 * The walk goes through each database's key table in slot order (KeyTable.entriesHomedIn), which
 * reads memory front to back, and writes a short key holding a short string straight from the
 * table's bytes. Whether the walk has passed a key is then a comparison of its home slot with the
 * walk's, so only the keys written ahead of it need remembering. That needs the keys to stay in
 * their slots' order: the table being walked does not shrink meanwhile, and before it has to grow,
 * the walk finishes it at once (KeyTable.slotWalker). A table that is resizing when the walk
 * reaches it is first moved on to its new slots, a step at a time.
 *
 * At the end the new file is synced, renamed over the old one (atomic), and the log switches to
 * it (AppendLog.switchTo). The snapshot, nearly all of the file, is synced off this thread while
 * clients go on being served (their commands still kept aside); only the kept commands are
 * written and synced on it, just before the switch. Syncing the whole file on this thread held
 * the event loop for as long as the disk took to take tens of megabytes.
 */
import { closeSync, fdatasyncSync, openSync, readdirSync, renameSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsyncDir } from "../../core/atomic-file.ts";
import { writeAll } from "../../core/write-all.ts";
import type { Logger } from "../../core/log.ts";
import { appendChunks } from "../../native/append.ts";
import type { CommandShape } from "../kit/command-info.ts";
import { keysOf } from "../kit/command-info.ts";
import { hashKey, type KeyTable } from "../types/key-table.ts";
import type { Keyspace } from "../keyspace/keyspace.ts";
import type { Value } from "../types/value.ts";
import type { AppendLog } from "./append-log.ts";
import { CommandBuffer } from "./command-buffer.ts";
import { type CollectionParts, collectionParts, collectionSize } from "./collection-parts.ts";
import { writeValueCommands } from "./value-commands.ts";
import type { RewriteOutcome } from "./persistence-state.ts";

/** A collection the walk has written in part (see itemsPerStep). */
interface PartlyWritten {
  readonly dbIndex: number;
  readonly key: string;
  /** What is left to write: read from the collection, or copied out of it once it may change. */
  parts: CollectionParts;
  /** Whether `parts` is a copy already (freeze once: the copy no longer changes). */
  frozen: boolean;
  /** The key's expiry when its first part was written; PEXPIREAT follows the last part. */
  readonly expiresAtMs: number | undefined;
}

/** How long one slice of the walk may hold the event loop. */
const sliceBudgetMs = 2;
/** Home slots of a table one step of the walk takes (a slice checks the clock between steps). */
const stepSlots = 256;
/** Old slots of a table's resize under way moved on per step before its walk starts. */
const resizeStepSlots = 4096;

/**
 * Items of one collection (list, hash, set or sorted set) a step writes, about. A larger one goes
 * out over several steps (so over several slices, clients served between them); a command about
 * to change it first has the rest copied out as it is then (CollectionParts.freeze), and the steps
 * go on writing the copy. Written at once, a list of 4M items held the loop for ~70 ms, and a hash
 * of 860k fields for ~480; copying what is left of them costs a fraction of writing it.
 */
export const itemsPerStep = 4096;

/** Copies what is left of `entry` if it is `key` of database `dbIndex`: a command is about to change it. */
function freezeIfNamed(entry: PartlyWritten, dbIndex: number, key: string): void {
  if (entry.frozen || entry.dbIndex !== dbIndex || entry.key !== key) return;
  entry.parts = entry.parts.freeze();
  entry.frozen = true;
}

/** Write commands that touch keys their declaration does not name, or whole databases. */
const walkFinishingCommands = new Set(["flushall", "flushdb", "swapdb", "move", "copy"]);

export class AofRewrite {
  /** The new file's commands, written to it (synchronously, to the page cache) a MiB at a time. */
  private readonly out: CommandBuffer;
  private readonly fd: number;
  private readonly tempPath: string;
  /**
   * Per database, the keys written ahead of the walk (beforeWrite named them before the walk
   * reached them), which the walk must skip; and their hashes, which rule most keys out without
   * making the key's string.
   */
  private readonly early: Set<string>[];
  private readonly earlyHashes: Set<number>[];
  /** The database being walked; dbs.length once the walk is over. */
  private dbIndex = 0;
  /** The next home slot of that database's table to walk: keys homed before it are written. */
  private home = 0;
  /** The table being walked, which holds still for it (KeyTable.slotWalker). */
  private table: KeyTable<Value> | null = null;
  private readonly refs: number[] = [];
  private selected = -1;
  private finished = false;
  /** The large collection being written in parts: the rest follows (see itemsPerStep). */
  private partial: PartlyWritten | null = null;
  /**
   * Large collections waiting their turn to be written in parts: ones the walk met while
   * another was being written, and copies of ones written ahead of it.
   */
  private readonly waiting: PartlyWritten[] = [];
  private readonly startedMs = Date.now();
  /** Settles once the rewrite has ended, swapped in or given up, its temporary file gone either way. */
  private readonly ended = Promise.withResolvers<void>();

  /** `prelude`: commands the new file begins with, before the data (every library's FUNCTION LOAD). */
  constructor(
    private readonly dbs: readonly Keyspace[],
    private readonly log: AppendLog,
    prelude: readonly string[][],
    private readonly logger: Logger,
    private readonly onEnd: (outcome: RewriteOutcome) => void,
  ) {
    this.tempPath = join(dirname(log.path), `${tempFilePrefix}${process.pid}.aof`);
    this.fd = openSync(this.tempPath, "w");
    this.out = new CommandBuffer(this.fd);
    for (const command of prelude) this.out.push(command);
    this.early = dbs.map(() => new Set<string>());
    this.earlyHashes = dbs.map(() => new Set<number>());
    this.holdTable();
    log.startTee();
    setImmediate(() => this.walkSlice());
  }

  /** The key of the collection being written in parts, if one is: its database and name (for tests). */
  get keyInParts(): { dbIndex: number; key: string } | null {
    return this.partial === null ? null : { dbIndex: this.partial.dbIndex, key: this.partial.key };
  }

  /** Called before a write command runs: its keys go to the new file first, as they are now. */
  beforeWrite(dbIndex: number, spec: CommandShape, argv: string[]): void {
    if (this.finished) return;
    const keys = spec.keys === undefined && spec.movableKeys === undefined ? null : keysOf(spec, argv);
    if (keys === null || (spec.flags.includes("movablekeys") && spec.movableKeys === undefined) || walkFinishingCommands.has(spec.name)) {
      this.walkAll();
      return;
    }
    for (const key of keys) this.writeAhead(dbIndex, key);
  }

  /** Called before a blocked client's serving changes `keys` (the served command is not a `run`). */
  beforeServe(dbIndex: number, keys: readonly string[]): void {
    if (this.finished) return;
    for (const key of keys) this.writeAhead(dbIndex, key);
  }

  /** Writes `key` now unless the walk has written it; the walk will then pass it by. */
  private writeAhead(dbIndex: number, key: string): void {
    // Not all written yet: what is left is copied before the command changes it.
    if (this.partial !== null) freezeIfNamed(this.partial, dbIndex, key);
    for (const entry of this.waiting) freezeIfNamed(entry, dbIndex, key);
    if (dbIndex < this.dbIndex) return;
    const db = this.dbs[dbIndex]!;
    const hash = hashKey(key);
    // The key's home slot (the table's capacity is a power of two).
    if (dbIndex === this.dbIndex && (hash & (db.table.capacity - 1)) < this.home) return;
    const early = this.early[dbIndex]!;
    if (early.has(key)) return;
    // Marked even when the key does not exist: one the command creates must not be walked.
    early.add(key);
    this.earlyHashes[dbIndex]!.add(hash);
    const ref = db.table.find(key);
    if (ref !== -1) this.writeEntry(dbIndex, ref, key, "ahead");
  }

  /**
   * Writes the key at `ref` with its value and time to live, read raw from the table: reading
   * must not expire or touch it (an expired key is written with its past time, and expires
   * again when the file is loaded). `key` is its name if the caller has it. A large collection
   * is written in parts over the steps that follow: the walk reads it as it stands, which it
   * does until a command names it; one written ahead of the walk, because a command is about to
   * change it, is copied first.
   */
  private writeEntry(dbIndex: number, ref: number, key: string | undefined, by: "walk" | "ahead"): void {
    this.select(dbIndex);
    const db = this.dbs[dbIndex]!;
    const table = db.table;
    const valueBytes = table.valueLength(ref);
    const keyBytes = table.keyLength(ref);
    const expiry = table.expiresAt(ref);
    const expiresAtMs = expiry === Infinity ? undefined : expiry;
    if (valueBytes >= 0 && keyBytes >= 0 && expiresAtMs === undefined) {
      // The usual entry, a short key holding a short string with no time: copied from the table's bytes.
      const bytes = table.bytesOf(ref);
      this.out.pushSet(bytes, table.keyAt(ref), keyBytes, table.valueAt(ref), valueBytes);
    } else {
      key ??= table.keyOf(ref);
      const value = table.valueOf(ref);
      if (collectionSize(value) > itemsPerStep) {
        const parts = collectionParts(key, value)!;
        const frozen = by === "ahead";
        const entry = { dbIndex, key, parts: frozen ? parts.freeze() : parts, frozen, expiresAtMs };
        if (this.partial !== null || by === "ahead") this.waiting.push(entry);
        else {
          this.partial = entry;
          this.continuePartial(itemsPerStep);
        }
      } else writeValueCommands(this.out, key, value, expiresAtMs);
    }
  }

  private select(dbIndex: number): void {
    if (this.selected === dbIndex) return;
    this.out.push(["SELECT", String(dbIndex)]);
    this.selected = dbIndex;
  }

  /**
   * Writes about `maxItems` more of the collection written in part, and its expiry once it is all
   * out. The collection holds still in between, or what is left of it has been copied: a command
   * that would change it, delete it or rename it names its key, and writeAhead freezes the rest
   * before the command runs.
   */
  private continuePartial(maxItems: number): void {
    const partial = this.partial!;
    this.select(partial.dbIndex);
    if (!partial.parts.write(this.out, maxItems)) return;
    if (partial.expiresAtMs !== undefined) this.out.push(["PEXPIREAT", partial.key, String(partial.expiresAtMs)]);
    this.partial = null;
  }

  private walkSlice(): void {
    if (this.finished) return;
    const deadline = performance.now() + sliceBudgetMs;
    try {
      while (performance.now() < deadline) {
        if (!this.walkStep()) return this.complete();
      }
    } catch (error) {
      return this.fail(error);
    }
    setImmediate(() => this.walkSlice());
  }

  /** Writes every key not written yet, now. */
  private walkAll(): void {
    try {
      while (this.walkStep());
    } catch (error) {
      return this.fail(error);
    }
    this.complete();
  }

  /**
   * Writes the next part of a large collection if one is being written or waits, else the keys
   * of the next stepSlots home slots of the walk; false once every database has been walked and
   * every collection written. The slices call it; tests call it to stop the walk where they want.
   */
  walkStep(): boolean {
    if (this.partial === null && this.waiting.length > 0) this.partial = this.waiting.shift()!;
    if (this.partial !== null) {
      this.continuePartial(itemsPerStep);
      return true;
    }
    if (this.dbIndex >= this.dbs.length) return false;
    const table = this.table!;
    // The walk's order needs the keys in one set of slots: a resize under way when it reaches a
    // table is moved on a step at a time first, not finished at once (~190 ms at 4M keys).
    if (this.home === 0 && table.resizeStep(resizeStepSlots)) return true;
    const to = Math.min(this.home + stepSlots, table.capacity);
    const refs = this.refs;
    table.entriesHomedIn(this.home, to, refs);
    this.home = to;
    const earlyHashes = this.earlyHashes[this.dbIndex]!;
    const early = this.early[this.dbIndex]!;
    for (const ref of refs) {
      if (earlyHashes.size > 0 && earlyHashes.has(table.hashOf(ref))) {
        const key = table.keyOf(ref);
        if (!early.has(key)) this.writeEntry(this.dbIndex, ref, key, "walk");
      } else this.writeEntry(this.dbIndex, ref, undefined, "walk");
    }
    refs.length = 0;
    if (to === table.capacity) this.nextTable();
    return true;
  }

  /**
   * The table being walked is about to grow, which would move its keys out of the walk's order:
   * the walk finishes it first (at once, holding the loop), and goes on in the next database.
   */
  private readonly finishTable = (): void => {
    if (this.home === 0) return; // nothing walked yet: growing moves nothing it has passed
    const index = this.dbIndex;
    try {
      while (this.dbIndex === index) this.walkStep();
    } catch (error) {
      this.fail(error);
    }
  };

  /** Moves the walk to the next database's table. */
  private nextTable(): void {
    this.releaseTable();
    this.dbIndex++;
    this.home = 0;
    this.holdTable();
  }

  private holdTable(): void {
    if (this.dbIndex >= this.dbs.length) return;
    this.table = this.dbs[this.dbIndex]!.table;
    this.table.slotWalker = this.finishTable;
  }

  private releaseTable(): void {
    if (this.table !== null) this.table.slotWalker = null;
    this.table = null;
  }

  /** The walk is over: the snapshot is written out and synced off this thread, then switchOver. */
  private complete(): void {
    if (this.finished) return;
    this.finished = true;
    this.releaseTable();
    try {
      this.out.writeTo(this.fd);
    } catch (error) {
      return this.fail(error);
    }
    appendChunks(this.fd, [], true).then(
      () => this.switchOver(),
      (error: unknown) => this.fail(error),
    );
  }

  /**
   * The snapshot is on disk: the commands kept aside since the start follow it, are synced, and
   * the file is renamed over the old one; the log continues in it.
   */
  private switchOver(): void {
    // The log closed meanwhile (shutdown) and holds everything in the old file: keep that one.
    if (this.log.isClosing) return this.fail(new Error("the append-only file was closed during the rewrite"));
    try {
      writeAll(this.fd, this.log.stopTee());
      fdatasyncSync(this.fd);
      closeSync(this.fd);
      renameSync(this.tempPath, this.log.path);
      fsyncDir(dirname(this.log.path));
      this.log.switchTo(this.log.path);
      this.logger.info({ path: this.log.path, bytes: this.log.sizeBytes, ms: Date.now() - this.startedMs }, "append-only file rewritten");
      this.end("done");
    } catch (error) {
      this.fail(error);
    }
  }

  /**
   * The server is stopping: a walk still running is given up (the old file holds everything), and
   * one whose file is being synced ends as it will. Resolves once the rewrite has ended.
   */
  abort(): Promise<void> {
    if (!this.finished) this.fail(null);
    return this.ended.promise;
  }

  private end(outcome: RewriteOutcome): void {
    this.onEnd(outcome);
    this.ended.resolve();
  }

  /** Gives up, keeping the old file; `error` null for a stop rather than a failure. */
  private fail(error: unknown): void {
    this.finished = true;
    this.releaseTable();
    this.log.stopTee();
    try {
      closeSync(this.fd);
    } catch {}
    try {
      unlinkSync(this.tempPath);
    } catch {}
    if (error === null) this.logger.warn("append-only file rewrite stopped with the server; the old file stays in use");
    else this.logger.error({ err: error }, "append-only file rewrite failed; the old file stays in use");
    this.end(error === null ? "stopped" : "failed");
  }
}

/** A rewrite writes `temp-rewriteaof-<pid>.aof` beside the file (Redis's name). */
const tempFilePrefix = "temp-rewriteaof-";
const tempFileName = new RegExp(`^${tempFilePrefix}\\d+\\.aof$`);

/**
 * Removes the temporary files of rewrites a killed server left in `dir`: a rewrite that was cut
 * off never swapped its file in, and nothing else reads it. Called at start, before loading.
 */
export function removeStaleRewriteFiles(dir: string, logger: Logger): void {
  for (const name of readdirSync(dir)) {
    if (!tempFileName.test(name)) continue;
    unlinkSync(join(dir, name));
    logger.warn({ path: join(dir, name) }, "removed the temporary file of an append-only file rewrite that did not finish");
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
