/**
 * MurmurHash64A, the hash Redis's HyperLogLog derives register index and run length from
 * (seeded with `hllHashSeed`). `murmur64a` and `murmur64aMany` run the AssemblyScript module in
 * wasm/murmur64a.ts; `murmur64aReference` is the BigInt definition they are tested against.
 */
import { ensureMemory, loadWasm } from "./module.ts";

/** The seed Redis passes to MurmurHash64A for every HyperLogLog element. */
export const hllHashSeed = 0xadc83b19n;

interface Murmur64aExports {
  memory: WebAssembly.Memory;
  inputOffset(): number;
  hash(ptr: number, len: number, seed: bigint): bigint;
  hashBatch(dataPtr: number, endsPtr: number, count: number, outPtr: number, seed: bigint): void;
}

const wasm = loadWasm("murmur64a").exports as unknown as Murmur64aExports;
const inputOffset = wasm.inputOffset();
let memoryBytes = new Uint8Array(wasm.memory.buffer);

/** A view of linear memory holding at least `bytes` bytes; growing memory detaches old views. */
function memoryFor(bytes: number): Uint8Array {
  ensureMemory(wasm.memory, bytes);
  if (memoryBytes.buffer !== wasm.memory.buffer) memoryBytes = new Uint8Array(wasm.memory.buffer);
  return memoryBytes;
}

/** MurmurHash64A of `data` as an unsigned 64-bit BigInt. */
export function murmur64a(data: Uint8Array, seed: bigint): bigint {
  memoryFor(inputOffset + data.length).set(data, inputOffset);
  // wasm hands i64 results to JavaScript as signed BigInts.
  return BigInt.asUintN(64, wasm.hash(inputOffset, data.length, seed));
}

const align = (n: number, to: number) => Math.ceil(n / to) * to;

/** MurmurHash64A of every item, with one copy into linear memory and one call for the batch. */
export function murmur64aMany(items: readonly Uint8Array[], seed: bigint): BigUint64Array {
  let dataBytes = 0;
  for (const item of items) dataBytes += item.length;
  const endsPtr = align(inputOffset + dataBytes, 4);
  const outPtr = align(endsPtr + 4 * items.length, 8);
  const memory = memoryFor(outPtr + 8 * items.length);
  const ends = new Uint32Array(memory.buffer, endsPtr, items.length);
  let end = 0;
  items.forEach((item, i) => {
    memory.set(item, inputOffset + end);
    end += item.length;
    ends[i] = end;
  });
  wasm.hashBatch(inputOffset, endsPtr, items.length, outPtr, seed);
  return new BigUint64Array(memory.buffer.slice(outPtr, outPtr + 8 * items.length));
}

const mask64 = (1n << 64n) - 1n;
const multiplier = 0xc6a4a7935bd1e995n;
const shift = 47n;

/** MurmurHash64A written straight from its definition, on BigInts. */
export function murmur64aReference(data: Uint8Array, seed: bigint): bigint {
  let h = (BigInt.asUintN(64, seed) ^ (BigInt(data.length) * multiplier)) & mask64;
  const blocksEnd = data.length - (data.length % 8);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i < blocksEnd; i += 8) {
    let k = (view.getBigUint64(i, true) * multiplier) & mask64;
    k = ((k ^ (k >> shift)) * multiplier) & mask64;
    h = ((h ^ k) * multiplier) & mask64;
  }
  if (blocksEnd < data.length) {
    let tail = 0n;
    for (let i = blocksEnd; i < data.length; i++) tail |= BigInt(data[i]!) << BigInt(8 * (i - blocksEnd));
    h = ((h ^ tail) * multiplier) & mask64;
  }
  h = ((h ^ (h >> shift)) * multiplier) & mask64;
  return h ^ (h >> shift);
}
