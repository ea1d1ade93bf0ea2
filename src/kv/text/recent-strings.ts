/**
 * Recent short strings, handed out again when the same bytes recur. Making a string from bytes is
 * a native call (~35–90 ns, more when the caches are cold), and a fresh string is hashed anew the
 * first time it is looked up in a Map or a Lua table; a string handed out again keeps its hash.
 * Clients send the same command names over and over, and scripts read the same field names and
 * values over and over (a job's hash, a queue's state names), so recognising bytes seen before
 * costs less than making them again.
 *
 * A small direct-mapped table: a slot holds the last string whose bytes mapped to it, and a
 * colliding string simply replaces it. A miss costs a compare of a byte or two, then the string
 * is made as before.
 */
import type { Latin1Buffer } from "./write-bytes.ts";

export class RecentStrings {
  private readonly slots: (string | undefined)[];
  private readonly mask: number;

  /** `slotCount` a power of two; strings longer than `lengthMax` are always made afresh. */
  constructor(
    slotCount: number,
    private readonly lengthMax: number,
  ) {
    this.slots = new Array(slotCount).fill(undefined);
    this.mask = slotCount - 1;
  }

  /** The string of latin1 `bytes[start, end)`, the same string object as last time when it recurs. */
  fromBytes(bytes: Latin1Buffer, start: number, end: number): string {
    const length = end - start;
    if (length > this.lengthMax || length === 0) return bytes.latin1Slice(start, end);
    // Length, first, middle and last byte pick the slot: they tell apart the names and values that
    // recur well enough (timestamps and ids of one length share a slot or ten, by their last digit).
    const slot = (length * 31 + bytes[start]! * 7 + bytes[start + (length >> 1)]! * 3 + bytes[end - 1]!) & this.mask;
    const cached = this.slots[slot];
    if (cached !== undefined && cached.length === length) {
      // From the end, where strings of one length that differ usually do.
      let i = length - 1;
      while (i >= 0 && cached.charCodeAt(i) === bytes[start + i]) i--;
      if (i < 0) return cached;
    }
    const made = bytes.latin1Slice(start, end);
    this.slots[slot] = made;
    return made;
  }
}
