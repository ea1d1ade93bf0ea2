/**
 * The loops under BITCOUNT, BITOP and BITPOS, over byte arrays: population count, AND/OR/XOR/NOT
 * in place, and the first byte that is not all zeros (or all ones).
 *
 * All are written in TypeScript on 32-bit words (an Int32Array view, bytes at the ragged ends);
 * these are also the reference the wasm kernels of src/wasm/bitops.ts are tested against. Two
 * run in wasm where it measured faster, copying into linear memory included (bench/bitmap.ts):
 * population count from `popcountWasmBytesMin` bytes (i64.popcnt is 5–8× the SWAR loop), and the
 * search for a byte that is not 0x00/0xff from `findOtherWasmBytesMin` (1.3–2.3×). AND/OR/XOR/NOT
 * stay in TypeScript: one cheap operation per word, so the JIT's loops already run at the speed
 * of the copies in and out that wasm would need (wasm measured 0.65–0.95× of them).
 *
 * The read kernels take a [from, to) range of a larger array rather than a subarray: a command
 * reads a small range of a large value, and each typed-array view costs an allocation.
 */
import { type CombineOp, findOtherWasm, popcountWasm } from "../../../wasm/bitops.ts";

export type { CombineOp } from "../../../wasm/bitops.ts";

/** From this many bytes the wasm popcount, copy included, beats the TypeScript one (at 64 they tie). */
export const popcountWasmBytesMin = 128;

/** Ranges from which BITPOS's search continues in wasm after scanning their first `findOtherHeadBytes` in TypeScript. */
export const findOtherWasmBytesMin = 16 * 1024;
const findOtherHeadBytes = 4096;

/** Below this many bytes the word loops are not worth the typed-array view they allocate. */
const wordLoopBytesMin = 64;

/** Set bits per byte value. */
const byteBits = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let v = b; v !== 0; v &= v - 1) n++;
  return n;
});

/** Set bits of one byte value. */
export const bitsInByte = (b: number): number => byteBits[b & 0xff]!;

/** The 32-bit words within bytes [from, to) that start on a 4-byte boundary, and the bytes they span. */
function alignedWords(bytes: Uint8Array, from: number, to: number): { words: Int32Array; wordsFrom: number; wordsTo: number } {
  const wordsFrom = Math.min(to, from + ((4 - ((bytes.byteOffset + from) & 3)) & 3));
  const count = Math.max(0, (to - wordsFrom) >> 2);
  const words = new Int32Array(bytes.buffer, bytes.byteOffset + wordsFrom, count);
  return { words, wordsFrom, wordsTo: wordsFrom + count * 4 };
}

function popcountBytes(bytes: Uint8Array, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) count += byteBits[bytes[i]!]!;
  return count;
}

/** Set bits in bytes [from, to): SWAR on 32-bit words, which beat a table per byte and per 16 bits. */
export function popcountTs(bytes: Uint8Array, from = 0, to = bytes.length): number {
  if (to - from < wordLoopBytesMin) return popcountBytes(bytes, from, to);
  const { words, wordsFrom, wordsTo } = alignedWords(bytes, from, to);
  let count = popcountBytes(bytes, from, wordsFrom) + popcountBytes(bytes, wordsTo, to);
  const n = words.length;
  for (let i = 0; i < n; i++) {
    let v = words[i]!;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    count += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return count;
}

/** Set bits in bytes [from, to), by the faster kernel for the size. */
export function popcount(bytes: Uint8Array, from = 0, to = bytes.length): number {
  if (to - from < popcountWasmBytesMin) return popcountTs(bytes, from, to);
  return popcountWasm(bytes, from, to);
}

/**
 * Index of the first byte in [from, to) that is not `skip` (0x00 or 0xff), or `to` if none. The
 * first `findOtherHeadBytes` are scanned in TypeScript, which is where BITPOS usually stops in a
 * bitmap; only a search that goes on for long pays for copying into wasm's memory.
 */
export function findOther(bytes: Uint8Array, skip: number, from = 0, to = bytes.length): number {
  if (to - from < findOtherWasmBytesMin) return findOtherTs(bytes, skip, from, to);
  const headTo = from + findOtherHeadBytes;
  const head = findOtherTs(bytes, skip, from, headTo);
  return head < headTo ? head : findOtherWasm(bytes, skip, headTo, to);
}

/** findOther in TypeScript only. */
export function findOtherTs(bytes: Uint8Array, skip: number, from = 0, to = bytes.length): number {
  let i = from;
  if (to - from < wordLoopBytesMin) {
    while (i < to && bytes[i] === skip) i++;
    return i;
  }
  const { words, wordsFrom } = alignedWords(bytes, i, to);
  while (i < wordsFrom && bytes[i] === skip) i++;
  if (i < wordsFrom) return i;
  // 0x00000000 or 0xffffffff as an Int32Array element reads it: 0 or -1. Four words are tested
  // per step, OR-ed (AND-ed for 0xff): one branch per 16 bytes nearly doubled the scan rate.
  const wordSkip = skip === 0 ? 0 : -1;
  const n = words.length;
  let w = 0;
  if (skip === 0) while (w + 4 <= n && (words[w]! | words[w + 1]! | words[w + 2]! | words[w + 3]!) === 0) w += 4;
  else while (w + 4 <= n && (words[w]! & words[w + 1]! & words[w + 2]! & words[w + 3]!) === -1) w += 4;
  while (w < n && words[w] === wordSkip) w++;
  i = wordsFrom + w * 4;
  while (i < to && bytes[i] === skip) i++;
  return i;
}

function combineBytes(op: CombineOp, dst: Uint8Array, src: Uint8Array, from: number, to: number): void {
  if (op === "and") for (let i = from; i < to; i++) dst[i]! &= src[i]!;
  else if (op === "or") for (let i = from; i < to; i++) dst[i]! |= src[i]!;
  else for (let i = from; i < to; i++) dst[i]! ^= src[i]!;
}

/** dst[i] = dst[i] <op> src[i] for every i below both lengths. */
export function combine(op: CombineOp, dst: Uint8Array, src: Uint8Array): void {
  const length = Math.min(dst.length, src.length);
  // Words only when both arrays share their alignment, which is the usual case: values' buffers
  // start at offset 0.
  if (length < wordLoopBytesMin || ((dst.byteOffset ^ src.byteOffset) & 3) !== 0) {
    return combineBytes(op, dst, src, 0, length);
  }
  const { words: d, wordsFrom, wordsTo } = alignedWords(dst, 0, length);
  const n = d.length;
  const s = new Int32Array(src.buffer, src.byteOffset + wordsFrom, n);
  if (op === "and") for (let i = 0; i < n; i++) d[i]! &= s[i]!;
  else if (op === "or") for (let i = 0; i < n; i++) d[i]! |= s[i]!;
  else for (let i = 0; i < n; i++) d[i]! ^= s[i]!;
  combineBytes(op, dst, src, 0, wordsFrom);
  combineBytes(op, dst, src, wordsTo, length);
}

/** Inverts every byte of `dst`. */
export function invert(dst: Uint8Array): void {
  if (dst.length < wordLoopBytesMin) {
    for (let i = 0; i < dst.length; i++) dst[i] = ~dst[i]!;
    return;
  }
  const { words, wordsFrom, wordsTo } = alignedWords(dst, 0, dst.length);
  const n = words.length;
  for (let i = 0; i < n; i++) words[i] = ~words[i]!;
  for (let i = 0; i < wordsFrom; i++) dst[i] = ~dst[i]!;
  for (let i = wordsTo; i < dst.length; i++) dst[i] = ~dst[i]!;
}
