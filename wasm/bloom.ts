// Bloom filter bit positions for the kv service's BF.* commands, as RedisBloom derives them.
// AssemblyScript source, compiled to wasm/dist/bloom.wasm by wasm/build.
//
// An item is hashed twice with MurmurHash64A: first with a fixed seed (a), then seeded with that
// first hash (b). Its i-th bit in a sub-filter of `bits` bits is (a + i·b) mod 2^64 mod bits,
// for i below the sub-filter's hash count. The filter bits themselves stay in JavaScript
// Uint8Arrays (one per sub-filter, any number of keys, no allocator in linear memory): this
// module turns a whole command's items into positions in one call, and the caller tests and sets
// them. Measured (bench/bloom.ts), those tests are about a fifth of a BF.MEXISTS batch, so keeping
// filters in linear memory would save at most that, and would cap all filters together at 4 GiB.
// src/wasm/bloom.ts lays out linear memory above inputOffset() and holds the reference.

import { hash } from "./murmur64a";

/** RedisBloom's seed for an item's first hash. */
const FIRST_SEED: u64 = 0xc6a4a7935bd1e995;
/**
 * One entry of the sub-filter table: u64 bit count, u32 hash count, and a u32 this module fills
 * with 2^64 mod the bit count before it starts.
 */
const FILTER_ENTRY_BYTES: usize = 16;

/** First byte of linear memory free for the caller's input, 8-byte aligned. */
export function inputOffset(): usize {
  return (__heap_base + 7) & ~(<usize>7);
}

/**
 * Positions of `count` items laid out back to back from `dataPtr` (item i ends at the u32 offset
 * `ends[i]`, relative to dataPtr) in `filterCount` sub-filters described at `filtersPtr`. Writes
 * u32 positions item by item: item 0's positions in sub-filter 0, then in sub-filter 1, ..., then
 * item 1's. Bit counts are at most 2^32, so every position fits a u32.
 */
export function positions(dataPtr: usize, endsPtr: usize, count: u32, filtersPtr: usize, filterCount: u32, outPtr: usize): void {
  // 2^64 mod bits, once per sub-filter: what a wrapping add of 2^64 takes off a remainder.
  for (let f: u32 = 0; f < filterCount; f++) {
    const entry = filtersPtr + <usize>f * FILTER_ENTRY_BYTES;
    const bits = load<u64>(entry);
    store<u32>(entry, <u32>((0 - bits) % bits), 12);
  }
  let start: usize = 0;
  let out = outPtr;
  for (let i: u32 = 0; i < count; i++) {
    const end = <usize>load<u32>(endsPtr + (<usize>i << 2));
    const a = hash(dataPtr + start, end - start, FIRST_SEED);
    const b = hash(dataPtr + start, end - start, a);
    start = end;
    for (let f: u32 = 0; f < filterCount; f++) {
      const entry = filtersPtr + <usize>f * FILTER_ENTRY_BYTES;
      out = itemPositions(a, b, load<u64>(entry), load<u32>(entry, 8), <u64>load<u32>(entry, 12), out);
    }
  }
}

/**
 * Writes (a + j·b) mod 2^64 mod bits for j < hashes at `out`; returns the end. A 64-bit remainder
 * per position would dominate the cost (about 11 ns each), so the remainders are carried instead:
 * with r = x mod bits, d = b mod bits and w = 2^64 mod bits (`wrapRemainder`, computed once per
 * sub-filter and call), the next x = x + b (less 2^64 when the add wraps) has remainder
 * r + d (less w when it wraps), folded back below bits. Two divisions per item and sub-filter,
 * however many hashes; the folds are selects, because whether an add wraps is a coin toss.
 */
function itemPositions(a: u64, b: u64, bits: u64, hashes: u32, wrapRemainder: u64, out: usize): usize {
  const d = b % bits;
  let x = a;
  let r = a % bits;
  for (let j: u32 = 0; j < hashes; j++) {
    store<u32>(out, <u32>r);
    out += 4;
    const next = x + b;
    r += d;
    r = select<u64>(r - bits, r, r >= bits);
    // Subtracting w modulo bits is adding bits - w, then folding once more.
    const unwrapped = r + bits - wrapRemainder;
    r = select<u64>(select<u64>(unwrapped - bits, unwrapped, unwrapped >= bits), r, next < x);
    x = next;
  }
  return out;
}
