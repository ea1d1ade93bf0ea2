/**
 * Ordering search results by distance exactly as redis-server 7.0 on Debian 12 orders them,
 * ties included: members at the same distance (duplicate positions are common) come out in an
 * order fixed by the sorting algorithm, and clients see it.
 *
 *   - Sorting the whole result uses glibc 2.36's qsort, a stable top-down merge sort.
 *   - With COUNT below the number found, Redis sorts only the first COUNT places with its own
 *     partial quicksort (Bentley–McIlroy three-way partitioning, NetBSD's variant, skipping
 *     partitions that lie wholly past the wanted places). It is not stable, so we follow its
 *     steps: the same pivots, comparisons and swaps.
 *
 * The comparator answers 1, 0 or -1 like Redis's (a NaN distance compares as "less" either
 * way); following the algorithms step by step keeps even that case identical.
 */

export type Compare<T> = (a: T, b: T) => number;

/** Sorts all of `items` in place, stably (glibc's msort: halves of n/2 and n - n/2, left wins ties). */
export function mergeSort<T>(items: T[], compare: Compare<T>): void {
  const scratch = new Array<T>(items.length);
  mergeSortRange(items, 0, items.length, compare, scratch);
}

function mergeSortRange<T>(items: T[], start: number, n: number, compare: Compare<T>, scratch: T[]): void {
  if (n <= 1) return;
  const leftCount = n >>> 1;
  const rightCount = n - leftCount;
  mergeSortRange(items, start, leftCount, compare, scratch);
  mergeSortRange(items, start + leftCount, rightCount, compare, scratch);
  let left = start;
  let right = start + leftCount;
  const leftEnd = right;
  const end = start + n;
  let out = 0;
  while (left < leftEnd && right < end) {
    if (compare(items[left]!, items[right]!) <= 0) scratch[out++] = items[left++]!;
    else scratch[out++] = items[right++]!;
  }
  while (left < leftEnd) scratch[out++] = items[left++]!;
  // What is left of the right half is already in place.
  for (let i = 0; i < out; i++) items[start + i] = scratch[i]!;
}

/** Below this many elements the quicksort finishes with insertion sort. */
const insertionSortMax = 6;
/** Above this many elements the pivot is a median of three medians of three (Tukey's ninther). */
const nintherMin = 41;

/**
 * Puts the smallest `lastIndex + 1` items, in order, at the front of `items` (the rest stay in
 * some order), as Redis's pqsort(items, n, compare, 0, lastIndex) does.
 */
export function partialQuickSort<T>(items: T[], compare: Compare<T>, lastIndex: number): void {
  new PartialQuickSort(items, compare, lastIndex).sort(0, items.length);
}

class PartialQuickSort<T> {
  constructor(
    private readonly items: T[],
    private readonly compare: Compare<T>,
    /** The last place the caller wants sorted. */
    private readonly lastWanted: number,
  ) {}

  private cmp(i: number, j: number): number {
    return this.compare(this.items[i]!, this.items[j]!);
  }

  private swap(i: number, j: number): void {
    const t = this.items[i]!;
    this.items[i] = this.items[j]!;
    this.items[j] = t;
  }

  /** Swaps the n items starting at i with the n starting at j, pairwise in order. */
  private swapBlocks(i: number, j: number, n: number): void {
    for (let k = 0; k < n; k++) this.swap(i + k, j + k);
  }

  private medianOfThree(a: number, b: number, c: number): number {
    if (this.cmp(a, b) < 0) return this.cmp(b, c) < 0 ? b : this.cmp(a, c) < 0 ? c : a;
    return this.cmp(b, c) > 0 ? b : this.cmp(a, c) < 0 ? a : c;
  }

  private insertionSort(start: number, n: number): void {
    for (let m = start + 1; m < start + n; m++) {
      for (let l = m; l > start && this.cmp(l - 1, l) > 0; l--) this.swap(l, l - 1);
    }
  }

  /** Whether the partition [start, start + n) holds any wanted place (the wanted ones start at 0). */
  private holdsWanted(start: number): boolean {
    return this.lastWanted >= start;
  }

  private choosePivot(start: number, n: number): number {
    let middle = start + (n >>> 1);
    if (n > insertionSortMax + 1) {
      let low = start;
      let high = start + n - 1;
      if (n >= nintherMin) {
        const d = Math.floor(n / 8);
        low = this.medianOfThree(low, low + d, low + 2 * d);
        middle = this.medianOfThree(middle - d, middle, middle + d);
        high = this.medianOfThree(high - 2 * d, high - d, high);
      }
      middle = this.medianOfThree(low, middle, high);
    }
    return middle;
  }

  sort(start: number, n: number): void {
    for (;;) {
      if (n <= insertionSortMax) return this.insertionSort(start, n);
      this.swap(start, this.choosePivot(start, n));
      // Three-way partition around the pivot now at `start`: items equal to it gather at both
      // ends ([start, a) and (d, end)), smaller ones after the left group, larger before the right.
      let a = start + 1;
      let b = a;
      let c = start + n - 1;
      let d = c;
      for (;;) {
        let result: number;
        while (b <= c && (result = this.cmp(b, start)) <= 0) {
          if (result === 0) this.swap(a++, b);
          b++;
        }
        while (b <= c && (result = this.cmp(c, start)) >= 0) {
          if (result === 0) this.swap(c, d--);
          c--;
        }
        if (b > c) break;
        this.swap(b++, c--);
      }
      // Redis 7.0's copy has no "nothing moved, finish with insertion sort" shortcut that other
      // BSD-derived quicksorts have; with it, ties would come out in another order.

      const end = start + n;
      let r = Math.min(a - start, b - a);
      this.swapBlocks(start, b - r, r);
      r = Math.min(d - c, end - d - 1);
      this.swapBlocks(b, end - r, r);

      const smaller = b - a;
      if (smaller > 1 && this.holdsWanted(start)) this.sort(start, smaller);
      const larger = d - c;
      if (larger <= 1) return;
      start = end - larger;
      n = larger;
      if (!this.holdsWanted(start)) return;
    }
  }
}
