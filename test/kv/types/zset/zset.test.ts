// ZSet on its own (packed while Redis would keep a listpack, then the index + B+tree pair;
// Redis's encoding quirks; range arguments), checked
// against a plain sorted array by fast-check. The tree itself is tested in btree.test.ts, and the
// commands in zset-commands.test.ts.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type LexRange, parseLexRange, parseScoreRange, type ScoreRange } from "../../../../src/kv/types/zset/ranges.ts";
import { clampRankRange, formatScore, type ZEntry, ZSet } from "../../../../src/kv/types/zset/zset.ts";

// ---- the reference model --------------------------------------------------------------------------

const compare = (a: ZEntry, b: ZEntry) => (a.score < b.score ? -1 : a.score > b.score ? 1 : a.member < b.member ? -1 : a.member > b.member ? 1 : 0);

const sorted = (model: Map<string, number>): ZEntry[] => [...model].map(([member, score]) => ({ member, score })).sort(compare);

const inScore = (s: number, r: ScoreRange) => (r.minExclusive ? s > r.min : s >= r.min) && (r.maxExclusive ? s < r.max : s <= r.max);

function inLex(m: string, r: LexRange): boolean {
  const aboveMin = r.min.kind === "-" ? true : r.min.kind === "+" ? false : r.min.exclusive ? m > r.min.value : m >= r.min.value;
  const belowMax = r.max.kind === "+" ? true : r.max.kind === "-" ? false : r.max.exclusive ? m < r.max.value : m <= r.max.value;
  return aboveMin && belowMax;
}

/** Applies offset/limit to an already ordered selection, as ZRANGEBYSCORE ... LIMIT does. */
const window = <T>(items: T[], offset: number, limit: number) => (offset < 0 ? [] : limit < 0 ? items.slice(offset) : items.slice(offset, offset + limit));

// ---- generators -----------------------------------------------------------------------------------

/**
 * Few distinct members (so updates and removals hit), including NUL and high latin1 bytes, and
 * now and then one at or past the 64 bytes a listpack (the packed form) holds.
 */
const member = fc.oneof(
  { weight: 60, arbitrary: fc.string({ unit: fc.constantFrom("a", "b", "c", "m", "z", "\u0000", "\u00ff"), maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom("m".repeat(64), "m".repeat(65)) },
);
/** Scores with many ties and the infinities; never NaN, never -0 (see its own test). */
const score = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(-Infinity, Infinity, 0, 1, 1.5, -2, 3, 1e300) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }).map((d) => (Object.is(d, -0) ? 0 : d)) },
);
const scoreBound = fc.oneof(fc.constantFrom("-inf", "+inf", "0", "(0", "1", "(1", "1.5", "(1.5", "3", "(3", "-2"), score.map(String));
const lexBound = fc.oneof(
  fc.constantFrom("-", "+"),
  fc.tuple(fc.constantFrom("[", "("), member).map(([p, m]) => p + m),
);

type Op =
  | { kind: "set"; member: string; score: number }
  | { kind: "delete"; member: string }
  | { kind: "pop"; highest: boolean }
  | { kind: "deleteScore"; min: string; max: string }
  | { kind: "deleteRank"; start: number; end: number }
  | { kind: "deleteLex"; min: string; max: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant("set" as const), member, score }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("delete" as const), member }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("pop" as const), highest: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteScore" as const), min: scoreBound, max: scoreBound }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("deleteRank" as const), start: fc.integer({ min: -20, max: 20 }), end: fc.integer({ min: -20, max: 20 }) }),
  },
);

/** Applies one operation to the set and the model; returns nothing, throws on disagreement. */
function apply(zset: ZSet, model: Map<string, number>, o: Op, sameScores: boolean): void {
  switch (o.kind) {
    case "set": {
      const s = sameScores ? 0 : o.score;
      expect(zset.set(o.member, s)).toBe(!model.has(o.member));
      model.set(o.member, s);
      return;
    }
    case "delete":
      expect(zset.delete(o.member)).toBe(model.delete(o.member));
      return;
    case "pop": {
      const all = sorted(model);
      const expected = (o.highest ? all.at(-1) : all[0]) ?? null;
      expect(zset.pop(o.highest)).toEqual(expected);
      if (expected !== null) model.delete(expected.member);
      return;
    }
    case "deleteScore": {
      const range = parseScoreRange(o.min, o.max);
      const doomed = sorted(model).filter((e) => inScore(e.score, range));
      expect(zset.deleteRangeByScore(range)).toBe(doomed.length);
      for (const e of doomed) model.delete(e.member);
      return;
    }
    case "deleteRank": {
      const all = sorted(model);
      const clamped = clampRankRange(o.start, o.end, all.length);
      const doomed = clamped === null ? [] : all.slice(clamped[0], clamped[1] + 1);
      expect(clamped === null ? 0 : zset.deleteRangeByRank(clamped[0], clamped[1])).toBe(doomed.length);
      for (const e of doomed) model.delete(e.member);
      return;
    }
    case "deleteLex": {
      const range = parseLexRange(o.min, o.max);
      const doomed = sorted(model).filter((e) => inLex(e.member, range));
      expect(zset.deleteRangeByLex(range)).toBe(doomed.length);
      for (const e of doomed) model.delete(e.member);
      return;
    }
  }
}

