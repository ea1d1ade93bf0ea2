// The condition parser: valid trees come back as given, every problem is reported with a
// path-like field name, value shapes are checked per op, and the depth, size and list limits hold
// at the limit and fail one past it.
import { describe, expect, test } from "bun:test";
import { parseCondition } from "../../../src/crm/rules/condition-parse.ts";
import { crmConditionDepthMax, crmConditionInValuesMax, crmConditionNodesMax, crmRuleTextCharsMax } from "../../../src/core/limits.ts";
import { fieldsOf } from "./memory-host.ts";

const leaf = { field: "amount", op: "gt", value: 10 };

/** A chain of `all` groups, `levels` deep in all (the comparison at the bottom counts as one). */
function nested(levels: number): unknown {
  let c: unknown = leaf;
  for (let i = 1; i < levels; i++) c = { all: [c] };
  return c;
}

const details = (json: unknown) => {
  const r = parseCondition(json);
  if (!("details" in r)) throw new Error("expected problems");
  return r.details;
};

describe("parseCondition accepts", () => {
  test("a tree of every op comes back unchanged", () => {
    const tree = {
      any: [
        {
          all: [
            { field: "stage", op: "eq", value: "Won" },
            { field: "stage", op: "ne", value: null },
          ],
        },
        { field: "amount", op: "gte", value: 1.5 },
        { field: "close_date", op: "lt", value: "2026-01-01" },
        { field: "amount", op: "lte", value: 3 },
        { field: "stage", op: "in", value: ["a", 1, true, null] },
        { field: "name", op: "contains", value: "x" },
        { field: "name", op: "blank" },
        { field: "name", op: "not_blank" },
        { field: "name", op: "changed" },
        { field: "stage", op: "changed_to", value: "Won" },
        { all: [] },
      ],
    };
    expect(parseCondition(tree) as unknown).toEqual({ condition: tree });
  });

  test(`a condition exactly ${crmConditionDepthMax} levels deep`, () => {
    expect("condition" in parseCondition(nested(crmConditionDepthMax))).toBe(true);
  });

  test(`${crmConditionNodesMax} nodes, and an in list of ${crmConditionInValuesMax} values`, () => {
    const leaves = Array.from({ length: crmConditionNodesMax - 1 }, () => leaf);
    expect("condition" in parseCondition({ all: leaves })).toBe(true);
    const values = Array.from({ length: crmConditionInValuesMax }, (_, i) => i);
    expect("condition" in parseCondition({ field: "amount", op: "in", value: values })).toBe(true);
  });
});

describe("parseCondition refuses", () => {
  test(`a condition ${crmConditionDepthMax + 1} levels deep, naming the group`, () => {
    const d = details(nested(crmConditionDepthMax + 1));
    expect(d).toHaveLength(1);
    expect(d[0]!.field).toBe(`condition${".all[0]".repeat(crmConditionDepthMax - 1)}.all`);
    expect(d[0]!.message).toContain(`${crmConditionDepthMax} levels`);
  });

  test("a very deep condition without recursing into it (no stack overflow)", () => {
    expect(details(nested(100_000))[0]!.message).toContain("levels");
  });

  test(`${crmConditionNodesMax + 1} nodes, and an in list of ${crmConditionInValuesMax + 1}`, () => {
    const leaves = Array.from({ length: crmConditionNodesMax }, () => leaf);
    expect(details({ all: leaves })).toEqual([{ field: "condition", message: `must have at most ${crmConditionNodesMax} groups and comparisons` }]);
    const values = Array.from({ length: crmConditionInValuesMax + 1 }, (_, i) => i);
    expect(details({ field: "amount", op: "in", value: values })).toEqual([
      { field: "condition.value", message: `must have at most ${crmConditionInValuesMax} values` },
    ]);
  });

  test("every problem at once, each at its path", () => {
    const d = details({
      all: [
        { field: "Amount", op: "gt", value: 1 },
        { field: "amount", op: "between", value: 1 },
        { field: "amount", op: "gt", value: true },
        { field: "amount", op: "blank", value: 1 },
        { field: "amount", op: "eq" },
        { any: [{ field: "stage", op: "in", value: [] }, "x"] },
        { field: "stage", op: "eq", value: "a", extra: 1 },
        { all: [], any: [] },
      ],
    });
    expect(d.map((e) => e.field)).toEqual([
      "condition.all[0].field",
      "condition.all[1].op",
      "condition.all[2].value",
      "condition.all[3].value",
      "condition.all[4].value",
      "condition.all[5].any[0].value",
      "condition.all[5].any[1]",
      "condition.all[6].extra",
      "condition.all[7]",
    ]);
    expect(d[1]!.message).toContain("must be one of eq, ne");
    expect(d[3]!.message).toBe("must be absent: blank compares no value");
    expect(d[6]!.message).toBe("must be an object: {all}, {any} or {field, op, value}");
    expect(d[7]!.message).toBe("unknown key");
  });

  test("values that are not JSON scalars, or too long", () => {
    expect(details({ field: "a", op: "eq", value: { x: 1 } })[0]!.message).toBe("must be a string, number, boolean or null");
    expect(details({ field: "a", op: "eq", value: Number.NaN })[0]!.message).toBe("must be a finite number");
    expect(details({ field: "a", op: "eq", value: "x".repeat(crmRuleTextCharsMax + 1) })[0]!.field).toBe("condition.value");
    expect("condition" in parseCondition({ field: "a", op: "eq", value: "x".repeat(crmRuleTextCharsMax) })).toBe(true);
    expect(details({ field: "a", op: "contains", value: "" })[0]!.message).toBe("must be a non-empty string for contains");
    expect(details({ field: "a", op: "gt", value: null })[0]!.message).toContain("must be a number or a string");
  });

  test("a field the object lacks, when the caller lists the object's fields", () => {
    const r = parseCondition({ field: "cf_nope", op: "blank" }, "accounts", { fieldsOf });
    expect(r).toEqual({ details: [{ field: "condition.field", message: "accounts has no field cf_nope" }] });
    expect("condition" in parseCondition({ field: "cf_tier", op: "blank" }, "accounts", { fieldsOf })).toBe(true);
  });

  test("non-objects at the top", () => {
    for (const json of [null, 1, "all", [], true, undefined]) expect(details(json)[0]!.field).toBe("condition");
  });
});
