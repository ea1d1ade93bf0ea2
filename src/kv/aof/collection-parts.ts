/**
 * A collection's commands for an append-only file rewrite, written a part at a time so that a
 * rewrite can serve clients between the parts of a huge one: RPUSH, HSET, SADD or ZADD of at most
 * `itemsPerCommand` items each, as Redis splits them, so that no single command in the file is
 * huge; a Bloom filter as RedisBloom's BF.LOADCHUNK commands (its header, then the chunks of its
 * bits that are not all zero). Each kind keeps its own position (a list's index, a sorted set's
 * rank, a slot of a large hash's or set's member table, a Bloom filter's dump iterator) and can
 * freeze what is left into a copy.
 */
import type { KeyTable } from "../types/key-table.ts";
import type { Value } from "../types/value.ts";
import { formatDouble } from "../text/format-double.ts";
import { latin1Text } from "../types/string/bytes.ts";
import { BloomChain } from "../types/bloom/chain.ts";
import { Stream } from "../types/stream/stream.ts";
import { StreamParts } from "./stream-parts.ts";
import { chunkAt, encodeHeader, headerIterator, isAllZero } from "../types/bloom/bloom-dump.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import type { FrozenRun } from "../types/zset/btree.ts";
import { ZSet } from "../types/zset/zset.ts";
import type { CommandBuffer } from "./command-buffer.ts";

/** Redis's AOF_REWRITE_ITEMS_PER_CMD. */
const itemsPerCommand = 64;
/** Bytes of a Bloom filter's bits that count as one item of a step: a step writes ~1 MiB of them. */
const bloomBytesPerItem = 256;
/** Bits one BF.LOADCHUNK of a rewrite carries at most (BF.SCANDUMP's own chunks go to 16 MiB). */
const bloomChunkBytes = 1024 * 1024;

/**
 * A collection's commands written a part at a time, so that a rewrite can serve clients between
 * the parts of a huge one. `write` writes about `maxItems` more items (a hash or a set: whole
 * slots of its table, so a few more) and returns whether all of them are out. The collection
 * must hold still between calls, unless `freeze` has taken what is left as it is: a rewrite
 * freezes the rest before a command changes the collection, and goes on writing what it took.
 */
export interface CollectionParts {
  write(out: CommandBuffer, maxItems: number): boolean;
  /**
   * Parts for the items not written yet, as they are now (copied, or shared and copied by the
   * collection before it changes them): the collection may change from here on. Each call takes
   * the rest again; the rewrite freezes a collection once (PartlyWritten.frozen).
   */
  freeze(): CollectionParts;
}

/** Items in the collection `value` (a Bloom filter: its bytes / bloomBytesPerItem; a stream: its entries), or -1 for a string. */
export function collectionSize(value: Value): number {
  if (value instanceof List || value instanceof FieldMap || value instanceof MemberSet || value instanceof ZSet) return value.size;
  if (value instanceof BloomChain) return value.filters.reduce((bytes, filter) => bytes + filter.bits.length, 0) / bloomBytesPerItem;
  if (value instanceof Stream) return value.length;
  return -1;
}

/** The parts writer for a collection or a Bloom filter, or null for a string (written in one piece). */
export function collectionParts(key: string, value: Value): CollectionParts | null {
  if (value instanceof List) {
    // A packed list finds an item by walking the ones before it: copy them out in one walk.
    return value.packed ? new CopiedParts(["RPUSH", key], 1, value.toArray()) : new ListParts(key, value);
  }
  if (value instanceof FieldMap) {
    const table = value.memberTable;
    return table !== null ? new TableParts(["HSET", key], 2, table) : new CopiedParts(["HSET", key], 2, value.entries().flat());
  }
  if (value instanceof MemberSet) {
    const table = value.memberTable;
    return table !== null ? new TableParts(["SADD", key], 1, table) : new CopiedParts(["SADD", key], 1, value.members());
  }
  if (value instanceof ZSet) return new ZSetParts(key, value);
  if (value instanceof BloomChain) return new BloomParts(key, value);
  if (value instanceof Stream) return new StreamParts(key, value);
  return null;
}

/** Appends RPUSH commands for the list's items [from, to), at most itemsPerCommand per command. */
function writeListItems(out: CommandBuffer, key: string, list: List, from: number, to: number): void {
  const head = ["RPUSH", key];
  for (let i = from; i < to; i += itemsPerCommand) out.pushItems(head, list, i, Math.min(itemsPerCommand, to - i));
}

class ListParts implements CollectionParts {
  constructor(
    private readonly key: string,
    private readonly list: List,
    /** Index of the first item not written yet. */
    private next = 0,
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    const end = Math.min(this.list.size, this.next + maxItems);
    writeListItems(out, this.key, this.list, this.next, end);
    this.next = end;
    return end === this.list.size;
  }

  freeze(): CollectionParts {
    return new ListParts(this.key, this.list.clone(), this.next);
  }
}

/**
 * Items already copied out of their collection (`width` arguments each: a hash's field and value,
 * one list item or set member): a small hash or set, or the rest of a large collection frozen.
 */
class CopiedParts implements CollectionParts {
  /** The first argument not written yet. */
  private next = 0;

