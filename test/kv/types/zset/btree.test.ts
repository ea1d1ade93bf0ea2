// The counted B+tree behind sorted sets (src/kv/types/zset/btree.ts) on its own: order, ranks,
// searches, walks and bulk removal, checked against a plain sorted array by fast-check — with tiny
// nodes so that a few hundred elements make a deep tree that splits, shares and merges often, and
// with the real node sizes around their limits. ZSet on top of it is tested in zset.test.ts.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { BTree, innerChildrenMax, leafEntriesMax, type TreeEntry, type TreeShape } from "../../../../src/kv/types/zset/btree.ts";

// ---- the reference model --------------------------------------------------------------------------

/** (score, member) order: -0 and 0 are equal scores, members compare as latin1 bytes. */
const before = (a: TreeEntry, b: TreeEntry) => a.score < b.score || (a.score === b.score && a.member < b.member);
const compare = (a: TreeEntry, b: TreeEntry) => (before(a, b) ? -1 : before(b, a) ? 1 : 0);

/** The reference: member → score, sorted on demand. */
type Model = Map<string, number>;
const sorted = (model: Model): TreeEntry[] => [...model].map(([member, score]) => ({ score, member })).sort(compare);

// ---- generators -----------------------------------------------------------------------------------

/** Up to ~400 distinct members, including NUL and high latin1 bytes, so ties on score are common. */
const member = fc.string({ unit: fc.constantFrom("a", "b", "m", "z", "\u0000", "\u00ff"), maxLength: 3 });
/** Scores with many ties, both zeros and both infinities; never NaN. */
const score = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(-Infinity, Infinity, 0, -0, 1, 1.5, -2, 3, 1e300, -1e-300) },
  { weight: 1, arbitrary: fc.double({ noNaN: true }) },
);

type Op =
  | { kind: "put"; member: string; score: number }
  | { kind: "delete"; member: string }
  | { kind: "deleteWrongScore"; member: string; score: number }
  | { kind: "deleteRange"; start: number; n: number };

