/**
 * The dense encoding: after the header, 16384 registers of 6 bits, packed little-endian (register
 * i starts at bit 6i), 12288 bytes. The register work itself runs in wasm (src/wasm/hll.ts); this
 * module applies it to a whole HLL value, header included.
 */
import { hllDenseAdd, hllDenseHistogram, hllDenseMaxInto, hllDenseRaiseTo, hllDenseSetPatterns } from "../../../wasm/hll.ts";
import { denseBytes, headerBytes } from "./header.ts";

const registersOf = (hll: Uint8Array) => hll.subarray(headerBytes, denseBytes);

/** Hashes argv[from..] into the registers in place; returns how many raised a register. */
export function denseAdd(hll: Uint8Array, items: readonly string[], from: number): number {
  return hllDenseAdd(registersOf(hll), items, from);
}

/** Applies already-hashed patterns[from..] (the rest of a PFADD that turned dense on the way). */
export function denseSetPatterns(hll: Uint8Array, patterns: Uint32Array, from: number): number {
  return hllDenseSetPatterns(registersOf(hll), patterns, from);
}

/** How many registers hold each value 0..63. */
export function denseHistogram(hll: Uint8Array): Uint32Array {
  return hllDenseHistogram(registersOf(hll));
}

/** raw[i] = max(raw[i], register i). */
export function denseMaxInto(raw: Uint8Array, hll: Uint8Array): void {
  hllDenseMaxInto(raw, registersOf(hll));
}

/** Raises each register to raw[i] where that is higher (PFMERGE's write into a dense HLL). */
export function denseRaiseTo(hll: Uint8Array, raw: Uint8Array): number {
  return hllDenseRaiseTo(registersOf(hll), raw);
}
