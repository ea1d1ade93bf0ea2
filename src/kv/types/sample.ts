/**
 * Random picks for SPOP, SRANDMEMBER, HRANDFIELD and ZRANDMEMBER: with a positive count the
 * elements are distinct (at most all of them), with a negative count they may repeat — Redis's
 * contract for these commands — and the count arguments that choose between them.
 */
import { int64Max, isKeyword, parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, syntaxError } from "../text/errors.ts";

/**
 * Moves `n` random elements of `pool` into its first `n` places (a partial Fisher–Yates shuffle)
 * and cuts the rest off.
 */
function shuffledHead<T>(pool: T[], n: number): T[] {
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  pool.length = n;
  return pool;
}

/**
 * What the picks read of a set or hash: how many elements it has, one of them at random (O(1)
 * for a large one: a random slot of its table), and all of them as an array the caller may keep.
 */
export interface Drawable<T> {
  readonly size: number;
  /** One element at random; only called on a collection that is not empty. */
  random(): T;
  all(): T[];
}

/**
 * Up to `count` distinct elements in random order. Few of them are drawn one at a time until
 * that many differ, as Redis does, so SRANDMEMBER key 10 on a million members reads ten or so
 * slots instead of copying a million members; past a third of the elements (Redis's threshold
 * too) draws would mostly repeat, and a shuffled copy costs about what the reply does anyway.
 */
export function randomSample<T>(from: Drawable<T>, count: number): T[] {
  const n = Math.min(count, from.size);
  if (n * 3 > from.size) return shuffledHead(from.all(), n);
  const picked = new Set<T>();
  while (picked.size < n) picked.add(from.random());
  return [...picked];
}

/** Redis's contract: `count` distinct elements when positive, -`count` with repeats when negative. */
export function randomElements<T>(from: Drawable<T>, count: number): T[] {
  if (count >= 0) return randomSample(from, count);
  // More picks than elements: one copy, indexed, costs less than a draw each.
  if (-count > from.size) {
    const pool = from.all();
    return Array.from({ length: -count }, () => pool[Math.floor(Math.random() * pool.length)]!);
  }
  return Array.from({ length: -count }, () => from.random());
}

/** One uniformly random element of a collection of `size` > 0 elements, without copying it. */
export function randomElement<T>(items: Iterable<T>, size: number): T {
  let skip = Math.floor(Math.random() * size);
  for (const item of items) if (skip-- === 0) return item;
  throw new Error("randomElement: fewer elements than size");
}

/** `count` distinct indexes below `size` (count < size), in random order. */
export function distinctIndexes(count: number, size: number): number[] {
  // Many of them: shuffle all indexes. Few of them: draw until we have enough, rejecting repeats.
  if (count * 3 > size)
    return shuffledHead(
      Array.from({ length: size }, (_, i) => i),
      count,
    );
  const picked = new Set<number>();
  while (picked.size < count) picked.add(Math.floor(Math.random() * size));
  return [...picked];
}

// ---- count arguments -----------------------------------------------------------------------------

/** Any long except the lowest, whose negation would overflow (Redis's -LONG_MAX..LONG_MAX). */
function parseLongCount(text: string): bigint {
  const n = parseInt64(text);
  if (n === null) throw notAnInteger();
  if (n < -int64Max) throw new KvError(`ERR value is out of range, value must between ${-int64Max} and ${int64Max}`);
  return n;
}

/** SRANDMEMBER's count. */
export function randomCount(text: string): number {
  return Number(parseLongCount(text));
}

/**
 * HRANDFIELD's and ZRANDMEMBER's `count [WITHVALUES|WITHSCORES]` from argv[2], checked in Redis's
 * order: the count, then the syntax, then — with values, which double the reply — that twice the
 * count still fits in a long.
 */
export function randomCountWith(argv: readonly string[], word: string): { count: number; withValues: boolean } {
  const n = parseLongCount(argv[2]!);
  if (argv.length > 4 || (argv.length === 4 && !isKeyword(argv[3]!, word))) throw syntaxError();
  const withValues = argv.length === 4;
  if (withValues && (n < -(int64Max / 2n) || n > int64Max / 2n)) throw new KvError("ERR value is out of range");
  return { count: Number(n), withValues };
}
