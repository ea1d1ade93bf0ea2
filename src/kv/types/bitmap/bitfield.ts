/**
 * BITFIELD's integers: field types (i1..i64, u1..u63), reading and writing a field of up to 64
 * bits at any bit offset, and the three overflow policies. Values are bigints: a field may be 64
 * bits wide, and an increment is any int64.
 *
 * Fields are big-endian in bit order — the first bit is the most significant — as Redis lays them
 * out, so "u8 at offset 0" is byte 0 and bitmaps written with SETBIT read back naturally.
 */
import { parseSmallInteger } from "../../text/args.ts";
import { KvError } from "../../text/errors.ts";

export interface FieldType {
  readonly signed: boolean;
  readonly bits: number;
}

export type OverflowPolicy = "wrap" | "sat" | "fail";

const invalidType = () => new KvError("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");

/** Widest fields: a u64 could not be replied as a RESP integer, which is signed. */
const signedBitsMax = 64;
const unsignedBitsMax = 63;

/** "i16", "u8", ... as a field type; Redis 7.0 refuses "I16" and "U8". */
export function parseFieldType(text: string): FieldType {
  const sign = text.charCodeAt(0);
  if (sign !== 0x69 && sign !== 0x75) throw invalidType(); // "i", "u"
  // Redis reads the width as a C string, so it ends at the first NUL byte.
  const nul = text.indexOf("\0");
  const bits = parseSmallInteger(text.slice(1, nul === -1 ? undefined : nul));
  if (bits === null) throw invalidType();
  const signed = sign === 0x69;
  if (bits < 1 || bits > (signed ? signedBitsMax : unsignedBitsMax)) throw invalidType();
  return { signed, bits };
}

// ---- reading and writing fields ---------------------------------------------------------------

/**
 * The `bits`-bit field at bit `offset` of `bytes`, as an unsigned bigint; bits past the end of
 * `bytes` read as zero. Bits are gathered 32 at a time in a plain number, so a 64-bit field costs
 * three bigint operations, not 64; offsets may pass 2^32, so positions are never shifted.
 */
export function readField(bytes: Uint8Array, offset: number, bits: number): bigint {
  let index = Math.floor(offset / 8);
  let bit = offset % 8;
  let byte = bytes[index] ?? 0;
  let value = 0n;
  let chunk = 0;
  let chunkBits = 0;
  for (let i = 0; i < bits; i++) {
    chunk = chunk * 2 + ((byte >> (7 - bit)) & 1);
    if (++bit === 8) {
      bit = 0;
      byte = bytes[++index] ?? 0;
    }
    if (++chunkBits === 32) {
      value = (value << 32n) | BigInt(chunk);
      chunk = 0;
      chunkBits = 0;
    }
  }
  if (bits < 32) return BigInt(chunk);
  return chunkBits === 0 ? value : (value << BigInt(chunkBits)) | BigInt(chunk);
}

/** Writes the low `bits` bits of `value` (two's complement for a negative one) at bit `offset`. */
export function writeField(bytes: Uint8Array, offset: number, bits: number, value: bigint): void {
  if (bits <= 32) return writeBits(bytes, offset, bits, Number(BigInt.asUintN(bits, value)));
  const u = BigInt.asUintN(bits, value);
  // Two exact numbers: the top (bits - 32) bits, then the low 32.
  writeBits(bytes, offset, bits - 32, Number(u >> 32n));
  writeBits(bytes, offset + bits - 32, 32, Number(BigInt.asUintN(32, u)));
}

/** Writes the `count` (at most 32) low bits of `v`, most significant first, at bit `offset`. */
function writeBits(bytes: Uint8Array, offset: number, count: number, v: number): void {
  let index = Math.floor(offset / 8);
  let mask = 0x80 >> (offset % 8);
  for (let i = count - 1; i >= 0; i--) {
    bytes[index] = ((v >>> i) & 1) === 1 ? bytes[index]! | mask : bytes[index]! & ~mask;
    mask >>= 1;
    if (mask === 0) {
      mask = 0x80;
      index++;
    }
  }
}

/** A field's unsigned bits as the type's value: sign-extended for a signed type. */
export const fieldValue = (type: FieldType, raw: bigint): bigint => (type.signed ? BigInt.asIntN(type.bits, raw) : raw);

// ---- overflow -------------------------------------------------------------------------------

/**
 * `value + increment` in a field of `type`, under `policy`; null when it overflows under FAIL.
 * SET is the same with the new value and an increment of 0.
 *
 * The overflow test is Redis's, including its int64 arithmetic: it compares the increment with
 * `max - value` and `min - value` computed modulo 2^64. For INCRBY those never wrap, but SET of a
 * value far below a narrow signed type's minimum does wrap `max - value`, and Redis then takes it
 * for an overflow upwards: SAT stores the type's maximum (SET i8 with -2^63 saturates to 127).
 */
export function addInField(type: FieldType, value: bigint, increment: bigint, policy: OverflowPolicy): bigint | null {
  const direction = type.signed ? signedOverflow(type.bits, value, increment) : unsignedOverflow(type.bits, value, increment);
  if (direction === 0) return value + increment;
  if (policy === "fail") return null;
  if (policy === "wrap") return type.signed ? BigInt.asIntN(type.bits, value + increment) : BigInt.asUintN(type.bits, value + increment);
  if (type.signed) return direction > 0 ? signedMax(type.bits) : -signedMax(type.bits) - 1n;
  return direction > 0 ? unsignedMax(type.bits) : 0n;
}

const int64 = (n: bigint) => BigInt.asIntN(64, n);
const signedMax = (bits: number) => (1n << BigInt(bits - 1)) - 1n;
const unsignedMax = (bits: number) => (1n << BigInt(bits)) - 1n;

/** 1 for an overflow upwards, -1 downwards, 0 for none; `value` and `increment` are int64s. */
function signedOverflow(bits: number, value: bigint, increment: bigint): -1 | 0 | 1 {
  const max = signedMax(bits);
  const min = -max - 1n;
  const maxIncrement = int64(max - value);
  const minIncrement = int64(min - value);
  const narrow = bits !== 64;
  if (value > max || (narrow && increment > maxIncrement) || (value >= 0n && increment > 0n && increment > maxIncrement)) return 1;
  if (value < min || (narrow && increment < minIncrement) || (value < 0n && increment < 0n && increment < minIncrement)) return -1;
  return 0;
}

/** The same for unsigned fields; `value` is a uint64 (a negative SET value arrives as 2^64 + it). */
function unsignedOverflow(bits: number, value: bigint, increment: bigint): -1 | 0 | 1 {
  const max = unsignedMax(bits);
  if (value > max || (increment > 0n && increment > int64(max - value))) return 1;
  if (increment < 0n && increment < int64(-value)) return -1;
  return 0;
}
