/**
 * table.sort for compiled scripts: Lua 5.1's own quicksort (ltablib.c auxsort), step for step —
 * the same pivots, the same comparisons in the same order, the same swaps — so that elements
 * the order calls equal, and an order function that is not a strict order, end where Lua puts
 * them, and an order function that calls redis.call makes the same calls. Lua's error ("invalid
 * order function for sorting", comparing a number with a string) bails.
 */
import type { LuaTable } from "./lua-table.ts";
import { bail, type LuaValue } from "./lua-value.ts";

/** Whether `a` sorts before `b`: the order function's answer as Lua's truth, or Lua's `<`. */
export type ComesBefore = (a: LuaValue, b: LuaValue) => boolean;

/** table.sort on t[1..n]. */
export function luaSort(t: LuaTable, n: number, before: ComesBefore): void {
  sortRange(t, 1, n, before);
}

function sortRange(t: LuaTable, low: number, high: number, before: ComesBefore): void {
  let l = low;
  let u = high;
  while (l < u) {
    // a[l], a[(l+u)/2] and a[u] in order first.
    let a = t.getInt(l);
    let b = t.getInt(u);
    if (before(b, a)) {
      t.setInt(l, b);
      t.setInt(u, a);
    }
    if (u - l === 1) break;
    let i = Math.floor((l + u) / 2);
    a = t.getInt(i);
    b = t.getInt(l);
    if (before(a, b)) {
      t.setInt(i, b);
      t.setInt(l, a);
    } else {
      b = t.getInt(u);
      if (before(b, a)) {
        t.setInt(i, b);
        t.setInt(u, a);
      }
    }
    if (u - l === 2) break;
    // The pivot P = a[i] goes to u-1: a[l] <= P == a[u-1] <= a[u], so l+1..u-2 is left.
    const pivot = t.getInt(i);
    t.setInt(i, t.getInt(u - 1));
    t.setInt(u - 1, pivot);
    i = l;
    let j = u - 1;
    for (;;) {
      while (before(t.getInt(++i), pivot)) if (i > u) bail("invalid order function for sorting");
      while (before(pivot, t.getInt(--j))) if (j < l) bail("invalid order function for sorting");
      if (j < i) break;
      const x = t.getInt(i);
      t.setInt(i, t.getInt(j));
      t.setInt(j, x);
    }
    const x = t.getInt(u - 1);
    t.setInt(u - 1, t.getInt(i));
    t.setInt(i, x);
    // The smaller part by recursion, the larger by the loop, as Lua does.
    if (i - l < u - i) {
      j = l;
      i = i - 1;
      l = i + 2;
    } else {
      j = i + 1;
      i = u;
      u = j - 2;
    }
    sortRange(t, j, i, before);
  }
}