  constructor(
    private readonly head: readonly string[],
    private readonly width: number,
    private readonly args: readonly string[],
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    const end = Math.min(this.args.length, this.next + maxItems * this.width);
    const perCommand = itemsPerCommand * this.width;
    for (let i = this.next; i < end; i += perCommand) out.pushItems(this.head, this.args, i, Math.min(perCommand, end - i));
    this.next = end;
    return end === this.args.length;
  }

  freeze(): CollectionParts {
    return this;
  }
}

/** Home slots of a hash's or set's table read per round of TableParts.write. */
const slotsPerRound = 256;

/**
 * A large hash or set, read from its member table in slot order (KeyTable.itemsHomedIn): the
 * position is a slot number, which stays meaningful because the table holds still between calls
 * — or because, once frozen, it is a copy of the table with the same layout (KeyTable.snapshot).
 * A hash's items are a field and its value (width 2), a set's a member.
 */
class TableParts implements CollectionParts {
  private readonly items: string[] = [];

  constructor(
    private readonly head: readonly string[],
    private readonly width: number,
    private readonly table: KeyTable<string>,
    /** The next home slot: the items homed before it are written. */
    private home = 0,
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    const slots = this.table.capacity;
    const chunk = new Chunker(out, this.head, this.width);
    const items = this.items;
    let written = 0;
    while (this.home < slots && written < maxItems) {
      const to = Math.min(this.home + slotsPerRound, slots);
      this.table.itemsHomedIn(this.home, to, items, this.width === 2);
      for (let i = 0; i < items.length; i += this.width) chunk.add(items[i]!, items[i + 1]);
      written += items.length / this.width;
      items.length = 0;
      this.home = to;
    }
    chunk.flush();
    return this.home === slots;
  }

  freeze(): CollectionParts {
    return new TableParts(this.head, this.width, this.table.snapshot(), this.home);
  }
}

/** A sorted set, in score order: the position is a rank. */
class ZSetParts implements CollectionParts {
  /** Rank of the first element not written yet. */
  private next = 0;

  constructor(
    private readonly key: string,
    private readonly zset: ZSet,
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    const chunk = new Chunker(out, ["ZADD", this.key], 2);
    const end = Math.min(this.zset.size, this.next + maxItems);
    let rank = this.next;
    if (rank < end) {
      this.zset.walkFrom(rank, (score, member) => {
        chunk.add(formatDouble(score), member);
        return ++rank < end;
      });
    }
    chunk.flush();
    this.next = end;
    return end === this.zset.size;
  }

  freeze(): CollectionParts {
    return new FrozenZSetParts(this.key, this.zset.freezeFrom(this.next));
  }
}

/** The rest of a sorted set frozen: scores are formatted as they are written, not when frozen. */
class FrozenZSetParts implements CollectionParts {
  constructor(
    private readonly key: string,
    private readonly run: FrozenRun,
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    const chunk = new Chunker(out, ["ZADD", this.key], 2);
    const done = this.run.read(maxItems, (score, member) => chunk.add(formatDouble(score), member));
    chunk.flush();
    return done;
  }

  freeze(): CollectionParts {
    return this;
  }
}

/**
 * A Bloom filter, as BF.LOADCHUNK commands: the header first, then its bits from the dump
 * iterator on, bloomChunkBytes a command, chunks of zeros left out (the header's arrays start
 * zeroed). Written whole, a 512 MiB filter was built in memory as strings first, as much again.
 */
class BloomParts implements CollectionParts {
  constructor(
    private readonly key: string,
    private readonly chain: BloomChain,
    /** The dump iterator of the next bits to write; null until the header is written. */
    private iterator: bigint | null = null,
  ) {}

  write(out: CommandBuffer, maxItems: number): boolean {
    if (this.iterator === null) {
      out.push(["BF.LOADCHUNK", this.key, String(headerIterator), latin1Text(encodeHeader(this.chain))]);
      this.iterator = headerIterator;
    }
    for (let budget = maxItems * bloomBytesPerItem; budget > 0; ) {
      const chunk = chunkAt(this.chain, this.iterator, Math.min(bloomChunkBytes, budget));
      if (chunk.next === 0n) return true;
      if (!isAllZero(chunk.data)) out.push(["BF.LOADCHUNK", this.key, String(chunk.next), latin1Text(chunk.data)]);
      budget -= chunk.data.length;
      this.iterator = chunk.next;
    }
    return chunkAt(this.chain, this.iterator, 1).next === 0n;
  }

  freeze(): CollectionParts {
    return new BloomParts(this.key, this.chain.clone(), this.iterator);
  }
}

/** Gathers items (of `width` arguments each) into commands of `head` + at most itemsPerCommand items. */
class Chunker {
  private readonly argv: string[];

  constructor(
    private readonly out: CommandBuffer,
    private readonly head: readonly string[],
    private readonly width: number,
  ) {
    this.argv = [...head];
  }

  /** One item: `first`, and `second` when items are pairs. */
  add(first: string, second?: string): void {
    this.argv.push(first);
    if (second !== undefined) this.argv.push(second);
    if (this.argv.length === this.head.length + itemsPerCommand * this.width) this.flush();
  }

  /** Writes the items gathered since the last command, if any. */
  flush(): void {
    if (this.argv.length === this.head.length) return;
    this.out.push(this.argv);
    this.argv.length = this.head.length;
  }
}
