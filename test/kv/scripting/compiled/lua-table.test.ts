// LuaTable against the native Lua 5.1: generated sequences of table operations (sets around the
// array part's borders, odd numbers, short and long strings, booleans, deletions, constructors of
// generated shapes, table.insert/remove, traversals deleting and assigning as they go) run both on
// a LuaTable and as a Lua script through EVAL, and both report the same pairs order, `#`, gets and
// removes. A model check covers arbitrary keys (tables, functions, NaN, nil): nothing but LuaBail
// is ever thrown, and the table holds what a map would.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { constructorFlushItems, floatingByteToInt, intToFloatingByte, LuaTable, stringHash } from "../../../../src/kv/scripting/compiled/lua-table.ts";
import { LuaBail, type LuaValue } from "../../../../src/kv/scripting/compiled/lua-value.ts";
import { compilesScripts } from "../../../../src/kv/scripting/script-cache.ts";
import { harness } from "../../harness.ts";

// The oracle is the native Lua: EVAL's compiled path (built on LuaTable) stays off meanwhile.
const compiledWasOn = compilesScripts.on;
compilesScripts.on = false;
afterAll(() => {
  compilesScripts.on = compiledWasOn;
});

const h = harness();

type Key = number | string | boolean;
type Val = number | string | boolean | undefined;
type Item = { pos: Val } | { key: Key; value: Val };
/** A constructor `{items…, mr(multret…)}`; `fromValues`: the bridge's array table of multret. */
type Shape = { items: Item[]; multret?: Val[]; fromValues?: boolean };
type Op =
  | { op: "set"; key: Key; value: Val }
  | { op: "get"; key: Key }
  | { op: "insert"; value: Val }
  | { op: "remove" }
  | { op: "len" }
  /** pairs, deleting the c-th key visited when c % every == at, assigning it when c % every == at + 1. */
  | { op: "pairs"; every: number; at: number; bySlot: boolean }
  | { op: "fill"; from: number; to: number; step: number; value: Val }
  | { op: "fillStr"; prefix: string; count: number; value: Val };

// ---- generators ----

const borders = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025];
const oddNumbers = [
  0.5,
  1.5,
  -0.5,
  2.25,
  -1,
  -2,
  -3,
  1e300,
  -1e300,
  5e-324,
  2 ** 31,
  -(2 ** 31),
  2 ** 31 - 1,
  2 ** 32,
  2 ** 32 + 1,
  2 ** 53,
  1e15 + 0.5,
  Infinity,
  -Infinity,
  -0,
];
const intKey = fc.oneof(fc.integer({ min: -3, max: 70 }), fc.constantFrom(...borders));
const numKey = fc.oneof({ weight: 4, arbitrary: intKey }, { weight: 1, arbitrary: fc.constantFrom(...oddNumbers) });
const shortName = fc.constantFrom("a", "b", "c", "x", "y", "name", "id", "data", "", "k1", "k2", "1", "2", "_");
const byteChar = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
const anyString = fc.oneof(
  { weight: 4, arbitrary: shortName },
  { weight: 1, arbitrary: fc.string({ unit: byteChar, maxLength: 12 }) },
  // 32 bytes and more: Lua hashes only every other (third…) byte of these.
  { weight: 1, arbitrary: fc.string({ unit: byteChar, minLength: 30, maxLength: 100 }) },
);
const keyArb: fc.Arbitrary<Key> = fc.oneof({ weight: 5, arbitrary: numKey }, { weight: 4, arbitrary: anyString }, { weight: 1, arbitrary: fc.boolean() });
const valueArb: fc.Arbitrary<Val> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 99 }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 99 }).map((n) => `v${n}`) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 3, arbitrary: fc.constant(undefined) },
);
const nonNilValue = valueArb.map((v) => v ?? 1);
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  { weight: 3, arbitrary: valueArb.map((pos) => ({ pos })) },
  { weight: 1, arbitrary: fc.record({ key: keyArb, value: valueArb }) },
  { weight: 1, arbitrary: fc.record({ key: shortName, value: valueArb }) },
);
const shapeArb: fc.Arbitrary<Shape> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ items: fc.array(itemArb, { maxLength: 12 }) }) },
  { weight: 2, arbitrary: fc.record({ items: fc.array(itemArb, { maxLength: 12 }), multret: fc.array(valueArb, { maxLength: 40 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      items: fc.array(itemArb, { minLength: 45, maxLength: 130 }),
      multret: fc.option(fc.array(valueArb, { maxLength: 30 }), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ items: fc.constant<Item[]>([]), multret: fc.array(nonNilValue, { maxLength: 40 }), fromValues: fc.constant(true) }) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ op: fc.constant("set" as const), key: keyArb, value: valueArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("get" as const), key: keyArb }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("insert" as const),
      value: fc.oneof({ weight: 9, arbitrary: nonNilValue }, { weight: 1, arbitrary: fc.constant(undefined) }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("remove" as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("len" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("pairs" as const),
      every: fc.integer({ min: 1, max: 4 }),
      at: fc.integer({ min: 0, max: 4 }),
      bySlot: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("fill" as const),
      from: fc.integer({ min: -5, max: 300 }),
      to: fc.integer({ min: -5, max: 300 }),
      step: fc.constantFrom(1, 2, 3, -1, 7),
      value: valueArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("fillStr" as const),
      prefix: fc.constantFrom("k", "f", "", "a prefix long enough to hash in steps of two_"),
      count: fc.integer({ min: 0, max: 120 }),
      value: valueArb,
    }),
  },
);

// ---- the Lua side ----

function luaString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += /[A-Za-z_ ]/.test(s[i]!) ? s[i] : `\\${String(c).padStart(3, "0")}`;
  }
  return `${out}"`;
}

