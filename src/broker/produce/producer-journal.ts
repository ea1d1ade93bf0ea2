/**
 * Durable producer state of one partition: which sequences each idempotent producer has written,
 * and at which offsets. Two files in the partition's directory:
 *
 *   producers.snapshot   JSON {producerId: {next, offsets}}, replaced atomically (atomic-file.ts)
 *   producers.journal    one JSON line per tagged produce since the snapshot: {p, s, o, n} =
 *                        producer, first sequence, first offset, record count; or {p, forget: true}
 *                        when the producer's state was dropped (its id went unused for 7 days)
 *
 * Ordering is what makes "acknowledged ⇒ recognised as a duplicate after kill -9" hold, and more:
 * a flush's journal lines are written and fdatasynced *before* its records are written (the
 * partition's WriteHook, inside its write lock). So whenever a record is on disk, the line naming
 * its sequence is too. The reverse can be false after a crash — a line whose records never made
 * it — so on open every sequence whose offset is at or past the recovered log's high watermark is
 * dropped, and the reconciled state is written back as a fresh snapshot before the partition
 * takes its first write (or those offsets would be reused by other records). A torn last line was
 * being written when the broker died, before its records were: it is ignored.
 *
 * The cost is one extra write and fdatasync per flush that holds idempotent records; flushes
 * without them are untouched. The journal is folded into a new snapshot once it passes
 * `journalCompactBytes`, so it never grows without bound.
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readFileSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { SvcError } from "../../core/errors.ts";
import type { Partition, TaggedAppend, WriteHook } from "../log/partition.ts";
import { fsyncDir, writeFileAtomic } from "../../core/atomic-file.ts";
import { SequenceWindow } from "./producer-state.ts";

export const snapshotFileName = "producers.snapshot";
export const journalFileName = "producers.journal";
/** Journal size at which it is folded into the snapshot (a snapshot is at most ~1.5 KiB per producer). */
const journalCompactBytes = 1024 * 1024;

/** What an idempotent produce tags its Partition.append with. */
export interface SequenceTag {
  producerId: string;
  firstSequence: number;
}

type JournalLine = { p: string; s: number; o: number; n: number; forget?: undefined } | { p: string; forget: true };

const journals = new WeakMap<Partition, ProducerJournal>();

/** Loads the partition's producer state and hooks it into the partition's flushes; call right after open. */
export function attachProducerJournal(log: Partition): ProducerJournal {
  const journal = ProducerJournal.open(log.dir, log.highWatermark);
  log.setWriteHook(journal);
  journals.set(log, journal);
  return journal;
}

export function producerJournalOf(log: Partition): ProducerJournal {
  const journal = journals.get(log);
  if (journal === undefined) throw new Error(`partition ${log.dir} has no producer journal attached`);
  return journal;
}

export class ProducerJournal implements WriteHook {
  private journalBytes = 0;
  private journalExists: boolean;

  private constructor(
    private readonly dir: string,
    /** The committed state: only sequences whose records are on disk. */
    readonly producers: Map<string, SequenceWindow>,
  ) {
    this.journalExists = existsSync(this.journalPath);
  }

  private get snapshotPath(): string {
    return join(this.dir, snapshotFileName);
  }

  private get journalPath(): string {
    return join(this.dir, journalFileName);
  }

  static open(dir: string, highWatermark: number): ProducerJournal {
    const snapshotPath = join(dir, snapshotFileName);
    const journalPath = join(dir, journalFileName);
    const producers = existsSync(snapshotPath) ? readSnapshot(snapshotPath) : new Map<string, SequenceWindow>();
    const lines = existsSync(journalPath) ? readJournal(journalPath) : [];
    const journal = new ProducerJournal(dir, producers);
    for (const line of lines) {
      if (line.forget === true) producers.delete(line.p);
      else journal.apply(line.p, line.s, line.o, line.n, highWatermark);
    }
    for (const window of producers.values()) window.truncateTo(highWatermark);
    // Write the reconciled state back before any append, so dropped lines cannot come back to
    // name offsets that later records will take.
    // A torn tail alone also needs it: the next line appended must not be glued onto it.
    if (journal.journalExists && statSync(journalPath).size > 0) journal.compact();
    return journal;
  }

  /** The producer's window in this partition (a fresh one, not stored, if it never wrote here). */
  window(producerId: string): SequenceWindow {
    return this.producers.get(producerId) ?? new SequenceWindow();
  }

