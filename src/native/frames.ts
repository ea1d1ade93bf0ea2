/**
 * Checksums of broker record frames for a whole run of frames per call (native/log/src/frames.rs):
 * `sealFrames` writes every frame's CRC32C in a produce batch, `checkedFramesPrefix` finds how many
 * bytes at the start of a read buffer are whole frames whose CRCs match. One native call per batch
 * or read replaces one per record (each crossing costs ~120 ns in Bun, more than checksumming a
 * small record). The references below are the same contracts in TypeScript, for the tests.
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
