// Every condition op with typed comparison (numbers, dates, strings, booleans, null), `all`/`any`
// groups, and changed/changed_to against the old record — false on a create, as Salesforce's
// ISCHANGED is for a new record.
import { describe, expect, test } from "bun:test";
import { type Condition, evaluate, type Subject } from "../../../src/crm/rules/condition.ts";

const opp = { id: 1, name: "Big deal", stage: "Prospecting", amount: 5000, close_date: "2026-03-15", probability: null, won: false, notes: "" };
const on = (record: Record<string, unknown>, old: Record<string, unknown> | null = null): Subject => ({ record, old });
const holds = (c: Condition, s: Subject = on(opp)) => evaluate(c, s);

describe("eq and ne", () => {
  test("eq compares numbers, strings and booleans by value and type", () => {
    expect(holds({ field: "amount", op: "eq", value: 5000 })).toBe(true);
    expect(holds({ field: "amount", op: "eq", value: 5000.5 })).toBe(false);
    expect(holds({ field: "amount", op: "eq", value: "5000" })).toBe(false);
    expect(holds({ field: "stage", op: "eq", value: "Prospecting" })).toBe(true);
    expect(holds({ field: "stage", op: "eq", value: "prospecting" })).toBe(false);
    expect(holds({ field: "won", op: "eq", value: false })).toBe(true);
    expect(holds({ field: "won", op: "eq", value: 0 })).toBe(false);
  });

  test("eq null matches a null or missing field, and nothing else (not even empty text)", () => {
    expect(holds({ field: "probability", op: "eq", value: null })).toBe(true);
    expect(holds({ field: "no_such_field", op: "eq", value: null })).toBe(true);
    expect(holds({ field: "notes", op: "eq", value: null })).toBe(false);
    expect(holds({ field: "amount", op: "eq", value: null })).toBe(false);
  });

  test("ne is exactly the negation of eq, null included", () => {
    expect(holds({ field: "amount", op: "ne", value: 1 })).toBe(true);
    expect(holds({ field: "amount", op: "ne", value: 5000 })).toBe(false);
    expect(holds({ field: "probability", op: "ne", value: 10 })).toBe(true);
    expect(holds({ field: "probability", op: "ne", value: null })).toBe(false);
  });

  test("a field name that is an Object.prototype property reads as missing", () => {
    expect(holds({ field: "constructor", op: "blank" })).toBe(true);
    expect(holds({ field: "tostring", op: "eq", value: null })).toBe(true);
  });
});

describe("ordering ops", () => {
  test("numbers order numerically at, below and above the bound", () => {
    for (const [op, below, at, above] of [
      ["gt", true, false, false],
      ["gte", true, true, false],
      ["lt", false, false, true],
      ["lte", false, true, true],
    ] as const) {
      expect([op, holds({ field: "amount", op, value: 4999 })]).toEqual([op, below]);
      expect([op, holds({ field: "amount", op, value: 5000 })]).toEqual([op, at]);
      expect([op, holds({ field: "amount", op, value: 5001 })]).toEqual([op, above]);
    }
  });

  test("numbers are not ordered as text (10 > 9, where '10' < '9')", () => {
    expect(holds({ field: "n", op: "gt", value: 9 }, on({ n: 10 }))).toBe(true);
  });

  test("dates order chronologically, across months and years", () => {
    expect(holds({ field: "close_date", op: "lt", value: "2026-04-01" })).toBe(true);
    expect(holds({ field: "close_date", op: "gt", value: "2025-12-31" })).toBe(true);
    expect(holds({ field: "close_date", op: "gte", value: "2026-03-15" })).toBe(true);
    expect(holds({ field: "close_date", op: "gt", value: "2026-03-15" })).toBe(false);
  });

  test("a timestamp compared with a date orders after the start of that day", () => {
    const c = on({ created_at: "2026-03-15T10:00:00.000Z" });
    expect(holds({ field: "created_at", op: "gte", value: "2026-03-15" }, c)).toBe(true);
    expect(holds({ field: "created_at", op: "lt", value: "2026-03-16" }, c)).toBe(true);
  });

  test("a null field, or a value of another type, is never ordered: every ordering op is false", () => {
    for (const op of ["gt", "gte", "lt", "lte"] as const) {
      expect(holds({ field: "probability", op, value: 10 })).toBe(false);
      expect(holds({ field: "amount", op, value: "5000" })).toBe(false);
      expect(holds({ field: "won", op, value: 1 })).toBe(false);
    }
  });
});

