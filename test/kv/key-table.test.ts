// The keyspace's hash table (src/kv/key-table.ts) on its own, against a Map by fast-check: sets,
// overwrites that grow and shrink entries (moving them between sizes), deletes that shift probe
// runs back, growth and shrinking — with keys and values at and one past the inline limits, and
// keys that share a prefix so many probes compare bytes. SCAN's walk is checked for its
// guarantee: every key there from the start to the end of a walk is returned, across resizes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { KeyTable, keyInlineBytesMax, valueInlineBytesMax } from "../../src/kv/key-table.ts";
import { List } from "../../src/kv/types/list.ts";
import type { Value } from "../../src/kv/keyspace.ts";

const text = (length: number, char = "k") => char.repeat(length);

/** Keys: short ones that collide on prefixes, binary ones, and ones at and past the inline limit. */
const key = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 300 }).map((i) => `key:${i}`) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("\u0000", "\u00ff", "a", "\r"), maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(text(keyInlineBytesMax), text(keyInlineBytesMax + 1), text(keyInlineBytesMax - 1, "j")) },
);
/** Values: strings at and past the inline limit, empty, binary, and objects. */
const value = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom("x", "\u0000", "\u00ff"), maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(text(valueInlineBytesMax, "v"), text(valueInlineBytesMax + 1, "w"), "") },
  { weight: 1, arbitrary: fc.constant(null).map(() => new List(["a"])) },
);

type Op = { kind: "set"; key: string; value: Value } | { kind: "delete"; key: string } | { kind: "clear" };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("set" as const), key, value }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("delete" as const), key }) },
  { weight: 1, arbitrary: fc.constant({ kind: "clear" as const }) },
);

function apply(table: KeyTable<Value>, model: Map<string, Value>, step: Op): void {
  if (step.kind === "set") {
    expect(table.set(step.key, step.value)).toBe(!model.has(step.key));
    model.set(step.key, step.value);
  } else if (step.kind === "delete") expect(table.delete(step.key)).toBe(model.delete(step.key));
  else {
    table.clear();
    model.clear();
  }
}

function expectSame(table: KeyTable<Value>, model: Map<string, Value>): void {
  expect(table.size).toBe(model.size);
  expect(table.keys().sort()).toEqual([...model.keys()].sort());
  for (const [k, v] of model) {
    const ref = table.find(k);
    expect(ref).toBeGreaterThanOrEqual(0);
    expect(table.keyOf(ref)).toBe(k);
    // Objects come back as the same object; strings as equal text.
    expect(table.valueOf(ref)).toBe(v);
  }
}

