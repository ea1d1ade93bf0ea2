/**
 * A segment: one log file of record frames plus its sparse offset and time indexes, all named by
 * the segment's base offset zero-padded to 20 digits (Kafka's naming, so `ls` sorts by offset):
 * 00000000000000000000.log, .index, .timeindex.
 *
 * Only the partition's last segment is written; the others are sealed. Appends go through an
 * injected `Appender` (the native writev + fdatasync on a worker thread by default), and the
 * segment's size, next offset and indexes move only once the appender resolves — so a read never
 * sees bytes that are not yet on disk.
 *
 * Index files are written whole (to a temporary name, then renamed) when the segment is sealed
 * and when it is closed; they are hints, so an index lost in a crash is simply rebuilt by scanning.
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fsyncDir } from "../../core/atomic-file.ts";
import { AssertionError, assert } from "../../core/assert.ts";
import { SvcError } from "../../core/errors.ts";
import { scanFrames, type Visit } from "./frame-scan.ts";
import { OffsetIndex } from "./offset-index.ts";
import type { ChunkStamps } from "../../native/append.ts";
import { frameBodyBytesMax, frameLengthFieldBytes, type LogRecord } from "./record.ts";
import { TimeIndex } from "./time-index.ts";

/**
 * Writes `chunks` at the end of `fd`, stamping their frames first as `stamps` says, and, if
 * `sync`, fdatasyncs; resolves to the file's length. (src/native/append.ts's appendChunks.)
 */
export type Appender = (fd: number, chunks: Uint8Array[], sync: boolean, stamps: ChunkStamps) => Promise<number>;

/** How much a recovery or index-rebuild scan reads at once. */
const scanChunkBytes = 1024 * 1024;
const baseOffsetDigits = 20;

export function segmentFileName(baseOffset: number, extension: ".log" | ".index" | ".timeindex"): string {
  return String(baseOffset).padStart(baseOffsetDigits, "0") + extension;
}

/** The base offset a segment log file's name stands for, or null when it is not one. */
export function parseSegmentFileName(name: string): number | null {
  const match = /^(\d{20})\.log$/.exec(name);
  if (match === null) return null;
  const base = Number(match[1]);
  return Number.isSafeInteger(base) ? base : null;
}

export interface SegmentOptions {
  indexIntervalBytes: number;
  appender: Appender;
}

/** What opening a segment found and did, for the partition's recovery report. */
export interface SegmentOpenReport {
  baseOffset: number;
  /** Bytes cut from the end of the log because they were torn or damaged. */
  truncatedBytes: number;
  truncateReason?: string;
  indexRebuilt: boolean;
}

export interface SegmentRead {
  records: LogRecord[];
  /** Frame bytes of the records returned. */
  bytes: number;
  /** True when the read ran to the segment's end: a partition read may go on to the next one. */
  reachedEnd: boolean;
}

/** One produce's part of an append: `count` frames back to back, laid out but not stamped (record.ts), written at offsets from `baseOffset`. */
export interface AppendedProduce {
  frames: Uint8Array;
  count: number;
  baseOffset: number;
}

