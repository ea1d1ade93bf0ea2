/**
 * DUMP's payload around a value in RDB format, as Redis frames it: the value, the RDB version it
 * was written in (2 bytes, little-endian), and a CRC-64 of all that (8 bytes, little-endian).
 * RESTORE checks both before it reads the value.
 */
import { crc64 } from "./crc64.ts";

/**
 * The version our payloads say: RDB 9 (Redis 5.0) has every encoding DUMP writes, so Redis 5.0
 * and later RESTORE them (Redis refuses a payload newer than its own RDB version).
 */
export const dumpRdbVersion = 9;
/**
 * The newest payload RESTORE takes: Redis 7.2's RDB 11. Its encodings that we do not know (a
 * module's, a stream's) are then refused as bad data.
 */
export const restoreRdbVersionMax = 11;
/** The version's two bytes and the CRC's eight. */
const footerBytes = 10;

/** `value` framed: the version it was written in (`version`, by default dumpRdbVersion), then the CRC. */
export function framePayload(value: Uint8Array, version = dumpRdbVersion): Uint8Array {
  const out = new Uint8Array(value.length + footerBytes);
  out.set(value);
  const view = new DataView(out.buffer);
  view.setUint16(value.length, version, true);
  view.setBigUint64(value.length + 2, crc64(out.subarray(0, value.length + 2)), true);
  return out;
}

/** The value inside `payload`, or null when its version is too new or its checksum wrong. */
export function unframePayload(payload: Uint8Array): Uint8Array | null {
  if (payload.length < footerBytes) return null;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const valueEnd = payload.length - footerBytes;
  if (view.getUint16(valueEnd, true) > restoreRdbVersionMax) return null;
  if (view.getBigUint64(valueEnd + 2, true) !== crc64(payload.subarray(0, valueEnd + 2))) return null;
  return payload.subarray(0, valueEnd);
}
