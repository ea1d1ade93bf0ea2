/**
 * Slices of byte strings (latin1: chars below 256) that do not keep their source alive.
 *
 * JavaScriptCore's `slice` keeps the whole of its source reachable for as long as the slice is:
 * four 20-char slices of 64 MB strings kept 270 MB after collection (2026-12-01). A compiled
 * script that cuts a few bytes out of a large argument (string.sub, a pattern's capture, a field
 * of cjson.decode) and stores them — an item pushed to a list, a field set — would keep the whole
 * argument in memory as long as the key lives; Lua copies the bytes, and so does this, once the
 * source is large enough for the difference to matter.
 */
import type { Latin1Buffer } from "./write-bytes.ts";

/** Sources up to this long are sliced (a slice keeps at most this much more alive). */
export const sliceSourceCharsMax = 1024;
/** Copies up to this long go through one reused buffer. */
const scratchBytes = 4096;

const scratch = Buffer.allocUnsafe(scratchBytes) as Latin1Buffer;

/**
 * `source.slice(from, to)` (0 ≤ from ≤ to ≤ length), copied out of `source` when that is large
 * and the slice less than half of it (a larger slice keeps at most as much again alive).
 */
export function detachedSlice(source: string, from: number, to: number): string {
  if (source.length <= sliceSourceCharsMax || (to - from) * 2 >= source.length) return source.slice(from, to);
  return copyOfRange(source, from, to);
}

/** A string of the chars of `text` that shares nothing with it (a rope of slices included). */
export function detachedCopy(text: string): string {
  return text.length === 0 ? "" : copyOfRange(text, 0, text.length);
}

function copyOfRange(source: string, from: number, to: number): string {
  const length = to - from;
  if (length > scratchBytes) return (Buffer.from(source.slice(from, to), "latin1") as Latin1Buffer).latin1Slice(0, length);
  for (let i = 0; i < length; i++) scratch[i] = source.charCodeAt(from + i);
  return scratch.latin1Slice(0, length);
}
