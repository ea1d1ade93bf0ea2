// Rule definitions as admins send them to the settings routes: canonical forms with defaults,
// every problem at its path, the limits at the bound and one past, rules Salesforce would refuse
// (ISCHANGED outside "created and every time edited", record creation before save), and the
// RuleSet a save runs (active only, this object only, sorted by name).
import { describe, expect, test } from "bun:test";
import {
  crmFlowBranchesMax,
  crmFlowCreateFieldsMax,
  crmFlowDecisionDepthMax,
  crmFlowStepsMax,
  crmRuleNameCharsMax,
  crmRuleProblemsMax,
  crmWorkflowUpdatesMax,
} from "../../../src/core/limits.ts";
import { buildRuleSet, parseRule, type RuleKind } from "../../../src/crm/rules/rule-set.ts";
import { fieldsOf } from "./memory-host.ts";

function problems(kind: RuleKind, json: unknown) {
  const r = parseRule(kind, json, { fieldsOf });
  if (!("details" in r)) throw new Error("expected problems");
  return r.details;
}

/** The rule parsed (as plain JSON, to compare with literals). */
function accepted(kind: RuleKind, json: unknown): unknown {
  const r = parseRule(kind, json, { fieldsOf });
  if (!("rule" in r)) throw new Error(JSON.stringify(r.details));
  return r.rule;
}

const cond = { field: "amount", op: "lt", value: 0 };

describe("validation rules", () => {
  test("a rule comes back in canonical form, active by default", () => {
    expect(
      accepted("validation", {
        name: "AmountPositive",
        object: "opportunities",
        condition: cond,
        error_field: "amount",
        message: "Amount must not be negative",
      }),
    ).toEqual({
      name: "AmountPositive",
      object: "opportunities",
      condition: cond,
      error_field: "amount",
      message: "Amount must not be negative",
      active: true,
    });
    expect(accepted("validation", { name: "A", object: "leads", condition: { all: [] }, message: "m", active: false, error_field: null })).toEqual({
      name: "A",
      object: "leads",
      condition: { all: [] },
      message: "m",
      active: false,
    });
  });

  test("every missing or wrong member is reported at once", () => {
    expect(problems("validation", { name: "1bad", object: "widgets", condition: { field: "x" }, error_field: "nope", active: "yes", color: 1 })).toEqual([
      { field: "color", message: "unknown key" },
      { field: "name", message: "must start with a letter and hold only letters, digits and _" },
      { field: "object", message: "must be one of accounts, contacts, leads, opportunities, cases" },
      { field: "condition.op", message: "is required" },
      { field: "message", message: "is required" },
      { field: "active", message: "must be true or false" },
    ]);
  });

  test("error_field and condition fields must exist on the object", () => {
    expect(problems("validation", { name: "A", object: "leads", condition: { field: "amount", op: "blank" }, error_field: "cf_x", message: "m" })).toEqual([
      { field: "condition.field", message: "leads has no field amount" },
      { field: "error_field", message: "leads has no field cf_x" },
    ]);
  });

  test(`names up to ${crmRuleNameCharsMax} characters`, () => {
    accepted("validation", { name: "N".repeat(crmRuleNameCharsMax), object: "opportunities", condition: cond, message: "m" });
    expect(problems("validation", { name: "N".repeat(crmRuleNameCharsMax + 1), object: "leads", condition: { all: [] }, message: "m" })[0]!.field).toBe("name");
  });

  test("a body that is not an object", () => {
    for (const body of [null, [], "x", 3])
      expect(problems("validation", body)).toEqual([{ field: "base", message: "a rule definition must be a JSON object" }]);
  });

  test(`at most ${crmRuleProblemsMax} problems, then a count of the rest`, () => {
    const body: Record<string, unknown> = {};
    for (let i = 0; i < crmRuleProblemsMax + 10; i++) body[`k${i}`] = i;
    const d = problems("validation", body);
    expect(d).toHaveLength(crmRuleProblemsMax + 1);
    expect(d.at(-1)).toEqual({ field: "base", message: "14 more problems not shown" });
  });
});

