/**
 * Short byte strings stored back to back in a byte array, each after its length in one byte: the
 * layout of the packed forms of small hashes, sets and sorted sets (packed-fields.ts,
 * packed-members.ts, zset/packed-pairs.ts), whose items are at most 64 bytes, as in Redis's
 * listpacks. Strings are latin1 byte strings, one char per byte.
 */

/** The longest string stored so: a length must fit its byte. */
export const shortBytesMax = 255;

const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;

/** Where the string after the one at `at` starts. */
export const skipShort = (bytes: Uint8Array, at: number): number => at + 1 + bytes[at]!;

/** The string at `at` (its length byte). */
export const shortAt = (bytes: Uint8Array, at: number): string => latin1Slice.call(bytes, at + 1, at + 1 + bytes[at]!);

/** Writes `text` (at most shortBytesMax chars) with its length byte at `at`; returns the offset after it. */
export function writeShort(bytes: Uint8Array, at: number, text: string): number {
  bytes[at++] = text.length;
  for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
  return at;
}

/** Whether the string at `at` is `text`. */
export function shortEquals(bytes: Uint8Array, at: number, text: string): boolean {
  const length = text.length;
  if (bytes[at] !== length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + 1 + i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * The order of the string at `at` against `text`: negative, zero or positive, comparing bytes as
 * JavaScript compares latin1 strings (and as Redis compares with memcmp).
 */
export function compareShort(bytes: Uint8Array, at: number, text: string): number {
  const length = bytes[at]!;
  const common = Math.min(length, text.length);
  for (let i = 0; i < common; i++) {
    const d = bytes[at + 1 + i]! - text.charCodeAt(i);
    if (d !== 0) return d;
  }
  return length - text.length;
}
