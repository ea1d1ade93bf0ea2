/**
 * HyperLogLog register work in wasm (wasm/hll.ts): hashing a batch of elements into patterns,
 * raising dense 6-bit registers, unions and histograms. Every function takes a whole batch or a
 * whole register array and costs one copy in, one call and one copy out, so a PFADD of a
 * thousand elements crosses into wasm once, not a thousand times.
 *
 * Each function has a plain-TypeScript `...Reference` next to it, written from the definition
 * (BigInt MurmurHash64A, one register at a time); fuzz/hll-wasm.test.ts checks they agree.
 *
 * Elements are latin1 strings, the form kv's arguments arrive in (one char per byte).
 * A pattern is a u32: the register index in bits 0..15 and the run length (1..51) in bits 16..23.
 */
import { hllHashSeed, murmur64aReference } from "./murmur64a.ts";
import { ensureMemory, loadWasm } from "./module.ts";

export const hllRegisters = 16384;
const indexBits = 14;
/** Dense registers: 16384 × 6 bits. */
export const hllDenseRegisterBytes = (hllRegisters * 6) / 8;
export const hllRegisterMax = 63;
export const hllHistogramBins = 64;
/**
 * Element bytes copied into linear memory per wasm call. A PFADD with more is split into batches
 * of this size, so one huge command does not grow linear memory (which never shrinks) by its size.
 */
export const hllBatchBytesMax = 1024 * 1024;
/** Elements per wasm call, bounding the end-offset and pattern tables the same way. */
export const hllBatchItemsMax = 64 * 1024;

interface HllExports {
  memory: WebAssembly.Memory;
  inputOffset(): number;
  patterns(dataPtr: number, endsPtr: number, count: number, outPtr: number): void;
  denseSetPatterns(regsPtr: number, patternsPtr: number, count: number): number;
  denseAdd(regsPtr: number, dataPtr: number, endsPtr: number, count: number): number;
  denseHistogram(regsPtr: number, histoPtr: number): void;
  rawHistogram(rawPtr: number, histoPtr: number): void;
  denseMaxInto(rawPtr: number, regsPtr: number): void;
  denseRaiseTo(regsPtr: number, rawPtr: number): number;
}

const wasm = loadWasm("hll").exports as unknown as HllExports;

// Fixed layout of linear memory: registers (plus the spare byte the 16-bit loads may touch),
// the raw union, the histogram, then the batch tables and element bytes, which grow as needed.
const regsPtr = wasm.inputOffset();
const rawPtr = regsPtr + hllDenseRegisterBytes + 8;
const histoPtr = rawPtr + hllRegisters;
const endsPtr = histoPtr + 4 * hllHistogramBins;
const patternsPtr = endsPtr + 4 * hllBatchItemsMax;
const dataPtr = patternsPtr + 4 * hllBatchItemsMax;

// Views of linear memory, made again only when growing it detaches them: a small PFADD should not
// pay for creating typed arrays.
let memoryBytes = new Uint8Array(0);
let memoryWords = new Uint32Array(0);
let memoryBytesMax = 0;
/** A view of linear memory holding at least `bytes` bytes. */
function memoryFor(bytes: number): Uint8Array {
  if (bytes <= memoryBytesMax) return memoryBytes;
  ensureMemory(wasm.memory, bytes);
  memoryBytes = new Uint8Array(wasm.memory.buffer);
  memoryWords = new Uint32Array(wasm.memory.buffer);
  memoryBytesMax = memoryBytes.length;
  return memoryBytes;
}
memoryFor(dataPtr + hllBatchBytesMax);

/**
 * Up to this many elements, a dense PFADD hashes in wasm but raises the registers in TypeScript,
 * in place: copying the 12 KB of registers into linear memory and back costs more than a few
 * hundred register updates (bench/hyperloglog.ts).
 */
export const hllInPlaceItemsMax = 128;

/**
 * Copies items[from..] into the batch area, as many as fit in one batch; returns how many.
 * Always takes at least one item, so an element larger than a batch still goes through (alone).
 */
