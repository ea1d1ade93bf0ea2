/**
 * One command's latencies, for LATENCY HISTOGRAM (Redis 7.0's latency tracking). Redis keeps
 * them in an HDR histogram of nanoseconds from 1 to 10^9 at two significant digits, and replies
 * with its cumulative counts at powers of two from 1,024 ns, each labelled with the highest
 * value that counts there in whole µs (1, 2, 4, 8, 16, 33, 66, 132, …) and shown only where the
 * count grew. This keeps the same buckets, so the same latencies give the same reply.
 *
 * The buckets: values below 256 ns have one each; above, each power of two [2^k, 2^(k+1)) is cut
 * into 128 equal parts of 2^(k−7) ns. A value counts at a reporting level L when it is in L's
 * part or below, so the level's label is L plus its part's width, less 1 ns.
 */

/** Redis's LATENCY_HISTOGRAM_MIN_VALUE and _MAX_VALUE: latencies are clamped into 1 ns … 1 s. */
const valueNsMin = 1;
const valueNsMax = 1_000_000_000;
/** Two significant digits: 256 first buckets, then 128 per power of two. */
const firstBuckets = 256;
const partsPerPower = 128;
/** log2(partsPerPower). */
const partsMagnitude = 7;
/** The bucket of valueNsMax is the last: 22 powers past the first 256 values, 128 parts each. */
const bucketsTotal = (31 - Math.clz32(valueNsMax) - partsMagnitude) * partsPerPower + firstBuckets;
/** The first reporting level, and each next one is twice the last (Redis's hdr_iter_log_init(…, 1024, 2)). */
const firstLevelNs = 1024;

/** The power past the first 256 values that `ns` is in (0 below 256). */
const powerOf = (ns: number): number => (ns < firstBuckets ? 0 : 31 - Math.clz32(ns) - partsMagnitude);

/** The bucket of a value (an integer 1 … 10^9). */
export function bucketOf(ns: number): number {
  const power = powerOf(ns);
  // ns is below 2^30, so a 32-bit shift is exact.
  return power * partsPerPower + (ns >>> power);
}

/** The lowest value that counts in the same bucket as `ns`. */
export function lowestEquivalentNs(ns: number): number {
  const width = 2 ** powerOf(ns);
  return Math.floor(ns / width) * width;
}

/** The highest value that counts in the same bucket as `ns`. */
export function highestEquivalentNs(ns: number): number {
  return lowestEquivalentNs(ns) + 2 ** powerOf(ns) - 1;
}

/** The lowest value of a bucket. */
function bucketValue(bucket: number): number {
  if (bucket < firstBuckets) return bucket;
  const power = Math.floor(bucket / partsPerPower) - 1;
  return (bucket - power * partsPerPower) * 2 ** power;
}

export class LatencyHistogram {
  private readonly counts = new Float64Array(bucketsTotal);
  calls = 0;

  /** Records one call's latency (clamped into 1 ns … 1 s, as Redis clamps it). */
  record(ns: number): void {
    const value = Math.min(valueNsMax, Math.max(valueNsMin, Math.round(ns)));
    this.counts[bucketOf(value)]!++;
    this.calls++;
  }

  /**
   * The latency at `percentile` (0–100), ns, as INFO latencystats reports it: the highest value
   * of the bucket where the calls counted so far reach that share of all (rounded, at least one);
   * the lowest value of the first bucket for 0.
   */
  percentileNs(percentile: number): number {
    const wanted = Math.max(1, Math.floor((Math.min(percentile, 100) / 100) * this.calls + 0.5));
    let counted = 0;
    let bucket = 0;
    while (bucket < bucketsTotal - 1) {
      counted += this.counts[bucket]!;
      if (counted >= wanted) break;
      bucket++;
    }
    const value = bucketValue(bucket);
    return percentile === 0 ? lowestEquivalentNs(value) : highestEquivalentNs(value);
  }

  /** [label µs, calls at or below it] at each reporting level where the count grew, as LATENCY HISTOGRAM lists them. */
  cumulative(): [number, number][] {
    const out: [number, number][] = [];
    let counted = 0;
    let bucket = 0;
    for (let level = firstLevelNs; counted < this.calls; level *= 2) {
      const last = bucketOf(Math.min(level, valueNsMax));
      const before = counted;
      for (; bucket <= last; bucket++) counted += this.counts[bucket]!;
      if (counted > before) out.push([Math.floor(highestEquivalentNs(level) / 1000), counted]);
      // Past the largest value there is nothing left to count.
      if (level >= valueNsMax) break;
    }
    return out;
  }
}
