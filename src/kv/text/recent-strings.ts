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
import { copyOfRange, detachedSlice } from "./detached-slice.ts";
import type { Latin1Buffer } from "./write-bytes.ts";

/**
 * Whether `text` is the latin1 string of `bytes[start, end)`: compared from the end, where strings
 * of one length that differ usually do, so that a miss costs a byte or two.
 */
export function spells(text: string, bytes: Uint8Array, start: number, end: number): boolean {
  if (text.length !== end - start) return false;
  let i = end - start - 1;
  while (i >= 0 && text.charCodeAt(i) === bytes[start + i]) i--;
  return i < 0;
}

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
    if (cached !== undefined && spells(cached, bytes, start, end)) return cached;
    const made = bytes.latin1Slice(start, end);
    this.slots[slot] = made;
    return made;
  }

  /**
   * `text.slice(from, to)` of a byte string (chars below 256), the same string object as last time
   * when it recurs. A string it makes is a copy of those chars, not a slice: a JavaScriptCore slice
   * keeps the whole of `text` alive, which a slot would then hold (four 20-char slices of 64 MB
   * strings kept 270 MB resident after collection; only slices of a few chars, once hashed, are
   * copies, 2026-12-01).
   */
  fromText(text: string, from: number, to: number): string {
    const length = to - from;
    if (length > this.lengthMax || length === 0) return detachedSlice(text, from, to);
    const slot = (length * 31 + text.charCodeAt(from) * 7 + text.charCodeAt(from + (length >> 1)) * 3 + text.charCodeAt(to - 1)) & this.mask;
    const cached = this.slots[slot];
    if (cached !== undefined && cached.length === length) {
      let i = length - 1;
      while (i >= 0 && cached.charCodeAt(i) === text.charCodeAt(from + i)) i--;
      if (i < 0) return cached;
    }
    const made = copyOfRange(text, from, to);
    this.slots[slot] = made;
    return made;
  }
}
