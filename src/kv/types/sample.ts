/**
 * Random picks for SPOP, SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: with a positive count the
 * elements are distinct (at most all of them), with a negative count they may repeat — Redis's
 * contract for these commands.
 */

/** Up to `count` distinct elements in random order (a partial Fisher–Yates shuffle of a copy). */
export function randomSample<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const n = Math.min(count, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, n);
}

/** `count` random indexes below `size`, repeats allowed. */
export function randomIndexes(size: number, count: number): number[] {
  return Array.from({ length: count }, () => Math.floor(Math.random() * size));
}
