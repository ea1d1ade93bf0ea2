/**
 * Bloom filter bit positions, as RedisBloom derives them: an item's first hash is MurmurHash64A
 * with `bloomHashSeed`, its second is MurmurHash64A seeded with the first, and its i-th bit in a
 * sub-filter of `bitCount` bits is (first + i·second) mod 2^64 mod bitCount. `bloomPositions`
 * runs the AssemblyScript module in wasm/bloom.ts — one copy into linear memory and one call per
 * batch of items — and `bloomPositionsReference` is the BigInt definition it is tested against.
 */
import { ensureMemory, loadWasm } from "./module.ts";
import { murmur64aReference } from "./murmur64a.ts";

/** RedisBloom's seed for an item's first hash (the MurmurHash64A multiplier itself). */
export const bloomHashSeed = 0xc6a4a7935bd1e995n;

/** What positions depend on in a sub-filter: its size in bits and how many bits an item sets. */
export interface FilterShape {
  /** At most 2^32, so that every position fits a u32. */
  readonly bitCount: number;
  readonly hashes: number;
}

/** Largest sub-filter the position table can address. */
export const positionBitCountMax = 2 ** 32;

interface BloomExports {
  memory: WebAssembly.Memory;
  inputOffset(): number;
  positions(dataPtr: number, endsPtr: number, count: number, filtersPtr: number, filterCount: number, outPtr: number): void;
}

const wasm = loadWasm("bloom").exports as unknown as BloomExports;
const inputOffset = wasm.inputOffset();
/** Bytes per entry of the sub-filter table the module reads (u64 bits, u32 hashes, u32 for its use). */
const filterEntryBytes = 16;
const twoTo32 = 2 ** 32;

let memory = Buffer.from(wasm.memory.buffer);
let words = new Uint32Array(wasm.memory.buffer);

/** Views of linear memory holding at least `bytes` bytes; growing memory detaches old views. */
function ensureBytes(bytes: number): void {
  ensureMemory(wasm.memory, bytes);
  if (memory.buffer !== wasm.memory.buffer) {
    memory = Buffer.from(wasm.memory.buffer);
    words = new Uint32Array(wasm.memory.buffer);
  }
}

const align = (n: number, to: number) => Math.ceil(n / to) * to;

/** Positions each item needs across `filters`: the sum of their hash counts. */
export function positionsPerItem(filters: readonly FilterShape[]): number {
  let total = 0;
  for (const f of filters) total += f.hashes;
  return total;
}

/**
 * The positions of items[from, to) (latin1 byte strings) in every sub-filter of `filters`, item
 * by item and, within an item, sub-filter by sub-filter in the order given. One wasm call; the
 * caller bounds the batch so the table stays small. The table is a view of linear memory that
 * the next call overwrites: read it before calling again.
 */
export function bloomPositions(items: readonly string[], from: number, to: number, filters: readonly FilterShape[]): Uint32Array {
  const count = to - from;
  let dataBytes = 0;
  for (let i = from; i < to; i++) dataBytes += items[i]!.length;
  const endsPtr = align(inputOffset + dataBytes, 4);
  const filtersPtr = align(endsPtr + 4 * count, 8);
  const outPtr = filtersPtr + filterEntryBytes * filters.length;
  const outCount = count * positionsPerItem(filters);
  ensureBytes(outPtr + 4 * outCount);
  let end = 0;
  for (let i = from, at = endsPtr >>> 2; i < to; i++, at++) {
    end += items[i]!.length;
    words[at] = end;
  }
  // One joined write is several times cheaper than a write per item; latin1 is one byte per
  // char, so the byte strings land in memory exactly.
  if (dataBytes > 0) memory.write(count === 1 ? items[from]! : items.slice(from, to).join(""), inputOffset, "latin1");
  for (let i = 0, at = filtersPtr >>> 2; i < filters.length; i++, at += filterEntryBytes >>> 2) {
    const bitCount = filters[i]!.bitCount;
    words[at] = bitCount % twoTo32;
    words[at + 1] = Math.floor(bitCount / twoTo32);
    words[at + 2] = filters[i]!.hashes;
  }
  wasm.positions(inputOffset, endsPtr, count, filtersPtr, filters.length, outPtr);
  // A view, not a copy: it is valid until the next call, which reuses (or grows) this memory.
  return words.subarray(outPtr >>> 2, (outPtr >>> 2) + outCount);
}

const mask64 = (1n << 64n) - 1n;

/** bloomPositions written straight from the definition, on BigInts. */
export function bloomPositionsReference(items: readonly string[], from: number, to: number, filters: readonly FilterShape[]): Uint32Array {
  const out: number[] = [];
  for (let i = from; i < to; i++) {
    const bytes = Buffer.from(items[i]!, "latin1");
    const first = murmur64aReference(bytes, bloomHashSeed);
    const second = murmur64aReference(bytes, first);
    for (const f of filters) {
      for (let j = 0n; j < BigInt(f.hashes); j++) out.push(Number(((first + j * second) & mask64) % BigInt(f.bitCount)));
    }
  }
  return Uint32Array.from(out);
}
