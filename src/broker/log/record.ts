/**
 * One record's frame in a segment file, and the codec for a run of frames.
 *
 * Layout, little-endian, one frame after another with no padding:
 *
 *   at  size  field
 *    0   u32  bodyBytes    bytes that follow this field: 28 + keyBytes + valueBytes
 *    4   u32  crc          CRC32C (Castagnoli) of bytes [8, 4 + bodyBytes): everything after itself
 *    8   u64  offset       the record's offset in its partition (at most 2^53 - 1)
 *   16   i64  timestampMs  milliseconds since the Unix epoch, set by the broker on append
 *   24   i32  keyBytes     -1 for a record without a key
 *   28         key
 *    .   u32  valueBytes
 *    .         value
 *
 * The length comes first so a reader knows how much to read before it can check anything; the CRC
 * covers the offset so a record copied to the wrong place (or an index pointing at stale bytes) is
 * caught like a flipped bit. The value length is redundant with bodyBytes on purpose: a frame whose
 * lengths disagree is corrupt even in the 1-in-2^32 case where a damaged body matches its CRC.
 *
 * Decoding never throws on bad bytes: it stops at the first frame that is incomplete ("torn", the
 * tail of an interrupted write or a buffer that ends mid-frame) or damaged ("corrupt") and says
 * where, so recovery can truncate there and a reader can fetch more bytes.
 */
import { brokerRecordBytesMax } from "../../core/limits.ts";
import { AssertionError } from "../../core/assert.ts";
import { crc32c } from "../../native/crc32c.ts";
import { checkedFramesPrefix, sealFrames } from "../../native/frames.ts";

export interface LogRecord {
  offset: number;
  timestampMs: number;
  /** null is "no key", distinct from an empty key. */
  key: Uint8Array | null;
  value: Uint8Array;
}

/** Bytes of the keys and values of `records`: what quotas count (spec: Quotas). */
export function keyValueBytes(records: readonly { key: Uint8Array | null; value: Uint8Array }[]): number {
  let bytes = 0;
  for (const r of records) bytes += (r.key?.length ?? 0) + r.value.length;
  return bytes;
}

/** Bytes of a frame around its key and value. */
export const frameOverheadBytes = 32;
/** The length field itself, not counted in bodyBytes. */
export const frameLengthFieldBytes = 4;
/** bodyBytes of a record with an empty key and an empty value. */
const bodyBytesMin = frameOverheadBytes - frameLengthFieldBytes;
/**
 * The largest bodyBytes a reader accepts. A record's key plus value is at most the spec's 8 MiB; a
 * larger length field can only be damage, and refusing it keeps a flipped high bit from making a
 * reader allocate or wait for gigabytes.
 */
export const frameBodyBytesMax = bodyBytesMin + brokerRecordBytesMax;
const twoPow32 = 0x1_0000_0000;
/** The high 32 bits of a u64 offset must stay below this for the offset to be a safe integer. */
const safeHighWordLimit = 0x20_0000;

/** Bytes of the frame that holds a record with this key and value. */
export function frameBytes(key: Uint8Array | null, value: Uint8Array): number {
  return frameOverheadBytes + (key === null ? 0 : key.length) + value.length;
}

/** Encodes `records` as consecutive frames in one new buffer, checksummed. */
export function encodeRecords(records: readonly LogRecord[]): Uint8Array {
  let total = 0;
  for (const r of records) total += frameBytes(r.key, r.value);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let pos = 0;
  for (const r of records) pos = encodeFrame(out, view, pos, r.key, r.value, r.offset, r.timestampMs);
  // Every checksum in one native call, not one per record.
  sealFrames(out, frameBodyBytesMax);
  return out;
}

/**
 * One produce's records for one partition as frames back to back, laid out when the produce
 * arrived — by the binary front natively, from its payload in one call, or by unstampedFrames —
 * with each frame's offset, timestamp and CRC left for the flush that writes them (appendChunks
 * stamps them on its write thread): a record is copied once, into its frame, and never held as
 * an object.
 */
export interface FrameRun {
  frames: Uint8Array;
  count: number;
}

