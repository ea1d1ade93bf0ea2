// MurmurHash64A (Austin Appleby), the 64-bit hash Redis feeds HyperLogLog registers from.
// AssemblyScript source, compiled to wasm/dist/murmur64a.wasm by wasm/build.
//
// The caller copies its bytes into linear memory at inputOffset() and calls hash() — or, for many
// items at once, lays them out back to back with a table of end offsets and calls hashBatch(), so a
// whole PFADD costs one copy and one call.

const M: u64 = 0xc6a4a7935bd1e995;
const R: u64 = 47;

/** First byte of linear memory free for the caller's input, 8-byte aligned. */
export function inputOffset(): usize {
  return (__heap_base + 7) & ~(<usize>7);
}

/** MurmurHash64A of `len` bytes at `ptr`. */
export function hash(ptr: usize, len: usize, seed: u64): u64 {
  let h: u64 = seed ^ (<u64>len * M);
  const blocksEnd = ptr + (len & ~(<usize>7));
  let p = ptr;
  // Blocks are read little-endian, which is wasm's byte order: load<u64> is exactly right.
  while (p < blocksEnd) {
    let k = load<u64>(p);
    k *= M;
    k ^= k >> R;
    k *= M;
    h ^= k;
    h *= M;
    p += 8;
  }
  const tail = len & 7;
  if (tail != 0) {
    // The last 1..7 bytes form one little-endian word, mixed in without the block multiply.
    let t: u64 = 0;
    for (let i: usize = 0; i < tail; i++) t |= <u64>load<u8>(p + i) << (<u64>i * 8);
    h ^= t;
    h *= M;
  }
  h ^= h >> R;
  h *= M;
  h ^= h >> R;
  return h;
}

/**
 * Hashes `count` items laid out back to back from `dataPtr`; item i ends at the u32 offset
 * `ends[i]` (relative to dataPtr) and starts where item i-1 ended. Writes the u64 hashes to `outPtr`.
 */
export function hashBatch(dataPtr: usize, endsPtr: usize, count: u32, outPtr: usize, seed: u64): void {
  let start: usize = 0;
  for (let i: u32 = 0; i < count; i++) {
    const end = <usize>load<u32>(endsPtr + (<usize>i << 2));
    store<u64>(outPtr + (<usize>i << 3), hash(dataPtr + start, end - start, seed));
    start = end;
  }
}
