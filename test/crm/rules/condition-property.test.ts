// Properties of conditions over random inputs: the parser never throws whatever it is given; a
// parsed condition evaluates exactly as a small independent reference evaluator does; and the
// all/any algebra (identities, De Morgan through ne/eq, order independence) holds.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type Comparison, type Condition, evaluate, ops } from "../../../src/crm/rules/condition.ts";
import { parseCondition } from "../../../src/crm/rules/condition-parse.ts";
import { parseRule } from "../../../src/crm/rules/rule-set.ts";
import { crmConditionDepthMax, crmConditionNodesMax } from "../../../src/core/limits.ts";

const fields = ["a", "b", "c"];
const scalar = fc.oneof(fc.constantFrom(null, "", "x", "y", "2026-01-01", "2026-02-01", 0, 1, -2.5, true, false), fc.integer({ min: -3, max: 3 }));
const record = fc.record({ a: scalar, b: scalar, c: scalar }, { requiredKeys: [] });

const comparison: fc.Arbitrary<Comparison> = fc.oneof(
  fc.record({ field: fc.constantFrom(...fields), op: fc.constantFrom("eq", "ne", "changed_to" as const), value: scalar }),
  fc.record({
    field: fc.constantFrom(...fields),
    op: fc.constantFrom("gt", "gte", "lt", "lte" as const),
    value: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom("x", "2026-01-15")),
  }),
  fc.record({ field: fc.constantFrom(...fields), op: fc.constant("in" as const), value: fc.array(scalar, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field: fc.constantFrom(...fields), op: fc.constant("contains" as const), value: fc.constantFrom("x", "20", "-") }),
  fc.record({ field: fc.constantFrom(...fields), op: fc.constantFrom("blank", "not_blank", "changed" as const) }),
);

const { condition } = fc.letrec<{ condition: Condition }>((tie) => ({
  condition: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    comparison,
    fc.record({ all: fc.array(tie("condition"), { maxLength: 3 }) }),
    fc.record({ any: fc.array(tie("condition"), { maxLength: 3 }) }),
  ),
}));

/** Levels of a condition, a bare comparison being 1 (as crmConditionDepthMax counts them). */
function depthOf(c: Condition): number {
  const members = "all" in c ? c.all : "any" in c ? c.any : null;
  return members === null ? 1 : 1 + Math.max(0, ...members.map(depthOf));
}

/** Groups and comparisons, all levels counted (as crmConditionNodesMax counts them). */
function nodesOf(c: Condition): number {
  const members = "all" in c ? c.all : "any" in c ? c.any : null;
  return members === null ? 1 : 1 + members.reduce((n, m) => n + nodesOf(m), 0);
}

/** Written from the rules in docs/crm-rules.md, independently of src/crm/rules. */
function reference(c: Condition, rec: Record<string, unknown>, old: Record<string, unknown> | null): boolean {
  if ("all" in c) {
    for (const x of c.all) if (!reference(x, rec, old)) return false;
    return true;
  }
  if ("any" in c) {
    for (const x of c.any) if (reference(x, rec, old)) return true;
    return false;
  }
  const get = (r: Record<string, unknown>) => (r[c.field] === undefined ? null : r[c.field]);
  const v = get(rec);
  const eq = (x: unknown, y: unknown) => x === y;
  const cmp = (x: unknown, y: unknown) =>
    (typeof x === "number" && typeof y === "number") || (typeof x === "string" && typeof y === "string") ? (x < y ? -1 : x > y ? 1 : 0) : null;
  const blank = v === null || v === "";
  const changed = old !== null && !eq(v, get(old));
  switch (c.op) {
    case "eq":
      return eq(v, c.value);
    case "ne":
      return !eq(v, c.value);
    case "gt": {
      const n = cmp(v, c.value);
      return n !== null && n > 0;
    }
    case "gte": {
      const n = cmp(v, c.value);
      return n !== null && n >= 0;
    }
    case "lt": {
      const n = cmp(v, c.value);
      return n !== null && n < 0;
    }
    case "lte": {
      const n = cmp(v, c.value);
      return n !== null && n <= 0;
    }
    case "in":
      return (c.value as unknown[]).some((x) => eq(v, x));
    case "contains":
      return typeof v === "string" && v.includes(c.value as string);
    case "blank":
      return blank;
    case "not_blank":
      return !blank;
    case "changed":
      return changed;
    case "changed_to":
      return changed && eq(v, c.value);
  }
}

