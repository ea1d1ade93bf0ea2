// The limit on automatic rewrites that keep failing (Redis 7's): after three failures in a row,
// one try per wait of 1, 2, 4, … minutes, at most an hour; a success lifts it.
import { describe, expect, test } from "bun:test";
import { PersistenceState, rewriteFailuresBeforeLimit, rewriteLimitMinutesMax } from "../../../src/kv/aof/persistence-state.ts";

const minute = 60_000;

function failTimes(state: PersistenceState, n: number, atMs: number): void {
  for (let i = 0; i < n; i++) {
    state.rewriteStarted(atMs);
    state.rewriteEnded("failed", atMs);
  }
}

describe("automatic rewrites after failures", () => {
  test("below the threshold every check may rewrite", () => {
    const state = new PersistenceState();
    failTimes(state, rewriteFailuresBeforeLimit - 1, 0);
    const waits: number[] = [];
    expect(state.autoRewriteAllowed(0, (m) => waits.push(m))).toBe(true);
    expect(waits).toEqual([]);
  });

  test("at the threshold the waits double from a minute up to the maximum, with one try after each", () => {
    const state = new PersistenceState();
    failTimes(state, rewriteFailuresBeforeLimit, 0);
    const waits: number[] = [];
    let now = 0;
    for (let round = 0; round < 9; round++) {
      expect(state.autoRewriteAllowed(now, (m) => waits.push(m))).toBe(false);
      const wait = waits.at(-1)! * minute;
      // One millisecond short of the wait: still refused, and no new wait is set.
      expect(state.autoRewriteAllowed(now + wait - 1, (m) => waits.push(m))).toBe(false);
      now += wait;
      expect(state.autoRewriteAllowed(now, (m) => waits.push(m))).toBe(true);
      failTimes(state, 1, now);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, rewriteLimitMinutesMax, rewriteLimitMinutesMax, rewriteLimitMinutesMax]);
  });

  test("a rewrite that succeeds lifts the limit", () => {
    const state = new PersistenceState();
    failTimes(state, rewriteFailuresBeforeLimit + 2, 0);
    expect(state.autoRewriteAllowed(0, () => {})).toBe(false);
    state.rewriteStarted(1000);
    state.rewriteEnded("done", 4500);
    expect(state.rewriteFailuresInARow).toBe(0);
    expect(state.lastRewriteSeconds).toBe(3);
    expect(state.autoRewriteAllowed(5000, () => {})).toBe(true);
    // A new run of failures starts the waits from a minute again.
    failTimes(state, rewriteFailuresBeforeLimit, 6000);
    const waits: number[] = [];
    state.autoRewriteAllowed(6000, (m) => waits.push(m));
    expect(waits).toEqual([1]);
  });
});

describe("how a rewrite ended", () => {
  test("a stopped rewrite is neither a success nor a failure; one that could not start is a failure; starts are counted", () => {
    const state = new PersistenceState();
    failTimes(state, 2, 0);
    state.rewriteStarted(10_000);
    expect(state.currentRewriteSeconds(12_500)).toBe(2);
    state.rewriteEnded("stopped", 13_000);
    expect(state.currentRewriteSeconds(14_000)).toBe(-1);
    expect(state.lastRewriteSeconds).toBe(3);
    expect(state.rewriteFailuresInARow).toBe(2);
    expect(state.lastRewriteOk).toBe(false);
    state.rewriteNotStarted();
    expect(state.rewriteFailuresInARow).toBe(3);
    expect(state.rewrites).toBe(3);
  });
});
