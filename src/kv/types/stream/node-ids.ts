/**
 * The IDs of one stream node, ascending. While both halves of every ID are below 2^53 — always,
 * but for IDs a client made up near the 64-bit limits — they are kept as two arrays of numbers:
 * 16 bytes an entry rather than a bigint's heap cell (~40), and compared and written as text
 * without making a bigint. The first ID past that turns the node's IDs into bigints.
 *
 * Comparisons take the ID they compare with twice: as a bigint, and as its IdBound (stream-id.ts),
 * the same ID as two numbers, which a caller makes once for the many comparisons of a search.
 */
import { formatId, type IdBound, makeId, msOf, numberHalfMax, seqOf, type StreamId } from "./stream-id.ts";

/** The ms textAt last wrote, and its text with the dash. */
let textMs = -1;
let textMsPrefix = "";

/** Slots the arrays start with; they double as needed. */
const initialSlots = 8;

export class NodeIds {
  count = 0;
  private ms: Float64Array;
  private seq: Float64Array;
  /** Every ID as a bigint, once one does not fit the numbers; null until then. */
  private wide: StreamId[] | null = null;

  constructor(slots = initialSlots) {
    this.ms = new Float64Array(slots);
    this.seq = new Float64Array(slots);
  }

  /** Adds an ID given as numbers, both below 2^53. */
  pushNumbers(ms: number, seq: number): void {
    if (this.wide !== null) return this.push(makeId(BigInt(ms), BigInt(seq)));
    if (this.count === this.ms.length) this.grow();
    this.ms[this.count] = ms;
    this.seq[this.count] = seq;
    this.count++;
  }

  push(id: StreamId): void {
    const ms = msOf(id);
    const seq = seqOf(id);
    if (this.wide === null && ms < numberHalfMax && seq < numberHalfMax) return this.pushNumbers(Number(ms), Number(seq));
    this.wide ??= Array.from({ length: this.count }, (_, slot) => this.idAt(slot));
    this.wide.push(id);
    this.count++;
  }

  idAt(slot: number): StreamId {
    return this.wide?.[slot] ?? makeId(BigInt(this.ms[slot]!), BigInt(this.seq[slot]!));
  }

  textAt(slot: number): string {
    if (this.wide !== null) return formatId(this.wide[slot]!);
    // Neighbouring entries are mostly of one ms: its text is made once for them.
    const ms = this.ms[slot]!;
    if (ms !== textMs) {
      textMs = ms;
      textMsPrefix = `${ms}-`;
    }
    return textMsPrefix + this.seq[slot]!;
  }

  /** Below 0, 0 or above 0 as the ID in `slot` is below, equal to or above `id` (whose bound is `bound`). */
  compare(slot: number, id: StreamId, bound: IdBound): number {
    if (this.wide !== null) {
      const here = this.wide[slot]!;
      return here < id ? -1 : here === id ? 0 : 1;
    }
    const ms = this.ms[slot]!;
    if (ms !== bound.ms) return ms < bound.ms ? -1 : 1;
    const seq = this.seq[slot]!;
    return seq < bound.seq ? -1 : seq === bound.seq ? 0 : 1;
  }

  /** Gives back the room kept for more IDs. */
  compact(): void {
    this.ms = this.ms.slice(0, this.count);
    this.seq = this.seq.slice(0, this.count);
  }

  memoryBytes(): number {
    return this.wide === null ? this.ms.byteLength + this.seq.byteLength : this.count * 48;
  }

  copy(): NodeIds {
    const ids = new NodeIds(0);
    ids.count = this.count;
    ids.ms = this.ms.slice();
    ids.seq = this.seq.slice();
    ids.wide = this.wide === null ? null : [...this.wide];
    return ids;
  }

  private grow(): void {
    const size = Math.max(initialSlots, this.ms.length * 2);
    const ms = new Float64Array(size);
    const seq = new Float64Array(size);
    ms.set(this.ms);
    seq.set(this.seq);
    this.ms = ms;
    this.seq = seq;
  }
}
