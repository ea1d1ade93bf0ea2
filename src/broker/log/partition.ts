/**
 * A partition: an ordered log of records in a directory of segments, the last of which (the active
 * segment) takes appends.
 *
 * Writes are serialised by one lock per partition, a promise chain: flushes, rolls and segment
 * swaps by retention and compaction run one at a time, in order.
 *
 * Group commit: `append` queues the produce and, unless a flush is already queued, queues one.
 * A flush takes every produce waiting at that moment, assigns their offsets, and writes them with
 * one write and one fdatasync on a worker thread (the native appendChunks). Produces that arrive
 * while it runs wait for the next flush, which takes them all together — so under load one sync
 * covers many produces, and with a single producer nothing waits for a timer. A produce resolves
 * with its offsets only after its flush's sync, and that is also when its records become readable.
 */
import { AssertionError, assert } from "../../core/assert.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { SvcError } from "../../core/errors.ts";
import { brokerRecordBytesMax, logFlushBytesMax, logIndexIntervalBytes, logSegmentBytesMax, logSegmentBytesMin, MiB } from "../../core/limits.ts";
import { appendChunks } from "../../native/append.ts";
import { type FrameRun, frameBodyBytesMax, frameKeyValueBytes, frameOverheadBytes, type LogRecord, unstampedFrames } from "./record.ts";
import { type RecoveryReport, recoverSegments } from "./recovery.ts";
import { type Appender, type AppendedProduce, Segment, type SegmentOptions } from "./segment.ts";

/** Kafka's default segment.bytes (1 GiB) and segment.ms (7 days). */
export const segmentBytesDefault = 1024 * MiB;
export const segmentMsDefault = 7 * 24 * 60 * 60 * 1000;
/** Relative offsets in the indexes are u32, so a segment never spans more offsets than this. */
const segmentOffsetsMax = 0xffff_ffff;

export interface PartitionOptions {
  /** Roll to a new segment when the active one would pass this; a change applies from the next roll. */
  segmentBytes?: number;
  /** Roll when the active segment's first record is this old. */
  segmentMs?: number;
  clock?: Clock;
  /** The durable append; tests inject one to count or fail flushes. */
  appender?: Appender;
  indexIntervalBytes?: number;
  /** Largest key plus value of one record (--max-record-bytes). */
  recordBytesMax?: number;
  /**
   * --flush-every-records: a flush syncs once this many records have been written since the last
   * sync; the others are answered once written (they survive the process dying, not the machine).
   * 1, the default, syncs every flush.
   */
  flushEveryRecords?: number;
}

/** A record as a producer hands it over; the partition gives it an offset and a timestamp. */
export interface ProduceRecord {
  key: Uint8Array | null;
  value: Uint8Array;
}

export interface AppendResult {
  /** Offset of the first record; the rest follow one by one, in the order given. */
  baseOffset: number;
  lastOffset: number;
  timestampMs: number;
}

export interface ReadResult {
  records: LogRecord[];
  /** Where the next read starts: one past the last record returned (offsets may have gaps). */
  nextOffset: number;
  /** One past the last durable record. */
  highWatermark: number;
  logStartOffset: number;
}

/** A produce that carries a tag (an idempotent producer's first sequence), with the offsets it got. */
export interface TaggedAppend {
  tag: unknown;
  baseOffset: number;
  count: number;
}

/**
 * Told about the tagged produces of a flush, inside the partition's write lock: the seam through
 * which idempotent producers' state (src/broker/produce/producer-journal.ts) stays exactly as
 * durable as the records it describes.
 */
export interface WriteHook {
  /** Before the flush's records are written; what it records must be durable when it resolves. */
  beforeWrite(tagged: TaggedAppend[]): Promise<void>;
  /** After the records are synced, before any produce of the flush is answered. */
  afterWrite(tagged: TaggedAppend[]): void;
}

interface PendingProduce {
  run: FrameRun;
  tag: unknown;
  resolve: (result: AppendResult) => void;
  reject: (error: unknown) => void;
}

export class Partition {
  private readonly segments: Segment[];
  private readonly clock: Clock;
  private segmentBytes: number;
  private segmentMs: number;
  /** The roll size the active segment was created under. */
  private activeRollBytes: number;
  private readonly recordBytesMax: number;
  private writeLock: Promise<void> = Promise.resolve();
  private pending: PendingProduce[] = [];
  private flushQueued = false;
  private closed = false;
  /** Set when a failed write could not be undone; appends fail until the partition is reopened. */
  private failure: Error | null = null;
  /** Flushes written so far (each is one write, and one fdatasync when due). */
  flushCount = 0;
  private readonly flushEveryRecords: number;
  /** Records written since the last sync (with flushEveryRecords above 1). */
  private recordsSinceSync = 0;
  private writeHook: WriteHook | null = null;
  /** True while a flush's hook has recorded offsets that its records have not yet made true. */
  private hookAhead = false;

