/**
 * The IDs of one stream node, ascending, in the smallest of three forms that holds them all:
 *
 * - narrow (the usual): per entry, the ms past the node's first ID's ms and the sequence number,
 *   each below 2^32, in one array of 32-bit pairs: 8 bytes an entry. A node of entries added with
 *   `*` fits unless it spans more than 49 days.
 * - numbers: both halves below 2^53 as two arrays of doubles, 16 bytes an entry: what a node
 *   turns into when an ID does not fit the narrow form.
 * - wide: bigints, for IDs a client made up near the 64-bit limits.
 *
 * The first two are compared and written as text without making a bigint. Comparisons take the
 * ID they compare with twice: as a bigint, and as its IdBound (stream-id.ts), the same ID as two
 * numbers, which a caller makes once for the many comparisons of a search.
 */
import { formatId, type IdBound, makeId, msOf, numberHalfMax, seqOf, type StreamId } from "./stream-id.ts";

/** The ms textAt last wrote, and its text with the dash. */
let textMs = -1;
let textMsPrefix = "";

/** Slots the arrays start with; they double as needed. */
const initialSlots = 8;
/** The largest ms offset or sequence number the narrow form holds. */
const narrowMax = 2 ** 32 - 1;

export class NodeIds {
  count = 0;
  /** The ms of the node's first ID: narrow ms are kept relative to it. */
  private base = 0;
  /** Narrow form: slot i's ms − base at 2i, its seq at 2i + 1; null once an ID did not fit. */
  private pairs: Uint32Array | null;
  /** Numbers form, after narrow; null before it and once wide. */
  private ms: Float64Array | null = null;
  private seq: Float64Array | null = null;
  /** Every ID as a bigint, once one does not fit the numbers; null until then. */
  private wide: StreamId[] | null = null;

  constructor(slots = initialSlots) {
    this.pairs = new Uint32Array(slots * 2);
  }

  /** Adds an ID given as numbers, both below 2^53. */
  pushNumbers(ms: number, seq: number): void {
    if (this.wide !== null) return this.push(makeId(BigInt(ms), BigInt(seq)));
    const pairs = this.pairs;
    if (pairs !== null) {
      if (this.count === 0) this.base = ms;
      const offset = ms - this.base;
      if (offset >= 0 && offset <= narrowMax && seq <= narrowMax) {
        if (this.count * 2 === pairs.length) this.grow();
        this.pairs![this.count * 2] = offset;
        this.pairs![this.count * 2 + 1] = seq;
        this.count++;
        return;
      }
      this.toNumbers();
    }
    if (this.count === this.ms!.length) this.grow();
    this.ms![this.count] = ms;
    this.seq![this.count] = seq;
    this.count++;
  }

  push(id: StreamId): void {
    const ms = msOf(id);
    const seq = seqOf(id);
    if (this.wide === null && ms < numberHalfMax && seq < numberHalfMax) return this.pushNumbers(Number(ms), Number(seq));
    this.wide ??= Array.from({ length: this.count }, (_, slot) => this.idAt(slot));
    this.pairs = this.ms = this.seq = null;
    this.wide.push(id);
    this.count++;
  }

  /** The ms of the ID in `slot`, narrow or numbers form. */
  private msAt(slot: number): number {
    return this.pairs !== null ? this.base + this.pairs[slot * 2]! : this.ms![slot]!;
  }

  /** The seq of the ID in `slot`, narrow or numbers form. */
  private seqAt(slot: number): number {
    return this.pairs !== null ? this.pairs[slot * 2 + 1]! : this.seq![slot]!;
  }

  idAt(slot: number): StreamId {
    return this.wide?.[slot] ?? makeId(BigInt(this.msAt(slot)), BigInt(this.seqAt(slot)));
  }

  textAt(slot: number): string {
    if (this.wide !== null) return formatId(this.wide[slot]!);
    // Neighbouring entries are mostly of one ms: its text is made once for them.
    const ms = this.msAt(slot);
    if (ms !== textMs) {
      textMs = ms;
      textMsPrefix = `${ms}-`;
    }
    return textMsPrefix + this.seqAt(slot);
  }

  /** Below 0, 0 or above 0 as the ID in `slot` is below, equal to or above `id` (whose bound is `bound`). */
  compare(slot: number, id: StreamId, bound: IdBound): number {
    if (this.wide !== null) {
      const here = this.wide[slot]!;
      return here < id ? -1 : here === id ? 0 : 1;
    }
    const ms = this.msAt(slot);
    if (ms !== bound.ms) return ms < bound.ms ? -1 : 1;
    const seq = this.seqAt(slot);
    return seq < bound.seq ? -1 : seq === bound.seq ? 0 : 1;
  }

  /** Gives back the room kept for more IDs. */
  compact(): void {
    if (this.pairs !== null) this.pairs = this.pairs.slice(0, this.count * 2);
    else if (this.ms !== null) {
      this.ms = this.ms.slice(0, this.count);
      this.seq = this.seq!.slice(0, this.count);
    }
  }

  memoryBytes(): number {
    if (this.pairs !== null) return this.pairs.byteLength;
    return this.ms !== null ? this.ms.byteLength + this.seq!.byteLength : this.count * 48;
  }

  copy(): NodeIds {
    const ids = new NodeIds(0);
    ids.count = this.count;
    ids.base = this.base;
    ids.pairs = this.pairs?.slice() ?? null;
    ids.ms = this.ms?.slice() ?? null;
    ids.seq = this.seq?.slice() ?? null;
    ids.wide = this.wide === null ? null : [...this.wide];
    return ids;
  }

  /** The narrow form no longer holds the IDs: they move to the numbers form. */
  private toNumbers(): void {
    const size = Math.max(initialSlots, this.pairs!.length / 2);
    const ms = new Float64Array(size);
    const seq = new Float64Array(size);
    for (let slot = 0; slot < this.count; slot++) {
      ms[slot] = this.msAt(slot);
      seq[slot] = this.seqAt(slot);
    }
    this.pairs = null;
    this.ms = ms;
    this.seq = seq;
  }

  private grow(): void {
    if (this.pairs !== null) {
      const pairs = new Uint32Array(Math.max(initialSlots * 2, this.pairs.length * 2));
      pairs.set(this.pairs);
      this.pairs = pairs;
      return;
    }
    const size = Math.max(initialSlots, this.ms!.length * 2);
    const ms = new Float64Array(size);
    const seq = new Float64Array(size);
    ms.set(this.ms!);
    seq.set(this.seq!);
    this.ms = ms;
    this.seq = seq;
  }
}
