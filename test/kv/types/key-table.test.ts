// The keyspace's hash table (src/kv/types/key-table.ts) on its own, against a Map by fast-check: sets,
// overwrites that grow and shrink entries (moving them between sizes), deletes that shift probe
// runs back, growth and shrinking — with keys and values at and one past the inline limits, and
// keys that share a prefix so many probes compare bytes. SCAN's walk is checked for its
// guarantee: every key there from the start to the end of a walk is returned, across resizes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { blockSlots, hashKey, KeyTable, keyInlineBytesMax, valueInlineBytesMax } from "../../../src/kv/types/key-table.ts";
import { List } from "../../../src/kv/types/list/items.ts";
import type { Value } from "../../../src/kv/types/value.ts";

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
    expect(table.hashOf(ref)).toBe(hashKey(k));
    // Objects come back as the same object; strings as equal text.
    expect(table.valueOf(ref)).toBe(v);
  }
}

/**
 * A walk by `step` (one of KeyTable's cursor walks, adding the keys it meets to `keys`) meets every
 * key present throughout, while generated sets and deletes run between its steps; one over a
 * table that did not change takes a step per `homesPerStep` slots (of the smaller slots, mid-resize).
 */
function walkMeetsEveryKeyPresentThroughout(step: (table: KeyTable<Value>, cursor: number, keys: string[]) => number, homesPerStep = 1): void {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2000 }), fc.array(op, { maxLength: 3000 }), fc.integer({ min: 1, max: 50 }), (initial, ops, opsPerStep) => {
      const table = new KeyTable<Value>();
      for (let i = 0; i < initial; i++) table.set(`base:${i}`, "v");
      // The last sets may have grown the table without moving every key yet: a walk then counts
      // its steps in the smaller (old) slots, as Redis's dictScan does mid-rehash.
      const walkedSlots = table.resizing ? table.capacity / 2 : table.capacity;
      const present = new Set(table.keys());
      const seen = new Set<string>();
      let cursor = 0;
      let next = 0;
      let steps = 0;
      do {
        const keys: string[] = [];
        cursor = step(table, cursor, keys);
        for (const k of keys) seen.add(k);
        for (let i = 0; i < opsPerStep && next < ops.length; i++, next++) {
          const change = ops[next]!;
          if (change.kind === "clear") continue;
          if (change.kind === "set") table.set(change.key, change.value);
          else table.delete(change.key);
          present.delete(change.key);
        }
        steps++;
      } while (cursor !== 0);
      for (const k of present) expect(seen.has(k)).toBe(true);
      if (ops.length === 0 && homesPerStep > 1) expect(steps).toBe(Math.max(1, walkedSlots / homesPerStep));
    }),
    { numRuns: 60 },
  );
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
    /** Besides sets, deletes and clears, the writes made in an entry's place: they must not reach a snapshot sharing its slab. */
    // Each names a key of the table by its place among them (`pick`), so that most find one.
    type InPlace = { kind: "integer"; pick: number; n: number } | { kind: "float"; pick: number; n: number } | { kind: "readTime"; pick: number; time: number };
    const inPlace: fc.Arbitrary<InPlace> = fc.oneof(
      fc.record({ kind: fc.constant("integer" as const), pick: fc.nat(), n: fc.integer({ min: -1e6, max: 1e6 }) }),
      fc.record({ kind: fc.constant("float" as const), pick: fc.nat(), n: fc.double() }),
      fc.record({ kind: fc.constant("readTime" as const), pick: fc.nat(), time: fc.integer({ min: 1, max: 2 ** 31 - 1 }) }),
    );
    const writeInPlace = (table: KeyTable<Value>, model: Map<string, Value>, step: InPlace) => {
      if (model.size === 0) return;
      const key = [...model.keys()][step.pick % model.size]!;
      const ref = table.find(key);
      if (step.kind === "integer") {
        if (table.setIntegerInPlace(ref, step.n)) model.set(key, String(step.n));
      } else if (step.kind === "float") {
        if (table.valueLength(ref) !== 8) return;
        table.setFloatAt(ref, step.n);
        model.set(key, Buffer.from(new Float64Array([step.n]).buffer).toString("latin1"));
      } else table.setReadTime(ref, step.time);
    };
    const readTimes = (table: KeyTable<Value>, keys: Iterable<string>) => [...keys].map((k) => table.readTime(table.find(k)));
    const later = fc.oneof({ weight: 1, arbitrary: op.map((step) => ({ plain: step })) }, { weight: 1, arbitrary: inPlace.map((step) => ({ inPlace: step })) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.array(later, { maxLength: 300 }), fc.nat(), (before, after, cut) => {
        const table = new KeyTable<Value>();
        const model = new Map<string, Value>();
        for (const step of before) apply(table, model, step);
        for (const [k, v] of model) if (typeof v === "string" && v.length === 3) model.set(k, `${v}12345`); // some 8-byte values
        for (const [k, v] of model) table.set(k, v);
        // A walk in slot order stopped anywhere goes on in the snapshot where it left off.
        const walked: number[] = [];
        const stop = cut % (table.capacity + 1);
        table.entriesHomedIn(0, stop, walked);
        const keysBefore = walked.map((ref) => table.keyOf(ref));
        const copy = table.snapshot() as KeyTable<Value>;
        const frozen = new Map(model);
        const frozenReadTimes = readTimes(copy, frozen.keys());
        for (const step of after) {
          if ("plain" in step) apply(table, model, step.plain);
          else writeInPlace(table, model, step.inPlace);
        }
        expectSame(copy, frozen);
        expect(readTimes(copy, frozen.keys())).toEqual(frozenReadTimes);
        const rest: number[] = [];
        copy.entriesHomedIn(stop, copy.capacity, rest);
        expect([...keysBefore, ...rest.map((ref) => copy.keyOf(ref))].sort()).toEqual([...frozen.keys()].sort());
        // And the copy's own changes leave the table alone: both may take the same freed entry
        // (they start with the same free lists), so each must copy a shared slab before writing.
        for (const step of after) {
          if ("plain" in step) apply(copy, frozen, step.plain);
          else writeInPlace(copy, frozen, step.inPlace);
        }
        expectSame(copy, frozen);
        expectSame(table, model);
      }),
      { numRuns: 400 },
    );
  });

  test("after a snapshot, the first write of each kind on either side copies the slab first", () => {
    type Sides = { table: KeyTable<Value>; model: Map<string, Value> };
    /**
     * Several slabs, and every seventh entry freed, so both sides start with the same free lists:
     * entries of 32 bytes (a key of 8 bytes and a value of 8) and of 64. The writes below take two
     * entries of each size, so they come off those lists, onto the same memory on both sides, and
     * a link one side overwrote would send the other's second allocation astray.
     */
    const build = (): [Sides, Sides] => {
      const table = new KeyTable<Value>();
      const model = new Map<string, Value>();
      for (let i = 0; i < 2000; i++) apply(table, model, { kind: "set", key: `key:${String(i).padStart(4, "0")}`, value: "12345678" });
      for (let i = 0; i < 2000; i += 7) apply(table, model, { kind: "delete", key: `key:${String(i).padStart(4, "0")}` });
      // Freed entries of the size a moved entry below takes (a 40-byte value).
      for (let i = 0; i < 4; i++) apply(table, model, { kind: "set", key: `big:${i}`, value: "y".repeat(42) });
      for (let i = 0; i < 4; i++) apply(table, model, { kind: "delete", key: `big:${i}` });
      return [
        { table, model },
        { table: table.snapshot() as KeyTable<Value>, model: new Map(model) },
      ];
    };
    const readTimes = (side: Sides) => [...side.model.keys()].map((k) => side.table.readTime(side.table.find(k)));
    const writes: Record<string, (side: Sides) => void> = {
      "new keys": (s) => {
        apply(s.table, s.model, { kind: "set", key: "new:0001", value: "abcdefgh" });
        apply(s.table, s.model, { kind: "set", key: "new:0002", value: "abcdefgh" });
      },
      "a value of the same size": (s) => apply(s.table, s.model, { kind: "set", key: "key:0001", value: "ABCDEFGH" }),
      "values that move their entries": (s) => {
        apply(s.table, s.model, { kind: "set", key: "key:0003", value: "x".repeat(40) });
        apply(s.table, s.model, { kind: "set", key: "key:0008", value: "x".repeat(40) });
      },
      "a delete": (s) => apply(s.table, s.model, { kind: "delete", key: "key:0005" }),
      "an integer in place": (s) => {
        expect(s.table.setIntegerInPlace(s.table.find("key:0002"), 87654321)).toBe(true);
        s.model.set("key:0002", "87654321");
      },
      "a float in place": (s) => {
        s.table.setFloatAt(s.table.find("key:0004"), 1.5);
        s.model.set("key:0004", Buffer.from(new Float64Array([1.5]).buffer).toString("latin1"));
      },
      "a read time": (s) => s.table.setReadTime(s.table.find("key:0006"), 99),
    };
    for (const [name, write] of Object.entries(writes)) {
      for (const first of [0, 1]) {
        const [one, other] = first === 0 ? build() : build().reverse();
        const otherTimes = readTimes(other!);
        write(one!);
        expectSame(other!.table, other!.model);
        expect(readTimes(other!), name).toEqual(otherTimes);
        // The other side's own writes, which take and free entries too, leave the first alone.
        const oneTimes = readTimes(one!);
        for (const w of Object.values(writes)) w(other!);
        expectSame(one!.table, one!.model);
        expect(readTimes(one!), name).toEqual(oneTimes);
        expectSame(other!.table, other!.model);
      }
    }
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

  test("a resize moves keys a few slots per use: every key is found and drawn meanwhile, and it ends", () => {
    const table = new KeyTable<Value>();
    const resizing = () => table.resizing;
    let n = 0;
    while (table.capacity < 4096) table.set(`k${n++}`, "v");
    // The growth has just begun: nearly every key is still in the old slots.
    expect(resizing()).toBe(true);
    const drawn = new Set<string>();
    // An old slot's key is drawn with probability over 1/2100 per draw (the one new key with
    // 1/1025): 60,000 draws miss any of them less than once in 1e9.
    for (let i = 0; i < 60_000; i++) drawn.add(table.randomKey()!);
    expect(drawn.size).toBe(n);
    for (let i = 0; i < n; i++) expect(table.find(`k${i}`)).toBeGreaterThanOrEqual(0);
    // Reads move nothing, so they see the keys in one order. Changes move old slots, at least 4
    // each (the fewest that end a growth before a shrink can be due).
    expect(resizing()).toBe(true);
    const order = table.keys();
    expect(table.keys()).toEqual(order);
    let changes = 0;
    while (resizing()) table.set(`k${changes++}`, "w");
    expect(changes).toBeLessThanOrEqual(2048 / 4);
    expect(table.keys()).not.toEqual(order);
    expect(table.keys().length).toBe(n);
    // Deleting down to an eighth starts a shrink, which a step of any size moves on.
    let i = 0;
    while (table.capacity === 4096) table.delete(`k${i++}`);
    expect(resizing()).toBe(true);
    expect(table.size).toBe(n - i);
    for (let j = i; j < n; j++) expect(table.find(`k${j}`)).toBeGreaterThanOrEqual(0);
    expect(resizing()).toBe(true);
    let steps = 1;
    while (table.resizeStep(1)) steps++;
    expect(steps).toBeLessThanOrEqual(4096);
    expect(resizing()).toBe(false);
    expect(table.capacity).toBe(2048);
    for (let j = 0; j < i; j++) expect(table.find(`k${j}`)).toBe(-1);
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
    walkMeetsEveryKeyPresentThroughout((table, cursor, keys) => table.scanStep(cursor, keys));
  });

  test("a block walk (the expiry cycle's) meets every entry present throughout, while the table grows and shrinks", () => {
    walkMeetsEveryKeyPresentThroughout((table, cursor, keys) => {
      const refs: number[] = [];
      const next = table.blockRefsStep(cursor, refs);
      for (const ref of refs) keys.push(table.keyOf(ref));
      return next;
    }, blockSlots);
  });

  test("a block walk meets every kept key while most of the table is deleted under it (it shrinks), or it grows eightfold", () => {
    for (const [initial, change] of [
      [4000, "shrink"],
      [500, "grow"],
    ] as const) {
      for (let pausedAt = 1; pausedAt < 40; pausedAt += 3) {
        const table = new KeyTable<Value>();
        for (let i = 0; i < initial; i++) table.set(`k:${i}`, "v");
        const kept = new Set<string>();
        for (let i = 0; i < initial; i += 40) kept.add(`k:${i}`);
        const seen = new Set<string>();
        let cursor = 0;
        let steps = 0;
        do {
          const refs: number[] = [];
          cursor = table.blockRefsStep(cursor, refs);
          for (const ref of refs) seen.add(table.keyOf(ref));
          if (++steps === pausedAt) {
            if (change === "shrink") {
              for (let i = 0; i < initial; i++) if (!kept.has(`k:${i}`)) table.delete(`k:${i}`);
            } else for (let i = initial; i < initial * 8; i++) table.set(`k:${i}`, "v");
          }
        } while (cursor !== 0);
        for (const k of kept) expect(seen.has(k)).toBe(true);
      }
    }
  });

  test("randomKey returns a key of the table, and undefined for an empty one", () => {
    const table = new KeyTable<Value>();
    expect(table.randomKey()).toBeUndefined();
    for (let i = 0; i < 10; i++) table.set(`k${i}`, "v");
    for (let i = 0; i < 50; i++) expect(table.find(table.randomKey()!)).toBeGreaterThanOrEqual(0);
  });
});
