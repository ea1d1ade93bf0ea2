/**
 * CRC32C (Castagnoli), the checksum on every broker record batch: computed when a batch is written
 * and verified when it is read back. `crc32c` is the native path (SSE4.2, one call per batch);
 * `crc32cReference` is the plain TypeScript definition the native path is tested against.
 */
import { nativeAddon } from "./addon.ts";

/** CRC32C of `data[start, end)`, continuing from `seed` (0 starts a new checksum). */
export function crc32c(data: Uint8Array, start = 0, end = data.length, seed = 0): number {
  return nativeAddon.crc32c(data, start, end, seed);
}

/** The reflected Castagnoli polynomial. */
const castagnoliReflected = 0x82f63b78;

const byteTable: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ castagnoliReflected : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** Byte-at-a-time CRC32C with the same contract as `crc32c`. */
export function crc32cReference(data: Uint8Array, start = 0, end = data.length, seed = 0): number {
  if (start < 0 || end > data.length || start > end) {
    throw new RangeError(`crc32c range ${start}..${end} is outside a buffer of ${data.length} bytes`);
  }
  let crc = ~seed;
  for (let i = start; i < end; i++) crc = byteTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
