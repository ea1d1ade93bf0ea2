/**
 * A segment's sparse offset index: which byte position of the log file a record's frame starts at,
 * for one record in every `logIndexIntervalBytes` or so. A read finds the nearest entry at or below
 * the offset it wants and scans forward from there, so the index stays small enough to keep in
 * memory and to rewrite whole.
 *
 * File (`<base>.index`), little-endian, 8 bytes per entry, entries in increasing order:
 *   u32 relativeOffset  offset - the segment's base offset
 *   u32 position        byte position of that record's frame in the log file
 *
 * The index is a hint, never the source of truth (as in Kafka): a file that is missing, damaged or
 * disagrees with the log is thrown away and rebuilt by scanning the log.
 */
import { assert } from "../../core/assert.ts";

export const offsetIndexEntryBytes = 8;

export interface OffsetPosition {
  offset: number;
  position: number;
}

export class OffsetIndex {
  /** relativeOffset, position pairs; grows by doubling. */
  private entries = new Uint32Array(64);
  private count = 0;

  constructor(readonly baseOffset: number) {}

  get length(): number {
    return this.count;
  }

  entry(i: number): OffsetPosition {
    assert(i >= 0 && i < this.count, `offset index entry ${i} of ${this.count}`);
    return { offset: this.baseOffset + this.entries[2 * i]!, position: this.entries[2 * i + 1]! };
  }

  last(): OffsetPosition | null {
    return this.count === 0 ? null : this.entry(this.count - 1);
  }

  /** Adds an entry past every existing one (both offset and position must grow). */
  append(offset: number, position: number): void {
    const relative = offset - this.baseOffset;
    assert(relative >= 0 && relative <= 0xffff_ffff && position <= 0xffff_ffff, `index entry ${offset}@${position} out of range`);
    const last = this.last();
    assert(last === null || (offset > last.offset && position > last.position), `index entry ${offset}@${position} does not grow`);
    if (2 * this.count === this.entries.length) {
      const grown = new Uint32Array(this.entries.length * 2);
      grown.set(this.entries);
      this.entries = grown;
    }
    this.entries[2 * this.count] = relative;
    this.entries[2 * this.count + 1] = position;
    this.count++;
  }

  /**
   * The entry with the largest offset at or below `offset`, or the start of the segment when there
   * is none: where a scan for `offset` begins.
   */
  lookup(offset: number): OffsetPosition {
    const target = offset - this.baseOffset;
    let lo = 0;
    let hi = this.count; // the answer is the last index in [0, hi) whose offset <= target
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[2 * mid]! <= target) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? { offset: this.baseOffset, position: 0 } : this.entry(lo - 1);
  }

  /** Drops every entry at or past `position` (the log was truncated there). */
  truncateToPosition(position: number): void {
    while (this.count > 0 && this.entries[2 * (this.count - 1) + 1]! >= position) this.count--;
  }

  encode(): Uint8Array {
    const out = new Uint8Array(this.count * offsetIndexEntryBytes);
    const view = new DataView(out.buffer);
    for (let i = 0; i < this.count; i++) {
      view.setUint32(i * 8, this.entries[2 * i]!, true);
      view.setUint32(i * 8 + 4, this.entries[2 * i + 1]!, true);
    }
    return out;
  }

  /**
   * Reads an index file's bytes, or null when they cannot be a valid index for a log of
   * `logBytes` bytes: a partial entry, entries that do not grow, or a position past the log.
   */
  static decode(bytes: Uint8Array, baseOffset: number, logBytes: number): OffsetIndex | null {
    if (bytes.length % offsetIndexEntryBytes !== 0) return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const index = new OffsetIndex(baseOffset);
    let previous = { relative: -1, position: -1 };
    for (let at = 0; at < bytes.length; at += offsetIndexEntryBytes) {
      const relative = view.getUint32(at, true);
      const position = view.getUint32(at + 4, true);
      if (relative <= previous.relative || position <= previous.position || position >= logBytes) return null;
      index.append(baseOffset + relative, position);
      previous = { relative, position };
    }
    return index;
  }
}
