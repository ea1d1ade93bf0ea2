/**
 * Cursors for HSCAN, SSCAN and ZSCAN. Two kinds, told apart by their range:
 *
 * - A large set or hash lives in a KeyTable, walked like SCAN walks the keyspace: the cursor is
 *   the table's reverse-binary slot cursor, below 2^32 (KeyTable.scanStep, walkTable below).
 * - Everything else is a JavaScript Set or Map, whose iterators stay valid across inserts and
 *   deletes: the cursor names an iterator parked here, from 2^32 on. An element present from the
 *   first call to the last is always returned, as Redis guarantees. The number of parked
 *   iterators is bounded; a cursor that was evicted (or never issued) starts over, which can
 *   repeat elements — also allowed by SCAN's contract.
 *
 * A walk begun while a collection was small goes on with its parked iterator after the
 * collection moved into a table: the iterator still walks the members it had.
 */

/** Parked iterators kept at once, across all clients and collections. */
export const parkedCursorsMax = 4096;
/** Parked cursors start here, above every table cursor. */
const parkedCursorFirst = 2 ** 32;
/** How many home slots a table walk may visit per element asked for, when they are mostly empty (Redis: 10). */
const scanSlotsPerItem = 10;

const parked = new Map<number, Iterator<unknown>>();
let nextCursor = parkedCursorFirst;

/** The parked iterator a cursor names, taken out of the parking; undefined if there is none. */
export function takeParked<T>(cursor: number): Iterator<T> | undefined {
  const it = parked.get(cursor) as Iterator<T> | undefined;
  if (it !== undefined) parked.delete(cursor);
  return it;
}

/** The iterator a cursor names, or a fresh one for cursor 0 or an unknown cursor. */
export function resume<T>(cursor: number, fresh: () => Iterator<T>): Iterator<T> {
  return takeParked<T>(cursor) ?? fresh();
}

/** Parks an unfinished iterator and returns its cursor. */
export function park(it: Iterator<unknown>): number {
  if (parked.size >= parkedCursorsMax) parked.delete(parked.keys().next().value!);
  const cursor = nextCursor++;
  parked.set(cursor, it);
  return cursor;
}

/**
 * Takes up to `count` items from `it`; returns them and the cursor for the rest (0 when done).
 */
export function scanStep<T>(it: Iterator<T>, count: number): { items: T[]; cursor: number } {
  const items: T[] = [];
  while (items.length < count) {
    const next = it.next();
    if (next.done) return { items, cursor: 0 };
    items.push(next.value);
  }
  return { items, cursor: park(it) };
}

/**
 * Walks a table from `cursor` with `step` (a KeyTable's scanStep) until `out` holds `count`
 * items, the walk ends, or count × 10 slots were visited; returns the next cursor (0: done).
 */
export function walkTable(step: (cursor: number, out: string[]) => number, cursor: number, count: number, out: string[]): number {
  let slotsLeft = count * scanSlotsPerItem;
  do cursor = step(cursor, out);
  while (cursor !== 0 && slotsLeft-- > 0 && out.length < count);
  return cursor;
}
