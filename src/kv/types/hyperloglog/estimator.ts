/**
 * The cardinality estimate Redis 7 computes from the register histogram: Otmar Ertl's improved
 * raw estimator ("New cardinality estimation algorithms for HyperLogLog sketches",
 * arXiv:1702.01284), which needs no bias tables or range corrections. The arithmetic is done in
 * the same order as Redis does it, in doubles, so the estimates agree exactly, and the final
 * rounding reproduces what Redis's C conversions do with an estimate past the int64 range.
 */
import { hllRegisters } from "../../../wasm/hll.ts";

/** Hash bits left after the 14 index bits; registers hold 0..q+1 when built from real hashes. */
const q = 50;
/** 0.5 / ln 2: the estimator's constant for m → ∞. */
const alphaInf = 0.72134752044448170368;
const int64Limit = 2 ** 63;

/** σ(x) = x + Σ_k x^(2^k)·2^(k-1), summed until the double stops changing. */
export function sigma(x: number): number {
  if (x === 1) return Infinity;
  let power = x;
  let weight = 1;
  let sum = x;
  for (;;) {
    power *= power;
    const before = sum;
    sum += power * weight;
    weight += weight;
    if (sum === before) return sum;
  }
}

/** τ(x) = (1 − x − Σ_k (1 − x^(2^−k))²·2^−k) / 3, summed until the double stops changing. */
export function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let root = x;
  let weight = 1;
  let sum = 1 - x;
  for (;;) {
    root = Math.sqrt(root);
    const before = sum;
    weight *= 0.5;
    sum -= (1 - root) * (1 - root) * weight;
    if (sum === before) return sum / 3;
  }
}

/**
 * The estimate from `bins[v]` = how many registers hold v (64 bins), as the u64 Redis stores in
 * its cache. Values above q+1 only occur in hand-made values; like Redis, we leave them out.
 */
export function estimate(bins: ArrayLike<number>): bigint {
  const m = hllRegisters;
  let z = m * tau((m - bins[q + 1]!) / m);
  for (let j = q; j >= 1; j--) {
    z += bins[j]!;
    z *= 0.5;
  }
  z += m * sigma(bins[0]! / m);
  return roundToCardinality((alphaInf * m * m) / z);
}

/**
 * Redis rounds with llroundl (half away from zero) and casts to u64. Past the int64 range the
 * x86-64 conversion gives INT64_MIN, which the cast turns into 2^63: that is what Redis caches
 * and replies (as -2^63) for registers no real set of elements produces.
 */
function roundToCardinality(e: number): bigint {
  if (!(e < int64Limit && e >= -int64Limit)) return 1n << 63n;
  return BigInt(Math.round(e));
}