  /**
   * Drops a producer's state here (its id was forgotten). The caller makes sure none of its
   * produces is in flight. Out of memory first, then the line: a compaction in between writes a
   * snapshot without it, and the line after it forgets nothing more.
   */
  async forget(producerId: string): Promise<void> {
    if (!this.producers.delete(producerId)) return;
    await this.appendLines(`${JSON.stringify({ p: producerId, forget: true } satisfies JournalLine)}\n`);
  }

  async beforeWrite(tagged: TaggedAppend[]): Promise<void> {
    if (this.journalBytes >= journalCompactBytes) this.compact();
    const text = tagged
      .map(({ tag, baseOffset, count }) => {
        const { producerId, firstSequence } = tag as SequenceTag;
        return `${JSON.stringify({ p: producerId, s: firstSequence, o: baseOffset, n: count } satisfies JournalLine)}\n`;
      })
      .join("");
    await this.appendLines(text);
  }

  /** Appends whole lines to the journal and syncs them. */
  private async appendLines(text: string): Promise<void> {
    const bytes = Buffer.from(text);
    const file = await open(this.journalPath, "a");
    try {
      let written = 0;
      while (written < bytes.length) written += (await file.write(bytes, written)).bytesWritten;
      await file.datasync();
    } finally {
      await file.close();
    }
    // A new file's name must be as durable as its contents.
    if (!this.journalExists) fsyncDir(this.dir);
    this.journalExists = true;
    this.journalBytes += bytes.length;
  }

  afterWrite(tagged: TaggedAppend[]): void {
    for (const { tag, baseOffset, count } of tagged) {
      const { producerId, firstSequence } = tag as SequenceTag;
      this.apply(producerId, firstSequence, baseOffset, count, Number.POSITIVE_INFINITY);
    }
  }

  /** Adds sequences first.. at offsets base.., those below `highWatermark`; replays skip what is known. */
  private apply(producerId: string, first: number, base: number, count: number, highWatermark: number): void {
    let window = this.producers.get(producerId);
    if (window === undefined) this.producers.set(producerId, (window = new SequenceWindow()));
    for (let i = 0; i < count && base + i < highWatermark; i++) {
      const sequence = first + i;
      if (sequence < window.next) continue; // already in the snapshot (a compaction crashed before truncating)
      if (sequence > window.next) {
        throw new SvcError("data_corrupt", `${this.journalPath}: producer ${producerId} sequence ${sequence} follows ${window.next - 1}`);
      }
      window.accept(base + i);
    }
    if (window.next === 0) this.producers.delete(producerId);
  }

  /** Folds the journal into a new snapshot (atomic), then empties the journal. */
  private compact(): void {
    const state: Record<string, unknown> = {};
    for (const [id, window] of this.producers) state[id] = window.toJSON();
    writeFileAtomic(this.snapshotPath, `${JSON.stringify(state)}\n`);
    // A crash between the rename and this truncate leaves lines the snapshot already holds;
    // replay skips them.
    const fd = openSync(this.journalPath, "a");
    try {
      ftruncateSync(fd, 0);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (!this.journalExists) fsyncDir(this.dir);
    this.journalExists = true;
    this.journalBytes = 0;
  }
}

function readSnapshot(path: string): Map<string, SequenceWindow> {
  const producers = new Map<string, SequenceWindow>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new SvcError("data_corrupt", `${path}: not readable JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new SvcError("data_corrupt", `${path}: not an object`);
  for (const [id, value] of Object.entries(parsed)) {
    const { next, offsets } = value as { next: unknown; offsets: unknown };
    const valid =
      Number.isSafeInteger(next) &&
      Array.isArray(offsets) &&
      offsets.length <= (next as number) &&
      offsets.every((o, i) => Number.isSafeInteger(o) && o >= 0 && (i === 0 || o > offsets[i - 1]));
    if (!valid) throw new SvcError("data_corrupt", `${path}: producer ${id} has a malformed window`);
    producers.set(id, new SequenceWindow(next as number, offsets as number[]));
  }
  return producers;
}

function readJournal(path: string): JournalLine[] {
  const parts = readFileSync(path, "utf8").split("\n");
  // The last part follows the last newline: empty, or a line torn by a crash before its records
  // were written (the line is synced before them), so it describes nothing on disk.
  parts.pop();
  return parts.map((text, i) => {
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch {
      throw new SvcError("data_corrupt", `${path}: line ${i + 1} is not JSON`);
    }
    const ok = typeof line.p === "string" && (line.forget === true || [line.s, line.o, line.n].every((v) => Number.isSafeInteger(v) && v >= 0));
    if (!ok) throw new SvcError("data_corrupt", `${path}: line ${i + 1} is malformed`);
    return line;
  });
}
