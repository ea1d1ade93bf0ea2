/**
 * What JavaScript values cost in memory under Bun's JavaScriptCore, for MEMORY USAGE
 * (memory-usage.ts) and the types' own `memoryBytes`. JavaScript cannot ask how big an object is,
 * so these are measured: the growth of `heapSize()` (bun:jsc) after a full collection, over 100k
 * objects of each kind (2026-11-27, Bun 1.4.5). They are estimates, as Redis's MEMORY USAGE is: it
 * adds up its allocator's sizes, and samples the elements of a collection.
 */

/** Rounds `bytes` up to a multiple of `unit` (a power of two): the heap's size classes, roughly. */
const roundUp = (bytes: number, unit: number) => (bytes + unit - 1) & ~(unit - 1);

/** A reference in an object's field or an array's slot. */
export const pointerBytes = 8;

/** An object with `fields` properties (a class instance): 32 bytes with 2, 64 with 6. */
export const objectBytes = (fields: number) => roundUp(16 + pointerBytes * fields, 16);

/** A flat one-byte string of `length` chars: 32 bytes at 16 chars, 216 at 200, 1,016 at 1,000. */
export const stringBytes = (length: number) => 16 + roundUp(length, 8);

/** A typed array over `length` bytes of its own: 64 bytes up to 16, 272 at 200. */
export const typedArrayBytes = (length: number) => 48 + roundUp(Math.max(length, 16), 16);

/** An array of `length` slots: 8,224 bytes at 1,024 (capacity left over from growth is not counted). */
export const arrayBytes = (length: number) => 32 + pointerBytes * length;

/** A Set: 256 bytes with one element, then ~85 an element at 100 (its buckets included). */
export const setBytes = (size: number) => 176 + 80 * size;

/** What each entry adds to a Map: ~100 bytes at 100 entries (256 with one). */
export const mapEntryBytes = 100;

/** A Map of `size` entries. */
export const mapBytes = (size: number) => 160 + mapEntryBytes * size;

/**
 * The average of `bytesOf` over the first `samples` of `items` (all of them when `samples` is 0),
 * times `count`: how Redis's MEMORY USAGE sizes a collection's elements without reading them all.
 */
export function sampledBytes<T>(items: Iterable<T>, count: number, samples: number, bytesOf: (item: T) => number): number {
  if (count === 0) return 0;
  let seen = 0;
  let total = 0;
  for (const item of items) {
    total += bytesOf(item);
    if (++seen === samples) break;
  }
  return seen === 0 ? 0 : Math.round((total / seen) * count);
}
