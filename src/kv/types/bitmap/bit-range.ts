/**
 * The ranges BITCOUNT and BITPOS read, and the two reads themselves. A range is given as start
 * and end indexes in bytes or (with BIT) in bits, negative counting from the end, clamped to the
 * string; internally it is always an inclusive range of bit positions, and the bits of its end
 * bytes that fall outside it are masked off.
 */
import { bitsInByte, findOther, popcount } from "./kernels.ts";
import type { MutableString } from "../string/bytes.ts";

/** Bits [firstBit, lastBit], inclusive; bit 0 is the most significant bit of byte 0. */
export interface BitRange {
  readonly firstBit: number;
  readonly lastBit: number;
}

/** Redis's clamping of a start/end pair over a string of `lengthBytes`; null when it selects nothing. */
export function clampRange(start: number, end: number, unit: RangeUnit, lengthBytes: number): BitRange | null {
  const total = unit === "bit" ? lengthBytes * 8 : lengthBytes;
  let first = start;
  let last = end;
  if (first < 0) first += total;
  if (last < 0) last += total;
  if (first < 0) first = 0;
  if (last < 0) last = 0;
  if (last >= total) last = total - 1;
  if (first > last) return null;
  return unit === "bit" ? { firstBit: first, lastBit: last } : { firstBit: first * 8, lastBit: last * 8 + 7 };
}

/** The whole of a string of `lengthBytes`, or null for the empty string. */
export const wholeString = (lengthBytes: number): BitRange | null => (lengthBytes === 0 ? null : { firstBit: 0, lastBit: lengthBytes * 8 - 1 });

/** Of the byte holding bit `firstBit`, the bits before it. */
const bitsBefore = (firstBit: number) => (0xff00 >> (firstBit & 7)) & 0xff;
/** Of the byte holding bit `lastBit`, the bits after it. */
const bitsAfter = (lastBit: number) => (1 << (7 - (lastBit & 7))) - 1;

/**
 * The bytes of `value` holding the range, and the index in them of the range's first byte: a
 * MutableString's own bytes, or of a plain string a copy of those bytes only.
 */
function rangeBytes(value: string | MutableString, range: BitRange): { bytes: Uint8Array; first: number; last: number } {
  const firstByte = Math.floor(range.firstBit / 8);
  const lastByte = Math.floor(range.lastBit / 8);
  if (typeof value !== "string") return { bytes: value.bytes, first: firstByte, last: lastByte };
  return { bytes: byteRange(value, firstByte, lastByte + 1), first: 0, last: lastByte - firstByte };
}

/** Number of set bits in the range (BITCOUNT). */
export function countBits(value: string | MutableString, range: BitRange): number {
  const { bytes, first, last } = rangeBytes(value, range);
  return popcount(bytes, first, last + 1) - bitsInByte(bytes[first]! & bitsBefore(range.firstBit)) - bitsInByte(bytes[last]! & bitsAfter(range.lastBit));
}

/** Position (0..7, from the most significant bit) of the first bit equal to `bit` in a byte that has one. */
const firstBitIn = (b: number, bit: 0 | 1) => Math.clz32(bit === 1 ? b : ~b & 0xff) - 24;

/**
 * Position of the first bit equal to `bit` in the range (BITPOS), or -1 when there is none.
 * Whole bytes of the other value are skipped by the word kernel; only the two end bytes, whose
 * bits outside the range are forced to the value being skipped, are looked at on their own.
 */
export function findBit(value: string | MutableString, bit: 0 | 1, range: BitRange): number {
  const { bytes, first, last } = rangeBytes(value, range);
  const skip = bit === 1 ? 0x00 : 0xff;
  // Bit position of byte i of `bytes`.
  const origin = Math.floor(range.firstBit / 8) * 8 - first * 8;
  let outside = bitsBefore(range.firstBit) | (first === last ? bitsAfter(range.lastBit) : 0);
  let b = bit === 1 ? bytes[first]! & ~outside : (bytes[first]! | outside) & 0xff;
  if (b !== skip) return origin + first * 8 + firstBitIn(b, bit);
  if (first === last) return -1;
  const middle = findOther(bytes, skip, first + 1, last);
  if (middle < last) return origin + middle * 8 + firstBitIn(bytes[middle]!, bit);
  outside = bitsAfter(range.lastBit);
  b = bit === 1 ? bytes[last]! & ~outside : (bytes[last]! | outside) & 0xff;
  return b !== skip ? origin + last * 8 + firstBitIn(b, bit) : -1;
}

export type RangeUnit = "byte" | "bit";

/** Bytes [from, to) of a string value: a view of a MutableString, a copy of that range only of a plain string. */
export const byteRange = (value: string | MutableString, from: number, to: number): Uint8Array =>
  typeof value === "string" ? Buffer.from(value.slice(from, to), "latin1") : value.bytes.subarray(from, to);