describe("workflow rules", () => {
  const base = { name: "Hot", object: "leads", trigger: "created_and_edited", condition: { field: "rating", op: "eq", value: "Hot" } };

  test("updates take literals, refs and templates", () => {
    const rule = accepted("workflow", {
      ...base,
      updates: [
        { field: "status", value: "Working" },
        { field: "source", value: { template: "{company} ({rating})" } },
        { field: "email", value: null },
      ],
    });
    expect(rule).toMatchObject({
      trigger: "created_and_edited",
      active: true,
      updates: [
        { field: "status", value: "Working" },
        { field: "source", value: { template: "{company} ({rating})" } },
        { field: "email", value: null },
      ],
    });
  });

  test("bad triggers, updates and system fields are refused with paths", () => {
    expect(
      problems("workflow", {
        ...base,
        trigger: "always",
        updates: [
          { field: "id", value: 1 },
          { field: "status" },
          { field: "status", value: { ref: "nope" } },
          { field: "source", value: { template: "{nope}" } },
          { field: "status", value: [1] },
        ],
      }),
    ).toEqual([
      { field: "trigger", message: "must be one of created, created_and_edited, created_and_edited_to_meet" },
      { field: "updates[0].field", message: "id is set by the store and cannot be written by a rule" },
      { field: "updates[1].value", message: "is required (null clears the field)" },
      { field: "updates[2].value.ref", message: "leads has no field nope" },
      { field: "updates[3].value.template", message: "leads has no field nope" },
      { field: "updates[4].value", message: "must be a string, number, boolean or null" },
    ]);
  });

  test("the same field twice in one rule is refused", () => {
    expect(
      problems("workflow", {
        ...base,
        updates: [
          { field: "status", value: "a" },
          { field: "status", value: "b" },
        ],
      }),
    ).toEqual([{ field: "updates[1].field", message: "status is already updated by this rule" }]);
  });

  test("changed needs trigger created_and_edited, where Salesforce allows ISCHANGED", () => {
    const changed = { field: "rating", op: "changed" };
    accepted("workflow", { ...base, condition: changed, updates: [{ field: "status", value: "x" }] });
    for (const trigger of ["created", "created_and_edited_to_meet"]) {
      expect(problems("workflow", { ...base, trigger, condition: changed, updates: [{ field: "status", value: "x" }] })[0]!.field).toBe("condition");
    }
  });

  test(`${crmWorkflowUpdatesMax} updates at most`, () => {
    const fields = [...fieldsOf("accounts")].filter((f) => !["id", "created_at", "updated_at"].includes(f));
    const updates = (n: number) => Array.from({ length: n }, (_, i) => ({ field: i < fields.length ? fields[i] : `cf_f${i}`, value: null }));
    const ok = parseRule("workflow", { ...base, object: "accounts", condition: { all: [] }, updates: updates(crmWorkflowUpdatesMax) });
    expect("rule" in ok).toBe(true);
    expect(problems("workflow", { ...base, object: "accounts", condition: { all: [] }, updates: updates(crmWorkflowUpdatesMax + 1) })).toEqual([
      { field: "updates", message: `must have at most ${crmWorkflowUpdatesMax} entries` },
    ]);
  });
});

