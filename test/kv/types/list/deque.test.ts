// A list (src/kv/types/list/items.ts: packed while small and short, then a deque) and its deque
// (src/kv/types/list/deque.ts) against an array, by fast-check: pushes and pops at
// both ends, indexing, setting and replacing, with bulk steps that carry it past the size where
// its ring is cut into blocks (and past several doublings there, with the head inside a block)
// and back down through shrinking; and LINSERT's and LREM's edits in the middle (insert,
// removeEqual), which move only part of the ring.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { blockSlots, Deque } from "../../../../src/kv/types/list/deque.ts";
import { List, packedItemsMax } from "../../../../src/kv/types/list/items.ts";
import { packedItemBytesMax } from "../../../../src/kv/types/short-strings.ts";

type Op =
  | { kind: "pushFront" | "pushBack"; n: number }
  | { kind: "popFront" | "popBack"; n: number }
  | { kind: "set"; index: number }
  | { kind: "replace"; n: number };

const count = fc.oneof(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: blockSlots * 3 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom("pushFront" as const, "pushBack" as const), n: count }),
  fc.record({ kind: fc.constantFrom("popFront" as const, "popBack" as const), n: count }),
  fc.record({ kind: fc.constant("set" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("replace" as const), n: fc.oneof(fc.nat(10), fc.nat(blockSlots * 2)) }),
);

/** What LINSERT and LREM use, which a Deque and a List both have. */
interface MiddleEdits {
  readonly size: number;
  pushBack(value: string): void;
  pushFront(value: string): void;
  indexOf(value: string): number;
  insert(index: number, value: string): void;
  removeEqual(value: string, limit: number, fromBack: boolean): number;
  toArray(): string[];
}

type MiddleOp =
  | { kind: "push"; n: number; front: boolean }
  | { kind: "insert"; at: number; repeat: number }
  | { kind: "remove"; repeat: number; limit: number; fromBack: boolean };

/** Repeated values (a few of them) among unique ones, so removals find several matches. */
const repeated = (n: number) => `dup${n}`;
const middleOp: fc.Arbitrary<MiddleOp> = fc.oneof(
  fc.record({ kind: fc.constant("push" as const), n: count, front: fc.boolean() }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), repeat: fc.integer({ min: -1, max: 3 }) }),
  fc.record({ kind: fc.constant("remove" as const), repeat: fc.nat(3), limit: fc.nat(6), fromBack: fc.boolean() }),
);

/** Applies `ops` to `target` and to an array; they must agree after every step. */
function checkMiddleEdits(target: MiddleEdits, ops: MiddleOp[]): void {
  const model: string[] = [];
  let next = 0;
  for (const o of ops) {
    if (o.kind === "push") {
      // Every fifth pushed value repeats, so that removals reach deep into a long ring.
      for (let i = 0; i < o.n; i++) {
        const value = next % 5 === 0 ? repeated(next % 4) : `v${next}`;
        next++;
        if (o.front) target.pushFront(value), model.unshift(value);
        else target.pushBack(value), model.push(value);
      }
    } else if (o.kind === "insert") {
      const at = o.at % (model.length + 1);
      const value = o.repeat < 0 ? `i${next++}` : repeated(o.repeat);
      target.insert(at, value);
      model.splice(at, 0, value);
    } else {
      const value = repeated(o.repeat);
      const limit = o.limit === 0 ? Infinity : o.limit;
      let removed = 0;
      // `step` counts the elements kept so far from the scan's end: a removal keeps it where it is.
      for (let step = 0; step < model.length && removed < limit; ) {
        const i = o.fromBack ? model.length - 1 - step : step;
        if (model[i] === value) {
          model.splice(i, 1);
          removed++;
        } else step++;
      }
      expect(target.removeEqual(value, limit, o.fromBack)).toBe(removed);
    }
    expect(target.size).toBe(model.length);
    for (let r = 0; r < 4; r++) expect(target.indexOf(repeated(r))).toBe(model.indexOf(repeated(r)));
  }
  expect(target.toArray()).toEqual(model);
}

