/**
 * A list's items (latin1 byte strings), in one of two forms:
 * - packed: one byte array, the items back to back, each after its length byte
 *   (short-strings.ts), while the list has at most packedItemsMax items and none longer than
 *   packedItemBytesMax bytes — what most small lists are (a recent-items list kept short with
 *   LTRIM, say). Redis 7.2 packs small lists into a listpack the same way (7.0 reports every list
 *   as a quicklist, whose nodes are listpacks); the limits here are the ones our other packed
 *   forms use.
 * - a Deque (deque.ts), for good, once it is longer or holds a longer item: pushes and pops at
 *   either end in O(1), which a queue of thousands needs, where the packed array is rewritten.
 *
 * Why: 100k lists of ten short items grew RSS by 936 bytes a list in deques (a ring array and a
 * string per item), against Redis's 244 (2026-11-26).
 */
import { compactEntriesMax } from "../compact.ts";
import { objectBytes, typedArrayBytes } from "../memory-sizes.ts";
import { Deque } from "./deque.ts";
import { writeBytes } from "../../text/write-bytes.ts";
import {
  allPackable,
  allShorts,
  insertShort,
  noShorts,
  packable,
  removeShort,
  replaceShort,
  shortAt,
  shortEquals,
  shortOffset,
  skipShort,
  withShorts,
} from "../short-strings.ts";

/** Items a packed list holds, at most. */
export const packedItemsMax = compactEntriesMax;

export class List implements Iterable<string> {
  readonly kind = "list";
  /** The packed form's items (null once the list has moved to its deque, for good), and how many. */
  private items: Uint8Array | null = noShorts;
  private itemCount = 0;
  private deque: Deque | null = null;

  constructor(items: readonly string[] = []) {
    if (items.length > 0) this.replace(items);
  }

  get size(): number {
    return this.items !== null ? this.itemCount : this.deque!.size;
  }

  /** Whether the items are packed: then reaching one walks those before it. */
  get packed(): boolean {
    return this.items !== null;
  }

  pushFront(value: string): void {
    const items = this.items;
    if (items !== null && this.itemCount < packedItemsMax && packable(value)) {
      this.items = insertShort(items, 0, value);
      this.itemCount++;
    } else this.unpacked().pushFront(value);
  }

  pushBack(value: string): void {
    const items = this.items;
    if (items !== null && this.itemCount < packedItemsMax && packable(value)) {
      this.items = insertShort(items, items.length, value);
      this.itemCount++;
    } else this.unpacked().pushBack(value);
  }

  /**
   * Pushes argv[from] on, one after another, at the front or the back (LPUSH, RPUSH). A list that
   * stays packed takes them in one new array, not one per item.
   */
  pushAll(argv: readonly string[], from: number, front: boolean): void {
    const items = this.items;
    const n = argv.length - from;
    if (items !== null && this.itemCount + n <= packedItemsMax && allPackable(argv, from)) {
      // Pushed one by one at the front, the last pushed comes first.
      const pushed = argv.slice(from);
      if (front) pushed.reverse();
      this.items = withShorts(items, pushed, front);
      this.itemCount += n;
      return;
    }
    for (let i = from; i < argv.length; i++) {
      if (front) this.pushFront(argv[i]!);
      else this.pushBack(argv[i]!);
    }
  }

  popFront(): string | undefined {
    return this.items !== null ? this.take(0) : this.deque!.popFront();
  }

  popBack(): string | undefined {
    return this.items !== null ? this.take(this.itemCount - 1) : this.deque!.popBack();
  }

  /** Removes and returns the packed item at `index`; undefined when there is none. */
  private take(index: number): string | undefined {
    const items = this.items!;
    if (this.itemCount === 0) return undefined;
    const at = shortOffset(items, index);
    const value = shortAt(items, at);
    this.items = removeShort(items, at);
    this.itemCount--;
    return value;
  }

