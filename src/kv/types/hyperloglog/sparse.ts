/**
 * The sparse encoding: after the header, a run-length list of opcodes covering the 16384
 * registers in order, as Redis writes it:
 *
 *   ZERO   00xxxxxx            1..64 registers at 0 (xxxxxx + 1)
 *   XZERO  01xxxxxx yyyyyyyy   1..16384 registers at 0 (14 bits + 1)
 *   VAL    1vvvvvxx            1..4 registers (xx + 1) at value 1..32 (vvvvv + 1)
 *
 * A new HLL is two XZERO bytes. Setting a register splits the opcode covering it and then merges
 * equal neighbouring VALs; this follows Redis step by step (including what it does with malformed
 * opcodes), because the bytes must come out identical: GET returns them, and the point at which
 * the HLL turns dense depends on their length.
 */
import { getDenseRegister, hllRegisters, setDenseRegister } from "../../../wasm/hll.ts";
import { denseBytes, denseEncoding, encodingOffset, headerBytes, invalidateCache, sparseEncoding, writeHeader } from "./header.ts";

/** The largest register value a VAL opcode holds; a higher one makes the HLL dense. */
export const sparseValueMax = 32;
const valRunMax = 4;
const zeroRunMax = 64;
const xzeroRunMax = 16384;
const valBit = 0x80;
const xzeroBit = 0x40;
const typeMask = 0xc0;
/** Merging equal VALs after an update looks at this many opcodes from the one before it. */
const mergeScanOpcodes = 5;
/** The most a split grows the opcodes: XZERO (2 bytes) becomes XZERO VAL XZERO (5). */
const splitGrowthBytesMax = 3;
/** Capacity a SparseBuffer starts with past the value, so the first splits need no copy. */
const spareBytes = 64;

const isZero = (op: number) => (op & typeMask) === 0;
const isXzero = (op: number) => (op & typeMask) === xzeroBit;
const isVal = (op: number) => (op & valBit) !== 0;
const zeroRun = (op: number) => (op & 0x3f) + 1;
const xzeroRun = (op: number, low: number) => (((op & 0x3f) << 8) | low) + 1;
const valValue = (op: number) => ((op >> 2) & 0x1f) + 1;
const valRun = (op: number) => (op & 3) + 1;
const valOp = (value: number, run: number) => valBit | ((value - 1) << 2) | (run - 1);

/** A new, empty sparse HLL: the header and one XZERO covering every register. */
export function emptySparse(): Uint8Array {
  const bytes = new Uint8Array(headerBytes + 2);
  writeHeader(bytes, sparseEncoding);
  bytes[headerBytes] = xzeroBit | ((xzeroRunMax - 1) >> 8);
  bytes[headerBytes + 1] = (xzeroRunMax - 1) & 0xff;
  return bytes;
}

/**
 * A sparse HLL being changed: the bytes with spare capacity after them.
 *
 * The byte just past the end matters. In Redis it is the string's terminator, and an XZERO cut
 * off at the very end (a corrupt value) reads it as its second byte. It is usually zero, but a
 * split of such an XZERO writes its last byte there and Redis keeps it with the value; callers
 * carry it along as `pastEnd`.
 */
export class SparseBuffer {
  private constructor(
    public bytes: Uint8Array,
    public length: number,
  ) {}

  static of(hll: Uint8Array, pastEnd = 0): SparseBuffer {
    const bytes = new Uint8Array(hll.length + spareBytes);
    bytes.set(hll);
    bytes[hll.length] = pastEnd;
    return new SparseBuffer(bytes, hll.length);
  }

  get pastEnd(): number {
    return this.bytes[this.length]!;
  }

  /** A copy of the bytes (for a few hundred bytes, cheaper than a subarray view). */
  copy(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }

  /** Makes room for a split, and the terminator after it. */
  reserve(): void {
    if (this.length + splitGrowthBytesMax + 1 <= this.bytes.length) return;
    const grown = new Uint8Array(this.bytes.length * 2);
    grown.set(this.bytes);
    this.bytes = grown;
  }
}

/** What setting one register did. */
export const SetResult = {
  Unchanged: 0,
  Changed: 1,
  /** The value does not fit a VAL, or the opcodes would outgrow hll-sparse-max-bytes: go dense. */
  Promote: 2,
  /** The register lies past the opcodes' end: the HLL is corrupt. */
  Invalid: 3,
} as const;
export type SetResult = (typeof SetResult)[keyof typeof SetResult];