describe("flows", () => {
  const flow = { name: "Escalate", object: "accounts", timing: "after_save", trigger: "created_or_updated" };
  const set = { type: "set_field", field: "rating", value: "Hot" };

  test("a flow with every step type, with defaults filled in", () => {
    const steps = [
      {
        type: "decision",
        branches: [{ condition: { field: "industry", op: "eq", value: "Energy" }, steps: [set] }],
        else: [{ type: "create_record", object: "cases", values: { subject: { template: "Review {name}" }, account_id: { ref: "id" }, priority: "High" } }],
      },
    ];
    expect(accepted("flow", { ...flow, steps })).toEqual({ ...flow, entry_mode: "every_time", entry: { all: [] }, steps, active: true });
  });

  test("create_record runs only after save; values name fields of the created object", () => {
    const create = { type: "create_record", object: "cases", values: { subject: "s", nope: 1, status: { ref: "missing" } } };
    expect(problems("flow", { ...flow, timing: "before_save", steps: [create] })).toEqual([
      { field: "steps[0].type", message: "create_record runs only in after_save flows" },
      { field: "steps[0].values.nope", message: "cases has no field nope" },
      { field: "steps[0].values.status.ref", message: "accounts has no field missing" },
    ]);
  });

  test("bad steps are reported at their paths, inside branches too", () => {
    expect(
      problems("flow", {
        ...flow,
        entry_mode: "sometimes",
        entry: { any: 1 },
        steps: [
          { type: "loop" },
          { type: "decision", branches: [{ condition: { field: "x", op: "eq", value: 1 }, steps: [{ type: "set_field", field: "id", value: 1 }] }] },
          "x",
        ],
      }),
    ).toEqual([
      { field: "entry_mode", message: "must be one of every_time, updated_to_meet" },
      { field: "entry.any", message: "must be an array of conditions" },
      { field: "steps[0].type", message: "must be one of set_field, create_record, decision" },
      { field: "steps[1].branches[0].condition.field", message: "accounts has no field x" },
      { field: "steps[1].branches[0].steps[0].field", message: "id is set by the store and cannot be written by a rule" },
      { field: "steps[2]", message: "must be an object" },
    ]);
  });

  test(`${crmFlowStepsMax} steps counting branches; ${crmFlowStepsMax + 1} is refused`, () => {
    const half = Array.from({ length: crmFlowStepsMax / 2 - 1 }, () => set);
    const ok = [...half, { type: "decision", branches: [{ condition: { all: [] }, steps: half }] }];
    expect(ok.length + half.length).toBe(crmFlowStepsMax - 1);
    accepted("flow", { ...flow, steps: [...ok, set] });
    expect(problems("flow", { ...flow, steps: [...ok, set, set] })).toEqual([
      { field: "steps", message: `a flow has at most ${crmFlowStepsMax} steps, branches included` },
    ]);
  });

  test(`decisions nest ${crmFlowDecisionDepthMax} deep; one more is refused`, () => {
    const nest = (n: number): unknown[] => (n === 0 ? [set] : [{ type: "decision", branches: [{ condition: { all: [] }, steps: nest(n - 1) }] }]);
    accepted("flow", { ...flow, steps: nest(crmFlowDecisionDepthMax) });
    const d = problems("flow", { ...flow, steps: nest(crmFlowDecisionDepthMax + 1) });
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toBe(`decisions nest at most ${crmFlowDecisionDepthMax} deep`);
  });

  test(`${crmFlowBranchesMax} branches and ${crmFlowCreateFieldsMax} created fields at most`, () => {
    const branches = (n: number) => Array.from({ length: n }, () => ({ condition: { all: [] }, steps: [] }));
    accepted("flow", { ...flow, steps: [{ type: "decision", branches: branches(crmFlowBranchesMax) }] });
    expect(problems("flow", { ...flow, steps: [{ type: "decision", branches: branches(crmFlowBranchesMax + 1) }] })[0]!.field).toBe("steps[0].branches");
    const values = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`cf_f${i}`, 1]));
    expect("rule" in parseRule("flow", { ...flow, steps: [{ type: "create_record", object: "cases", values: values(crmFlowCreateFieldsMax) }] })).toBe(true);
    expect(problems("flow", { ...flow, steps: [{ type: "create_record", object: "cases", values: values(crmFlowCreateFieldsMax + 1) }] })[0]!.field).toBe(
      "steps[0].values",
    );
  });
});

describe("buildRuleSet", () => {
  test("keeps the object's active rules, each kind sorted by name", () => {
    const v = (name: string, object = "leads", active = true) => ({
      kind: "validation" as const,
      definition: { name, object, condition: { all: [] }, message: name, active },
    });
    const set = buildRuleSet("leads", [v("B"), v("A"), v("C", "cases"), v("D", "leads", false)]);
    expect(set.validation.map((r) => r.name)).toEqual(["A", "B"]);
    expect(set.workflow).toEqual([]);
    expect(set.flows).toEqual([]);
  });

  test("a stored definition that no longer parses is a programmer error, not a silent skip", () => {
    expect(() => buildRuleSet("leads", [{ kind: "flow", definition: { name: "x" } }])).toThrow("stored flow rule does not parse");
  });
});
