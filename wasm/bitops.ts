// Bitmap kernels for BITCOUNT, BITOP and BITPOS: population count, the byte-wise boolean
// operations and the search for the first byte that is not all zeros or all ones.
// AssemblyScript source, compiled to wasm/dist/bitops.wasm by wasm/build.
//
// The caller copies bytes into linear memory from inputOffset() and calls a kernel on them. The
// kernels work on 64-bit words with plain byte loops for the ragged ends, so they accept any
// pointer and length (wasm loads need no alignment). The TypeScript side (src/wasm/bitops.ts)
// works in bounded chunks, so lengths stay far below 2^31 and every count fits an i32.
//
// Plain i64 code, not SIMD: measured under Bun, i64.popcnt on four independent words per step
// runs at about 30 GB/s, while i8x16.popcnt (which the engine expands into a shuffle sequence)
// reaches about 17 GB/s — and the build does not enable the SIMD feature.

/** First byte of linear memory free for the caller's input, 16-byte aligned. */
export function inputOffset(): usize {
  return (__heap_base + 15) & ~(<usize>15);
}

/** Number of set bits in `len` bytes at `ptr`. */
export function popcount(ptr: usize, len: usize): u32 {
  const end = ptr + len;
  const blocksEnd = ptr + (len & ~(<usize>31));
  let p = ptr;
  // Four accumulators keep the four popcnt chains independent, so they overlap in the pipeline.
  let a: i64 = 0;
  let b: i64 = 0;
  let c: i64 = 0;
  let d: i64 = 0;
  while (p < blocksEnd) {
    a += popcnt<i64>(load<i64>(p));
    b += popcnt<i64>(load<i64>(p, 8));
    c += popcnt<i64>(load<i64>(p, 16));
    d += popcnt<i64>(load<i64>(p, 24));
    p += 32;
  }
  let count = <u32>(a + b + c + d);
  while (p < end) {
    count += <u32>popcnt<i32>(<i32>load<u8>(p));
    p++;
  }
  return count;
}

/** Operation codes shared with src/wasm/bitops.ts. */
const opAnd: u32 = 0;
const opOr: u32 = 1;
const opXor: u32 = 2;

/** dst[i] = dst[i] <op> src[i] for i < len, where op is AND, OR or XOR. */
export function combine(op: u32, dst: usize, src: usize, len: usize): void {
  const wordsEnd = len & ~(<usize>7);
  let i: usize = 0;
  if (op == opAnd) {
    for (; i < wordsEnd; i += 8) store<u64>(dst + i, load<u64>(dst + i) & load<u64>(src + i));
    for (; i < len; i++) store<u8>(dst + i, load<u8>(dst + i) & load<u8>(src + i));
  } else if (op == opOr) {
    for (; i < wordsEnd; i += 8) store<u64>(dst + i, load<u64>(dst + i) | load<u64>(src + i));
    for (; i < len; i++) store<u8>(dst + i, load<u8>(dst + i) | load<u8>(src + i));
  } else if (op == opXor) {
    for (; i < wordsEnd; i += 8) store<u64>(dst + i, load<u64>(dst + i) ^ load<u64>(src + i));
    for (; i < len; i++) store<u8>(dst + i, load<u8>(dst + i) ^ load<u8>(src + i));
  }
}

/** dst[i] = ~dst[i] for i < len. */
export function invert(dst: usize, len: usize): void {
  const wordsEnd = len & ~(<usize>7);
  let i: usize = 0;
  for (; i < wordsEnd; i += 8) store<u64>(dst + i, ~load<u64>(dst + i));
  for (; i < len; i++) store<u8>(dst + i, ~load<u8>(dst + i));
}

/**
 * Index of the first of `len` bytes at `ptr` that differs from `skip` (0x00 when looking for a
 * set bit, 0xff when looking for a clear one), or `len` when all of them equal it.
 */
export function findOther(ptr: usize, len: usize, skip: u8): usize {
  const wordsEnd = len & ~(<usize>7);
  const pattern: u64 = <u64>skip * 0x0101010101010101;
  let i: usize = 0;
  while (i < wordsEnd && load<u64>(ptr + i) == pattern) i += 8;
  while (i < len && load<u8>(ptr + i) == skip) i++;
  return i;
}
