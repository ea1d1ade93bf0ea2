/**
 * What the bit commands share: parsing bit offsets (SETBIT, GETBIT, BITFIELD), range indexes and
 * their unit (BITCOUNT, BITPOS); reading bytes of a string value in either of its forms, and
 * making one ready for an in-place write.
 */
import { parseInt64, parseSmallInteger } from "../../text/args.ts";
import { getMutableString } from "../../kit/lookup.ts";
import type { Exec } from "../../kit/spec.ts";
import { KvError, notAnInteger, syntaxError } from "../../text/errors.ts";
import { MutableString } from "../../types/string/bytes.ts";
import type { RangeUnit } from "../../types/bitmap/bit-range.ts";

export const bitOffsetError = () => new KvError("ERR bit offset is not an integer or out of range");

/**
 * The most bytes a bit write may grow a string to. Redis bounds offsets by proto-max-bulk-len
 * alone; a CONFIG SET far above the default would let one SETBIT ask for more memory than a typed
 * array can hold, so past this we answer the error Redis gives for over-long strings instead.
 */
export const bitmapBytesMax = 2 ** 32;

export const tooLarge = () => new KvError("ERR string exceeds maximum allowed size (proto-max-bulk-len)");

/**
 * A bit offset argument, in bits. With `fieldBits` (BITFIELD), "#n" means the n-th field of that
 * width: n × fieldBits, multiplied in 64 bits with wrap-around as Redis does. Offsets must be
 * non-negative and address a byte below proto-max-bulk-len (2^32 bits by default).
 */
export function parseBitOffset(x: Exec, text: string, fieldBits = 0): number {
  const byField = fieldBits > 0 && text.charCodeAt(0) === 35; // "#"
  const digits = byField ? text.slice(1) : text;
  // Common case: a short offset, whose product with a field width stays exact in a double.
  const small = parseSmallInteger(digits);
  if (small !== null) {
    const bits = byField ? small * fieldBits : small;
    if (bits < 0 || bits / 8 >= x.engine.clientLimits.bulkBytesMax) throw bitOffsetError();
    return bits;
  }
  let offset = parseInt64(digits);
  if (offset === null) throw bitOffsetError();
  if (byField) offset = BigInt.asIntN(64, offset * BigInt(fieldBits));
  if (offset < 0n || offset >> 3n >= BigInt(x.engine.clientLimits.bulkBytesMax)) throw bitOffsetError();
  return Number(offset);
}

/** An int64 argument (range ends, BITFIELD values), with Redis's error for anything else. */
export function parseInt64Arg(text: string): bigint {
  const small = parseSmallInteger(text);
  if (small !== null) return BigInt(small);
  const n = parseInt64(text);
  if (n === null) throw notAnInteger();
  return n;
}

/**
 * Indexes beyond ±2^53 select exactly what ±2^53 selects (strings have at most 2^35 bits), so
 * range ends are plain numbers clamped to that.
 */
const indexMagnitudeMax = 2 ** 53;

/** A range end (BITCOUNT's and BITPOS's start and end): short ones, the common case, need no bigint. */
export function parseIndex(text: string): number {
  const small = parseSmallInteger(text);
  if (small !== null) return small;
  return Math.max(-indexMagnitudeMax, Math.min(indexMagnitudeMax, Number(parseInt64Arg(text))));
}

/**
 * Whether both ends are negative and the start lies after the end, which BITCOUNT answers with 0
 * before anything else. Two ends that clamping made equal are compared exactly.
 */
export function reversedNegatives(start: number, end: number, startText: string, endText: string): boolean {
  if (start >= 0 || end >= 0) return false;
  return start !== end ? start > end : startText !== endText && BigInt(startText) > BigInt(endText);
}

export function parseRangeUnit(text: string): RangeUnit {
  const word = text.toLowerCase();
  if (word === "byte" || word === "bit") return word;
  throw syntaxError();
}

/** The byte at `index` of a string value, 0 past its end; a plain string is read without conversion. */
export const byteAt = (value: string | MutableString, index: number): number =>
  typeof value === "string" ? (index < value.length ? value.charCodeAt(index) : 0) : value.byteAt(index);

/**
 * The string at `key` ready for an in-place write of its first `lengthBytes` bytes: created
 * zero-filled when missing, grown with zeros when shorter, as Redis's bit writes do. Says too
 * whether it was made (which Keyspace.set counted as a change) or grew: Redis's bit commands
 * count a change then even when the bits they write were already so.
 */
export function writableString(x: Exec, key: string, lengthBytes: number): { target: MutableString; created: boolean; grown: boolean } {
  const existing = getMutableString(x, key);
  if (lengthBytes > bitmapBytesMax) throw tooLarge();
  if (existing !== undefined) {
    const lengthBefore = existing.length;
    existing.ensureLength(lengthBytes);
    return { target: existing, created: false, grown: existing.length !== lengthBefore };
  }
  const target = MutableString.ofLength(lengthBytes);
  x.db.set(key, target);
  return { target, created: true, grown: false };
}