  private constructor(
    readonly dir: string,
    segments: Segment[],
    readonly recovery: RecoveryReport,
    private readonly segmentOptions: SegmentOptions,
    options: PartitionOptions,
  ) {
    this.segments = segments;
    this.clock = options.clock ?? systemClock;
    this.segmentBytes = checkedSegmentBytes(options.segmentBytes ?? segmentBytesDefault);
    this.segmentMs = options.segmentMs ?? segmentMsDefault;
    this.activeRollBytes = this.segmentBytes;
    this.recordBytesMax = options.recordBytesMax ?? brokerRecordBytesMax;
    this.flushEveryRecords = options.flushEveryRecords ?? 1;
  }

  /** Opens the partition in `dir` (creating it when empty), recovering its tail first. */
  static open(dir: string, options: PartitionOptions = {}): Partition {
    const appender = options.appender ?? appendChunks;
    const indexIntervalBytes = options.indexIntervalBytes ?? logIndexIntervalBytes;
    const segmentOptions = { appender, indexIntervalBytes };
    const { segments, report } = recoverSegments(dir, segmentOptions);
    return new Partition(dir, segments, report, segmentOptions, options);
  }

  private get active(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  get highWatermark(): number {
    return this.active.nextOffset;
  }

  get logStartOffset(): number {
    return this.segments[0]!.baseOffset;
  }

  get sizeBytes(): number {
    return this.segments.reduce((sum, s) => sum + s.sizeBytes, 0);
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * The oldest segment when it is sealed, else null (only the active segment is left): what
   * retention (retention.ts) may drop next. Call under `exclusive`.
   */
  oldestSealedSegment(): Segment | null {
    return this.segments.length > 1 ? this.segments[0]! : null;
  }

  /**
   * Drops the oldest segment, which must be sealed, and deletes its files; the log start moves to
   * the next segment's base. Call under `exclusive`. Synchronous, so no read (reads are
   * synchronous too) can see the list and the files disagree.
   */
  dropOldestSegment(): Segment {
    assert(!this.closed, `partition ${this.dir} is closed`);
    assert(this.segments.length > 1, `partition ${this.dir}: the active segment is never dropped`);
    const oldest = this.segments.shift()!;
    oldest.deleteFiles();
    return oldest;
  }

  /** Every segment, oldest first; the last is the active one. Call under `exclusive`. */
  listSegments(): readonly Segment[] {
    return this.segments;
  }

  /**
   * Replaces a sealed segment whose files were rewritten on disk (compaction) with one opened from
   * them, and closes the old one. Call under `exclusive`. Synchronous, like reads, so no read sees
   * the old file descriptor closed under it.
   */
  reopenSealedSegment(segment: Segment): Segment {
    assert(!this.closed, `partition ${this.dir} is closed`);
    const at = this.segments.indexOf(segment);
    assert(at >= 0 && at < this.segments.length - 1, `partition ${this.dir}: segment ${segment.baseOffset} is not a sealed segment of it`);
    const { segment: reopened } = Segment.open(this.dir, segment.baseOffset, false, this.segmentOptions);
    segment.close();
    this.segments[at] = reopened;
    return reopened;
  }

  /** New roll size; the active segment keeps the size it was created under (spec: next roll). */
  setSegmentBytes(bytes: number): void {
    this.segmentBytes = checkedSegmentBytes(bytes);
  }

  setSegmentMs(ms: number): void {
    this.segmentMs = ms;
  }

  /**
   * Appends `records` — record objects, or a produce's frames laid out already — as one produce.
   * Resolves once they are on disk, with their offsets; rejects without writing anything when a
   * record is too large or the partition cannot write.
   */
  append(records: FrameRun | readonly ProduceRecord[], tag?: unknown): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new SvcError("unavailable", `partition ${this.dir} is closed`));
    if (this.failure !== null) return Promise.reject(this.failure);
    const count = "frames" in records ? records.count : records.length;
    if (count === 0) return Promise.reject(new SvcError("bad_request", "a produce needs at least one record"));
    // Record objects are measured before they are framed: framing refuses what no frame can hold.
    const refused = "frames" in records ? this.refusal(records) : this.oversized(records);
    if (refused !== null) return Promise.reject(refused);
    const run = "frames" in records ? records : unstampedFrames(records);
    return new Promise((resolve, reject) => {
      this.pending.push({ run, tag, resolve, reject });
      this.queueFlush();
    });
  }

