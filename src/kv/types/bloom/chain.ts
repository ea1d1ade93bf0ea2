/**
 * A scalable Bloom filter: RedisBloom's chain of sub-filters (sb.c). Items go into the newest
 * sub-filter; once it holds its capacity, a scaling chain adds a sub-filter `expansion` times as
 * large with half the error rate, so the chain's overall false-positive rate stays below the rate
 * asked for (the sum p/2 + p/4 + ... < p). That is also why the first sub-filter of a scaling
 * chain already gets p/2, while a NONSCALING chain's one sub-filter gets p itself.
 *
 * An item is in the chain when any sub-filter has all its bits; adding an item that is (or looks)
 * present changes nothing and counts nothing, as in RedisBloom.
 */
import { bloomPositions, positionsPerItem } from "../../../wasm/bloom.ts";
import { arrayBytes, objectBytes, typedArrayBytes } from "../memory-sizes.ts";
import { BloomFilter, type FilterSizing, sizeFilter } from "./filter.ts";

/** The TYPE of a Bloom filter key: the module type name RedisBloom registers. */
export const bloomTypeName = "MBbloom--";
/** Each added sub-filter's error rate is the previous one's times this (RedisBloom's ratio). */
export const errorTighteningRatio = 0.5;
/** Positions computed per wasm call; a batch is cut so its table stays at most 4 MiB. */
const positionsPerCallMax = 1 << 20;
/** Item bytes copied into linear memory per wasm call (one larger item still goes whole). */
const itemBytesPerCallMax = 1 << 20;

/** What adding one item did. */
export const AddOutcome = {
  /** Already present (or a false positive): nothing changed. */
  Present: 0,
  Added: 1,
  /** A NONSCALING chain at capacity; RedisBloom stops the command at this item. */
  Full: 2,
  /** The chain needed a sub-filter it cannot have (too large, or the error rate reached 0). */
  CannotGrow: 3,
} as const;
export type AddOutcome = (typeof AddOutcome)[keyof typeof AddOutcome];

export class BloomChain {
  readonly kind = bloomTypeName;
  /** The sub-filters, oldest first; only grow() adds to them. */
  private readonly links: BloomFilter[];
  /** The sub-filters' sizings, in order: what each position batch is computed for. */
  private readonly shapes: FilterSizing[];
  /** Items added to the whole chain. */
  size = 0;

  private constructor(
    first: BloomFilter,
    /** Growth factor, a u32 as in RedisBloom (an EXPANSION of 2^32 wraps to 0). */
    readonly expansion: number,
    readonly scaling: boolean,
  ) {
    this.links = [first];
    this.shapes = [first.sizing];
  }

  /** Estimated bytes (MEMORY USAGE): the chain and each sub-filter's bits. */
  memoryBytes(): number {
    let bytes = objectBytes(6) + 2 * arrayBytes(this.links.length);
    for (const filter of this.links) bytes += 2 * objectBytes(8) + typedArrayBytes(filter.bits.byteLength);
    return bytes;
  }

  get filters(): readonly BloomFilter[] {
    return this.links;
  }

  /** A chain for `capacity` items at `errorRate`; null when its first sub-filter cannot exist. */
  static create(capacity: bigint, errorRate: number, expansion: number, scaling: boolean): BloomChain | null {
    const sizing = sizeFilter(capacity, scaling ? errorRate * errorTighteningRatio : errorRate);
    return sizing === null ? null : new BloomChain(new BloomFilter(sizing), expansion, scaling);
  }

  /**
   * A chain put back together from its parts, as a dump's header describes it (BF.LOADCHUNK):
   * the sub-filters with their own sizings and item counts, in order. `filters` is not empty.
   */
  static restore(filters: readonly BloomFilter[], expansion: number, scaling: boolean, size: number): BloomChain {
    const chain = new BloomChain(filters[0]!, expansion, scaling);
    for (let i = 1; i < filters.length; i++) chain.push(filters[i]!);
    chain.size = size;
    return chain;
  }