/** Every query the commands use, compared with the model. */
function checkQueries(zset: ZSet, model: Map<string, number>, probe: { min: string; max: string; offset: number; limit: number; rank: number }): void {
  zset.validate();
  const all = sorted(model);
  expect(zset.size).toBe(all.length);
  expect([...zset.entries()]).toEqual(all);
  expect([...zset.entries(true)]).toEqual([...all].reverse());
  all.forEach((e, i) => {
    expect(zset.rank(e.member)).toBe(i);
    expect(zset.rank(e.member, true)).toBe(all.length - 1 - i);
    expect(zset.score(e.member)).toBe(e.score);
  });
  expect(zset.at(probe.rank)).toEqual(all[probe.rank] ?? null);

  const clamped = clampRankRange(probe.offset, probe.rank, all.length);
  const expectedRank = clamped === null ? [] : all.slice(clamped[0], clamped[1] + 1);
  const expectedRevRank = clamped === null ? [] : [...all].reverse().slice(clamped[0], clamped[1] + 1);
  expect(clamped === null ? [] : zset.rangeByRank(clamped[0], clamped[1])).toEqual(expectedRank);
  expect(clamped === null ? [] : zset.rangeByRank(clamped[0], clamped[1], true)).toEqual(expectedRevRank);

  const range = parseScoreRange(probe.min, probe.max);
  const inRange = all.filter((e) => inScore(e.score, range));
  expect(zset.countByScore(range)).toBe(inRange.length);
  expect(zset.rangeByScore(range)).toEqual(inRange);
  expect(zset.rangeByScore(range, false, probe.offset, probe.limit)).toEqual(window(inRange, probe.offset, probe.limit));
  expect(zset.rangeByScore(range, true, probe.offset, probe.limit)).toEqual(window([...inRange].reverse(), probe.offset, probe.limit));
}

function checkLexQueries(zset: ZSet, model: Map<string, number>, probe: { min: string; max: string; offset: number; limit: number }): void {
  zset.validate();
  const range = parseLexRange(probe.min, probe.max);
  const inRange = sorted(model).filter((e) => inLex(e.member, range));
  expect(zset.countByLex(range)).toBe(inRange.length);
  expect(zset.rangeByLex(range)).toEqual(inRange);
  expect(zset.rangeByLex(range, false, probe.offset, probe.limit)).toEqual(window(inRange, probe.offset, probe.limit));
  expect(zset.rangeByLex(range, true, probe.offset, probe.limit)).toEqual(window([...inRange].reverse(), probe.offset, probe.limit));
}

const probe = fc.record({
  min: scoreBound,
  max: scoreBound,
  offset: fc.integer({ min: -2, max: 40 }),
  limit: fc.integer({ min: -1, max: 40 }),
  rank: fc.integer({ min: -5, max: 300 }),
});
const lexProbe = fc.record({ min: lexBound, max: lexBound, offset: fc.integer({ min: -2, max: 40 }), limit: fc.integer({ min: -1, max: 40 }) });

// ---- properties -----------------------------------------------------------------------------------

