/**
 * The bitmap kernels of wasm/bitops.ts (population count, AND/OR/XOR/NOT, first byte that is not
 * all zeros or all ones) over JavaScript byte arrays. Each call copies its input into linear
 * memory in chunks of `chunkBytes`, so linear memory (which never shrinks) stays small however
 * large the bitmap, and a count per chunk always fits an i32. The TypeScript kernels these are
 * tested against, and the choice of which to use per size, live in src/kv/types/bitmap/kernels.ts.
 */
import { ensureMemory, loadWasm } from "./module.ts";

interface BitopsExports {
  memory: WebAssembly.Memory;
  inputOffset(): number;
  popcount(ptr: number, len: number): number;
  combine(op: number, dst: number, src: number, len: number): void;
  invert(dst: number, len: number): void;
  findOther(ptr: number, len: number, skip: number): number;
}

/** The operations of wasm/bitops.ts's `combine`, by their codes there. */
export const combineOps = { and: 0, or: 1, xor: 2 } as const;
export type CombineOp = keyof typeof combineOps;

/**
 * Bytes copied into linear memory per kernel call: large enough that the call overhead vanishes,
 * small enough to stay in the L2 cache between the copy and the kernel reading it.
 */
export const chunkBytes = 128 * 1024;

const wasm = loadWasm("bitops").exports as unknown as BitopsExports;
const inputOffset = wasm.inputOffset();
/** Where `combine` finds its second operand: right after the first. */
const secondOffset = inputOffset + chunkBytes;
ensureMemory(wasm.memory, secondOffset + chunkBytes);
const memory = new Uint8Array(wasm.memory.buffer);

/** Set bits in bytes [from, to) of `bytes`. */
export function popcountWasm(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let count = 0;
  for (let at = from; at < to; at += chunkBytes) {
    const n = Math.min(chunkBytes, to - at);
    memory.set(bytes.subarray(at, at + n), inputOffset);
    count += wasm.popcount(inputOffset, n) >>> 0;
  }
  return count;
}

/** dst[i] = dst[i] <op> src[i] for every i below both lengths. */
export function combineWasm(op: CombineOp, dst: Uint8Array, src: Uint8Array): void {
  const length = Math.min(dst.length, src.length);
  for (let at = 0; at < length; at += chunkBytes) {
    const n = Math.min(chunkBytes, length - at);
    memory.set(dst.subarray(at, at + n), inputOffset);
    memory.set(src.subarray(at, at + n), secondOffset);
    wasm.combine(combineOps[op], inputOffset, secondOffset, n);
    dst.set(memory.subarray(inputOffset, inputOffset + n), at);
  }
}

/** Inverts every byte of `dst`. */
export function invertWasm(dst: Uint8Array): void {
  for (let at = 0; at < dst.length; at += chunkBytes) {
    const n = Math.min(chunkBytes, dst.length - at);
    memory.set(dst.subarray(at, at + n), inputOffset);
    wasm.invert(inputOffset, n);
    dst.set(memory.subarray(inputOffset, inputOffset + n), at);
  }
}

/** The first chunk findOtherWasm copies; each next one is twice as large, up to `chunkBytes`. */
const findFirstChunkBytes = 4096;

/**
 * Index of the first byte in [from, to) of `bytes` that is not `skip` (0x00 or 0xff), or `to` if
 * none. The search stops at the first hit, so it copies growing chunks: what it copies past the
 * hit is at most what it scanned before it.
 */
export function findOtherWasm(bytes: Uint8Array, skip: number, from = 0, to = bytes.length): number {
  let chunk = findFirstChunkBytes;
  for (let at = from; at < to; at += chunk, chunk = Math.min(chunk * 2, chunkBytes)) {
    const n = Math.min(chunk, to - at);
    memory.set(bytes.subarray(at, at + n), inputOffset);
    const i = wasm.findOther(inputOffset, n, skip);
    if (i < n) return at + i;
  }
  return to;
}