describe("KeyTable", () => {
  test("behaves as a Map under any sequence of sets, deletes and clears", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const table = new KeyTable<Value>();
        const model = new Map<string, Value>();
        for (const step of ops) apply(table, model, step);
        expectSame(table, model);
        for (const missing of ["nope", text(keyInlineBytesMax + 2)]) expect(table.find(missing)).toBe(-1);
      }),
      { numRuns: 200 },
    );
  });

  test("warm reads any keys in any state of the table, changes nothing, and sees objects only where there are some", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.array(key, { maxLength: 300 }), (ops, keys) => {
        const table = new KeyTable<Value>();
        const model = new Map<string, Value>();
        expect(table.warm(keys, keys.length)).toBe(false); // empty: no slab to read from yet
        for (const step of ops) apply(table, model, step);
        const seen = table.warm(keys, keys.length);
        const objects = [...model.values()].some((v) => typeof v !== "string" || v.length > valueInlineBytesMax);
        if (!objects) expect(seen).toBe(false);
        expectSame(table, model);
      }),
      { numRuns: 200 },
    );
    const one = new KeyTable<Value>();
    one.set("list", new List(["a"]));
    expect(one.warm(["list"], 1)).toBe(true);
  });

  test("walked in slot order by blocks of any sizes, every entry comes once", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.array(fc.integer({ min: 1, max: 70 }), { minLength: 1, maxLength: 20 }), (ops, blocks) => {
        const table = new KeyTable<Value>();
        const model = new Map<string, Value>();
        for (const step of ops) apply(table, model, step);
        const refs: number[] = [];
        for (let from = 0, b = 0; from < table.capacity; b++) {
          const to = Math.min(table.capacity, from + blocks[b % blocks.length]!);
          table.entriesHomedIn(from, to, refs);
          from = to;
        }
        expect(refs.map((ref) => table.keyOf(ref)).sort()).toEqual([...model.keys()].sort());
      }),
      { numRuns: 300 },
    );
  });

  test("a snapshot holds the table as it was, in the same slots, whatever happens to either afterwards", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.array(op, { maxLength: 300 }), fc.nat(), (before, after, cut) => {
        const table = new KeyTable<Value>();
        const model = new Map<string, Value>();
        for (const step of before) apply(table, model, step);
        // A walk in slot order stopped anywhere goes on in the snapshot where it left off.
        const walked: number[] = [];
        const stop = cut % (table.capacity + 1);
        table.entriesHomedIn(0, stop, walked);
        const keysBefore = walked.map((ref) => table.keyOf(ref));
        const copy = table.snapshot() as KeyTable<Value>;
        const frozen = new Map(model);
        for (const step of after) apply(table, model, step);
        expectSame(copy, frozen);
        const rest: number[] = [];
        copy.entriesHomedIn(stop, copy.capacity, rest);
        expect([...keysBefore, ...rest.map((ref) => copy.keyOf(ref))].sort()).toEqual([...frozen.keys()].sort());
        // And the copy's own changes leave the table alone.
        copy.clear();
        copy.set("only-in-copy", "x");
        expectSame(table, model);
      }),
      { numRuns: 200 },
    );
  });

  test("grows past many resizes and shrinks back, every key still found", () => {
    const table = new KeyTable<Value>();
    const model = new Map<string, Value>();
    for (let i = 0; i < 20_000; i++) apply(table, model, { kind: "set", key: `k${i}`, value: String(i) });
    expect(table.capacity).toBeGreaterThanOrEqual(2 * table.size);
    expectSame(table, model);
    for (let i = 0; i < 20_000; i += 1) if (i % 100 !== 0) apply(table, model, { kind: "delete", key: `k${i}` });
    expect(table.capacity).toBeLessThan(2048);
    expectSame(table, model);
  });

  test("an inline value's bytes are readable in place, and rewriting one in place keeps its neighbours", () => {
    const table = new KeyTable<Value>();
    table.set("a", "xyz");
    table.set("b", "123");
    table.set("a", "xy!"); // same size: rewritten in place
    table.set("b", "1234567890"); // larger: moved
    const ref = table.find("a");
    const at = table.valueAt(ref);
    expect(String.fromCharCode(...table.bytesOf(ref).subarray(at, at + table.valueLength(ref)))).toBe("xy!");
    expect(table.valueOf(table.find("b"))).toBe("1234567890");
    table.set("b", new List(["q"]));
    expect(table.valueLength(table.find("b"))).toBe(-1);
  });

  test("an integer written in place reads back as its decimal text, or changes nothing when the entry would change size", () => {
    const safe = fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), safe, safe, (keyLength, before, after) => {
        const table = new KeyTable<Value>();
        const k = text(keyLength);
        table.set(k, String(before));
        table.set("neighbour", "n");
        const ref = table.find(k);
        const fits = Math.ceil((16 + keyLength + String(after).length) / 8) === Math.ceil((16 + keyLength + String(before).length) / 8);
        expect(table.setIntegerInPlace(ref, after)).toBe(fits);
        expect(table.valueOf(ref)).toBe(String(fits ? after : before));
        expect(table.valueOf(table.find("neighbour"))).toBe("n");
      }),
    );
  });

  test("read times belong to their entry and survive the entry moving", () => {
    const table = new KeyTable<Value>();
    table.set("a", "1");
    expect(table.readTime(table.find("a"))).toBe(0);
    table.setReadTime(table.find("a"), 42);
    table.set("a", "a much longer value that moves the entry");
    expect(table.readTime(table.find("a"))).toBe(42);
  });

  test("a SCAN walk returns every key present throughout, while the table grows and shrinks", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2000 }), fc.array(op, { maxLength: 3000 }), fc.integer({ min: 1, max: 50 }), (initial, ops, opsPerStep) => {
        const table = new KeyTable<Value>();
        for (let i = 0; i < initial; i++) table.set(`base:${i}`, "v");
        const present = new Set(table.keys());
        const seen = new Set<string>();
        let cursor = 0;
        let next = 0;
        do {
          const out: string[] = [];
          cursor = table.scanStep(cursor, out);
          for (const k of out) seen.add(k);
          for (let i = 0; i < opsPerStep && next < ops.length; i++, next++) {
            const step = ops[next]!;
            if (step.kind === "clear") continue;
            if (step.kind === "set") table.set(step.key, step.value);
            else table.delete(step.key);
            present.delete(step.key);
          }
        } while (cursor !== 0);
        for (const k of present) expect(seen.has(k)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  test("randomKey returns a key of the table, and undefined for an empty one", () => {
    const table = new KeyTable<Value>();
    expect(table.randomKey()).toBeUndefined();
    for (let i = 0; i < 10; i++) table.set(`k${i}`, "v");
    for (let i = 0; i < 50; i++) expect(table.find(table.randomKey()!)).toBeGreaterThanOrEqual(0);
  });
});