function loadBatch(items: readonly string[], from: number): number {
  let bytes = 0;
  let count = 0;
  while (from + count < items.length && count < hllBatchItemsMax) {
    const length = items[from + count]!.length;
    if (count > 0 && bytes + length > hllBatchBytesMax) break;
    bytes += length;
    count++;
  }
  const memory = memoryFor(dataPtr + bytes);
  const ends = memoryWords;
  const endsAt = endsPtr >> 2;
  let at = dataPtr;
  for (let i = 0; i < count; i++) {
    const item = items[from + i]!;
    // Short elements (the usual case) are copied by a loop; long ones by one native write.
    if (item.length < 64) for (let c = 0; c < item.length; c++) memory[at + c] = item.charCodeAt(c);
    else Buffer.from(memory.buffer, at, item.length).write(item, "latin1");
    at += item.length;
    ends[endsAt + i] = at - dataPtr;
  }
  return count;
}

/** The pattern of every element of items[from..], in order. */
export function hllPatterns(items: readonly string[], from: number): Uint32Array {
  const out = new Uint32Array(Math.max(0, items.length - from));
  for (let done = 0; done < out.length; ) {
    const count = loadBatch(items, from + done);
    wasm.patterns(dataPtr, endsPtr, count, patternsPtr);
    for (let i = 0, at = patternsPtr >> 2; i < count; i++) out[done + i] = memoryWords[at + i]!;
    done += count;
  }
  return out;
}

/** Copies the 12288 dense register bytes into linear memory (a wrong size is a caller's bug). */
function loadRegisters(registers: Uint8Array): void {
  if (registers.length !== hllDenseRegisterBytes) throw new Error(`dense registers are ${hllDenseRegisterBytes} bytes, got ${registers.length}`);
  const memory = memoryFor(dataPtr);
  memory.set(registers, regsPtr);
  memory[regsPtr + hllDenseRegisterBytes] = 0;
}

/** Hashes items[from..] into the dense registers in place; returns how many raised a register. */
export function hllDenseAdd(registers: Uint8Array, items: readonly string[], from: number): number {
  if (items.length - from <= hllInPlaceItemsMax) return setPatternsInPlace(registers, hllPatterns(items, from), 0);
  loadRegisters(registers);
  let changed = 0;
  for (let done = from; done < items.length; ) {
    const count = loadBatch(items, done);
    changed += wasm.denseAdd(regsPtr, dataPtr, endsPtr, count);
    done += count;
  }
  if (changed > 0) registers.set(memoryBytes.subarray(regsPtr, regsPtr + hllDenseRegisterBytes));
  return changed;
}

/** Applies patterns[from..] to the dense registers in place; returns how many raised a register. */
export function hllDenseSetPatterns(registers: Uint8Array, patterns: Uint32Array, from: number): number {
  if (patterns.length - from <= hllInPlaceItemsMax) return setPatternsInPlace(registers, patterns, from);
  loadRegisters(registers);
  let changed = 0;
  for (let done = from; done < patterns.length; done += hllBatchItemsMax) {
    const batch = patterns.subarray(done, Math.min(patterns.length, done + hllBatchItemsMax));
    memoryWords.set(batch, patternsPtr >> 2);
    changed += wasm.denseSetPatterns(regsPtr, patternsPtr, batch.length);
  }
  if (changed > 0) registers.set(memoryBytes.subarray(regsPtr, regsPtr + hllDenseRegisterBytes));
  return changed;
}

/**
 * The small-batch path: registers raised in place, no copies. It is also the reference for the
 * wasm denseSetPatterns (hllDenseSetPatternsReference).
 */
function setPatternsInPlace(registers: Uint8Array, patterns: Uint32Array, from: number): number {
  let changed = 0;
  for (let i = from; i < patterns.length; i++) {
    const index = patterns[i]! & 0xffff;
    const run = patterns[i]! >>> 16;
    if (run > getDenseRegister(registers, index)) {
      setDenseRegister(registers, index, run);
      changed++;
    }
  }
  return changed;
}

function histogram(): Uint32Array {
  return memoryWords.slice(histoPtr >> 2, (histoPtr >> 2) + hllHistogramBins);
}

/** How many dense registers hold each value 0..63. */
export function hllDenseHistogram(registers: Uint8Array): Uint32Array {
  loadRegisters(registers);
  wasm.denseHistogram(regsPtr, histoPtr);
  return histogram();
}

