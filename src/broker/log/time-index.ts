/**
 * A segment's sparse time index: for a timestamp, the offset a scan for the first record at or
 * after that time can start from. Entries are added at the same records as offset-index entries,
 * and only when the largest timestamp so far has grown, so both columns strictly increase.
 *
 * An entry (T, o) promises that no record at an offset <= o has a timestamp above T. Broker
 * timestamps come from the wall clock, which can step back; keeping the running maximum (as
 * Kafka does) is what keeps the promise true even then.
 *
 * File (`<base>.timeindex`), little-endian, 12 bytes per entry:
 *   i64 timestampMs     the largest timestamp of any record up to and including the offset
 *   u32 relativeOffset  offset - the segment's base offset
 *
 * Like the offset index it is a rebuildable hint.
 */
import { assert } from "../../core/assert.ts";

export const timeIndexEntryBytes = 12;

export interface TimestampOffset {
  timestampMs: number;
  offset: number;
}

export class TimeIndex {
  private timestamps: number[] = [];
  private relativeOffsets: number[] = [];

  constructor(readonly baseOffset: number) {}

  get length(): number {
    return this.timestamps.length;
  }

  entry(i: number): TimestampOffset {
    assert(i >= 0 && i < this.length, `time index entry ${i} of ${this.length}`);
    return { timestampMs: this.timestamps[i]!, offset: this.baseOffset + this.relativeOffsets[i]! };
  }

  last(): TimestampOffset | null {
    return this.length === 0 ? null : this.entry(this.length - 1);
  }

  /** Records that the records up to `offset` reach `maxTimestampMs`, if that is news. */
  maybeAppend(maxTimestampMs: number, offset: number): void {
    const last = this.last();
    if (last !== null && maxTimestampMs <= last.timestampMs) return;
    assert(last === null || offset > last.offset, `time index offset ${offset} does not grow`);
    const relative = offset - this.baseOffset;
    assert(relative >= 0 && relative <= 0xffff_ffff, `time index offset ${offset} out of range`);
    this.timestamps.push(maxTimestampMs);
    this.relativeOffsets.push(relative);
  }

  /**
   * The offset to scan from for the first record with a timestamp >= `timestampMs`: the offset of
   * the last entry whose timestamp is below it (every record up to there is too early), or the
   * segment's base offset when no entry is.
   */
  lookup(timestampMs: number): number {
    let lo = 0;
    let hi = this.length; // the answer is the last index in [0, hi) with timestamp < target
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestamps[mid]! < timestampMs) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? this.baseOffset : this.baseOffset + this.relativeOffsets[lo - 1]!;
  }

  /** Drops every entry at or past `offset` (the log was truncated before it). */
  truncateToOffset(offset: number): void {
    while (this.length > 0 && this.baseOffset + this.relativeOffsets[this.length - 1]! >= offset) {
      this.timestamps.pop();
      this.relativeOffsets.pop();
    }
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.length * timeIndexEntryBytes);
    const view = new DataView(out.buffer);
    for (let i = 0; i < this.length; i++) {
      view.setBigInt64(i * 12, BigInt(this.timestamps[i]!), true);
      view.setUint32(i * 12 + 8, this.relativeOffsets[i]!, true);
    }
    return out;
  }

  /** Reads a file's bytes, or null when they are not a valid index (partial, or not increasing). */
  static decode(bytes: Uint8Array, baseOffset: number): TimeIndex | null {
    if (bytes.length % timeIndexEntryBytes !== 0) return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const index = new TimeIndex(baseOffset);
    for (let at = 0; at < bytes.length; at += timeIndexEntryBytes) {
      const timestamp = view.getBigInt64(at, true);
      const relative = view.getUint32(at + 8, true);
      const last = index.last();
      if (timestamp > BigInt(Number.MAX_SAFE_INTEGER) || timestamp < BigInt(Number.MIN_SAFE_INTEGER)) return null;
      if (last !== null && (Number(timestamp) <= last.timestampMs || baseOffset + relative <= last.offset)) return null;
      index.maybeAppend(Number(timestamp), baseOffset + relative);
    }
    return index;
  }
}