describe("ZSet against a sorted array", () => {
  test("random adds, updates and removals keep order, ranks and score ranges right", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { maxLength: 400, size: "max" }), fc.array(probe, { minLength: 1, maxLength: 4 }), (compact, ops, probes) => {
        const zset = new ZSet(compact);
        const model = new Map<string, number>();
        for (const o of ops) apply(zset, model, o, false);
        for (const p of probes) checkQueries(zset, model, p);
      }),
      { numRuns: 200 },
    );
  });

  test("checks hold after every single step of a long sequence", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(op, { minLength: 50, maxLength: 250, size: "max" }), probe, (compact, ops, p) => {
        const zset = new ZSet(compact);
        const model = new Map<string, number>();
        for (const o of ops) {
          apply(zset, model, o, false);
          checkQueries(zset, model, p);
        }
      }),
      { numRuns: 20 },
    );
  });

  test("lex ranges over equal scores, for both the listpack scan and the tree search", () => {
    const lexOp: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: op },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteLex" as const), min: lexBound, max: lexBound }) },
    );
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(lexOp, { maxLength: 300, size: "max" }),
        fc.array(lexProbe, { minLength: 1, maxLength: 4 }),
        (compact, ops, probes) => {
          const zset = new ZSet(compact);
          const model = new Map<string, number>();
          for (const o of ops) apply(zset, model, o, true);
          for (const p of probes) checkLexQueries(zset, model, p);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("large sets: many leaves, counts and removals stay consistent", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), fc.integer({ min: -50, max: 50 })), { minLength: 500, maxLength: 3000 }),
        probe,
        (pairs, p) => {
          const zset = new ZSet();
          const model = new Map<string, number>();
          for (const [m, s] of pairs) {
            zset.set(`m${m}`, s);
            model.set(`m${m}`, s);
          }
          expect(zset.encoding).toBe(model.size > 128 ? "skiplist" : "listpack");
          checkQueries(zset, model, p);
          for (const [m] of pairs.slice(0, pairs.length / 2)) expect(zset.delete(`m${m}`)).toBe(model.delete(`m${m}`));
          checkQueries(zset, model, p);
        },
      ),
      { numRuns: 15 },
    );
  });

  test("large sets: removals by rank and score that span many leaves", () => {
    const bound = fc.integer({ min: -60, max: 60 }).chain((n) => fc.constantFrom(String(n), `(${n}`, "-inf", "+inf"));
    const removal: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("deleteScore" as const), min: bound, max: bound }),
      fc.record({ kind: fc.constant("deleteRank" as const), start: fc.integer({ min: -3000, max: 3000 }), end: fc.integer({ min: -3000, max: 3000 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: -50, max: 50 })), { minLength: 500, maxLength: 3000 }),
        fc.array(removal, { minLength: 1, maxLength: 4 }),
        probe,
        (pairs, removals, p) => {
          const zset = new ZSet(false);
          const model = new Map<string, number>();
          for (const [m, s] of pairs) {
            zset.set(`m${m}`, s);
            model.set(`m${m}`, s);
          }
          for (const o of removals) apply(zset, model, o, false);
          checkQueries(zset, model, p);
        },
      ),
      { numRuns: 15 },
    );
  });

  test("large sets with one score: lex ranges and lex removals that span many leaves", () => {
    const name = (n: number) => `m${String(n).padStart(4, "0")}`;
    const bound = fc.oneof(
      fc.constantFrom("-", "+"),
      fc.tuple(fc.constantFrom("[", "("), fc.integer({ min: 0, max: 3100 })).map(([p, n]) => p + name(n)),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 3000 }), { minLength: 300, maxLength: 3000 }),
        bound,
        bound,
        fc.array(fc.record({ min: bound, max: bound, offset: fc.integer({ min: -1, max: 40 }), limit: fc.integer({ min: -1, max: 40 }) }), {
          minLength: 1,
          maxLength: 3,
        }),
        (ids, dMin, dMax, probes) => {
          const zset = new ZSet(false);
          const model = new Map<string, number>();
          for (const id of ids) apply(zset, model, { kind: "set", member: name(id), score: 0 }, true);
          for (const p of probes) checkLexQueries(zset, model, p);
          apply(zset, model, { kind: "deleteLex", min: dMin, max: dMax }, true);
          for (const p of probes) checkLexQueries(zset, model, p);
        },
      ),
      { numRuns: 20 },
    );
  });
});

// ---- ZSet specifics ---------------------------------------------------------------------------------

