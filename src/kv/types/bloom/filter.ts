/**
 * One Bloom sub-filter, sized as RedisBloom sizes it (bloom.c with its "no rounding" option, which
 * RedisBloom uses for every filter it creates):
 *
 *   bits per item  = -ln(error) / ln(2)²
 *   bits           = ⌊capacity · bits per item⌋, at least 1, rounded up to whole 64-bit words
 *   hashes         = ⌈ln(2) · bits per item⌉
 *
 * The bits live in a Uint8Array, bit p at byte p >> 3, mask 1 << (p & 7), RedisBloom's layout.
 * Which bits an item sets is computed for a whole batch at once (src/wasm/bloom.ts); this class
 * only tests and sets positions it is handed.
 */
import { positionBitCountMax } from "../../../wasm/bloom.ts";

/** ln(2)² to the digits RedisBloom divides by; the exact literal keeps ⌊capacity · bpe⌋ identical. */
const ln2Squared = 0.480453013918201;
/** ln(2) to the digits RedisBloom multiplies by: Math.LN2 would move some ⌈ln2 · bpe⌉ up by one. */
const ln2 = Math.LN2;
const wordBits = 64;

/**
 * Largest sub-filter we allocate. RedisBloom has no limit and aborts when its allocation fails;
 * we answer an error instead. 512 MiB is 2^32 bits, the most a u32 position addresses.
 */
export const filterBytesMax = positionBitCountMax / 8;

/**
 * The most bits per item sizing can give: the error rate's least positive value, 2^-1074, halving
 * included. A dumped sub-filter (BF.LOADCHUNK) claiming more cannot come from RedisBloom or us.
 */
export const bitsPerItemMax = -Math.log(Number.MIN_VALUE) / ln2Squared;

export interface FilterSizing {
  /** Items the filter is meant to hold before the chain adds another ("entries" in RedisBloom). */
  capacity: bigint;
  errorRate: number;
  bitsPerItem: number;
  /** Bytes of the bit array: a whole number of 64-bit words when sized here (a loaded dump may differ). */
  bytes: number;
  /** bytes · 8: the modulus of every position, so the rounding-up bits are used too. */
  bitCount: number;
  hashes: number;
}

/**
 * The sizing of a filter for `capacity` items at `errorRate`; null when RedisBloom's bloom_init
 * would refuse it (no capacity, a rate outside (0, 1) — a rate halved down to 0 included) or when
 * it is larger than `bytesMax`.
 */
export function sizeFilter(capacity: bigint, errorRate: number, bytesMax = filterBytesMax): FilterSizing | null {
  if (capacity < 1n || !(errorRate > 0 && errorRate < 1)) return null;
  const bitsPerItem = Math.abs(-Math.log(errorRate) / ln2Squared);
  // C converts the double product to uint64 by truncation.
  const wantedBits = Math.max(1, Math.floor(Number(capacity) * bitsPerItem));
  const bytes = Math.ceil(wantedBits / wordBits) * (wordBits / 8);
  if (!(bytes <= bytesMax)) return null;
  return { capacity, errorRate, bitsPerItem, bytes, bitCount: bytes * 8, hashes: hashesFor(bitsPerItem) };
}

/** How many bits an item sets for `bitsPerItem`: RedisBloom's rule, which its dump check repeats. */
export function hashesFor(bitsPerItem: number): number {
  return Math.ceil(ln2 * bitsPerItem);
}

export class BloomFilter {
  readonly bits: Uint8Array;
  /** Items added to this sub-filter (RedisBloom's link size). */
  size = 0;
  /** sizing.capacity as a number, for the per-item "is it full" check. */
  readonly capacityNumber: number;

  constructor(
    readonly sizing: FilterSizing,
    bits?: Uint8Array,
  ) {
    this.bits = bits ?? new Uint8Array(sizing.bytes);
    this.capacityNumber = Number(sizing.capacity);
  }

  get hashes(): number {
    return this.sizing.hashes;
  }

  get isFull(): boolean {
    return this.size >= this.capacityNumber;
  }

  /** Whether every bit at positions[at, at + hashes) is set. */
  has(positions: Uint32Array, at: number): boolean {
    const bits = this.bits;
    for (let i = at, end = at + this.sizing.hashes; i < end; i++) {
      const p = positions[i]!;
      if ((bits[p >>> 3]! & (1 << (p & 7))) === 0) return false;
    }
    return true;
  }

  /** Sets the bits at positions[at, at + hashes). */
  set(positions: Uint32Array, at: number): void {
    const bits = this.bits;
    for (let i = at, end = at + this.sizing.hashes; i < end; i++) {
      const p = positions[i]!;
      bits[p >>> 3]! |= 1 << (p & 7);
    }
  }

  clone(): BloomFilter {
    const copy = new BloomFilter(this.sizing, this.bits.slice());
    copy.size = this.size;
    return copy;
  }
}
