/**
 * The native RESP request scanner (crate native/resp): one call per read buffer finds every whole
 * multibulk command in it and reports each argument as a pair of offsets into the buffer, so the
 * caller makes strings straight from its buffer and crosses into native code once per read.
 *
 * Its TypeScript reference is RespParser (src/kv/resp/parser.ts). NativeRespParser
 * (src/kv/resp/native-parser.ts) puts this function behind RespParser's interface, and
 * test/native/resp-scan.test.ts holds the two to identical output on arbitrary input.
 *
 * Numbers cross in two arrays bound to the addon once, rather than as arguments or a returned
 * object (each costs time on every call): `state` carries the limits and the progress in and the
 * progress out, `out` receives the records. The slot numbers and status codes are mirrored in
 * native/node/src/resp.rs.
 */
import { nativeAddon } from "./addon.ts";

// Slots of `state`. The first four are read only; pos, argsLeft and bulkLength are read and
// written back; words is written.
/** Bytes that may wait, from a header's `*` or `$` on, for the header's CR. */
export const slotLineBytesMax = 0;
export const slotArgsMax = 1;
export const slotBulkBytesMax = 2;
/** Where the unread input ends in the buffer (the scan never looks past it). */
export const slotEnd = 3;
/** The first byte not yet consumed. */
export const slotPos = 4;
/** Arguments the command in progress still expects; 0 between commands. */
export const slotArgsLeft = 5;
/** Declared length of the argument whose bytes are awaited, or -1 while its `$` line is to come. */
export const slotBulkLength = 6;
/** How many words of `out` the scan wrote. */
export const slotWords = 7;
export const stateSlots = 8;

/** The fewest words `out` may have: a record's count and one argument's two offsets. */
export const outWordsMin = 3;

// What respScan returns.
export const statusNeedMore = 0;
/** `out` is full: take its records and call again. */
export const statusOutFull = 1;
/** An inline command starts at pos; it is the caller's to parse. */
export const statusInline = 2;
/** This and every higher status is a protocol error at pos. */
export const statusTooBigMbulkCount = 3;
export const statusInvalidMultibulkLength = 4;
/** The message names the byte at pos. */
export const statusExpectedDollar = 5;
export const statusTooBigBulkCount = 6;
export const statusInvalidBulkLength = 7;

/** Words of `out`; see respScanArrays. */
const outWords = 32 * 1024;

/**
 * The arrays respScan works in, bound to the addon once: passing them on every call would cost
 * about 60 ns each in Bun, as much as scanning a small read. One pair serves every caller in this
 * module instance, since a caller fills and empties them without yielding. `out` holds 32 Ki
 * words: a 64 KiB read of the smallest arguments (`$0\r\n\r\n`, 6 bytes for 2 words) needs about
 * 22 Ki, so one call covers nearly every read.
 */
export const respScanArrays = {
  // Each on its own ArrayBuffer, whose memory stays put while the addon holds it.
  state: new Float64Array(new ArrayBuffer(stateSlots * Float64Array.BYTES_PER_ELEMENT)),
  out: new Uint32Array(new ArrayBuffer(outWords * Uint32Array.BYTES_PER_ELEMENT)),
};
const binding = nativeAddon.respScanBind(respScanArrays.state, respScanArrays.out);

/**
 * Scans `buf` from `state[slotPos]` to `state[slotEnd]` and writes one record per command into
 * `out` (respScanArrays): the argument count, then the start and end offset in `buf` of each
 * argument. A record continues the command in progress when `state[slotArgsLeft]` was non-zero,
 * and is the unfinished command's arguments so far when it is non-zero afterwards. `*0` and
 * negative counts consume their line and write nothing. Returns a status; bad state slots throw.
 */
export function respScan(buf: Uint8Array): number {
  return nativeAddon.respScan(buf, binding);
}
