/**
 * Writing a whole buffer with node:fs, synchronously: writeSync may take less than it is given
 * (a signal, a full pipe), so a caller that needs all of it written loops. This is that loop, once.
 */
import { writeSync } from "node:fs";

/**
 * Writes `bytes[0, end)` to `fd`, at byte `position` of the file if one is given (pwrite: the
 * descriptor's offset is left alone), else at the descriptor's offset. Returns `end`.
 */
export function writeAll(fd: number, bytes: Uint8Array, end = bytes.length, position: number | null = null): number {
  for (let at = 0; at < end; ) at += writeSync(fd, bytes, at, end - at, position === null ? null : position + at);
  return end;
}
