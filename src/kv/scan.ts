/**
 * Cursors for HSCAN, SSCAN and ZSCAN (SCAN walks the key table itself: KeyTable.scanStep). A
 * cursor names a parked iterator over the live collection; JavaScript's Map and Set iterators stay
 * valid across inserts and deletes, so an element present from the first call to the last is
 * always returned, as Redis guarantees. The number of parked iterators is bounded; a cursor that
 * was evicted (or never issued) starts over, which can repeat elements — also allowed by SCAN's
 * contract.
 */

/** Parked iterators kept at once, across all clients and collections. */
export const parkedCursorsMax = 4096;

const parked = new Map<number, Iterator<unknown>>();
let nextCursor = 1;

/** The iterator a cursor names, or a fresh one for cursor 0 or an unknown cursor. */
export function resume<T>(cursor: number, fresh: () => Iterator<T>): Iterator<T> {
  const it = parked.get(cursor) as Iterator<T> | undefined;
  if (it === undefined) return fresh();
  parked.delete(cursor);
  return it;
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