  /** Sum of the sub-filters' capacities, wrapping at 2^64 like RedisBloom's uint64 sum. */
  get capacity(): bigint {
    let total = 0n;
    for (const f of this.filters) total += f.sizing.capacity;
    return BigInt.asUintN(64, total);
  }

  /**
   * BF.INFO's "Size": what RedisBloom reports as its memory use, the chain header (32 bytes),
   * one 64-byte link per sub-filter, and the bit arrays.
   */
  get reportedBytes(): number {
    let total = 32;
    for (const f of this.filters) total += 64 + f.sizing.bytes;
    return total;
  }

  /**
   * Adds items[from..] in order and returns one outcome per item handled. It stops after a
   * Full or CannotGrow outcome, leaving the rest unhandled, as RedisBloom does.
   */
  addAll(items: readonly string[], from = 0): AddOutcome[] {
    const outcomes: AddOutcome[] = [];
    let start = from;
    while (start < items.length) {
      const batch = this.batch(items, start);
      let next = batch.end;
      for (let i = start; i < batch.end; i++) {
        const at = (i - start) * batch.perItem;
        if (this.anyHas(batch.positions, at, batch.perItem)) {
          outcomes.push(AddOutcome.Present);
          continue;
        }
        const last = this.filters.at(-1)!;
        if (last.isFull) {
          const refused = !this.scaling ? AddOutcome.Full : this.grow() ? null : AddOutcome.CannotGrow;
          if (refused !== null) {
            outcomes.push(refused);
            return outcomes;
          }
          // The batch's positions do not cover the new sub-filter: recompute from this item on.
          next = i;
          break;
        }
        last.set(batch.positions, at + batch.perItem - last.hashes);
        last.size++;
        this.size++;
        outcomes.push(AddOutcome.Added);
      }
      start = next;
    }
    return outcomes;
  }

  /** Whether each of items[from..] is (or looks) present: 1 or 0. */
  hasAll(items: readonly string[], from = 0): Uint8Array {
    const found = new Uint8Array(items.length - from);
    for (let start = from; start < items.length; ) {
      const batch = this.batch(items, start);
      for (let i = start; i < batch.end; i++) found[i - from] = this.anyHas(batch.positions, (i - start) * batch.perItem, batch.perItem) ? 1 : 0;
      start = batch.end;
    }
    return found;
  }

  clone(): BloomChain {
    const copy = new BloomChain(this.filters[0]!.clone(), this.expansion, this.scaling);
    for (let i = 1; i < this.filters.length; i++) copy.push(this.filters[i]!.clone());
    copy.size = this.size;
    return copy;
  }

  /**
   * Whether some sub-filter, newest first (the likeliest to hold a recent item), has the item
   * whose `perItem` positions start at `at`.
   */
  private anyHas(positions: Uint32Array, at: number, perItem: number): boolean {
    let end = at + perItem;
    for (let i = this.filters.length - 1; i >= 0; i--) {
      const f = this.filters[i]!;
      end -= f.hashes;
      if (f.has(positions, end)) return true;
    }
    return false;
  }

  /** Positions for the items from `start` that fit one bounded wasm call (at least one item). */
  private batch(items: readonly string[], start: number): { positions: Uint32Array; perItem: number; end: number } {
    const perItem = positionsPerItem(this.shapes);
    const itemsMax = Math.max(1, Math.floor(positionsPerCallMax / perItem));
    let end = start + 1;
    let bytes = items[start]!.length;
    while (end < items.length && end - start < itemsMax && bytes + items[end]!.length <= itemBytesPerCallMax) bytes += items[end++]!.length;
    return { positions: bloomPositions(items, start, end, this.shapes), perItem, end };
  }

  /** Adds the next sub-filter: expansion times the capacity (uint64 arithmetic), half the error rate. */
  private grow(): boolean {
    const last = this.filters.at(-1)!.sizing;
    const sizing = sizeFilter(BigInt.asUintN(64, last.capacity * BigInt(this.expansion)), last.errorRate * errorTighteningRatio);
    if (sizing === null) return false;
    this.push(new BloomFilter(sizing));
    return true;
  }

  private push(filter: BloomFilter): void {
    this.links.push(filter);
    this.shapes.push(filter.sizing);
  }
}