describe("ZSet", () => {
  test("set reports new members; equal scores change nothing", () => {
    const z = new ZSet();
    expect(z.set("a", 1)).toBe(true);
    expect(z.set("a", 1)).toBe(false);
    expect(z.set("a", 2)).toBe(false);
    expect(z.score("a")).toBe(2);
    expect(z.delete("a")).toBe(true);
    expect(z.delete("a")).toBe(false);
    expect(z.size).toBe(0);
  });

  test("clone is deep and keeps the encoding", () => {
    const z = ZSet.of([
      { member: "a", score: 1 },
      { member: "b", score: 2 },
    ]);
    const c = z.clone();
    c.set("c", 3);
    c.delete("a");
    expect([...z.entries()].map((e) => e.member)).toEqual(["a", "b"]);
    expect([...c.entries()].map((e) => e.member)).toEqual(["b", "c"]);
    expect(new ZSet(false).clone().encoding).toBe("skiplist");
  });

  test("encoding: listpack until 129 members or a member over 64 bytes, then skiplist for good", () => {
    const z = new ZSet();
    for (let i = 0; i < 128; i++) z.set(`m${i}`, i);
    expect(z.encoding).toBe("listpack");
    z.set("m0", 5); // an update does not grow it
    expect(z.encoding).toBe("listpack");
    z.set("one-more", 0);
    expect(z.encoding).toBe("skiplist");
    z.delete("one-more");
    expect(z.encoding).toBe("skiplist");

    const long = new ZSet();
    long.set("x".repeat(64), 1);
    expect(long.encoding).toBe("listpack");
    long.set("x".repeat(65), 1);
    expect(long.encoding).toBe("skiplist");
  });

  test("-0: a listpack stores it as 0, a skiplist keeps it; replies write it as -0", () => {
    const small = new ZSet();
    small.set("a", -0);
    expect(Object.is(small.score("a"), 0)).toBe(true);
    const big = new ZSet(false);
    big.set("a", -0);
    expect(Object.is(big.score("a"), -0)).toBe(true);
    big.compactIfSmall();
    expect(big.encoding).toBe("listpack");
    expect(Object.is(big.score("a"), 0)).toBe(true);
    big.validate();
    expect(formatScore(-0)).toBe("-0");
    expect(formatScore(0)).toBe("0");
    expect(formatScore(1.1)).toBe("1.1000000000000001");
    expect(formatScore(-Infinity)).toBe("-inf");
  });

  test("lex ranges with mixed scores scan a listpack from its ends, as Redis does", () => {
    // Members out of lexicographic order (scores differ): the listpack answer is "the first
    // element, in score order, at or above min".
    const z = ZSet.of([
      { member: "c", score: 1 },
      { member: "a", score: 2 },
      { member: "d", score: 3 },
      { member: "b", score: 4 },
    ]);
    const range = parseLexRange("[b", "+");
    expect(z.rangeByLex(range).map((e) => e.member)).toEqual(["c", "a", "d", "b"]);
    expect(z.countByLex(range)).toBe(4);
    expect(z.rangeByLex(parseLexRange("-", "[d"), true).map((e) => e.member)).toEqual(["b", "d", "a", "c"]);
    // The quick test against both ends: the first element, "c", is above "[b".
    expect(z.rangeByLex(parseLexRange("-", "[b"))).toEqual([]);
  });

  test("random picks members that exist", () => {
    const z = ZSet.of(Array.from({ length: 20 }, (_, i) => ({ member: `m${i}`, score: i })));
    for (let i = 0; i < 50; i++) expect(z.score(z.random()!.member)).toBeDefined();
    expect(new ZSet().random()).toBeNull();
  });
});

// ---- argument parsing -------------------------------------------------------------------------------

describe("range arguments", () => {
  test("score ranges follow strtod, including its laxness", () => {
    expect(parseScoreRange("(1.5", "+inf")).toEqual({ min: 1.5, max: Infinity, minExclusive: true, maxExclusive: false });
    expect(parseScoreRange("-inf", "(2")).toEqual({ min: -Infinity, max: 2, minExclusive: false, maxExclusive: true });
    expect(parseScoreRange("", "(")).toEqual({ min: 0, max: 0, minExclusive: false, maxExclusive: true });
    expect(parseScoreRange(" 1", "1e400").max).toBe(Infinity);
    expect(parseScoreRange("0x10", "-Infinity").min).toBe(16);
    for (const bad of ["nan", "abc", "1 ", " ", "(nan", "1.5x"]) {
      expect(() => parseScoreRange(bad, "1")).toThrow("ERR min or max is not a float");
    }
  });

  test("lex ranges need [, ( or exactly - and +", () => {
    expect(parseLexRange("[a", "(b")).toEqual({ min: { kind: "value", value: "a", exclusive: false }, max: { kind: "value", value: "b", exclusive: true } });
    expect(parseLexRange("-", "+")).toEqual({ min: { kind: "-" }, max: { kind: "+" } });
    expect(parseLexRange("[", "(")).toEqual({ min: { kind: "value", value: "", exclusive: false }, max: { kind: "value", value: "", exclusive: true } });
    for (const bad of ["a", "", "--", "++", "+a"]) expect(() => parseLexRange(bad, "+")).toThrow("ERR min or max not valid string range item");
  });

  test("rank ranges clamp as Redis does", () => {
    expect(clampRankRange(0, -1, 5)).toEqual([0, 4]);
    expect(clampRankRange(-100, 100, 5)).toEqual([0, 4]);
    expect(clampRankRange(-2, -1, 5)).toEqual([3, 4]);
    expect(clampRankRange(3, 1, 5)).toBeNull();
    expect(clampRankRange(5, 10, 5)).toBeNull();
    expect(clampRankRange(0, -1, 0)).toBeNull();
  });
});