describe("in, contains, blank, not_blank", () => {
  test("in holds when the field equals any listed value, with the same typing as eq", () => {
    expect(holds({ field: "stage", op: "in", value: ["Closed Won", "Prospecting"] })).toBe(true);
    expect(holds({ field: "stage", op: "in", value: ["Closed Won", "Closed Lost"] })).toBe(false);
    expect(holds({ field: "amount", op: "in", value: ["5000", 1] })).toBe(false);
    expect(holds({ field: "probability", op: "in", value: [null, 50] })).toBe(true);
  });

  test("contains finds a substring, case-sensitively, and only in text", () => {
    expect(holds({ field: "name", op: "contains", value: "deal" })).toBe(true);
    expect(holds({ field: "name", op: "contains", value: "Deal" })).toBe(false);
    expect(holds({ field: "amount", op: "contains", value: "50" })).toBe(false);
    expect(holds({ field: "probability", op: "contains", value: "x" })).toBe(false);
  });

  test("blank is null, missing or empty text; zero and false are not blank", () => {
    expect(holds({ field: "probability", op: "blank" })).toBe(true);
    expect(holds({ field: "missing", op: "blank" })).toBe(true);
    expect(holds({ field: "notes", op: "blank" })).toBe(true);
    expect(holds({ field: "won", op: "blank" })).toBe(false);
    expect(holds({ field: "z", op: "blank" }, on({ z: 0 }))).toBe(false);
    expect(holds({ field: "notes", op: "not_blank" })).toBe(false);
    expect(holds({ field: "stage", op: "not_blank" })).toBe(true);
  });
});

describe("changed and changed_to", () => {
  const before = { ...opp, stage: "Prospecting", amount: 5000 };
  const after = { ...opp, stage: "Closed Won", amount: 5000 };

  test("changed holds for a field whose value differs from the old record", () => {
    expect(holds({ field: "stage", op: "changed" }, on(after, before))).toBe(true);
    expect(holds({ field: "amount", op: "changed" }, on(after, before))).toBe(false);
  });

  test("changed sees null → value and value → null, but not 5000 → 5000", () => {
    expect(holds({ field: "probability", op: "changed" }, on({ probability: 10 }, { probability: null }))).toBe(true);
    expect(holds({ field: "probability", op: "changed" }, on({ probability: null }, { probability: 10 }))).toBe(true);
    expect(holds({ field: "probability", op: "changed" }, on({}, { probability: null }))).toBe(false);
  });

  test("changed_to holds only when the field changed and now equals the value", () => {
    expect(holds({ field: "stage", op: "changed_to", value: "Closed Won" }, on(after, before))).toBe(true);
    expect(holds({ field: "stage", op: "changed_to", value: "Closed Lost" }, on(after, before))).toBe(false);
    expect(holds({ field: "stage", op: "changed_to", value: "Closed Won" }, on(after, after))).toBe(false);
  });

  test("on a create (no old record) changed and changed_to are false, as ISCHANGED on a new record", () => {
    expect(holds({ field: "stage", op: "changed" }, on(after))).toBe(false);
    expect(holds({ field: "stage", op: "changed_to", value: "Closed Won" }, on(after))).toBe(false);
  });
});

describe("groups", () => {
  const big = { field: "amount", op: "gt", value: 1000 } as const;
  const won = { field: "stage", op: "eq", value: "Closed Won" } as const;

  test("all needs every member, any needs one", () => {
    expect(holds({ all: [big, won] })).toBe(false);
    expect(holds({ any: [big, won] })).toBe(true);
    expect(holds({ all: [big, { any: [won, { field: "close_date", op: "lt", value: "2026-04-01" }] }] })).toBe(true);
  });

  test("an empty all is true and an empty any is false", () => {
    expect(holds({ all: [] })).toBe(true);
    expect(holds({ any: [] })).toBe(false);
  });
});
