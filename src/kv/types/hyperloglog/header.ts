/**
 * A HyperLogLog is an ordinary string value laid out exactly as Redis lays it out, so GET returns
 * bytes redis-server accepts and SET of Redis's bytes gives us a working HLL:
 *
 *   offset 0   "HYLL"                     magic
 *   offset 4   encoding                   0 dense, 1 sparse
 *   offset 5   3 unused bytes             zero
 *   offset 8   cached cardinality         u64 little-endian; its top bit set = "stale, recompute"
 *   offset 16  registers                  dense: 16384 × 6 bits = 12288 bytes; sparse: opcodes
 *
 * This module owns the header: validating a value, reading and writing the cached cardinality.
 */
import { KvError } from "../../text/errors.ts";
import { hllDenseRegisterBytes } from "../../../wasm/hll.ts";

export const headerBytes = 16;
export const denseBytes = headerBytes + hllDenseRegisterBytes;
export const encodingOffset = 4;
const cardOffset = 8;
/** The byte holding the cache-is-stale flag in its top bit (the last byte of the cardinality). */
const staleFlagOffset = 15;
const staleFlag = 0x80;

/** The encoding byte's values. */
export const denseEncoding = 0;
export const sparseEncoding = 1;

const magic = [0x48, 0x59, 0x4c, 0x4c]; // "HYLL"

/** The reply to a string that does not start with a valid header (Redis's wording, with its period). */
export const notAnHll = () => new KvError("WRONGTYPE Key is not a valid HyperLogLog string value.");
/** The reply to a sparse HLL whose opcodes do not cover exactly 16384 registers. */
export const corruptedHll = () => new KvError("INVALIDOBJ Corrupted HLL object detected");

/**
 * Throws notAnHll unless `bytes` has a full header with the magic and a known encoding, and a
 * dense value has exactly the dense length. Sparse opcodes are checked later, by whoever walks them.
 */
export function checkHeader(bytes: Uint8Array): void {
  if (bytes.length < headerBytes) throw notAnHll();
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic[i]) throw notAnHll();
  const encoding = bytes[encodingOffset]!;
  if (encoding > sparseEncoding) throw notAnHll();
  if (encoding === denseEncoding && bytes.length !== denseBytes) throw notAnHll();
}

export const isSparse = (bytes: Uint8Array): boolean => bytes[encodingOffset] === sparseEncoding;

/** Writes magic, encoding and a zero cardinality (valid: an empty HLL's count is 0) into `bytes`. */
export function writeHeader(bytes: Uint8Array, encoding: number): void {
  bytes.set(magic, 0);
  bytes[encodingOffset] = encoding;
  bytes.fill(0, encodingOffset + 1, headerBytes);
}

// The cache is read byte by byte rather than through a DataView: asking a small typed array for
// its buffer makes the engine give it a separate ArrayBuffer, which costs more than the read.

const u32At = (bytes: Uint8Array, at: number) => (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;

/** The cached cardinality, or null when the stale flag is set. */
export function cachedCardinality(bytes: Uint8Array): bigint | null {
  if ((bytes[staleFlagOffset]! & staleFlag) !== 0) return null;
  const low = u32At(bytes, cardOffset);
  const high = u32At(bytes, cardOffset + 4);
  return high === 0 ? BigInt(low) : (BigInt(high) << 32n) | BigInt(low);
}

/** Stores a cardinality (a u64; one with the top bit set reads back as stale, as in Redis). */
export function cacheCardinality(bytes: Uint8Array, card: bigint): void {
  for (let i = 0; i < 8; i++) bytes[cardOffset + i] = Number((card >> BigInt(8 * i)) & 0xffn);
}

/** Marks the cached cardinality stale, leaving its other bits as they are (Redis does the same). */
export function invalidateCache(bytes: Uint8Array): void {
  bytes[staleFlagOffset] = bytes[staleFlagOffset]! | staleFlag;
}
