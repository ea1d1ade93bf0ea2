/**
 * A small hash packed into one byte array, as Redis packs a small hash into a listpack: entry
 * after entry in insertion order, each the field's length in one byte, the field's bytes, the
 * value's length in one byte, the value's bytes (short-strings.ts). A hash holding a field or
 * value longer than packedItemBytesMax, or more than smallFieldsMax entries, is not packed
 * (field-map.ts).
 *
 * Why bytes: over 100k hashes of ten short fields (measured 2026-11-26), a Map costs ~1,570 bytes
 * of heap a hash (each field and value a string of its own, ~40–50 bytes, and the map's table),
 * the packed array ~270. Finding a field scans the entries, as a listpack lookup does: ~140 ns for
 * the 8th of ten with its value's string made, against Map.get's ~65.
 *
 * As every packed form's, an array is exactly as long as its entries.
 */
import { replaceShort, shortAt, shortEquals, skipShort, spliceBytes } from "../short-strings.ts";

/** Where the entry after the one at `at` starts (bytes.length after the last). */
export const nextEntry = (bytes: Uint8Array, at: number): number => skipShort(bytes, skipShort(bytes, at));

/** Where `field`'s entry starts, or -1. */
export function findField(bytes: Uint8Array, field: string): number {
  for (let at = 0; at < bytes.length; at = nextEntry(bytes, at)) if (shortEquals(bytes, at, field)) return at;
  return -1;
}

/** The field of the entry at `at`. */
export const fieldAt = shortAt;

/** The value of the entry at `at`. */
export const valueAt = (bytes: Uint8Array, at: number): string => shortAt(bytes, skipShort(bytes, at));

/** Where the `index`th entry (from 0) starts; there must be that many. */
export function entryAt(bytes: Uint8Array, index: number): number {
  let at = 0;
  for (let i = 0; i < index; i++) at = nextEntry(bytes, at);
  return at;
}

/** `bytes` with the value of the entry at `at` replaced by `value`: the same array if the length is the same. */
export const withValue = (bytes: Uint8Array, at: number, value: string): Uint8Array => replaceShort(bytes, skipShort(bytes, at), value);

/** `bytes` without the entry at `at`. */
export const withoutEntry = (bytes: Uint8Array, at: number): Uint8Array => spliceBytes(bytes, at, nextEntry(bytes, at), 0);

/** Every entry as [field, value], in order. */
export function packedEntries(bytes: Uint8Array): [string, string][] {
  const out: [string, string][] = [];
  for (let at = 0; at < bytes.length; at = nextEntry(bytes, at)) out.push([fieldAt(bytes, at), valueAt(bytes, at)]);
  return out;
}