  /** The item at a 0-based index from the front; undefined outside [0, size). */
  at(index: number): string | undefined {
    const items = this.items;
    if (items === null) return this.deque!.at(index);
    if (index < 0 || index >= this.itemCount) return undefined;
    return shortAt(items, shortOffset(items, index));
  }

  /** Sets the item at `index`, which must be in [0, size). */
  set(index: number, value: string): void {
    const items = this.items;
    if (items !== null && packable(value)) this.items = replaceShort(items, shortOffset(items, index), value);
    else this.unpacked().set(index, value);
  }

  toArray(): string[] {
    return this.items !== null ? allShorts(this.items) : this.deque!.toArray();
  }

  /** Estimated bytes of the list (MEMORY USAGE), a deque's items sized from the first `samples` (0: all). */
  memoryBytes(samples: number): number {
    return objectBytes(4) + (this.items !== null ? typedArrayBytes(this.items.byteLength) : this.deque!.memoryBytes(samples));
  }

  /** The index of the first item equal to `value`; -1 if there is none. */
  indexOf(value: string): number {
    return this.items !== null ? allShorts(this.items).indexOf(value) : this.deque!.indexOf(value);
  }

  /** Inserts `value` before the item at `index` (0..size). */
  insert(index: number, value: string): void {
    const items = this.items;
    if (items !== null && this.itemCount < packedItemsMax && packable(value)) {
      this.items = insertShort(items, shortOffset(items, index), value);
      this.itemCount++;
    } else this.unpacked().insert(index, value);
  }

  /** Removes up to `limit` items equal to `value`, from the front, or from the back when `fromBack`; returns how many. */
  removeEqual(value: string, limit: number, fromBack: boolean): number {
    const items = this.items;
    if (items === null) return this.deque!.removeEqual(value, limit, fromBack);
    // Compared and cut as bytes, as Redis edits its listpack, rather than every item decoded into
    // a string and the rest packed again: LPUSH then LREM on a list of ten (BullMQ's active list,
    // once a job), in process, 1.44–1.48 → 1.16–1.19 µs.
    if (!packable(value)) return 0;
    const matches: number[] = [];
    for (let at = 0; at < items.length && (fromBack || matches.length < limit); at = skipShort(items, at)) {
      if (shortEquals(items, at, value)) matches.push(at);
    }
    // From the back: the last `limit` matches.
    const first = fromBack && matches.length > limit ? matches.length - limit : 0;
    const removed = matches.length - first;
    if (removed > 0) {
      const itemBytes = 1 + value.length;
      const out = new Uint8Array(items.length - removed * itemBytes);
      let to = 0;
      let from = 0;
      // writeBytes copies short runs byte by byte: a subarray per run was most of LREM's cost.
      for (let m = first; m < matches.length; m++) {
        const at = matches[m]!;
        to = writeBytes(out, to, items, from, at);
        from = at + itemBytes;
      }
      writeBytes(out, to, items, from, items.length);
      this.items = out.length === 0 ? noShorts : out;
      this.itemCount -= removed;
    }
    return removed;
  }

  /** Replaces the whole content (after an O(n) edit such as LINSERT or LREM). */
  replace(items: readonly string[]): void {
    if (this.items !== null && items.length <= packedItemsMax && allPackable(items, 0)) {
      this.items = withShorts(noShorts, items);
      this.itemCount = items.length;
    } else this.unpacked().replace(items);
  }

  [Symbol.iterator](): Iterator<string> {
    return this.items !== null ? allShorts(this.items)[Symbol.iterator]() : this.deque![Symbol.iterator]();
  }

  clone(): List {
    const copy = new List();
    if (this.items !== null) {
      copy.items = this.items.slice();
      copy.itemCount = this.itemCount;
    } else {
      copy.items = null;
      copy.deque = this.deque!.clone();
    }
    return copy;
  }

  /** The deque, made from the packed items the first time: the list leaves its packed form for good. */
  private unpacked(): Deque {
    if (this.deque === null) {
      this.deque = new Deque(allShorts(this.items!));
      this.items = null;
      this.itemCount = 0;
    }
    return this.deque;
  }
}
