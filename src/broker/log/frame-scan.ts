/**
 * Walking the record frames of a log file between two byte positions, reading it in chunks. Reads
 * (consume), recovery and index rebuilds all go through this one loop, so "where does a frame end
 * and is it intact" is decided in one place (record.ts's readFrame).
 */
import { readSync } from "node:fs";
import { checkedFramesEnd, type LogRecord, readFrame } from "./record.ts";

/** What a visitor says about each record: keep going, stop before the next, or call it corrupt. */
export type Visit = "continue" | "stop" | "reject";

export interface ScanEnd {
  /** Byte position after the last frame that was visited and accepted. */
  position: number;
  /** "end": reached `end`; "stop": the visitor stopped; "torn"/"corrupt": a bad frame at `position`. */
  stop: "end" | "stop" | "torn" | "corrupt";
  reason?: string;
}

/**
 * Calls `visit` for every frame from `start` up to `end`. Each chunk is a fresh buffer, so the
 * key and value views handed to `visit` stay valid after the scan.
 */
export function scanFrames(
  fd: number,
  start: number,
  end: number,
  chunkBytes: number,
  visit: (record: LogRecord, position: number, frameBytes: number) => Visit,
): ScanEnd {
  let bufferStart = start;
  let requested = Math.min(chunkBytes, end - bufferStart);
  let buffer = readChunk(fd, bufferStart, requested);
  let view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let checkedEnd = checkedFramesEnd(buffer, 0);
  let pos = 0;
  while (bufferStart + pos < end) {
    const frame = readFrame(buffer, view, pos, checkedEnd);
    if (frame.kind === "corrupt") return { position: bufferStart + pos, stop: "corrupt", reason: frame.reason };
    if (frame.kind === "torn") {
      const at = bufferStart + pos;
      // A chunk shorter than asked means the file ends before `end`: nothing more to read.
      if (at + frame.needBytes > end || buffer.length < requested) {
        return { position: at, stop: "torn", reason: `frame at ${at} needs ${frame.needBytes} bytes, the log ends at ${end}` };
      }
      // The frame runs past this chunk: read again from its start, at least the whole frame.
      bufferStart = at;
      requested = Math.min(Math.max(chunkBytes, frame.needBytes), end - bufferStart);
      buffer = readChunk(fd, bufferStart, requested);
      view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      checkedEnd = checkedFramesEnd(buffer, 0);
      pos = 0;
      continue;
    }
    const verdict = visit(frame.record, bufferStart + pos, frame.frameBytes);
    if (verdict === "reject") return { position: bufferStart + pos, stop: "corrupt", reason: "frame out of order" };
    pos += frame.frameBytes;
    if (verdict === "stop") return { position: bufferStart + pos, stop: "stop" };
  }
  return { position: bufferStart + pos, stop: "end" };
}

/** Reads up to `length` bytes at `position`; fewer only when the file is shorter than expected. */
function readChunk(fd: number, position: number, length: number): Uint8Array {
  const buffer = new Uint8Array(Math.max(length, 0));
  let filled = 0;
  while (filled < buffer.length) {
    const n = readSync(fd, buffer, filled, buffer.length - filled, position + filled);
    if (n === 0) break;
    filled += n;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}