  /**
   * Why the run cannot be appended, or null: a record past recordBytesMax, or frames that do not
   * tile it — checked here, so one bad produce cannot fail the flush it would share with others.
   */
  private refusal(run: FrameRun): SvcError | AssertionError | null {
    const { frames } = run;
    const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
    let pos = 0;
    for (let i = 0; i < run.count; i++) {
      if (frames.length - pos < frameOverheadBytes || view.getUint32(pos, true) > frameBodyBytesMax) break;
      const recordBytes = frameKeyValueBytes(view, pos);
      if (recordBytes < 0) break;
      if (recordBytes > this.recordBytesMax) return this.tooLarge(i, recordBytes);
      pos += frameOverheadBytes + recordBytes;
    }
    return pos === frames.length ? null : new AssertionError(`a produce's ${frames.length} bytes are not the frames of ${run.count} records`);
  }

  /** A refusal of the first record object whose key and value pass recordBytesMax, or null. */
  private oversized(records: readonly ProduceRecord[]): SvcError | null {
    for (let i = 0; i < records.length; i++) {
      const recordBytes = (records[i]!.key?.length ?? 0) + records[i]!.value.length;
      if (recordBytes > this.recordBytesMax) return this.tooLarge(i, recordBytes);
    }
    return null;
  }

  private tooLarge(i: number, recordBytes: number): SvcError {
    return new SvcError("body_too_large", `record ${i} has ${recordBytes} bytes of key and value; the limit is ${this.recordBytesMax}`);
  }

  /** Installs the hook told about tagged produces; set once, before the first append. */
  setWriteHook(hook: WriteHook): void {
    this.writeHook = hook;
  }