export class Segment {
  /** Bytes of whole, durable frames: where the next append lands and where reads stop. */
  sizeBytes = 0;
  /** One past the last record's offset; the base offset while the segment is empty. */
  nextOffset: number;
  /** Timestamp of the segment's first record, which ages it for rolling; null while empty. */
  firstTimestampMs: number | null = null;
  /** Largest timestamp of any record; -Infinity while empty. */
  maxTimestampMs = Number.NEGATIVE_INFINITY;
  private offsetIndex: OffsetIndex;
  private timeIndex: TimeIndex;
  private bytesSinceIndexEntry = 0;
  /** Opened for reading and appending (O_APPEND): appends and truncation use it too. */
  private readonly fd: number;
  /** False once sealed: only the partition's active segment takes appends. */
  private writable = false;
  /** A failed append could not be undone: the partition must stop writing until reopened. */
  damaged = false;
  /** Appended to since its last fdatasync (only with --flush-every-records above 1). */
  private unsynced = false;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    private readonly options: SegmentOptions,
  ) {
    this.nextOffset = baseOffset;
    this.offsetIndex = new OffsetIndex(baseOffset);
    this.timeIndex = new TimeIndex(baseOffset);
    this.fd = openSync(this.path(".log"), "a+");
  }

  path(extension: ".log" | ".index" | ".timeindex"): string {
    return join(this.dir, segmentFileName(this.baseOffset, extension));
  }

  /** Creates a new, empty segment to append to (after a roll, or for a new partition). */
  static create(dir: string, baseOffset: number, options: SegmentOptions): Segment {
    const segment = new Segment(dir, baseOffset, options);
    assert(fstatSync(segment.fd).size === 0, `segment ${baseOffset} already has data`);
    // The new log file's directory entry must be durable before records synced into it are
    // acknowledged: fdatasync of the file does not cover its name in the directory.
    fsyncDir(dir);
    segment.writable = true;
    return segment;
  }

  /**
   * Opens an existing segment. The active (last) one is scanned in full, checking every frame's
   * CRC, and cut back to its last whole record; a sealed one trusts its index files when they are
   * well-formed and agree with the log, and is scanned in full only when they do not.
   */
  static open(dir: string, baseOffset: number, active: boolean, options: SegmentOptions): { segment: Segment; report: SegmentOpenReport } {
    const segment = new Segment(dir, baseOffset, options);
    const report: SegmentOpenReport = { baseOffset, truncatedBytes: 0, indexRebuilt: false };
    const fileBytes = fstatSync(segment.fd).size;
    if (active || !segment.loadIndexes(fileBytes)) {
      report.indexRebuilt = true;
      segment.scanFrom(0, fileBytes, report, true);
      // A sealed segment is not written again, so its rebuilt indexes are saved now.
      if (!active) segment.writeIndexes();
    }
    segment.writable = active;
    return { segment, report };
  }

  /**
   * Loads the index files and scans the log from the last indexed record to its end, which both
   * proves the last entry points at the record it names and recovers the segment's last offset and
   * largest timestamp. False when the files are missing or do not fit the log.
   */
  private loadIndexes(fileBytes: number): boolean {
    const offsetIndex = readIndexFile(this.path(".index"), (b) => OffsetIndex.decode(b, this.baseOffset, fileBytes));
    const timeIndex = readIndexFile(this.path(".timeindex"), (b) => TimeIndex.decode(b, this.baseOffset));
    if (offsetIndex === null || timeIndex === null) return false;
    const lastEntry = offsetIndex.last() ?? { offset: this.baseOffset, position: 0 };
    const lastTime = timeIndex.last();
    if (lastTime !== null && lastTime.offset > lastEntry.offset) return false;
    this.offsetIndex = offsetIndex;
    this.timeIndex = timeIndex;
    this.sizeBytes = lastEntry.position;
    this.nextOffset = lastEntry.offset;
    this.maxTimestampMs = lastTime?.timestampMs ?? Number.NEGATIVE_INFINITY;
    let first = true;
    const end = scanFrames(this.fd, lastEntry.position, fileBytes, scanChunkBytes, (record, position, frameBytes) => {
      if (first && lastEntry.position > 0 && record.offset !== lastEntry.offset) return "reject";
      first = false;
      return this.indexRecord(record.offset, record.timestampMs, position, frameBytes);
    });
    if (end.stop !== "end") return this.forgetIndexes();
    this.firstTimestampMs = this.readFirstTimestamp();
    return true;
  }

  private forgetIndexes(): false {
    this.offsetIndex = new OffsetIndex(this.baseOffset);
    this.timeIndex = new TimeIndex(this.baseOffset);
    this.sizeBytes = 0;
    this.nextOffset = this.baseOffset;
    this.maxTimestampMs = Number.NEGATIVE_INFINITY;
    this.bytesSinceIndexEntry = 0;
    return false;
  }

  /**
   * Scans from a fresh start, rebuilding both indexes; with `truncate`, cuts the log at a bad frame
   * (recovery on open), without it only reports the bad frame (an index rebuild during reads).
   */
  private scanFrom(position: number, fileBytes: number, report: SegmentOpenReport, truncate: boolean): void {
    this.forgetIndexes();
    this.firstTimestampMs = null;
    const end = scanFrames(this.fd, position, fileBytes, scanChunkBytes, (record, at, frameBytes) => {
      this.firstTimestampMs ??= record.timestampMs;
      return this.indexRecord(record.offset, record.timestampMs, at, frameBytes);
    });
    if (end.stop !== "end") {
      // Frames are appended whole and synced before they are acknowledged, so a bad frame is the
      // tail of a write that never completed (or damage); nothing after it can be trusted.
      if (truncate) ftruncateSync(this.fd, end.position);
      report.truncatedBytes = fileBytes - end.position;
      report.truncateReason = end.reason ?? end.stop;
    }
  }

  /** Accounts one durable record: size, offsets, timestamps and (every interval) index entries. */
  private indexRecord(offset: number, timestampMs: number, position: number, frameBytes: number): Visit {
    if (offset < this.nextOffset || position !== this.sizeBytes) return "reject";
    this.maxTimestampMs = Math.max(this.maxTimestampMs, timestampMs);
    if (this.bytesSinceIndexEntry >= this.options.indexIntervalBytes) {
      this.offsetIndex.append(offset, position);
      this.timeIndex.maybeAppend(this.maxTimestampMs, offset);
      this.bytesSinceIndexEntry = 0;
    }
    this.bytesSinceIndexEntry += frameBytes;
    this.sizeBytes = position + frameBytes;
    this.nextOffset = offset + 1;
    return "continue";
  }

  private readFirstTimestamp(): number | null {
    let first: number | null = null;
    scanFrames(this.fd, 0, this.sizeBytes, 4096, (record) => ((first = record.timestampMs), "stop"));
    return first;
  }

  /**
   * Appends the frames of `produces`, in order — each produce's records at offsets from its base,
   * all stamped `timestampMs` by the appender on its way to disk — with one write and, when
   * `sync`, one fdatasync, then makes them readable. On failure the file is cut back to where it
   * was, so a failed flush leaves no partial frame behind.
   */
  async append(produces: readonly AppendedProduce[], timestampMs: number, sync = true): Promise<void> {
    assert(this.writable, `segment ${this.baseOffset} is sealed`);
    const start = this.sizeBytes;
    const chunks = produces.map((p) => p.frames);
    const stamps = { baseOffsets: produces.map((p) => p.baseOffset), timestampMs, bodyBytesMax: frameBodyBytesMax };
    try {
      await this.options.appender(this.fd, chunks, sync, stamps);
      // A sync covers the whole file, so it also covers earlier appends made without one.
      this.unsynced = !sync;
    } catch (error) {
      try {
        ftruncateSync(this.fd, start);
      } catch {
        // The file may now end in a partial frame; only recovery on the next open can fix that.
        this.damaged = true;
      }
      throw error;
    }
    let position = start;
    this.firstTimestampMs ??= timestampMs;
    for (const { frames, count, baseOffset } of produces) {
      const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
      let at = 0;
      for (let i = 0; i < count; i++) {
        const bytes = frameLengthFieldBytes + view.getUint32(at, true);
        // No message is built unless it fails: this runs for every record written.
        if (this.indexRecord(baseOffset + i, timestampMs, position, bytes) !== "continue") throw new AssertionError(`append out of order at ${baseOffset + i}`);
        position += bytes;
        at += bytes;
      }
    }
  }

  /**
   * Records from `fromOffset` on (or the first after it, where offsets have gaps), at most
   * `maxRecords` of them and at most `maxBytes` of frames — except that with `oversizeFirst` the
   * first record is returned even when it is larger, so a consumer can always make progress.
   */
  read(fromOffset: number, maxRecords: number, maxBytes: number, oversizeFirst = true): SegmentRead {
    const result = this.readOnce(fromOffset, maxRecords, maxBytes, oversizeFirst);
    if (result !== null) return result;
    // The index pointed somewhere that is not the record it names: rebuild it and read again.
    this.rebuildIndexes();
    const retried = this.readOnce(fromOffset, maxRecords, maxBytes, oversizeFirst);
    assert(retried !== null, `segment ${this.baseOffset}: a rebuilt index still disagrees with its log`);
    return retried;
  }

  private readOnce(fromOffset: number, maxRecords: number, maxBytes: number, oversizeFirst: boolean): SegmentRead | null {
    const start = this.offsetIndex.lookup(fromOffset);
    const records: LogRecord[] = [];
    let bytes = 0;
    let first = true;
    const chunk = Math.max(4096, Math.min(maxBytes, scanChunkBytes) + this.options.indexIntervalBytes);
    const end = scanFrames(this.fd, start.position, this.sizeBytes, chunk, (record, _position, frameBytes) => {
      if (first && start.position > 0 && record.offset !== start.offset) return "reject";
      if (record.offset < fromOffset) return ((first = false), "continue");
      first = false;
      if (bytes + frameBytes > maxBytes && (records.length > 0 || !oversizeFirst)) return "stop";
      records.push(record);
      bytes += frameBytes;
      return records.length >= maxRecords ? "stop" : "continue";
    });
    // A bad frame right at an indexed position says more about the index than the log: the
    // caller rebuilds the index and reads again before calling the log damaged.
    if (end.stop !== "end" && end.stop !== "stop" && first && start.position > 0) return null;
    if (end.stop === "torn" || end.stop === "corrupt") {
      throw new SvcError("data_corrupt", `segment ${this.path(".log")} is damaged at byte ${end.position}: ${end.reason}`);
    }
    return { records, bytes, reachedEnd: end.stop === "end" };
  }

  private rebuildIndexes(): void {
    const report: SegmentOpenReport = { baseOffset: this.baseOffset, truncatedBytes: 0, indexRebuilt: true };
    const size = this.sizeBytes;
    this.scanFrom(0, size, report, false);
    if (report.truncatedBytes > 0) {
      throw new SvcError("data_corrupt", `segment ${this.path(".log")} is damaged: ${report.truncateReason}`);
    }
  }

  /**
   * The offset to scan from for the first record at or after `timestampMs`, from the time index
   * and then the log; null when every record in the segment is earlier.
   */
  offsetForTimestamp(timestampMs: number): number | null {
    if (!(this.maxTimestampMs >= timestampMs)) return null;
    const from = this.timeIndex.lookup(timestampMs);
    let found: number | null = null;
    const start = this.offsetIndex.lookup(from);
    scanFrames(this.fd, start.position, this.sizeBytes, scanChunkBytes, (record) => {
      if (record.timestampMs < timestampMs) return "continue";
      found = record.offset;
      return "stop";
    });
    return found;
  }

  /**
   * Visits every durable record, oldest first (compaction's scans). A frame that does not read
   * back whole is damage, as in `read`: the caller must not act on a partial view of the segment.
   */
  scanRecords(visit: (record: LogRecord) => void): void {
    const end = scanFrames(this.fd, 0, this.sizeBytes, scanChunkBytes, (record) => (visit(record), "continue"));
    if (end.stop !== "end") {
      throw new SvcError("data_corrupt", `segment ${this.path(".log")} is damaged at byte ${end.position}: ${end.reason ?? end.stop}`);
    }
  }

  /** Stops appends and writes the index files; the segment stays readable. */
  seal(): void {
    if (!this.writable) return;
    this.writable = false;
    // Records written without a sync (--flush-every-records above 1) reach the disk before the
    // segment is left behind: later syncs only cover the new active segment.
    if (this.unsynced) fdatasyncSync(this.fd);
    this.unsynced = false;
    this.writeIndexes();
  }

  /** Seals (writing the index files) and closes the file. */
  close(): void {
    this.seal();
    closeSync(this.fd);
  }

  /**
   * Closes the segment and deletes its files (retention). The .log goes first and its directory
   * is synced: that unlink is the one step that drops the records, so a crash before it keeps the
   * whole segment and a crash after it leaves only index files without a log, which recovery
   * removes. Segments are dropped oldest first, each durably before the next, so a crash midway
   * never leaves a hole in the middle of the log.
   */
  deleteFiles(): void {
    assert(!this.writable, `segment ${this.baseOffset} is active and is never deleted`);
    closeSync(this.fd);
    rmSync(this.path(".log"), { force: true });
    fsyncDir(this.dir);
    rmSync(this.path(".index"), { force: true });
    rmSync(this.path(".timeindex"), { force: true });
  }

  private writeIndexes(): void {
    writeFileAtomic(this.path(".index"), this.offsetIndex.encode());
    writeFileAtomic(this.path(".timeindex"), this.timeIndex.encode());
  }

  get isActive(): boolean {
    return this.writable;
  }

  dump(): { baseOffset: number; sizeBytes: number; nextOffset: number; indexEntries: number; timeIndexEntries: number } {
    return {
      baseOffset: this.baseOffset,
      sizeBytes: this.sizeBytes,
      nextOffset: this.nextOffset,
      indexEntries: this.offsetIndex.length,
      timeIndexEntries: this.timeIndex.length,
    };
  }
}

function readIndexFile<T>(path: string, decode: (bytes: Uint8Array) => T | null): T | null {
  if (!existsSync(path)) return null;
  return decode(readFileSync(path));
}

/** Index files are replaced whole, so a crash leaves the old file or the new one, never half. */
function writeFileAtomic(path: string, bytes: Uint8Array): void {
  const temporary = `${path}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, path);
}