function luaNumber(n: number): string {
  if (Object.is(n, -0)) return "NZ";
  if (n === Infinity) return "(1/0)";
  if (n === -Infinity) return "(-1/0)";
  return n < 0 ? `(${n})` : String(n);
}

function luaLiteral(v: Val): string {
  if (v === undefined) return "nil";
  if (typeof v === "number") return luaNumber(v);
  if (typeof v === "string") return luaString(v);
  return String(v);
}

const prelude = `
local NZ = -(tonumber('0'))
local function mr(...) return ... end
local out = {}
local function rec(x) out[#out+1] = x end
local function recall(...) rec(select('#', ...) .. ':' .. tostring((...))) end
local function show(k) if type(k) == 'number' then return 'number:' .. string.format('%.17g', k) end return type(k) .. ':' .. tostring(k) end
local t
`;

function luaConstructor(shape: Shape): string {
  const parts = shape.items.map((item) => ("pos" in item ? luaLiteral(item.pos) : `[${luaLiteral(item.key)}] = ${luaLiteral(item.value)}`));
  if (shape.multret !== undefined) parts.push(`mr(${shape.multret.map(luaLiteral).join(", ")})`);
  return `t = {${parts.join(", ")}}\n`;
}

function luaOp(op: Op): string {
  switch (op.op) {
    case "set":
      return `t[${luaLiteral(op.key)}] = ${luaLiteral(op.value)}\n`;
    case "get":
      return `rec(tostring(t[${luaLiteral(op.key)}]))\n`;
    case "insert":
      return `table.insert(t, ${luaLiteral(op.value)})\n`;
    case "remove":
      return "recall(table.remove(t))\n";
    case "len":
      return "rec('#' .. #t)\n";
    case "pairs":
      return `do local c = 0 for k, v in pairs(t) do rec(show(k)) rec(tostring(v)) if c % ${op.every} == ${op.at} then t[k] = nil elseif c % ${op.every} == ${op.at + 1} then t[k] = 'w' end c = c + 1 end end\n`;
    case "fill":
      return `for i = ${op.from}, ${op.to}, ${op.step} do t[i] = ${luaLiteral(op.value)} end\n`;
    case "fillStr":
      return `for i = 1, ${op.count} do t[${luaString(op.prefix)} .. i] = ${luaLiteral(op.value)} end\n`;
  }
}

