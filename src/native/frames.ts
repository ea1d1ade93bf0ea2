/**
 * Broker record frames, a whole run of frames per call (native/log/src/frames.rs):
 * `sealFrames` writes every frame's CRC32C in a batch, `checkedFramesPrefix` finds how many bytes
 * at the start of a read buffer are whole frames whose CRCs match, and `frameProduceRecords` lays
 * out the records of a binary (SV01) produce as frames. (A flush stamps its frames' offsets,
 * timestamps and CRCs on its write thread: append.ts; `stampFramesReference` below is that step.)
 * One native call per batch or read replaces one per record (each crossing costs ~120 ns in Bun,
 * more than the work on a small record). The references below are the same contracts in
 * TypeScript, for the tests.
 *
 * A frame starts with `bodyBytes: u32` (the bytes after that field) and `crc: u32`, the CRC32C of
 * the frame from byte 8 to its end (src/broker/log/record.ts has the whole layout).
 */
import { nativeAddon } from "./addon.ts";
import { crc32cReference } from "./crc32c.ts";

const lengthFieldBytes = 4;
const crcCoversFrom = 8;
/** The shortest body: an empty key and an empty value. */
const bodyBytesMin = 28;

/** Seals every frame of `frames` (back to back from its start); returns how many. Throws if the lengths do not tile it. */
export function sealFrames(frames: Uint8Array, bodyBytesMax: number): number {
  return nativeAddon.sealFrames(frames, bodyBytesMax);
}

/**
 * Lays out the `count` records of an SV01 produce payload, from byte `at` to its end, as frames
 * in `out` (exactly `payload.length - at + 12 * count` bytes; offsets, timestamps and CRCs zero),
 * and each record's partition (-1: none named) and sequence (-1: none). False at anything
 * malformed — the caller reads the payload with its reference decoder to say what.
 */
export function frameProduceRecords(
  payload: Uint8Array,
  at: number,
  count: number,
  out: Uint8Array,
  partitions: Float64Array,
  sequences: Float64Array,
): boolean {
  return nativeAddon.frameProduceRecords(payload, at, count, out, partitions, sequences);
}

/** Bytes of whole, checksum-valid frames at the start of `data[start, end)`. */
export function checkedFramesPrefix(data: Uint8Array, start: number, end: number, bodyBytesMax: number): number {
  return nativeAddon.checkedFramesPrefix(data, start, end, bodyBytesMax);
}

/** The end of the frame at `pos` in `data[.., end)`, or -1 if its length is bad or it runs past `end`. */
function frameEnd(view: DataView, pos: number, end: number, bodyBytesMax: number): number {
  if (end - pos < lengthFieldBytes) return -1;
  const body = view.getUint32(pos, true);
  if (body < bodyBytesMin || body > bodyBytesMax) return -1;
  const frameEndAt = pos + lengthFieldBytes + body;
  return frameEndAt <= end ? frameEndAt : -1;
}

const viewOf = (data: Uint8Array) => new DataView(data.buffer, data.byteOffset, data.byteLength);

export function sealFramesReference(frames: Uint8Array, bodyBytesMax: number): number {
  const view = viewOf(frames);
  let count = 0;
  for (let pos = 0; pos < frames.length; count++) {
    const end = frameEnd(view, pos, frames.length, bodyBytesMax);
    if (end === -1) throw new RangeError("frame lengths do not tile the buffer");
    view.setUint32(pos + lengthFieldBytes, crc32cReference(frames, pos + crcCoversFrom, end), true);
    pos = end;
  }
  return count;
}

export function checkedFramesPrefixReference(data: Uint8Array, start: number, end: number, bodyBytesMax: number): number {
  const view = viewOf(data);
  let pos = start;
  for (;;) {
    const frameEndAt = frameEnd(view, pos, end, bodyBytesMax);
    if (frameEndAt === -1 || crc32cReference(data, pos + crcCoversFrom, frameEndAt) !== view.getUint32(pos + lengthFieldBytes, true)) {
      return pos - start;
    }
    pos = frameEndAt;
  }
}

const twoPow32 = 0x1_0000_0000;

/** Writes every frame's offset (from `baseOffset`), `timestampMs` and CRC; returns how many. Throws if the lengths do not tile `frames`. */
export function stampFramesReference(frames: Uint8Array, baseOffset: number, timestampMs: number, bodyBytesMax: number): number {
  if (!(Number.isSafeInteger(baseOffset) && baseOffset >= 0 && Number.isSafeInteger(timestampMs))) {
    throw new RangeError(`offset ${baseOffset} or timestamp ${timestampMs} is not a safe integer`);
  }
  const view = viewOf(frames);
  // Offsets and timestamps first, then every CRC as sealing writes them.
  for (let pos = 0, count = 0; pos < frames.length; count++) {
    const end = frameEnd(view, pos, frames.length, bodyBytesMax);
    if (end === -1) throw new RangeError("frame lengths do not tile the buffer");
    const offset = baseOffset + count;
    view.setUint32(pos + 8, offset % twoPow32, true);
    view.setUint32(pos + 12, Math.floor(offset / twoPow32), true);
    const high = Math.floor(timestampMs / twoPow32);
    view.setUint32(pos + 16, timestampMs - high * twoPow32, true);
    view.setInt32(pos + 20, high, true);
    pos = end;
  }
  return sealFramesReference(frames, bodyBytesMax);
}

/** An SV01 record's fields besides its key and value; a frame's. */
const sv01RecordFixedBytes = 20;
const frameOverheadBytes = 32;
const sequenceMax = BigInt(Number.MAX_SAFE_INTEGER);
const noSequence = -(2n ** 63n);

export function frameProduceRecordsReference(
  payload: Uint8Array,
  at: number,
  count: number,
  out: Uint8Array,
  partitions: Float64Array,
  sequences: Float64Array,
): boolean {
  if (at > payload.length) return false;
  const src = payload.subarray(at);
  if (partitions.length !== count || sequences.length !== count || out.length !== src.length + (frameOverheadBytes - sv01RecordFixedBytes) * count)
    return false;
  const sv = viewOf(src);
  const ov = viewOf(out);
  let pos = 0;
  let read = 0;
  for (let i = 0; i < count; i++) {
    if (src.length - read < 4) return false;
    const keyLength = sv.getInt32(read);
    read += 4;
    if (keyLength < -1) return false;
    const keyBytes = Math.max(keyLength, 0);
    if (src.length - read < keyBytes + 4) return false;
    const key = src.subarray(read, read + keyBytes);
    read += keyBytes;
    const valueBytes = sv.getUint32(read);
    read += 4;
    if (src.length - read < valueBytes + 12) return false;
    const value = src.subarray(read, read + valueBytes);
    read += valueBytes;
    const partition = sv.getInt32(read);
    const sequence = sv.getBigInt64(read + 4);
    read += 12;
    if (partition < -1 || (sequence !== noSequence && (sequence < 0n || sequence > sequenceMax))) return false;
    partitions[i] = partition;
    sequences[i] = sequence === noSequence ? -1 : Number(sequence);
    out.fill(0, pos + 4, pos + 24);
    ov.setUint32(pos, frameOverheadBytes - lengthFieldBytes + keyBytes + valueBytes, true);
    ov.setInt32(pos + 24, keyLength, true);
    out.set(key, pos + 28);
    ov.setUint32(pos + 28 + keyBytes, valueBytes, true);
    out.set(value, pos + 32 + keyBytes);
    pos += frameOverheadBytes + keyBytes + valueBytes;
  }
  return read === src.length;
}