const op = (rangeWeight: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.record({ kind: fc.constant("put" as const), member, score }) },
    { weight: 5, arbitrary: fc.record({ kind: fc.constant("delete" as const), member }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteWrongScore" as const), member, score }) },
    {
      weight: rangeWeight,
      arbitrary: fc.record({ kind: fc.constant("deleteRange" as const), start: fc.integer({ min: -3, max: 300 }), n: fc.integer({ min: -2, max: 60 }) }),
    },
  );

/** Node sizes from the smallest allowed to the real ones. */
const shape: fc.Arbitrary<TreeShape> = fc.constantFrom(
  { leafEntriesMax: 4, innerChildrenMax: 4 },
  { leafEntriesMax: 5, innerChildrenMax: 4 },
  { leafEntriesMax: 4, innerChildrenMax: 7 },
  { leafEntriesMax: 8, innerChildrenMax: 6 },
  { leafEntriesMax, innerChildrenMax },
);

/** Applies one operation to the tree and the model; throws on disagreement. */
function apply(tree: BTree, model: Model, o: Op): void {
  switch (o.kind) {
    case "put": {
      const current = model.get(o.member);
      if (current === undefined) tree.insert(o.score, o.member);
      else tree.updateScore(o.member, current, o.score);
      model.set(o.member, o.score);
      return;
    }
    case "delete": {
      const current = model.get(o.member);
      expect(tree.delete(current ?? 0, o.member)).toBe(current !== undefined);
      model.delete(o.member);
      return;
    }
    case "deleteWrongScore": {
      const current = model.get(o.member);
      const present = current === o.score; // -0 and 0 name the same element
      expect(tree.delete(o.score, o.member)).toBe(present);
      if (present) model.delete(o.member);
      return;
    }
    case "deleteRange": {
      const all = sorted(model);
      const from = Math.max(0, o.start);
      const doomed = all.slice(from, from + Math.max(0, o.n));
      const removed: TreeEntry[] = [];
      expect(tree.deleteRange(o.start, o.n, (s, m) => removed.push({ score: s, member: m }))).toBe(doomed.length);
      expect(removed).toEqual(doomed);
      for (const e of doomed) model.delete(e.member);
      return;
    }
  }
}

interface Probe {
  rank: number;
  reverse: boolean;
  take: number;
  key: TreeEntry;
}

const probe: fc.Arbitrary<Probe> = fc.record({
  rank: fc.integer({ min: -2, max: 420 }),
  reverse: fc.boolean(),
  take: fc.integer({ min: 1, max: 80 }),
  key: fc.record({ score, member }),
});

/** Every query, compared with the model. toEqual tells -0 from 0, so stored zeros are checked too. */
function checkAll(tree: BTree, model: Model, probes: Probe[]): void {
  tree.validate();
  const all = sorted(model);
  expect(tree.length).toBe(all.length);
  expect([...tree.entries()]).toEqual(all);
  expect([...tree.entries(true)]).toEqual([...all].reverse());
  expect(tree.first).toEqual(all[0] ?? null);
  expect(tree.last).toEqual(all.at(-1) ?? null);
  all.forEach((e, i) => {
    expect(tree.rankOf(e.score, e.member)).toBe(i);
    expect(tree.at(i)).toEqual(e);
  });
  expect(tree.at(-1)).toBeNull();
  expect(tree.at(all.length)).toBeNull();
  for (const p of probes) checkProbe(tree, all, p);
}

function checkProbe(tree: BTree, all: TreeEntry[], p: Probe): void {
  // Searches: the number of elements below a key, below a score, at or below a score.
  const { key } = p;
  expect(tree.countWhile((s, m) => before({ score: s, member: m }, key))).toBe(all.filter((e) => before(e, key)).length);
  expect(tree.countWhile((s) => s < key.score)).toBe(all.filter((e) => e.score < key.score).length);
  expect(tree.countWhile((s) => s <= key.score)).toBe(all.filter((e) => e.score <= key.score).length);
  const present = all.some((e) => e.member === key.member && e.score === key.score);
  if (!present) expect(tree.rankOf(key.score, key.member)).toBe(-1);

  // Walks from a rank, in either direction, stopped after `take` elements.
  const walked: TreeEntry[] = [];
  tree.walk(p.rank, p.reverse, (s, m) => walked.push({ score: s, member: m }) < p.take);
  const inRange = p.rank >= 0 && p.rank < all.length;
  const expected = !inRange ? [] : p.reverse ? all.slice(Math.max(0, p.rank - p.take + 1), p.rank + 1).reverse() : all.slice(p.rank, p.rank + p.take);
  expect(walked).toEqual(expected);
}

// ---- properties -----------------------------------------------------------------------------------

describe("BTree against a sorted array", () => {
  test("random inserts, score updates, deletes and range deletes keep every query right", () => {
    fc.assert(
      fc.property(shape, fc.array(op(1), { maxLength: 700, size: "max" }), fc.array(probe, { minLength: 1, maxLength: 5 }), (s, ops, probes) => {
        const tree = new BTree(s);
        const model: Model = new Map();
        for (const o of ops) apply(tree, model, o);
        checkAll(tree, model, probes);
      }),
      { numRuns: 250 },
    );
  });

  test("the structure stays valid after every single step, with the smallest nodes", () => {
    fc.assert(
      fc.property(fc.array(op(2), { minLength: 50, maxLength: 400, size: "max" }), probe, (ops, p) => {
        const tree = new BTree({ leafEntriesMax: 4, innerChildrenMax: 4 });
        const model: Model = new Map();
        for (const o of ops) {
          apply(tree, model, o);
          tree.validate();
          expect(tree.length).toBe(model.size);
          checkProbe(tree, sorted(model), p);
        }
        checkAll(tree, model, [p]);
      }),
      { numRuns: 40 },
    );
  });

  test("freezeFrom any rank holds the elements from there on, read in any steps, whatever changes the tree after", () => {
    fc.assert(
      fc.property(
        shape,
        fc.array(op(1), { maxLength: 400, size: "max" }),
        fc.nat(),
        fc.array(fc.tuple(op(1), fc.integer({ min: 1, max: 40 })), { maxLength: 150 }),
        (s, ops, at, later) => {
          const tree = new BTree(s);
          const model: Model = new Map();
          for (const o of ops) apply(tree, model, o);
          const rank = at % (model.size + 2); // past the end too: an empty run
          const run = tree.freezeFrom(rank);
          const expected = sorted(model).slice(rank);
          // Reads between the tree's changes, as a rewrite writes between clients' commands.
          const read: TreeEntry[] = [];
          let done = false;
          for (const [o, step] of later) {
            apply(tree, model, o);
            if (!done) done = run.read(step, (score, member) => read.push({ score, member }));
          }
          while (!done) done = run.read(7, (score, member) => read.push({ score, member }));
          expect(read).toEqual(expected);
          expect(run.read(5, () => expect.unreachable())).toBe(true);
          checkAll(tree, model, []);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("all scores equal: order, ranks and searches go by member alone", () => {
    fc.assert(
      fc.property(
        shape,
        fc.uniqueArray(member, { maxLength: 300 }),
        fc.constantFrom(0, -0, 7, Infinity, -Infinity),
        fc.array(probe, { maxLength: 4 }),
        (s, members, sc, probes) => {
          const tree = new BTree(s);
          const model: Model = new Map();
          for (const m of members) {
            tree.insert(sc, m);
            model.set(m, sc);
          }
          checkAll(
            tree,
            model,
            probes.map((p) => ({ ...p, key: { score: sc, member: p.key.member } })),
          );
          // With one score the member alone is a monotone predicate, as lex ranges need.
          for (const p of probes) {
            expect(tree.countWhile((_s, m) => m < p.key.member)).toBe(members.filter((m) => m < p.key.member).length);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test("real node sizes: sets that grow and shrink across one leaf's capacity", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: leafEntriesMax - 3, max: leafEntriesMax + 3 }),
        fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 200, maxLength: 200 }),
        (n, scores) => {
          const tree = new BTree();
          const model: Model = new Map();
          for (let i = 0; i < n; i++) {
            tree.insert(scores[i]!, `m${i}`);
            model.set(`m${i}`, scores[i]!);
          }
          expect(tree.dump().height).toBe(n > leafEntriesMax ? 2 : 1);
          checkAll(tree, model, []);
          // Remove from the middle until the tree is one leaf again, then empty.
          for (let i = 0; i < n; i++) {
            const m = `m${(i * 7) % n}`;
            if (!model.has(m)) continue;
            expect(tree.delete(model.get(m)!, m)).toBe(true);
            model.delete(m);
            tree.validate();
          }
          for (const m of [...model.keys()]) {
            expect(tree.delete(model.get(m)!, m)).toBe(true);
            model.delete(m);
          }
          checkAll(tree, model, []);
          expect(tree.dump()).toEqual({ length: 0, height: 1, leafSizes: [0] });
        },
      ),
      { numRuns: 30 },
    );
  });
});

// ---- edge cases and structure ---------------------------------------------------------------------

describe("BTree", () => {
  test("an empty tree answers every query with nothing", () => {
    const tree = new BTree();
    tree.validate();
    expect(tree.length).toBe(0);
    expect(tree.first).toBeNull();
    expect(tree.last).toBeNull();
    expect(tree.at(0)).toBeNull();
    expect(tree.rankOf(0, "a")).toBe(-1);
    expect(tree.delete(0, "a")).toBe(false);
    expect(tree.countWhile(() => true)).toBe(0);
    expect(tree.deleteRange(0, 10, () => {})).toBe(0);
    const visited: string[] = [];
    tree.walk(0, false, (_s, m) => visited.push(m) > 0);
    tree.walk(0, true, (_s, m) => visited.push(m) > 0);
    expect(visited).toEqual([]);
    expect([...tree.entries()]).toEqual([]);
    expect(() => tree.updateScore("a", 1, 2)).toThrow();
  });

  test("one element is first, last, rank 0 and element 0", () => {
    const tree = new BTree();
    tree.insert(Infinity, "x");
    tree.validate();
    expect(tree.first).toEqual({ score: Infinity, member: "x" });
    expect(tree.last).toEqual(tree.first);
    expect(tree.rankOf(Infinity, "x")).toBe(0);
    expect(tree.rankOf(-Infinity, "x")).toBe(-1);
    expect(tree.at(0)).toEqual({ score: Infinity, member: "x" });
    expect(tree.countWhile((s) => s < Infinity)).toBe(0);
    expect(tree.countWhile((s) => s <= Infinity)).toBe(1);
    expect(tree.delete(Infinity, "x")).toBe(true);
    expect(tree.length).toBe(0);
    tree.validate();
  });

  test("orders by score, then by member bytes; -0 and 0 are one score", () => {
    const tree = new BTree({ leafEntriesMax: 4, innerChildrenMax: 4 });
    const pairs = [
      [2, "b"],
      [1, "z"],
      [0, "n"],
      [2, "a"],
      [-Infinity, "x"],
      [-0, "m"],
      [Infinity, "y"],
      [2, "\u00ff"],
      [2, "\u0000"],
      [0, "l"],
    ] as const;
    for (const [s, m] of pairs) tree.insert(s, m);
    tree.validate();
    expect([...tree.entries()].map((e) => `${Object.is(e.score, -0) ? "-0" : e.score}:${e.member}`)).toEqual([
      "-Infinity:x",
      "0:l",
      "-0:m",
      "0:n",
      "1:z",
      "2:\u0000",
      "2:a",
      "2:b",
      "2:\u00ff",
      "Infinity:y",
    ]);
    // An element stored as -0 is found by 0 too, and keeps its -0.
    expect(tree.rankOf(0, "m")).toBe(2);
    expect(Object.is(tree.at(2)!.score, -0)).toBe(true);
    tree.updateScore("m", -0, 0);
    expect(Object.is(tree.at(2)!.score, 0)).toBe(true);
    expect(tree.delete(-0, "n")).toBe(true);
    tree.validate();
  });

  test("updateScore moves elements within a leaf and across leaves", () => {
    const tree = new BTree({ leafEntriesMax: 8, innerChildrenMax: 4 });
    for (let i = 0; i < 100; i++) tree.insert(i, `m${i}`);
    tree.updateScore("m50", 50, 50.5); // stays put
    tree.updateScore("m51", 51, 48.5); // moves left inside its leaf
    tree.updateScore("m52", 52, 1000); // to the last leaf
    tree.updateScore("m0", 0, -1000); // stays first
    tree.updateScore("m53", 53, -Infinity); // to the first leaf
    tree.validate();
    expect(tree.first).toEqual({ score: -Infinity, member: "m53" });
    expect(tree.last).toEqual({ score: 1000, member: "m52" });
    expect(tree.rankOf(48.5, "m51")).toBe(1 + 49);
    expect(() => tree.updateScore("m52", 52, 1)).toThrow();
  });

  test("ascending inserts split leaves, then the root; deletions merge back down to one leaf", () => {
    const tree = new BTree();
    for (let i = 0; i < leafEntriesMax; i++) tree.insert(i, "m");
    expect(tree.dump().height).toBe(1);
    tree.insert(leafEntriesMax, "m");
    expect(tree.dump()).toEqual({ length: leafEntriesMax + 1, height: 2, leafSizes: [leafEntriesMax / 2, leafEntriesMax / 2 + 1] });
    // One fewer in the left leaf: the two fit in one leaf again, and the root goes.
    expect(tree.delete(0, "m")).toBe(true);
    expect(tree.dump()).toEqual({ length: leafEntriesMax, height: 1, leafSizes: [leafEntriesMax] });

    // Ascending inserts leave half-full leaves behind: the root splits after innerChildrenMax of them.
    const n = (leafEntriesMax / 2) * innerChildrenMax + leafEntriesMax;
    const big = new BTree();
    for (let i = 0; i < n; i++) big.insert(i, "m");
    big.validate();
    expect(big.dump().height).toBe(3);
    // Every deletion order must undo it; a fixed shuffle keeps this test fast and repeatable.
    const order = Array.from({ length: n }, (_, i) => (i * 7919) % n);
    order.forEach((i, k) => {
      expect(big.delete(i, "m")).toBe(true);
      if (k % 97 === 0) big.validate();
    });
    big.validate();
    expect(big.dump()).toEqual({ length: 0, height: 1, leafSizes: [0] });
  });

  test("deleteRange removes runs spanning many leaves, one leaf at a time", () => {
    const tree = new BTree();
    for (let i = 0; i < 5000; i++) tree.insert(i % 10, `m${String(i).padStart(4, "0")}`);
    const all = [...tree.entries()];
    const removed: string[] = [];
    expect(tree.deleteRange(100, 4700, (_s, m) => removed.push(m))).toBe(4700);
    expect(removed).toEqual(all.slice(100, 4800).map((e) => e.member));
    tree.validate();
    expect([...tree.entries()]).toEqual([...all.slice(0, 100), ...all.slice(4800)]);
    expect(tree.deleteRange(150, 1000, () => {})).toBe(150); // clamped at the end
    expect(tree.deleteRange(-5, 10, () => {})).toBe(10); // a negative start counts from 0
    expect(tree.deleteRange(0, Infinity, () => {})).toBe(140);
    tree.validate();
    expect(tree.dump().height).toBe(1);
  });

  test("the root leaf starts small and grows to a full leaf", () => {
    const tree = new BTree();
    for (let i = 0; i < leafEntriesMax; i++) {
      tree.insert(-i, `m${i}`);
      expect(tree.dump().leafSizes).toEqual([i + 1]);
    }
    tree.validate();
    expect(tree.rankOf(0, "m0")).toBe(leafEntriesMax - 1);
  });

  test("a NaN score is refused before it can break the order", () => {
    const tree = new BTree();
    tree.insert(1, "a");
    expect(() => tree.insert(NaN, "b")).toThrow("NaN");
    expect(() => tree.updateScore("a", 1, NaN)).toThrow("NaN");
    tree.validate();
    expect([...tree.entries()]).toEqual([{ score: 1, member: "a" }]);
  });

  test("node sizes below 4 slots are refused", () => {
    expect(() => new BTree({ leafEntriesMax: 3, innerChildrenMax: 8 })).toThrow();
    expect(() => new BTree({ leafEntriesMax: 8, innerChildrenMax: 2 })).toThrow();
  });
});