const anyJson = fc.oneof(
  fc.anything({ maxDepth: 6 }),
  condition,
  // Near-misses: the right keys with wrong values.
  fc.record({ field: fc.anything(), op: fc.oneof(fc.constantFrom(...ops), fc.anything()), value: fc.anything() }, { requiredKeys: [] }),
  fc.record({ all: fc.anything() }),
  fc.record({ any: fc.array(fc.anything()) }),
);

describe("condition properties", () => {
  test("the parser never throws, and answers a condition or a non-empty list of problems", () => {
    fc.assert(
      fc.property(anyJson, (json) => {
        const r = parseCondition(json);
        if ("details" in r) {
          expect(r.details.length).toBeGreaterThan(0);
          for (const d of r.details) expect(typeof d.field === "string" && typeof d.message === "string").toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test("parseRule of every kind never throws on arbitrary JSON", () => {
    const body = fc.oneof(
      fc.anything({ maxDepth: 5 }),
      fc.record(
        {
          name: fc.oneof(fc.constant("R1"), fc.anything()),
          object: fc.constantFrom("leads", "cases", "nope"),
          condition: anyJson,
          message: fc.anything(),
          trigger: fc.anything(),
          updates: fc.anything(),
          timing: fc.constantFrom("before_save", "after_save", 3),
          steps: fc.array(
            fc.record(
              {
                type: fc.constantFrom("set_field", "create_record", "decision", "x"),
                field: fc.anything(),
                value: fc.anything(),
                branches: fc.anything(),
                values: fc.anything(),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(fc.constantFrom("validation", "workflow", "flow" as const), body, (kind, json) => {
        const r = parseRule(kind, json);
        expect("rule" in r || r.details.length > 0).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("every generated condition within the limits parses to itself and evaluates as the reference evaluator does; past them it is refused", () => {
    fc.assert(
      fc.property(condition, record, fc.option(record, { nil: null }), (c, rec, old) => {
        const parsed = parseCondition(c);
        if (depthOf(c) > crmConditionDepthMax || nodesOf(c) > crmConditionNodesMax) {
          expect("details" in parsed && parsed.details.length > 0).toBe(true);
          return;
        }
        if (!("condition" in parsed)) throw new Error(JSON.stringify(parsed.details));
        expect(parsed.condition).toEqual(c);
        expect(evaluate(parsed.condition, { record: rec, old })).toBe(reference(c, rec, old));
      }),
      { numRuns: 3000 },
    );
  });

  test("all/any algebra: identities, single members, order, nesting, and duality", () => {
    fc.assert(
      fc.property(fc.array(condition, { maxLength: 4 }), record, fc.option(record, { nil: null }), (cs, rec, old) => {
        const s = { record: rec, old };
        const ev = (c: Condition) => evaluate(c, s);
        expect(ev({ all: cs })).toBe(cs.every(ev));
        expect(ev({ any: cs })).toBe(cs.some(ev));
        expect(ev({ all: [...cs].reverse() })).toBe(ev({ all: cs }));
        expect(ev({ any: [...cs].reverse() })).toBe(ev({ any: cs }));
        expect(ev({ all: [{ all: cs }, { all: [] }] })).toBe(ev({ all: cs }));
        expect(ev({ any: [{ any: cs }, { any: [] }] })).toBe(ev({ any: cs }));
        if (cs.length === 1) expect(ev({ all: cs })).toBe(ev({ any: cs }));
        // De Morgan over eq/ne: not all(eq...) is any(ne...).
        const eqs = cs.filter((c): c is Comparison => "op" in c && c.op === "eq");
        const nes = eqs.map((c) => ({ ...c, op: "ne" as const }));
        expect(!ev({ all: eqs })).toBe(ev({ any: nes }));
        expect(!ev({ any: eqs })).toBe(ev({ all: nes }));
      }),
      { numRuns: 2000 },
    );
  });
});
