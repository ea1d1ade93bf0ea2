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

/**
 * A fresh string of the chars of `source` from `from` to `to`, sharing nothing with it — or, should
 * a char be past one byte (not a byte string), the slice itself rather than a truncated copy.
 */
export function copyOfRange(source: string, from: number, to: number): string {
  const length = to - from;
  const into = length <= scratchBytes ? scratch : (Buffer.allocUnsafe(length) as Latin1Buffer);
  for (let i = 0; i < length; i++) {
    const c = source.charCodeAt(from + i);
    if (c > 0xff) return source.slice(from, to);
    into[i] = c;
  }
  return into.latin1Slice(0, length);
}