/** `records` as a FrameRun: what a front that decoded record objects (JSON) hands to the log. */
export function unstampedFrames(records: readonly { key: Uint8Array | null; value: Uint8Array }[]): FrameRun {
  let total = 0;
  for (let i = 0; i < records.length; i++) total += frameBytes(records[i]!.key, records[i]!.value);
  const frames = new Uint8Array(total);
  const view = new DataView(frames.buffer);
  let pos = 0;
  for (let i = 0; i < records.length; i++) pos = encodeFrame(frames, view, pos, records[i]!.key, records[i]!.value, 0, 0);
  return { frames, count: records.length };
}

/** Key plus value bytes of the frame at `pos` (its body less the fixed fields). */
export function frameKeyValueBytes(view: DataView, pos: number): number {
  return view.getUint32(pos, true) - bodyBytesMin;
}

/** The key of the frame at `pos`, a view into `frames`; null for none. */
export function frameKey(frames: Uint8Array, view: DataView, pos: number): Uint8Array | null {
  const keyLength = view.getInt32(pos + 24, true);
  return keyLength === -1 ? null : frames.subarray(pos + 28, pos + 28 + keyLength);
}

/** Where each of the run's frames starts, reading their length fields. */
export function frameStarts(run: FrameRun): Uint32Array {
  const view = new DataView(run.frames.buffer, run.frames.byteOffset, run.frames.byteLength);
  const starts = new Uint32Array(run.count);
  let pos = 0;
  for (let i = 0; i < run.count; i++) {
    starts[i] = pos;
    pos += frameLengthFieldBytes + view.getUint32(pos, true);
  }
  return starts;
}

/** The frames at `positions` (indexes into `starts`), in that order, as a run of their own. */
export function selectFrames(run: FrameRun, starts: Uint32Array, positions: readonly number[]): FrameRun {
  const view = new DataView(run.frames.buffer, run.frames.byteOffset, run.frames.byteLength);
  let total = 0;
  for (const p of positions) total += frameLengthFieldBytes + view.getUint32(starts[p]!, true);
  const frames = new Uint8Array(total);
  let at = 0;
  for (const p of positions) {
    const start = starts[p]!;
    const end = start + frameLengthFieldBytes + view.getUint32(start, true);
    frames.set(run.frames.subarray(start, end), at);
    at += end - start;
  }
  return { frames, count: positions.length };
}

function encodeFrame(out: Uint8Array, view: DataView, start: number, key: Uint8Array | null, value: Uint8Array, offset: number, timestampMs: number): number {
  const keyLength = key === null ? 0 : key.length;
  // Checked without building messages: this runs for every record written.
  if (keyLength + value.length > brokerRecordBytesMax || !(Number.isSafeInteger(offset) && offset >= 0) || !Number.isSafeInteger(timestampMs)) {
    throw new AssertionError(`record at offset ${offset} (timestamp ${timestampMs}, ${keyLength + value.length} bytes) cannot be framed`);
  }
  const end = start + frameOverheadBytes + keyLength + value.length;
  view.setUint32(start, end - start - frameLengthFieldBytes, true);
  writeU53(view, start + 8, offset);
  writeI53(view, start + 16, timestampMs);
  view.setInt32(start + 24, key === null ? -1 : keyLength, true);
  if (key !== null) out.set(key, start + 28);
  view.setUint32(start + 28 + keyLength, value.length, true);
  out.set(value, start + 32 + keyLength);
  return end;
}

function writeU53(view: DataView, at: number, n: number): void {
  view.setUint32(at, n % twoPow32, true);
  view.setUint32(at + 4, Math.floor(n / twoPow32), true);
}

function writeI53(view: DataView, at: number, n: number): void {
  const high = Math.floor(n / twoPow32);
  view.setUint32(at, n - high * twoPow32, true);
  view.setInt32(at + 4, high, true);
}

/** The outcome of reading one frame at a position. */
export type FrameRead =
  | { kind: "record"; record: LogRecord; frameBytes: number }
  /** The bytes end before the frame does: an interrupted write, or a buffer that needs more. */
  | { kind: "torn"; needBytes: number }
  | { kind: "corrupt"; reason: string };

