/**
 * A double-ended queue on a ring buffer: push and pop at both ends and indexing are O(1), which is
 * what lists are used for (queues, stacks, LINDEX). An insertion in the middle (LINSERT) moves the
 * shorter side by one slot; a removal of equal elements (LREM) moves only the part it scanned:
 * O(distance from the nearer end, or from the end the scan starts at), where Redis's quicklist,
 * which inserts and deletes inside one node, pays only the scan. The capacity is a power of two so wrapping is a mask, and it shrinks when
 * the queue empties to a quarter, so a drained list does not hold its peak memory.
 *
 * A small ring is one array. Past blockSlots the ring is cut into blocks of blockSlots held by a
 * directory (itself a ring of blocks), as Redis's quicklist cuts a long list into nodes. Why: one
 * array of millions of strings is rescanned whole by the garbage collector each time a push
 * writes a new string into it (the write barrier remembers the array, not the slot), and doubling
 * it copies every element at once; measured in process with 1.5–11M elements, that made RPUSH
 * cost 370–430 ns against 260–280 on a short list. A block is small enough to rescan, and the
 * ring grows by adding blocks to the directory.
 */

import { arrayBytes, objectBytes, sampledBytes, stringBytes } from "../memory-sizes.ts";

/** The smallest ring allocated; small lists are the common case. */
const capacityMin = 8;
/** Elements per block once the ring is cut into blocks (a power of two). */
export const blockSlots = 1024;
const blockShift = Math.log2(blockSlots);

type Block = (string | undefined)[];

const newBlock = (slots: number): Block => new Array<string | undefined>(slots).fill(undefined);

export class Deque {
  /** The blocks, in ring order: one block of the whole capacity while it is at most blockSlots. */
  private blocks: Block[];
  /** log2 of a block's length: positions map to blocks[p >>> shift][p & blockMask]. */
  private shift: number;
  private blockMask: number;
  /** Capacity - 1 (the capacity is a power of two). */
  private mask: number;
  /** Ring position of the first element. */
  private head = 0;
  private count = 0;

  constructor(items: readonly string[] = []) {
    this.blocks = [];
    this.shift = this.blockMask = this.mask = 0;
    this.fill(items);
  }

  get size(): number {
    return this.count;
  }

  pushFront(value: string): void {
    if (this.count === this.mask + 1) this.grow();
    this.head = (this.head - 1) & this.mask;
    this.write(this.head, value);
    this.count++;
  }

  pushBack(value: string): void {
    if (this.count === this.mask + 1) this.grow();
    this.write((this.head + this.count) & this.mask, value);
    this.count++;
  }

  popFront(): string | undefined {
    if (this.count === 0) return undefined;
    const value = this.read(this.head);
    this.write(this.head, undefined);
    this.head = (this.head + 1) & this.mask;
    this.count--;
    this.shrinkIfSparse();
    return value;
  }

  popBack(): string | undefined {
    if (this.count === 0) return undefined;
    const p = (this.head + this.count - 1) & this.mask;
    const value = this.read(p);
    this.write(p, undefined);
    this.count--;
    this.shrinkIfSparse();
    return value;
  }

  /** The element at a 0-based index from the front; undefined outside [0, size). */
  at(index: number): string | undefined {
    if (index < 0 || index >= this.count) return undefined;
    return this.read((this.head + index) & this.mask);
  }

  set(index: number, value: string): void {
    this.write((this.head + index) & this.mask, value);
  }

  /** The slot at ring position `p`. */
  private read(p: number): string | undefined {
    return this.blocks[p >>> this.shift]![p & this.blockMask];
  }

  private write(p: number, value: string | undefined): void {
    this.blocks[p >>> this.shift]![p & this.blockMask] = value;
  }

  /** The index of the first element equal to `value`, from the front; -1 if there is none. */
  indexOf(value: string): number {
    for (let i = 0; i < this.count; i++) if (this.read((this.head + i) & this.mask) === value) return i;
    return -1;
  }

  /** Inserts `value` before the element at `index` (0..size), moving the shorter side one slot. */
  insert(index: number, value: string): void {
    if (this.count === this.mask + 1) this.grow();
    const { mask } = this;
    if (index < this.count - index) {
      this.head = (this.head - 1) & mask;
      for (let i = 0; i < index; i++) this.write((this.head + i) & mask, this.read((this.head + i + 1) & mask));
    } else {
      for (let i = this.count; i > index; i--) this.write((this.head + i) & mask, this.read((this.head + i - 1) & mask));
    }
    this.write((this.head + index) & mask, value);
    this.count++;
  }

