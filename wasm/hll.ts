// HyperLogLog register work for the kv service: hashing elements into (register, run length)
// patterns, raising dense 6-bit registers, and the register histograms the estimator reads.
// AssemblyScript source, compiled to wasm/dist/hll.wasm by wasm/build.
//
// The JS side (src/wasm/hll.ts) lays out linear memory above inputOffset(): a dense register
// array, a one-byte-per-register "raw" array, a histogram, and a batch of elements written back
// to back with a table of end offsets. Every function here works on a whole batch or a whole
// register array, so one command costs one call (or a few), never one per element.

import { hash } from "./murmur64a";

/** The seed Redis hashes every HyperLogLog element with. */
const SEED: u64 = 0xadc83b19;

/** Register index bits: 2^14 = 16384 registers. */
const INDEX_BITS: u32 = 14;
const REGISTERS: u32 = 1 << INDEX_BITS;
const INDEX_MASK: u64 = <u64>(REGISTERS - 1);
/** Hash bits left for the run of zeroes once the index bits are taken. */
const RUN_BITS: u64 = 64 - <u64>INDEX_BITS;
const REGISTER_MAX: u32 = 63;
const HISTOGRAM_BINS: u32 = 64;

/** First byte of linear memory free for the caller, 8-byte aligned. */
export function inputOffset(): usize {
  return (__heap_base + 7) & ~(<usize>7);
}

/**
 * An element's pattern: the register index (low 14 bits of the hash) in bits 0..15 and, in bits
 * 16..23, the position of the first 1 bit in the remaining 50 bits counting from 1. A sentinel
 * bit above them caps the run at 51 when all 50 are zero.
 */
function patternOf(hash: u64): u32 {
  const index = <u32>(hash & INDEX_MASK);
  const run = <u32>ctz((hash >> <u64>INDEX_BITS) | (<u64>1 << RUN_BITS)) + 1;
  return index | (run << 16);
}

/** Writes the u32 pattern of each of `count` elements (ending at the u32 offsets `ends`) to `outPtr`. */
export function patterns(dataPtr: usize, endsPtr: usize, count: u32, outPtr: usize): void {
  let start: usize = 0;
  for (let i: u32 = 0; i < count; i++) {
    const end = <usize>load<u32>(endsPtr + (<usize>i << 2));
    store<u32>(outPtr + (<usize>i << 2), patternOf(hash(dataPtr + start, end - start, SEED)));
    start = end;
  }
}

// Dense registers are 6 bits each, packed little-endian: register i starts at bit 6i. The caller
// leaves one spare byte after the 12288-byte array, so a 16-bit load never leaves the layout.

@inline
function getRegister(regsPtr: usize, index: u32): u32 {
  const bit = index * 6;
  return (<u32>load<u16>(regsPtr + <usize>(bit >> 3)) >> (bit & 7)) & REGISTER_MAX;
}

@inline
function setRegister(regsPtr: usize, index: u32, value: u32): void {
  const bit = index * 6;
  const at = regsPtr + <usize>(bit >> 3);
  const shift = bit & 7;
  const word = (<u32>load<u16>(at) & ~(REGISTER_MAX << shift)) | (value << shift);
  store<u16>(at, <u16>word);
}

/** Raises register `index` to `run` when it is lower; returns 1 when it changed. */
@inline
function raise(regsPtr: usize, index: u32, run: u32): u32 {
  if (run <= getRegister(regsPtr, index)) return 0;
  setRegister(regsPtr, index, run);
  return 1;
}

/** Applies `count` patterns to the dense registers; returns how many raised a register. */
export function denseSetPatterns(regsPtr: usize, patternsPtr: usize, count: u32): u32 {
  let changed: u32 = 0;
  for (let i: u32 = 0; i < count; i++) {
    const pattern = load<u32>(patternsPtr + (<usize>i << 2));
    changed += raise(regsPtr, pattern & 0xffff, pattern >> 16);
  }
  return changed;
}

/** Hashes `count` elements and raises the dense registers in one pass; returns how many changed one. */
export function denseAdd(regsPtr: usize, dataPtr: usize, endsPtr: usize, count: u32): u32 {
  let changed: u32 = 0;
  let start: usize = 0;
  for (let i: u32 = 0; i < count; i++) {
    const end = <usize>load<u32>(endsPtr + (<usize>i << 2));
    const pattern = patternOf(hash(dataPtr + start, end - start, SEED));
    changed += raise(regsPtr, pattern & 0xffff, pattern >> 16);
    start = end;
  }
  return changed;
}

/** Counts the dense registers by value into 64 u32 bins at `histoPtr` (cleared first). */
export function denseHistogram(regsPtr: usize, histoPtr: usize): void {
  memory.fill(histoPtr, 0, HISTOGRAM_BINS << 2);
  // Four registers fill three bytes exactly, so each group is read as one 24-bit word.
  for (let group: u32 = 0; group < REGISTERS / 4; group++) {
    const at = regsPtr + <usize>(group * 3);
    const word = <u32>load<u16>(at) | (<u32>load<u8>(at + 2) << 16);
    count(histoPtr, word & REGISTER_MAX);
    count(histoPtr, (word >> 6) & REGISTER_MAX);
    count(histoPtr, (word >> 12) & REGISTER_MAX);
    count(histoPtr, word >> 18);
  }
}

@inline
function count(histoPtr: usize, value: u32): void {
  const bin = histoPtr + (<usize>value << 2);
  store<u32>(bin, load<u32>(bin) + 1);
}

/** Counts one-byte-per-register values into 64 bins; the caller keeps them below 64. */
export function rawHistogram(rawPtr: usize, histoPtr: usize): void {
  memory.fill(histoPtr, 0, HISTOGRAM_BINS << 2);
  for (let i: u32 = 0; i < REGISTERS; i += 8) {
    const word = load<u64>(rawPtr + <usize>i);
    // Mostly-empty unions are common (PFCOUNT of small sets): skip eight zero registers at once.
    if (word == 0) {
      store<u32>(histoPtr, load<u32>(histoPtr) + 8);
      continue;
    }
    for (let b: u64 = 0; b < 64; b += 8) count(histoPtr, <u32>((word >> b) & 0xff));
  }
}

/** raw[i] = max(raw[i], dense register i), for the union of several HyperLogLogs. */
export function denseMaxInto(rawPtr: usize, regsPtr: usize): void {
  for (let group: u32 = 0; group < REGISTERS / 4; group++) {
    const word = <u32>load<u16>(regsPtr + <usize>(group * 3)) | (<u32>load<u8>(regsPtr + <usize>(group * 3) + 2) << 16);
    const at = rawPtr + <usize>(group << 2);
    maxByte(at, word & REGISTER_MAX);
    maxByte(at + 1, (word >> 6) & REGISTER_MAX);
    maxByte(at + 2, (word >> 12) & REGISTER_MAX);
    maxByte(at + 3, word >> 18);
  }
}

@inline
function maxByte(at: usize, value: u32): void {
  if (value > <u32>load<u8>(at)) store<u8>(at, <u8>value);
}

/** Raises each dense register to raw[i] where that is higher (PFMERGE into a dense HLL); returns how many changed. */
export function denseRaiseTo(regsPtr: usize, rawPtr: usize): u32 {
  let changed: u32 = 0;
  for (let i: u32 = 0; i < REGISTERS; i++) {
    const run = <u32>load<u8>(rawPtr + <usize>i);
    if (run != 0) changed += raise(regsPtr, i, run);
  }
  return changed;
}