const finalDump = "for k, v in pairs(t) do rec(show(k)) rec(tostring(v)) end rec('#' .. #t)\nreturn out\n";

let scriptsRun = 0;
/** Runs a script on the native Lua; its result, numbers in keys made canonical. */
function runLua(body: string): string[] {
  if (++scriptsRun % 500 === 0) h.run("SCRIPT", "FLUSH");
  const reply = h.run("EVAL", prelude + body, 0);
  if (!Array.isArray(reply)) throw new Error(`Lua said ${JSON.stringify(reply)}\n${body}`);
  return (reply as string[]).map((s) => (s.startsWith("number:") ? `number:${canonical(parseLuaNumber(s.slice(7)))}` : s));
}

function parseLuaNumber(text: string): number {
  if (text === "inf") return Infinity;
  if (text === "-inf") return -Infinity;
  return Number(text);
}

function canonical(n: number): string {
  return Object.is(n, -0) ? "-0" : String(n);
}

// ---- the TypeScript side ----

function show(k: LuaValue): string {
  return typeof k === "number" ? `number:${canonical(k)}` : `${typeof k}:${String(k)}`;
}

function tostring(v: LuaValue): string {
  return v === undefined ? "nil" : String(v);
}

/** The constructor as Lua runs it: named items stored at once, positional ones in batches of 50. */
function construct(shape: Shape): LuaTable {
  if (shape.fromValues) return LuaTable.fromValues(shape.multret ?? []);
  const positional = shape.items.filter((item) => "pos" in item).length;
  const t = LuaTable.forConstructor(positional, shape.items.length - positional);
  let pending: LuaValue[] = [];
  let first = 1;
  const flushFull = () => {
    if (pending.length !== constructorFlushItems) return;
    t.setList(first, pending, 0, pending.length);
    first += pending.length;
    pending = [];
  };
  for (const item of shape.items) {
    flushFull();
    if ("pos" in item) pending.push(item.pos);
    else t.set(item.key, item.value);
  }
  if (shape.multret !== undefined) {
    flushFull();
    pending.push(...shape.multret);
  }
  if (pending.length > 0 || shape.multret !== undefined) t.setList(first, pending, 0, pending.length);
  return t;
}

function traverse(t: LuaTable, op: Extract<Op, { op: "pairs" }>, out: string[]): void {
  let c = 0;
  const visit = (k: LuaValue, v: LuaValue) => {
    out.push(show(k), tostring(v));
    if (c % op.every === op.at) t.set(k, undefined);
    else if (c % op.every === op.at + 1) t.set(k, "w");
    c++;
  };
  if (!op.bySlot) {
    for (let entry = t.next(undefined); entry !== undefined; entry = t.next(entry[0])) visit(entry[0], entry[1]);
    return;
  }
  // As generated code would: slots while the table keeps its shape, findindex when it changed.
  let slot = t.nextSlot(-1);
  while (slot >= 0) {
    const k = t.slotKey(slot);
    const shape = t.shape;
    visit(k, t.slotValue(slot));
    slot = t.nextSlot(t.shape === shape ? slot : t.slotOf(k));
  }
}

function runTs(shape: Shape, ops: Op[]): string[] {
  const t = construct(shape);
  const out: string[] = [];
  for (const op of ops) {
    switch (op.op) {
      case "set":
        t.set(op.key, op.value);
        break;
      case "get":
        out.push(tostring(t.get(op.key)));
        break;
      case "insert":
        t.insert(op.value);
        break;
      case "remove": {
        const v = t.remove();
        out.push(`${v === undefined ? 0 : 1}:${tostring(v)}`);
        break;
      }
      case "len":
        out.push(`#${t.length()}`);
        break;
      case "pairs":
        traverse(t, op, out);
        break;
      case "fill":
        for (let i = op.from; op.step > 0 ? i <= op.to : i >= op.to; i += op.step) t.set(i, op.value);
        break;
      case "fillStr":
        for (let i = 1; i <= op.count; i++) t.set(op.prefix + i, op.value);
        break;
    }
  }
  for (let entry = t.next(undefined); entry !== undefined; entry = t.next(entry[0])) out.push(show(entry[0]), tostring(entry[1]));
  out.push(`#${t.length()}`);
  return out;
}

