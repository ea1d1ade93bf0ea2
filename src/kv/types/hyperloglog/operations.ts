/**
 * HLL operations over either encoding, on bytes alone (no keyspace): adding elements, counting,
 * unions. The commands and PFSELFTEST are built from these.
 */
import { hllPatterns } from "../../../wasm/hll.ts";
import { denseAdd, denseHistogram, denseMaxInto, denseRaiseTo, denseSetPatterns } from "./dense.ts";
import { estimate } from "./estimator.ts";
import { corruptedHll, isSparse } from "./header.ts";
import { SetResult, SparseBuffer, sparseHistogram, sparseMaxInto, sparseSet, sparseToDense } from "./sparse.ts";

/**
 * An HLL value's bytes and the byte Redis keeps after them: zero, except after a split of an
 * XZERO cut off at the end of a corrupt sparse value (see SparseBuffer).
 */
export interface Hll {
  bytes: Uint8Array;
  pastEnd: number;
}

/** The HLL after additions: the input's own bytes when dense (changed in place), else new bytes. */
export interface AddResult extends Hll {
  /** Whether any register rose. */
  changed: boolean;
  /**
   * The sparse opcodes turned out corrupt part-way. `bytes` then holds the registers set before
   * that, because Redis changes the value in place and keeps them.
   */
  corrupt: boolean;
}

/**
 * Adds items[from..] to an HLL. A dense HLL is changed in place: hashed and raised in one wasm
 * call (or, for a few elements, hashed in wasm and raised in place). A sparse one is hashed in one
 * call and then set register by register in element order, turning dense (and taking the rest of
 * the patterns at once) when a register outgrows the sparse form or the opcodes would outgrow
 * `sparseBytesMax`.
 */
export function addElements(hll: Hll, items: readonly string[], from: number, sparseBytesMax: number): AddResult {
  if (!isSparse(hll.bytes)) return { ...hll, changed: denseAdd(hll.bytes, items, from) > 0, corrupt: false };
  const patterns = hllPatterns(items, from);
  const work = SparseBuffer.of(hll.bytes, hll.pastEnd);
  let changed = false;
  for (let i = 0; i < patterns.length; i++) {
    const result = sparseSet(work, patterns[i]! & 0xffff, patterns[i]! >>> 16, sparseBytesMax);
    if (result === SetResult.Changed) changed = true;
    else if (result === SetResult.Invalid) return { bytes: work.copy(), pastEnd: work.pastEnd, changed, corrupt: true };
    else if (result === SetResult.Promote) {
      const dense = sparseToDense(work.copy(), work.pastEnd);
      if (dense === null) return { bytes: work.copy(), pastEnd: work.pastEnd, changed, corrupt: true };
      denseSetPatterns(dense, patterns, i);
      return { bytes: dense, pastEnd: 0, changed: true, corrupt: false };
    }
  }
  return { bytes: work.copy(), pastEnd: work.pastEnd, changed, corrupt: false };
}

/** The estimate of one HLL; throws corruptedHll for sparse opcodes that do not cover every register. */
export function count(hll: Hll): bigint {
  if (!isSparse(hll.bytes)) return estimate(denseHistogram(hll.bytes));
  const bins = sparseHistogram(hll.bytes, hll.pastEnd);
  if (bins === null) throw corruptedHll();
  return estimate(bins);
}

/** raw[i] = max(raw[i], register i); throws corruptedHll for corrupt sparse opcodes. */
export function mergeInto(raw: Uint8Array, hll: Hll): void {
  if (!isSparse(hll.bytes)) denseMaxInto(raw, hll.bytes);
  else if (!sparseMaxInto(raw, hll.bytes, hll.pastEnd)) throw corruptedHll();
}

/**
 * Raises an HLL's registers to raw's (PFMERGE's write). Dense: in place. Sparse: register by
 * register in index order, as Redis does, so the opcodes (and the point where it turns dense)
 * come out the same. The HLL must be valid.
 */
export function raiseTo(hll: Hll, raw: Uint8Array, sparseBytesMax: number): Hll {
  if (!isSparse(hll.bytes)) {
    denseRaiseTo(hll.bytes, raw);
    return hll;
  }
  const work = SparseBuffer.of(hll.bytes, hll.pastEnd);
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0 || sparseSet(work, i, raw[i]!, sparseBytesMax) !== SetResult.Promote) continue;
    // Registers before i already hold at least raw's values, so raising them all again is harmless.
    const dense = sparseToDense(work.copy(), work.pastEnd)!;
    denseRaiseTo(dense, raw);
    return { bytes: dense, pastEnd: 0 };
  }
  return { bytes: work.copy(), pastEnd: work.pastEnd };
}