  /** Runs `work` alone under the partition's write lock (rolls, segment swaps); resolves with it. */
  exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.writeLock.then(work);
    // The chain continues whether or not `work` failed; the caller sees the failure through `run`.
    this.writeLock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    void this.exclusive(() => this.flush());
  }

  /** One group-commit flush: every waiting produce (up to logFlushBytesMax), one write, one sync. */
  private async flush(): Promise<void> {
    this.flushQueued = false;
    const batch = this.takeBatch();
    if (this.pending.length > 0) this.queueFlush();
    if (batch.length === 0) return;
    try {
      if (this.failure !== null) throw this.failure;
      const timestampMs = this.clock.nowMs();
      const batchBytes = batch.reduce((sum, p) => sum + p.run.frames.length, 0);
      const batchRecords = batch.reduce((sum, p) => sum + p.run.count, 0);
      if (this.shouldRoll(batchBytes, batchRecords, timestampMs)) this.roll();
      const results = await this.writeBatch(batch, timestampMs);
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (error) {
      // A hook that ran ahead of a failed write has recorded offsets the next flush would reuse
      // for other records: stop writing until a reopen reconciles it with the log.
      if (this.active.damaged || this.hookAhead) this.failure ??= new SvcError("unavailable", `partition ${this.dir} failed a write`, { cause: error });
      for (const p of batch) p.reject(error);
    }
  }

  private takeBatch(): PendingProduce[] {
    let taken = 0;
    let bytes = 0;
    while (taken < this.pending.length && (taken === 0 || bytes + this.pending[taken]!.run.frames.length <= logFlushBytesMax)) {
      bytes += this.pending[taken]!.run.frames.length;
      taken++;
    }
    return this.pending.splice(0, taken);
  }

  /** Assigns offsets from the active segment's next one, encodes each produce, and writes them all. */
  private async writeBatch(batch: PendingProduce[], timestampMs: number): Promise<AppendResult[]> {
    let offset = this.active.nextOffset;
    let recordCount = 0;
    const appended: AppendedProduce[] = [];
    const results: AppendResult[] = [];
    const tagged: TaggedAppend[] = [];
    for (const produce of batch) {
      const { frames, count } = produce.run;
      if (produce.tag !== undefined) tagged.push({ tag: produce.tag, baseOffset: offset, count });
      // Its offsets, timestamp and checksums are written by the appender, off this thread.
      appended.push({ frames, count, baseOffset: offset });
      results.push({ baseOffset: offset, lastOffset: offset + count - 1, timestampMs });
      offset += count;
      recordCount += count;
    }
    const hook = tagged.length > 0 ? this.writeHook : null;
    if (hook !== null) {
      this.hookAhead = true;
      await hook.beforeWrite(tagged);
    }
    const sync = this.recordsSinceSync + recordCount >= this.flushEveryRecords;
    await this.active.append(appended, timestampMs, sync);
    this.recordsSinceSync = sync ? 0 : this.recordsSinceSync + recordCount;
    this.flushCount++;
    if (hook !== null) {
      hook.afterWrite(tagged);
      this.hookAhead = false;
    }
    return results;
  }

  /** The one place that decides a roll: by size, by age, or when relative offsets would overflow. */
  private shouldRoll(batchBytes: number, batchRecords: number, nowMs: number): boolean {
    const active = this.active;
    if (active.sizeBytes === 0) return false;
    if (active.sizeBytes + batchBytes > this.activeRollBytes) return true;
    if (active.firstTimestampMs !== null && nowMs - active.firstTimestampMs >= this.segmentMs) return true;
    return active.nextOffset + batchRecords - active.baseOffset > segmentOffsetsMax;
  }

  private roll(): void {
    const previous = this.active;
    // Sealing syncs whatever the segment holds unsynced.
    previous.seal();
    this.recordsSinceSync = 0;
    this.segments.push(Segment.create(this.dir, previous.nextOffset, this.segmentOptions));
    this.activeRollBytes = this.segmentBytes;
  }

  /**
   * Rolls the active segment if it has aged past segmentMs, for a background pass to call when no
   * produce arrives to trigger the check. Resolves to whether it rolled.
   */
  rollIfAged(): Promise<boolean> {
    return this.exclusive(() => {
      // A background pass can reach a partition whose topic is being deleted: its files are closed.
      if (this.closed) return false;
      const active = this.active;
      if (active.firstTimestampMs === null || this.clock.nowMs() - active.firstTimestampMs < this.segmentMs) return false;
      this.roll();
      return true;
    });
  }

  /**
   * Records from `offset` on: at most `maxRecords`, and at most `maxBytes` of frames except that
   * the first record always comes back whole. An offset below the log start reads from the start;
   * one past the high watermark is an error.
   */
  read(offset: number, maxRecords: number, maxBytes: number): ReadResult {
    assert(maxRecords >= 1 && maxBytes >= 1, `read limits ${maxRecords} records / ${maxBytes} bytes`);
    const highWatermark = this.highWatermark;
    if (offset > highWatermark) {
      throw new SvcError("bad_request", `offset ${offset} is past the high watermark ${highWatermark}`);
    }
    const from = Math.max(offset, this.logStartOffset);
    const records: LogRecord[] = [];
    let bytes = 0;
    for (let i = this.segmentIndexFor(from); i < this.segments.length; i++) {
      const got = this.segments[i]!.read(from, maxRecords - records.length, maxBytes - bytes, records.length === 0);
      records.push(...got.records);
      bytes += got.bytes;
      // A segment that stopped early stopped on a budget: a smaller record in the next segment
      // must not jump the queue.
      if (!got.reachedEnd || records.length >= maxRecords || bytes >= maxBytes) break;
    }
    const last = records[records.length - 1];
    // Nothing returned with the budget untouched means every segment was read to its end: the
    // offsets from `from` to the high watermark are all gaps.
    const nextOffset = last === undefined ? highWatermark : last.offset + 1;
    return { records, nextOffset, highWatermark, logStartOffset: this.logStartOffset };
  }

  /** Index of the segment whose base offset is the largest at or below `offset`. */
  private segmentIndexFor(offset: number): number {
    let lo = 0;
    let hi = this.segments.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(lo - 1, 0);
  }

  /** The first offset whose record's timestamp is at or after `timestampMs`, or null if none. */
  offsetForTimestamp(timestampMs: number): number | null {
    for (const segment of this.segments) {
      const found = segment.offsetForTimestamp(timestampMs);
      if (found !== null) return found;
    }
    return null;
  }

  /** Waits for queued flushes, then seals the active segment's indexes and closes every file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A flush may queue another behind itself (a backlog past logFlushBytesMax): drain them all.
    while (this.flushQueued || this.pending.length > 0) await this.exclusive(() => undefined);
    await this.exclusive(() => {
      for (const segment of this.segments) segment.close();
    });
  }

  dump(): { highWatermark: number; logStartOffset: number; flushCount: number; segments: ReturnType<Segment["dump"]>[] } {
    return {
      highWatermark: this.highWatermark,
      logStartOffset: this.logStartOffset,
      flushCount: this.flushCount,
      segments: this.segments.map((s) => s.dump()),
    };
  }
}

/** Config validation refuses out-of-range sizes with a 400 before they get here; this is the backstop. */
function checkedSegmentBytes(bytes: number): number {
  assert(
    Number.isSafeInteger(bytes) && bytes >= logSegmentBytesMin && bytes <= logSegmentBytesMax,
    `segment bytes ${bytes} outside ${logSegmentBytesMin}..${logSegmentBytesMax}`,
  );
  return bytes;
}