/** Both sides on one program; false when the TypeScript side bailed (then there is nothing to compare). */
function compare(shape: Shape, ops: Op[]): boolean {
  let ts: string[];
  try {
    ts = runTs(shape, ops);
  } catch (e) {
    if (e instanceof LuaBail) return false;
    throw e;
  }
  const lua = runLua(luaConstructor(shape) + ops.map(luaOp).join("") + finalDump);
  expect(ts).toEqual(lua);
  return true;
}

// ---- tests ----

describe("LuaTable against the native Lua 5.1", () => {
  test("generated operation sequences: same pairs order, #, gets and removes", () => {
    let bails = 0;
    let runs = 0;
    fc.assert(
      fc.property(shapeArb, fc.array(opArb, { maxLength: 40 }), (shape, ops) => {
        runs++;
        if (!compare(shape, ops)) bails++;
      }),
      { numRuns: 3000 },
    );
    // A bail is the rare re-set of a deleted key off its main position.
    console.log(`${runs} sequences, ${bails} bailed`);
    expect(bails).toBeLessThan(runs / 20);
  });

  test("long sequences that rehash many times", () => {
    fc.assert(
      fc.property(shapeArb, fc.array(opArb, { minLength: 100, maxLength: 400 }), (shape, ops) => {
        compare(shape, ops);
      }),
      { numRuns: 150 },
    );
  });

  test("constructor sizes: 17 positional items, around each flush of 50, named counts", () => {
    for (const positional of [0, 1, 7, 8, 9, 15, 16, 17, 18, 31, 33, 49, 50, 51, 99, 100, 101, 150]) {
      for (const named of [0, 1, 3, 5, 9, 17]) {
        const items: Item[] = [];
        for (let i = 0; i < positional; i++) items.push({ pos: i });
        for (let i = 0; i < named; i++) items.push({ key: `n${i}`, value: i });
        // Keys just past the array part reveal its size through the order pairs gives.
        const probe: Op[] = [positional + 1, positional + 2, positional + 3, positional + 5, 0.5, "z"].map((key) => ({ op: "set", key, value: 1 }));
        expect(compare({ items }, probe)).toBe(true);
        expect(compare({ items, multret: [1, 2, undefined, 4] }, probe)).toBe(true);
      }
    }
  });

  test("deletions during traversal, then # with holes", () => {
    const ops: Op[] = [
      { op: "fill", from: 1, to: 200, step: 1, value: "v1" },
      { op: "fillStr", prefix: "k", count: 100, value: 2 },
      { op: "pairs", every: 3, at: 0, bySlot: false },
      { op: "len" },
      { op: "pairs", every: 2, at: 1, bySlot: true },
      { op: "len" },
      { op: "fill", from: 1, to: 300, step: 2, value: undefined },
      { op: "len" },
      { op: "insert", value: 5 },
      { op: "remove" },
      { op: "remove" },
    ];
    expect(compare({ items: [] }, ops)).toBe(true);
  });

  test("a large table of mixed keys, deleted and grown again", () => {
    const ops: Op[] = [];
    for (let round = 0; round < 3; round++) {
      ops.push({ op: "fill", from: 1, to: 3000, step: 1 + round, value: round });
      ops.push({ op: "fillStr", prefix: "f", count: 2000, value: "v1" });
      ops.push({ op: "fill", from: 5000, to: 1, step: -3, value: undefined });
      ops.push({ op: "len" }, { op: "pairs", every: 5, at: round, bySlot: round === 1 });
      // Absent keys set to nil: each gets a dead node (a second round would bail, see lua-table.ts).
      ops.push({ op: "fillStr", prefix: `d${round}`, count: 500, value: undefined }, { op: "len" });
    }
    expect(compare({ items: [{ pos: 1 }, { key: "x", value: 2 }] }, ops)).toBe(true);
  });
});