interface Located {
  /** The opcode covering the register, or -1 when none does. */
  at: number;
  /** The opcode before it, or -1. */
  prev: number;
  /** The first register the opcode covers, and how many it covers. */
  first: number;
  span: number;
}

/** Finds the opcode covering register `index`. */
function locate(hll: SparseBuffer, index: number): Located {
  const b = hll.bytes;
  const end = hll.length;
  let p = headerBytes;
  let prev = -1;
  let first = 0;
  let span = 0;
  while (p < end) {
    const op = b[p]!;
    let opBytes = 1;
    if (isZero(op)) span = zeroRun(op);
    else if (isVal(op)) span = valRun(op);
    else {
      span = xzeroRun(op, b[p + 1]!);
      opBytes = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    p += opBytes;
    first += span;
  }
  return { at: span === 0 || p >= end ? -1 : p, prev, first, span };
}

/** Appends a run of zero registers as ZERO or XZERO; returns the new write position. */
function putZeros(out: Uint8Array, at: number, run: number): number {
  if (run > zeroRunMax) {
    out[at] = xzeroBit | ((run - 1) >> 8);
    out[at + 1] = (run - 1) & 0xff;
    return at + 2;
  }
  out[at] = run - 1;
  return at + 1;
}

/** The opcodes replacing the one covering `index` once that register holds `value`; returns their length. */
function splitOpcode(out: Uint8Array, op: number, first: number, last: number, index: number, value: number): number {
  let n = 0;
  if (isVal(op)) {
    const current = valValue(op);
    if (index !== first) out[n++] = valOp(current, index - first);
    out[n++] = valOp(value, 1);
    if (index !== last) out[n++] = valOp(current, last - index);
  } else {
    if (index !== first) n = putZeros(out, n, index - first);
    out[n++] = valOp(value, 1);
    if (index !== last) n = putZeros(out, n, last - index);
  }
  return n;
}

/** Scratch space for the opcodes a split produces: at most XZERO, VAL, XZERO. */
const seq = new Uint8Array(5);

/**
 * Raises register `index` to `value` if it is lower. `sparseBytesMax` is hll-sparse-max-bytes:
 * a split that would make the whole value longer than that asks for promotion instead.
 */
export function sparseSet(hll: SparseBuffer, index: number, value: number, sparseBytesMax: number): SetResult {
  if (value > sparseValueMax) return SetResult.Promote;
  hll.reserve();
  const found = locate(hll, index);
  if (found.at < 0) return SetResult.Invalid;
  const b = hll.bytes;
  const p = found.at;
  const op = b[p]!;
  const run = isZero(op) ? zeroRun(op) : isVal(op) ? valRun(op) : xzeroRun(op, b[p + 1]!);
  if (isVal(op) && valValue(op) >= value) return SetResult.Unchanged;
  if ((isVal(op) || isZero(op)) && run === 1) {
    // A one-register opcode is rewritten in place.
    b[p] = valOp(value, 1);
  } else {
    const seqBytes = splitOpcode(seq, op, found.first, found.first + found.span - 1, index, value);
    const oldBytes = isXzero(op) ? 2 : 1;
    const delta = seqBytes - oldBytes;
    if (delta > 0 && hll.length + delta > sparseBytesMax) return SetResult.Promote;
    const next = p + oldBytes < hll.length ? p + oldBytes : -1;
    if (delta !== 0 && next >= 0) b.copyWithin(next + delta, next, hll.length);
    hll.length += delta;
    b[hll.length] = 0;
    // Written after the terminator, as Redis does: an XZERO cut off at the end loses the tail
    // of the split past the new length, which stays behind the terminator. (A loop: subarray
    // allocates, and this runs once per element.)
    for (let i = 0; i < seqBytes; i++) b[p + i] = seq[i]!;
  }
  mergeValues(hll, found.prev >= 0 ? found.prev : headerBytes);
  invalidateCache(b);
  return SetResult.Changed;
}

/** Merges runs of equal VALs from `from` on, over a few opcodes, as far as a VAL's 4-register limit allows. */
function mergeValues(hll: SparseBuffer, from: number): void {
  const b = hll.bytes;
  let p = from;
  let scan = mergeScanOpcodes;
  while (p < hll.length && scan-- > 0) {
    const op = b[p]!;
    if (isXzero(op)) {
      p += 2;
      continue;
    }
    if (isZero(op)) {
      p++;
      continue;
    }
    if (p + 1 < hll.length && isVal(b[p + 1]!) && valValue(op) === valValue(b[p + 1]!)) {
      const run = valRun(op) + valRun(b[p + 1]!);
      if (run <= valRunMax) {
        b[p + 1] = valOp(valValue(op), run);
        // Shifts the terminator down with the rest, then writes it again at the new end.
        b.copyWithin(p, p + 1, hll.length + 1);
        hll.length--;
        b[hll.length] = 0;
        // Stay on the merged opcode: it may merge with the next one too.
        continue;
      }
    }
    p++;
  }
}

/**
 * Calls `run(value, first, count)` for each opcode in order (value 0 for ZERO and XZERO) and says
 * whether the opcodes cover exactly 16384 registers. Stops at the first opcode that would run
 * past the last register: Redis (with the CVE-2025-32023 fix that Debian's 7.0.15 carries) calls
 * such a value corrupt, wherever the overrun is.
 */
function walk(hll: Uint8Array, pastEnd: number, run: (value: number, first: number, count: number) => void): boolean {
  const length = hll.length;
  let index = 0;
  let p = headerBytes;
  while (p < length) {
    const op = hll[p]!;
    let value = 0;
    let count: number;
    if (isZero(op)) count = zeroRun(op);
    else if (isXzero(op)) {
      // An XZERO cut off at the end reads the byte after it (Redis's string terminator).
      count = xzeroRun(op, p + 1 < length ? hll[p + 1]! : pastEnd);
      p++;
    } else {
      value = valValue(op);
      count = valRun(op);
    }
    if (index + count > hllRegisters) return false;
    run(value, index, count);
    index += count;
    p++;
  }
  return index === hllRegisters;
}

/** The dense form of a sparse HLL (same header, encoding changed), or null when it is corrupt. */
export function sparseToDense(hll: Uint8Array, pastEnd = 0): Uint8Array | null {
  const dense = new Uint8Array(denseBytes);
  dense.set(hll.subarray(0, headerBytes));
  dense[encodingOffset] = denseEncoding;
  const registers = dense.subarray(headerBytes);
  const valid = walk(hll, pastEnd, (value, first, count) => {
    if (value !== 0) for (let i = first; i < first + count; i++) setDenseRegister(registers, i, value);
  });
  return valid ? dense : null;
}

/** How many registers hold each value (64 bins); null when the HLL is corrupt. */
export function sparseHistogram(hll: Uint8Array, pastEnd = 0): Float64Array | null {
  const bins = new Float64Array(64);
  const valid = walk(hll, pastEnd, (value, _first, count) => {
    bins[value]! += count;
  });
  return valid ? bins : null;
}

/** raw[i] = max(raw[i], register i) over a sparse HLL; false when it is corrupt. */
export function sparseMaxInto(raw: Uint8Array, hll: Uint8Array, pastEnd = 0): boolean {
  return walk(hll, pastEnd, (value, first, count) => {
    for (let i = first; i < first + count; i++) if (value > raw[i]!) raw[i] = value;
  });
}

/** PFDEBUG DECODE's text: "z:<run>", "Z:<run>", "v:<value>,<run>" separated by spaces. */
export function sparseDecode(hll: Uint8Array, pastEnd = 0): string {
  const parts: string[] = [];
  let p = headerBytes;
  while (p < hll.length) {
    const op = hll[p]!;
    if (isZero(op)) {
      parts.push(`z:${zeroRun(op)}`);
      p++;
    } else if (isXzero(op)) {
      parts.push(`Z:${xzeroRun(op, p + 1 < hll.length ? hll[p + 1]! : pastEnd)}`);
      p += 2;
    } else {
      parts.push(`v:${valValue(op)},${valRun(op)}`);
      p++;
    }
  }
  return parts.join(" ");
}

/** Register values of a sparse HLL, for tests; null when corrupt. */
export function sparseRegisters(hll: Uint8Array): Uint8Array | null {
  const dense = sparseToDense(hll);
  if (dense === null) return null;
  const registers = dense.subarray(headerBytes);
  return Uint8Array.from({ length: hllRegisters }, (_, i) => getDenseRegister(registers, i));
}