/**
 * Where the whole, checksum-valid frames from `pos` end: one native call for a whole buffer, so
 * readFrame skips the per-frame CRC for every frame before that point.
 */
export function checkedFramesEnd(bytes: Uint8Array, pos: number): number {
  return pos + checkedFramesPrefix(bytes, pos, bytes.length, frameBodyBytesMax);
}

/**
 * Reads the frame at `pos` of `bytes`. A frame ending at or before `checkedEnd` (checkedFramesEnd)
 * is known intact; any other has its CRC checked here. The record's key and value are views into
 * `bytes`, not copies: a caller that keeps them past the buffer's reuse must copy them.
 */
export function readFrame(bytes: Uint8Array, view: DataView, pos: number, checkedEnd = 0): FrameRead {
  const available = bytes.length - pos;
  if (available < frameLengthFieldBytes) return { kind: "torn", needBytes: frameLengthFieldBytes };
  const bodyBytes = view.getUint32(pos, true);
  if (bodyBytes < bodyBytesMin || bodyBytes > frameBodyBytesMax) {
    return { kind: "corrupt", reason: `frame length ${bodyBytes} is outside ${bodyBytesMin}..${frameBodyBytesMax}` };
  }
  const total = frameLengthFieldBytes + bodyBytes;
  if (available < total) return { kind: "torn", needBytes: total };
  const end = pos + total;
  if (end > checkedEnd && crc32c(bytes, pos + 8, end) !== view.getUint32(pos + 4, true)) return { kind: "corrupt", reason: "CRC mismatch" };
  return parseCheckedBody(bytes, view, pos, end);
}

/** Fields of a frame whose CRC matched; the lengths are still checked against each other. */
function parseCheckedBody(bytes: Uint8Array, view: DataView, pos: number, end: number): FrameRead {
  const offsetHigh = view.getUint32(pos + 12, true);
  const timeHigh = view.getInt32(pos + 20, true);
  if (offsetHigh >= safeHighWordLimit || timeHigh >= safeHighWordLimit || timeHigh < -safeHighWordLimit) {
    return { kind: "corrupt", reason: "offset or timestamp beyond 2^53" };
  }
  const keyLength = view.getInt32(pos + 24, true);
  const keyEnd = pos + 28 + Math.max(keyLength, 0);
  if (keyLength < -1 || keyEnd + 4 > end) return { kind: "corrupt", reason: `key length ${keyLength} does not fit the frame` };
  const valueLength = view.getUint32(keyEnd, true);
  if (keyEnd + 4 + valueLength !== end) return { kind: "corrupt", reason: `value length ${valueLength} does not fit the frame` };
  const record: LogRecord = {
    offset: offsetHigh * twoPow32 + view.getUint32(pos + 8, true),
    timestampMs: timeHigh * twoPow32 + view.getUint32(pos + 16, true),
    key: keyLength === -1 ? null : bytes.subarray(pos + 28, keyEnd),
    value: bytes.subarray(keyEnd + 4, end),
  };
  return { kind: "record", record, frameBytes: end - pos };
}

export interface DecodeResult {
  records: LogRecord[];
  /** Bytes of whole, valid frames from the start: where a truncation or the next read begins. */
  validBytes: number;
  /** "end" when every byte was a valid frame; otherwise what stopped decoding at validBytes. */
  stop: "end" | "torn" | "corrupt";
  reason?: string;
}

/** Decodes consecutive frames until the buffer ends or a frame is torn or corrupt. */
export function decodeRecords(bytes: Uint8Array): DecodeResult {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: LogRecord[] = [];
  const checkedEnd = checkedFramesEnd(bytes, 0);
  let pos = 0;
  while (pos < bytes.length) {
    const frame = readFrame(bytes, view, pos, checkedEnd);
    if (frame.kind === "torn") return { records, validBytes: pos, stop: "torn" };
    if (frame.kind === "corrupt") return { records, validBytes: pos, stop: "corrupt", reason: frame.reason };
    records.push(frame.record);
    pos += frame.frameBytes;
  }
  return { records, validBytes: pos, stop: "end" };
}