test("a deleted key set again off its main position: Lua's order depends on its collector, LuaTable bails", () => {
  const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
  let differing = 0;
  for (const x of names)
    for (const y of names)
      for (const z of names) {
        if (x === y || y === z || x === z) continue;
        const script = (collect: string) =>
          `local t = {} t.${x} = 1 t.${y} = 2 t.${z} = 3 t.${y} = nil ${collect} t.${y} = 4 local o = {} for k in pairs(t) do o[#o+1] = k end return o`;
        const plain = h.run("EVAL", script(""), 0);
        const collected = h.run("EVAL", script("collectgarbage('collect')"), 0);
        const t = new LuaTable();
        t.setStr(x, 1);
        t.setStr(y, 2);
        t.setStr(z, 3);
        t.setStr(y, undefined);
        let ours: string[] | undefined;
        try {
          t.setStr(y, 4);
          ours = [];
          for (let entry = t.next(undefined); entry !== undefined; entry = t.next(entry[0])) ours.push(entry[0] as string);
        } catch (e) {
          if (!(e instanceof LuaBail)) throw e;
        }
        if (JSON.stringify(plain) !== JSON.stringify(collected)) differing++;
        if (ours !== undefined) {
          expect(ours).toEqual(plain as string[]);
          expect(ours).toEqual(collected as string[]);
        }
      }
  expect(differing).toBeGreaterThan(0);
});