/** How many one-byte registers hold each value; every value must be below 64. */
export function hllRawHistogram(raw: Uint8Array): Uint32Array {
  memoryFor(dataPtr).set(raw, rawPtr);
  wasm.rawHistogram(rawPtr, histoPtr);
  return histogram();
}

/** raw[i] = max(raw[i], dense register i): adds a dense HLL to a union. */
export function hllDenseMaxInto(raw: Uint8Array, registers: Uint8Array): void {
  loadRegisters(registers);
  memoryBytes.set(raw, rawPtr);
  wasm.denseMaxInto(rawPtr, regsPtr);
  raw.set(memoryBytes.subarray(rawPtr, rawPtr + hllRegisters));
}

/** Raises each dense register to raw[i] where that is higher; returns how many changed. */
export function hllDenseRaiseTo(registers: Uint8Array, raw: Uint8Array): number {
  loadRegisters(registers);
  memoryBytes.set(raw, rawPtr);
  const changed = wasm.denseRaiseTo(regsPtr, rawPtr);
  if (changed > 0) registers.set(memoryBytes.subarray(regsPtr, regsPtr + hllDenseRegisterBytes));
  return changed;
}

// ---- plain-TypeScript references ------------------------------------------------------------

/** Dense register `index`: 6 bits starting at bit 6·index, least significant bits first. */
export function getDenseRegister(registers: Uint8Array, index: number): number {
  const bit = index * 6;
  const byte = bit >> 3;
  const shift = bit & 7;
  const high = byte + 1 < registers.length ? registers[byte + 1]! : 0;
  return ((registers[byte]! >> shift) | (high << (8 - shift))) & hllRegisterMax;
}

export function setDenseRegister(registers: Uint8Array, index: number, value: number): void {
  const bit = index * 6;
  const byte = bit >> 3;
  const shift = bit & 7;
  registers[byte] = (registers[byte]! & ~(hllRegisterMax << shift)) | ((value << shift) & 0xff);
  // A register that crosses a byte boundary keeps its high bits in the next byte.
  if (shift > 2) registers[byte + 1] = (registers[byte + 1]! & ~(hllRegisterMax >> (8 - shift))) | (value >> (8 - shift));
}

/** The pattern of one element, from the BigInt MurmurHash64A. */
export function hllPatternReference(item: string): number {
  const hash = murmur64aReference(Buffer.from(item, "latin1"), hllHashSeed);
  const index = Number(hash & BigInt(hllRegisters - 1));
  let rest = hash >> BigInt(indexBits);
  let run = 1;
  while (run <= 64 - indexBits && (rest & 1n) === 0n) {
    rest >>= 1n;
    run++;
  }
  return index | (run << 16);
}

export function hllPatternsReference(items: readonly string[], from: number): Uint32Array {
  return Uint32Array.from(items.slice(from), hllPatternReference);
}

export const hllDenseSetPatternsReference = setPatternsInPlace;

export function hllDenseAddReference(registers: Uint8Array, items: readonly string[], from: number): number {
  return hllDenseSetPatternsReference(registers, hllPatternsReference(items, from), 0);
}

export function hllDenseHistogramReference(registers: Uint8Array): Uint32Array {
  const bins = new Uint32Array(hllHistogramBins);
  for (let i = 0; i < hllRegisters; i++) bins[getDenseRegister(registers, i)]!++;
  return bins;
}

export function hllRawHistogramReference(raw: Uint8Array): Uint32Array {
  const bins = new Uint32Array(hllHistogramBins);
  for (const value of raw) bins[value]!++;
  return bins;
}

export function hllDenseMaxIntoReference(raw: Uint8Array, registers: Uint8Array): void {
  for (let i = 0; i < hllRegisters; i++) raw[i] = Math.max(raw[i]!, getDenseRegister(registers, i));
}

export function hllDenseRaiseToReference(registers: Uint8Array, raw: Uint8Array): number {
  let changed = 0;
  for (let i = 0; i < hllRegisters; i++) {
    if (raw[i]! > getDenseRegister(registers, i)) {
      setDenseRegister(registers, i, raw[i]!);
      changed++;
    }
  }
  return changed;
}