describe("middle edits (LINSERT, LREM)", () => {
  test("a deque inserts and removes equal elements as an array does, at any size and position", () => {
    fc.assert(
      fc.property(fc.array(middleOp, { maxLength: 30 }), (ops) => checkMiddleEdits(new Deque(), ops)),
      { numRuns: 200 },
    );
  });

  test("so does a list, packed or not", () => {
    fc.assert(
      fc.property(fc.array(middleOp, { maxLength: 30 }), (ops) => checkMiddleEdits(new List(), ops)),
      { numRuns: 200 },
    );
  });
});

describe("Deque", () => {
  test("behaves as an array under pushes, pops, sets and replaces at any size", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const deque = new Deque();
        let model: string[] = [];
        let next = 0;
        for (const o of ops) {
          if (o.kind === "pushFront" || o.kind === "pushBack") {
            for (let i = 0; i < o.n; i++) {
              const value = `v${next++}`;
              if (o.kind === "pushFront") {
                deque.pushFront(value);
                model.unshift(value);
              } else {
                deque.pushBack(value);
                model.push(value);
              }
            }
          } else if (o.kind === "popFront" || o.kind === "popBack") {
            for (let i = 0; i < o.n; i++) {
              expect(o.kind === "popFront" ? deque.popFront() : deque.popBack()).toBe(o.kind === "popFront" ? model.shift() : model.pop());
            }
          } else if (o.kind === "set") {
            if (model.length === 0) continue;
            const index = o.index % model.length;
            deque.set(index, `s${next}`);
            model[index] = `s${next++}`;
          } else {
            model = Array.from({ length: o.n }, () => `r${next++}`);
            deque.replace(model);
          }
          expect(deque.size).toBe(model.length);
        }
        expect(deque.toArray()).toEqual(model);
        expect([...deque]).toEqual(model);
        for (const index of [0, model.length - 1, Math.floor(model.length / 2)]) expect(deque.at(index)).toBe(model[index]);
        expect(deque.at(-1)).toBeUndefined();
        expect(deque.at(model.length)).toBeUndefined();
      }),
      { numRuns: 150 },
    );
  });

  test("a list behaves as an array across its packed form and its deque, and is packed until it first holds more than 128 items or an item over 64 bytes", () => {
    /** Items, now and then one at or past the longest a packed list holds. */
    const item = (n: number, long: number) => (long === 1 ? "p".repeat(packedItemBytesMax) : long === 2 ? "q".repeat(packedItemBytesMax + 1) : `v${n}`);
    const listOp = fc.oneof(
      fc.record({
        kind: fc.constantFrom("pushFront" as const, "pushBack" as const, "pushAllFront" as const, "pushAllBack" as const),
        n: fc.integer({ min: 1, max: 70 }),
        long: fc.nat(40),
      }),
      fc.record({ kind: fc.constantFrom("popFront" as const, "popBack" as const), n: fc.integer({ min: 1, max: 70 }), long: fc.constant(0) }),
      fc.record({ kind: fc.constant("set" as const), n: fc.nat(), long: fc.nat(8) }),
      fc.record({ kind: fc.constant("replace" as const), n: fc.nat(140), long: fc.nat(8) }),
    );
    fc.assert(
      fc.property(fc.array(listOp, { maxLength: 30 }), (ops) => {
        const list = new List();
        let model: string[] = [];
        let outgrown = false;
        let next = 0;
        for (const o of ops) {
          if (o.kind === "pushFront" || o.kind === "pushBack") {
            for (let i = 0; i < o.n; i++) {
              const value = item(next++, i === 0 ? o.long : 0);
              if (o.kind === "pushFront") list.pushFront(value), model.unshift(value);
              else list.pushBack(value), model.push(value);
              outgrown ||= model.length > packedItemsMax || value.length > packedItemBytesMax;
            }
          } else if (o.kind === "pushAllFront" || o.kind === "pushAllBack") {
            // One LPUSH or RPUSH of n items (pushAll).
            const values = Array.from({ length: o.n }, (_, i) => item(next++, i === o.n - 1 ? o.long : 0));
            list.pushAll(["PUSH", "l", ...values], 2, o.kind === "pushAllFront");
            for (const value of values) {
              if (o.kind === "pushAllFront") model.unshift(value);
              else model.push(value);
              outgrown ||= model.length > packedItemsMax || value.length > packedItemBytesMax;
            }
          } else if (o.kind === "popFront" || o.kind === "popBack") {
            for (let i = 0; i < o.n; i++)
              expect(o.kind === "popFront" ? list.popFront() : list.popBack()).toBe(o.kind === "popFront" ? model.shift() : model.pop());
          } else if (o.kind === "set") {
            if (model.length === 0) continue;
            const index = o.n % model.length;
            const value = item(next++, o.long);
            list.set(index, value);
            model[index] = value;
            outgrown ||= value.length > packedItemBytesMax;
          } else {
            model = Array.from({ length: o.n }, (_, i) => item(next++, i === 0 ? o.long : 0));
            list.replace(model);
            outgrown ||= model.length > packedItemsMax || model.some((v) => v.length > packedItemBytesMax);
          }
          expect(list.size).toBe(model.length);
          expect(list.packed).toBe(!outgrown);
        }
        expect(list.toArray()).toEqual(model);
        expect([...list]).toEqual(model);
        model.forEach((value, i) => expect(list.at(i)).toBe(value));
        expect(list.at(-1)).toBeUndefined();
        expect(list.at(model.length)).toBeUndefined();
        expect(list.clone().toArray()).toEqual(model);
      }),
      { numRuns: 200 },
    );
  });

  test("a list's clone holds what the list held, and each changes without the other", () => {
    /** Pushes and pops at either end, applied alike to a list and its model. */
    const change = fc.array(fc.tuple(fc.constantFrom("pushFront", "pushBack", "popFront", "popBack"), count), { maxLength: 8 });
    const apply = (list: List, model: string[], steps: [string, number][], tag: string) => {
      for (const [kind, n] of steps) {
        for (let i = 0; i < n; i++) {
          if (kind === "pushFront") list.pushFront(`${tag}${i}`), model.unshift(`${tag}${i}`);
          else if (kind === "pushBack") list.pushBack(`${tag}${i}`), model.push(`${tag}${i}`);
          else if (kind === "popFront") expect(list.popFront()).toBe(model.shift());
          else expect(list.popBack()).toBe(model.pop());
        }
      }
    };
    fc.assert(
      fc.property(change, change, change, (before, afterOriginal, afterCopy) => {
        const list = new List();
        const model: string[] = [];
        apply(list, model, before, "b");
        const copy = list.clone();
        const copyModel = [...model];
        expect(copy.toArray()).toEqual(model);
        apply(list, model, afterOriginal, "o");
        apply(copy, copyModel, afterCopy, "c");
        expect(list.toArray()).toEqual(model);
        expect(copy.toArray()).toEqual(copyModel);
      }),
      { numRuns: 150 },
    );
  });

  test("a ring grown past many blocks with its head inside a block keeps every element in order", () => {
    const deque = new Deque();
    const model: string[] = [];
    // Pushing at the front moves the head into the middle of a block before each doubling.
    for (let i = 0; i < blockSlots * 9 + 7; i++) {
      const value = String(i);
      if (i % 3 === 0) {
        deque.pushFront(value);
        model.unshift(value);
      } else {
        deque.pushBack(value);
        model.push(value);
      }
    }
    expect(deque.toArray()).toEqual(model);
  });
});