describe("LuaTable on its own", () => {
  test("string hashes are Lua 5.1.5's", () => {
    // Computed by luaS_newlstr's formula by hand: "" → 0, "a" → 1 ^ (32 + 0 + 97).
    expect(stringHash("")).toBe(0);
    expect(stringHash("a")).toBe(1 ^ (32 + 97));
  });

  test("floating bytes: the least representable count not below x", () => {
    const representable = new Set<number>();
    for (let fb = 0; fb < 256; fb++) representable.add(floatingByteToInt(fb));
    for (let x = 0; x < 5000; x++) {
      const rounded = floatingByteToInt(intToFloatingByte(x));
      expect(rounded).toBeGreaterThanOrEqual(x);
      expect(representable.has(rounded)).toBe(true);
      for (let y = x; y < rounded; y++) expect(representable.has(y)).toBe(false);
    }
    expect(floatingByteToInt(intToFloatingByte(17))).toBe(18);
  });

  const anyKey: fc.Arbitrary<LuaValue> = fc.oneof(
    { weight: 6, arbitrary: keyArb },
    { weight: 1, arbitrary: fc.constantFrom<LuaValue>(Number.NaN, undefined) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 5 }) },
  );
  type ModelOp = { key: LuaValue | "table" | "function"; value: Val; pairsEvery: number };

  test("arbitrary keys: only LuaBail is thrown, values are a map's, # is a border, next visits each key once", () => {
    const tableKeys = [new LuaTable(), new LuaTable(), new LuaTable(1, 1)];
    const functionKeys = [() => [], () => []];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.oneof({ weight: 8, arbitrary: anyKey }, { weight: 1, arbitrary: fc.constantFrom<"table" | "function">("table", "function") }),
            value: valueArb,
            pairsEvery: fc.integer({ min: 0, max: 30 }),
          }),
          { maxLength: 300 },
        ),
        fc.nat(),
        (ops: ModelOp[], pick) => {
          const t = new LuaTable();
          const model = new Map<unknown, LuaValue>();
          const normal = (k: LuaValue) => (Object.is(k, -0) ? 0 : k);
          try {
            for (const [i, op] of ops.entries()) {
              const key = op.key === "table" ? tableKeys[(pick + i) % 3] : op.key === "function" ? functionKeys[(pick + i) % 2] : op.key;
              if (typeof key === "string" && i % 2 === 1) t.setStrHashed(key, stringHash(key), op.value);
              else t.set(key, op.value);
              if (op.value === undefined) model.delete(normal(key));
              else model.set(normal(key), op.value);
              if (op.pairsEvery === 0) checkAgainst(t, model);
            }
          } catch (e) {
            if (!(e instanceof LuaBail)) throw e;
            return;
          }
          checkAgainst(t, model);
        },
      ),
      { numRuns: 1500 },
    );
  });

  function checkAgainst(t: LuaTable, model: Map<unknown, LuaValue>): void {
    for (const [k, v] of model) {
      expect(t.get(k as LuaValue)).toBe(v);
      if (typeof k === "string") expect(t.getStrHashed(k, stringHash(k))).toBe(v);
    }
    const seen = new Map<unknown, LuaValue>();
    for (let entry = t.next(undefined); entry !== undefined; entry = t.next(entry[0])) {
      const k = Object.is(entry[0], -0) ? 0 : entry[0];
      expect(seen.has(k)).toBe(false);
      seen.set(k, entry[1]);
    }
    expect(seen).toEqual(model);
    const n = t.length();
    expect(n === 0 || t.getInt(n) !== undefined).toBe(true);
    expect(t.getInt(n + 1)).toBeUndefined();
    let slots = 0;
    for (let slot = t.nextSlot(-1); slot >= 0; slot = t.nextSlot(slot)) slots++;
    expect(slots).toBe(model.size);
  }

  test("nil and NaN keys bail on set, read as nil; next from an unknown key bails", () => {
    const t = new LuaTable();
    expect(() => t.set(undefined, 1)).toThrow(LuaBail);
    expect(() => t.set(Number.NaN, 1)).toThrow(LuaBail);
    expect(t.get(undefined)).toBeUndefined();
    expect(t.get(Number.NaN)).toBeUndefined();
    t.set("a", 1);
    expect(() => t.next("b")).toThrow(LuaBail);
    expect(t.next(undefined)).toEqual(["a", 1]);
    t.set("a", undefined);
    expect(t.next("a")).toBeUndefined();
    expect(t.remove()).toBeUndefined();
  });
});

describe("LuaTable speed (a note, not a limit)", () => {
  test("ns per getStr / setStr / getInt / setInt", () => {
    const names = ["id", "name", "data", "opts", "timestamp", "delay", "priority", "processedOn", "finishedOn", "attemptsMade"];
    const t = new LuaTable();
    for (const n of names) t.setStr(n, 1);
    const a = LuaTable.fromValues(new Array(64).fill(1));
    const rounds = 2_000_000;
    const time = (what: string, body: () => void) => {
      body();
      const start = Bun.nanoseconds();
      body();
      const ns = (Bun.nanoseconds() - start) / rounds;
      console.log(`${what}: ${ns.toFixed(1)} ns`);
    };
    let sink: LuaValue = 0;
    time("getStr", () => {
      for (let i = 0; i < rounds; i++) sink = t.getStr(names[i % 10]!);
    });
    time("setStr", () => {
      for (let i = 0; i < rounds; i++) t.setStr(names[i % 10]!, i);
    });
    time("getInt", () => {
      for (let i = 0; i < rounds; i++) sink = a.getInt((i & 63) + 1);
    });
    time("setInt", () => {
      for (let i = 0; i < rounds; i++) a.setInt((i & 63) + 1, i);
    });
    time("new LuaTable + 5 setStr", () => {
      for (let i = 0; i < rounds / 5; i++) {
        const u = new LuaTable();
        for (let j = 0; j < 5; j++) u.setStr(names[j]!, j);
      }
    });
    expect(sink).toBeDefined();
  });
});
