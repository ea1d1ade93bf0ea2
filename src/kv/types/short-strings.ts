/**
 * Short byte strings stored back to back in a byte array, each after its length in one byte: the
 * layout of the packed forms of small lists, hashes, sets and sorted sets (list-items.ts,
 * packed-fields.ts, member-set.ts, zset/packed-pairs.ts), whose items are at most 64 bytes, as
 * in Redis's listpacks. Strings are latin1 byte strings, one char per byte.
 */
import { compactValueBytesMax } from "./compact.ts";

/**
 * The longest item a packed form holds (a field, a value, a member, a list item): Redis's
 * *-max-listpack-value. A collection holding a longer one is not packed.
 */
export const packedItemBytesMax = compactValueBytesMax;

/** Whether `text` is short enough to be packed. */
export const packable = (text: string): boolean => text.length <= packedItemBytesMax;

/** Whether every argument from argv[from] on is short enough to be packed. */
export function allPackable(argv: readonly string[], from: number): boolean {
  for (let i = from; i < argv.length; i++) if (!packable(argv[i]!)) return false;
  return true;
}

const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;

/** Where the string after the one at `at` starts. */
export const skipShort = (bytes: Uint8Array, at: number): number => at + 1 + bytes[at]!;

/** The string at `at` (its length byte). */
export const shortAt = (bytes: Uint8Array, at: number): string => latin1Slice.call(bytes, at + 1, at + 1 + bytes[at]!);

/** Writes `text` (at most 255 chars: its length must fit a byte) with its length byte at `at`; returns the offset after it. */
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

// ---- a sequence of them: the packed forms' whole arrays ---------------------------------------
// Each change that adds or removes bytes makes a new array, exactly as long as its strings (a
// listpack reallocates too); one that keeps the length writes in place.

/** No strings. Never written to: every change makes a new array. */
export const noShorts = new Uint8Array(0);

/** Where `text` starts, or -1. */
export function findShort(bytes: Uint8Array, text: string): number {
  for (let at = 0; at < bytes.length; at = skipShort(bytes, at)) if (shortEquals(bytes, at, text)) return at;
  return -1;
}

/** Where the `index`th string (from 0) starts; bytes.length if there are only `index`. */
export function shortOffset(bytes: Uint8Array, index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) at = skipShort(bytes, at);
  return at;
}

/**
 * `bytes` with its bytes [at, end) replaced by `length` new ones at `at`, for the caller to write:
 * a new array exactly as long, or `bytes` itself when the length stays (a same-length value is
 * written in place). Every packed form's changes come down to this. At either end (a push, a pop)
 * it makes one copy, with no view of the array to make.
 */
export function spliceBytes(bytes: Uint8Array, at: number, end: number, length: number): Uint8Array {
  if (end - at === length) return bytes;
  const size = bytes.length - (end - at) + length;
  if (size === 0) return noShorts;
  if (length === 0 && at === 0) return bytes.slice(end);
  if (length === 0 && end === bytes.length) return bytes.slice(0, at);
  const out = new Uint8Array(size);
  if (at > 0) out.set(at === bytes.length ? bytes : bytes.subarray(0, at));
  if (end < bytes.length) out.set(end === 0 ? bytes : bytes.subarray(end), at + length);
  return out;
}

/** `bytes` with `text` inserted at offset `at` (a string's start, or bytes.length). */
export function insertShort(bytes: Uint8Array, at: number, text: string): Uint8Array {
  const out = spliceBytes(bytes, at, at, 1 + text.length);
  writeShort(out, at, text);
  return out;
}

/**
 * `bytes` with `texts` added in one new array: after its strings (`atFront` false) or before
 * them, in the order given.
 */
export function withShorts(bytes: Uint8Array, texts: readonly string[], atFront = false): Uint8Array {
  let added = 0;
  for (const text of texts) added += 1 + text.length;
  let at = atFront ? 0 : bytes.length;
  const out = spliceBytes(bytes, at, at, added);
  for (const text of texts) at = writeShort(out, at, text);
  return out;
}

/** `bytes` without the string at `at`. */
export const removeShort = (bytes: Uint8Array, at: number): Uint8Array => spliceBytes(bytes, at, skipShort(bytes, at), 0);

/** `bytes` with the string at `at` replaced by `text`: the same array if the length is the same. */
export function replaceShort(bytes: Uint8Array, at: number, text: string): Uint8Array {
  const out = spliceBytes(bytes, at, skipShort(bytes, at), 1 + text.length);
  writeShort(out, at, text);
  return out;
}

/** Every string, in order. */
export function allShorts(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at = skipShort(bytes, at)) out.push(shortAt(bytes, at));
  return out;
}