  /**
   * Removes up to `limit` elements equal to `value`, the first ones from the front, or from the
   * back when `fromBack`; returns how many. The scan stops at the last one it removes, and only
   * the elements it passed move, towards the end it started from, closing the gaps.
   */
  removeEqual(value: string, limit: number, fromBack: boolean): number {
    const { mask, count } = this;
    const pos = (i: number) => (this.head + i) & mask;
    // The index of the last element to remove, in scan order, and how many are removed.
    let last = -1;
    let removed = 0;
    for (let step = 0; step < count && removed < limit; step++) {
      const i = fromBack ? count - 1 - step : step;
      if (this.read(pos(i)) === value) {
        last = i;
        removed++;
      }
    }
    if (removed === 0) return 0;
    if (fromBack) {
      // Close the gaps in [last, count) towards the back end's start: everything kept slides down.
      let to = last;
      for (let i = last; i < count; i++) {
        const item = this.read(pos(i));
        if (item !== value) this.write(pos(to++), item);
      }
      for (let i = to; i < count; i++) this.write(pos(i), undefined);
    } else {
      // Close the gaps in [0, last], keeping what stays next to the unscanned rest.
      let to = last;
      for (let i = last; i >= 0; i--) {
        const item = this.read(pos(i));
        if (item !== value) this.write(pos(to--), item);
      }
      for (let i = to; i >= 0; i--) this.write(pos(i), undefined);
      this.head = pos(removed);
    }
    this.count -= removed;
    this.shrinkIfSparse();
    return removed;
  }

  /** Estimated bytes: the ring's blocks, and its elements sized from the first `samples` (0: all). */
  memoryBytes(samples: number): number {
    const blockLength = this.blockMask + 1;
    const ring = objectBytes(6) + arrayBytes(this.blocks.length) + this.blocks.length * arrayBytes(blockLength);
    return ring + sampledBytes(this, this.count, samples, (item) => stringBytes(item.length));
  }

  *[Symbol.iterator](): Generator<string> {
    for (let i = 0; i < this.count; i++) yield this.at(i)!;
  }

  /**
   * A copy of this deque, block by block: the same ring layout, each block copied with slice.
   * 4M elements in 18–32 ms, against 20–45 through at() into one array (most of either is the
   * allocation's garbage collection).
   */
  clone(): Deque {
    const copy = new Deque();
    copy.blocks = this.blocks.map((block) => block.slice());
    copy.shift = this.shift;
    copy.blockMask = this.blockMask;
    copy.mask = this.mask;
    copy.head = this.head;
    copy.count = this.count;
    return copy;
  }

  toArray(): string[] {
    const items = new Array<string>(this.count);
    for (let i = 0; i < this.count; i++) items[i] = this.at(i)!;
    return items;
  }

  /** Replaces the whole content (after an O(n) edit such as LINSERT or LREM). */
  replace(items: readonly string[]): void {
    this.fill(items);
  }

  /** Makes the ring hold `items` from position 0, with room for `slots` (a power of two at least). */
  private fill(items: readonly string[], slots = items.length): void {
    let capacity = capacityMin;
    while (capacity < slots) capacity *= 2;
    const blockLength = Math.min(capacity, blockSlots);
    this.blocks = [];
    for (let b = 0; b < capacity / blockLength; b++) this.blocks.push(newBlock(blockLength));
    this.shift = Math.log2(blockLength);
    this.blockMask = blockLength - 1;
    this.mask = capacity - 1;
    this.head = 0;
    this.count = items.length;
    for (let i = 0; i < items.length; i++) this.write(i, items[i]);
  }

  /** Doubles a full ring: a small one is copied; a cut one gets as many new blocks again. */
  private grow(): void {
    const capacity = this.mask + 1;
    if (capacity < blockSlots) {
      this.fill(this.toArray(), capacity * 2);
      return;
    }
    // Full, so the elements are the blocks in ring order from the head's block. Put that block
    // first and the rest after it; if the head is inside its block, the elements before the head
    // in it are the last ones and move to a block of their own at the end.
    const first = this.head >>> blockShift;
    const offset = this.head & (blockSlots - 1);
    const blocks: Block[] = [];
    for (let b = 0; b < this.blocks.length; b++) blocks.push(this.blocks[(first + b) % this.blocks.length]!);
    const tail = newBlock(blockSlots);
    for (let i = 0; i < offset; i++) {
      tail[i] = blocks[0]![i];
      blocks[0]![i] = undefined;
    }
    blocks.push(tail);
    while (blocks.length < (capacity * 2) / blockSlots) blocks.push(newBlock(blockSlots));
    this.blocks = blocks;
    this.shift = blockShift;
    this.blockMask = blockSlots - 1;
    this.mask = capacity * 2 - 1;
    this.head = offset;
  }

  private shrinkIfSparse(): void {
    const capacity = this.mask + 1;
    if (capacity > capacityMin && this.count * 4 <= capacity) this.fill(this.toArray(), capacity / 2);
  }
}
