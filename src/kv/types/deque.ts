/**
 * A double-ended queue on a ring buffer: push and pop at both ends and indexing are O(1), which is
 * what lists are used for (queues, stacks, LINDEX). Operations in the middle (LINSERT, LREM) are
 * O(n), as in Redis. The capacity is a power of two so wrapping is a mask, and it shrinks when
 * the queue empties to a quarter, so a drained list does not hold its peak memory.
 */

/** The smallest ring allocated; small lists are the common case. */
const capacityMin = 8;

/** A ring holding `items` from slot 0, with room for them at a power-of-two capacity. */
function ringOf(items: readonly string[]): (string | undefined)[] {
  let capacity = capacityMin;
  while (capacity < items.length) capacity *= 2;
  const ring = new Array<string | undefined>(capacity);
  for (let i = 0; i < items.length; i++) ring[i] = items[i];
  return ring;
}

export class Deque {
  private ring: (string | undefined)[];
  private head = 0;
  private count = 0;

  constructor(items: readonly string[] = []) {
    this.ring = ringOf(items);
    this.count = items.length;
  }

  get size(): number {
    return this.count;
  }

  private get mask(): number {
    return this.ring.length - 1;
  }

  pushFront(value: string): void {
    if (this.count === this.ring.length) this.resize(this.ring.length * 2);
    this.head = (this.head - 1) & this.mask;
    this.ring[this.head] = value;
    this.count++;
  }

  pushBack(value: string): void {
    if (this.count === this.ring.length) this.resize(this.ring.length * 2);
    this.ring[(this.head + this.count) & this.mask] = value;
    this.count++;
  }

  popFront(): string | undefined {
    if (this.count === 0) return undefined;
    const value = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.count--;
    this.shrinkIfSparse();
    return value;
  }

  popBack(): string | undefined {
    if (this.count === 0) return undefined;
    const at = (this.head + this.count - 1) & this.mask;
    const value = this.ring[at];
    this.ring[at] = undefined;
    this.count--;
    this.shrinkIfSparse();
    return value;
  }

  /** The element at a 0-based index from the front; undefined outside [0, size). */
  at(index: number): string | undefined {
    if (index < 0 || index >= this.count) return undefined;
    return this.ring[(this.head + index) & this.mask];
  }

  set(index: number, value: string): void {
    this.ring[(this.head + index) & this.mask] = value;
  }

  /** Elements from `start` to `end` inclusive, front to back (indexes already in range). */
  *range(start: number, end: number): Generator<string> {
    for (let i = start; i <= end; i++) yield this.ring[(this.head + i) & this.mask]!;
  }

  *[Symbol.iterator](): Generator<string> {
    yield* this.range(0, this.count - 1);
  }

  toArray(): string[] {
    return [...this];
  }

  /** Replaces the whole content (after an O(n) edit such as LINSERT or LREM). */
  replace(items: readonly string[]): void {
    this.ring = ringOf(items);
    this.head = 0;
    this.count = items.length;
  }

  private resize(capacity: number): void {
    const ring = new Array<string | undefined>(capacity);
    for (let i = 0; i < this.count; i++) ring[i] = this.ring[(this.head + i) & this.mask];
    this.ring = ring;
    this.head = 0;
  }

  private shrinkIfSparse(): void {
    if (this.ring.length > capacityMin && this.count * 4 <= this.ring.length) this.resize(this.ring.length / 2);
  }
}
