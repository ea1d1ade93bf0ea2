/**
 * The admin pages' forms as the settings API's bodies, and back. A posted form becomes exactly the
 * JSON an admin would have sent to /api/v1/settings/... (custom fields, sharing defaults and rules,
 * validation rules, workflow rules, flows), which then goes through the same functions the API
 * calls — the page accepts and refuses what the API does, with the same details. Where each part
 * of the body came from is kept, so a detail such as `updates[1].value` is shown beside the inputs
 * that gave it. A stored definition becomes the inputs that give it back, to change it.
 */
import { crmConditionNodesMax, crmSharingCriteriaMax, crmWorkflowUpdatesMax } from "../../core/limits.ts";
import { isCrmObject } from "../objects/fields.ts";
import type { ObjectSchema } from "../objects/schema.ts";
import type { RuleKind } from "../rules/rule-set.ts";
import { type CrmObject, crmObjects, type FieldError } from "../rules/record.ts";
import { comparisonFromRow, literalText, type RowText, rowFromComparison, rowsFromCondition, scalarFromText } from "./form-values.ts";

export type Schemas = ReadonlyMap<CrmObject, ObjectSchema>;

/** Comparison rows a condition form shows at most; a longer condition is edited as JSON. */
export const conditionRowsMax = 10;

export interface FormBody {
  body: Record<string, unknown>;
  /** [API path, input key]: a detail at or under the path is shown beside that input (longest path wins). */
  sources: [string, string][];
  /** The form's own problems (a JSON input that is not JSON), in the API's detail shape: nothing is sent. */
  problems: FieldError[];
}

const text = (form: URLSearchParams, name: string) => form.get(name) ?? "";
const checked = (form: URLSearchParams, name: string) => form.has(name);

function newBody(form: URLSearchParams, names: string[]): FormBody {
  const out: FormBody = { body: {}, sources: [], problems: [] };
  for (const name of names) {
    out.body[name] = text(form, name);
    out.sources.push([name, name]);
  }
  return out;
}

function schemaOf(schemas: Schemas, object: unknown): ObjectSchema | undefined {
  return typeof object === "string" && isCrmObject(object) ? schemas.get(object) : undefined;
}

/** The numbers of a row group's inputs (`prefix.0.field`, `prefix.1.field`, ...) in the form, bounded. */
function rowNumbers(form: URLSearchParams, prefix: string, max: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < max && form.has(`${prefix}.${i}.field`); i++) out.push(i);
  return out;
}

function rowText(form: URLSearchParams, prefix: string, i: number): RowText {
  return { field: text(form, `${prefix}.${i}.field`), op: text(form, `${prefix}.${i}.op`), value: text(form, `${prefix}.${i}.value`) };
}

/** A JSON input: its value, or a problem at `path`. Empty is undefined. */
function jsonInput(form: URLSearchParams, name: string, path: string, out: FormBody): unknown {
  const raw = text(form, name).trim();
  if (raw === "") return undefined;
  try {
    return JSON.parse(raw);
  } catch (error) {
    out.problems.push({ field: path, message: `not JSON: ${(error as Error).message}` });
    return undefined;
  }
}

/**
 * A condition from its rows (`prefix.N.field/op/value`, joined by `prefix.match`) or its JSON
 * input (`prefix.json`); undefined when both are empty.
 */
function conditionFrom(form: URLSearchParams, prefix: string, schema: ObjectSchema | undefined, out: FormBody): unknown {
  out.sources.push([prefix, prefix]);
  const rows = rowNumbers(form, prefix, crmConditionNodesMax)
    .map((i) => ({ i, row: rowText(form, prefix, i) }))
    .filter((r) => r.row.field.trim() !== "");
  const json = jsonInput(form, `${prefix}.json`, prefix, out);
  if (json !== undefined && rows.length > 0) out.problems.push({ field: prefix, message: "give the condition as rows or as JSON, not both" });
  if (json !== undefined || rows.length === 0) return json;
  const match = text(form, `${prefix}.match`) === "any" ? "any" : "all";
  rows.forEach((r, k) => out.sources.push([`${prefix}.${match}[${k}]`, `${prefix}.${r.i}`]));
  return { [match]: rows.map((r) => comparisonFromRow(schema, r.row)) };
}

export function customFieldBody(form: URLSearchParams): FormBody {
  const out = newBody(form, ["object", "name", "type"]);
  out.body.required = checked(form, "required");
  out.body.admin_only = checked(form, "admin_only");
  const values = text(form, "values")
    .split("\n")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  if (values.length > 0 || out.body.type === "picklist") out.body.values = values;
  out.sources.push(["values", "values"]);
  return out;
}

/** `default.<object>` selects → `{object: access}`. */
export function sharingDefaultsBody(form: URLSearchParams): FormBody {
  const out: FormBody = { body: {}, sources: [], problems: [] };
  for (const object of crmObjects) {
    const access = form.get(`default.${object}`);
    if (access === null) continue;
    out.body[object] = access;
    out.sources.push([object, `default.${object}`]);
  }
  return out;
}

function roleRef(form: URLSearchParams, prefix: string, out: FormBody) {
  out.sources.push([prefix, prefix]);
  return { role: text(form, `${prefix}.role`), include_subordinates: checked(form, `${prefix}.include_subordinates`) };
}

export function sharingRuleBody(form: URLSearchParams, schemas: Schemas): FormBody {
  const out = newBody(form, ["object", "name", "access"]);
  out.body.share_with = roleRef(form, "share_with", out);
  const basis = text(form, "basis");
  if (basis === "owner") out.body.owned_by = roleRef(form, "owned_by", out);
  if (basis === "criteria") {
    const schema = schemaOf(schemas, out.body.object);
    const rows = rowNumbers(form, "criteria", crmSharingCriteriaMax)
      .map((i) => ({ i, c: comparisonFromRow(schema, rowText(form, "criteria", i)) }))
      .filter((r) => r.c !== null);
    out.sources.push(["criteria", "criteria"]);
    rows.forEach((r, k) => out.sources.push([`criteria[${k}]`, `criteria.${r.i}`]));
    out.body.criteria = rows.map((r) => r.c);
  }
  return out;
}

function ruleBase(form: URLSearchParams, names: string[]): FormBody {
  const out = newBody(form, ["name", "object", ...names]);
  out.body.active = checked(form, "active");
  return out;
}

/** Workflow field updates: `updates.N.field`, `.kind` (value, ref or template) and `.value`. */
function updatesFrom(form: URLSearchParams, schema: ObjectSchema | undefined, out: FormBody): unknown[] {
  out.sources.push(["updates", "updates"]);
  const rows = rowNumbers(form, "updates", crmWorkflowUpdatesMax * 2).filter((i) => text(form, `updates.${i}.field`).trim() !== "");
  return rows.map((i, k) => {
    out.sources.push([`updates[${k}]`, `updates.${i}`]);
    const field = text(form, `updates.${i}.field`).trim();
    const raw = text(form, `updates.${i}.value`);
    const kind = text(form, `updates.${i}.kind`);
    const value = kind === "ref" ? { ref: raw.trim() } : kind === "template" ? { template: raw } : scalarFromText(schema?.byName.get(field), raw);
    return { field, value };
  });
}

export function ruleBody(kind: RuleKind, form: URLSearchParams, schemas: Schemas): FormBody {
  const schema = schemaOf(schemas, text(form, "object"));
  if (kind === "validation") {
    const out = ruleBase(form, ["message"]);
    const condition = conditionFrom(form, "condition", schema, out);
    if (condition !== undefined) out.body.condition = condition;
    const errorField = text(form, "error_field").trim();
    if (errorField !== "") out.body.error_field = errorField;
    out.sources.push(["error_field", "error_field"]);
    return out;
  }
  if (kind === "workflow") {
    const out = ruleBase(form, ["trigger"]);
    const condition = conditionFrom(form, "condition", schema, out);
    if (condition !== undefined) out.body.condition = condition;
    out.body.updates = updatesFrom(form, schema, out);
    return out;
  }
  const out = ruleBase(form, ["timing", "trigger", "entry_mode"]);
  const entry = conditionFrom(form, "entry", schema, out);
  if (entry !== undefined) out.body.entry = entry;
  out.sources.push(["steps", "steps"]);
  const steps = jsonInput(form, "steps", "steps", out);
  if (steps !== undefined) out.body.steps = steps;
  return out;
}

/** Messages by input key, for the details that a source names. */
export function inlineErrors(details: FieldError[], sources: [string, string][]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of details) {
    let best: [string, string] | undefined;
    for (const s of sources) {
      const [path] = s;
      const under = d.field === path || d.field.startsWith(`${path}.`) || d.field.startsWith(`${path}[`);
      if (under && (best === undefined || path.length > best[0].length)) best = s;
    }
    if (best === undefined) continue;
    const list = out.get(best[1]) ?? [];
    list.push(d.field === best[0] ? d.message : `${d.field.slice(best[0].length).replace(/^\./, "")}: ${d.message}`);
    out.set(best[1], list);
  }
  return out;
}

// ---- stored definitions back into inputs -------------------------------------------------

function setCondition(form: URLSearchParams, prefix: string, schema: ObjectSchema | undefined, condition: unknown): void {
  if (condition === undefined) return;
  const rows = rowsFromCondition(schema, condition, conditionRowsMax);
  if (rows === null) {
    form.set(`${prefix}.json`, JSON.stringify(condition, null, 2));
    return;
  }
  form.set(`${prefix}.match`, rows.match);
  rows.rows.forEach((r, i) => {
    form.set(`${prefix}.${i}.field`, r.field);
    form.set(`${prefix}.${i}.op`, r.op);
    form.set(`${prefix}.${i}.value`, r.value);
  });
}

/** The input text and kind that give back a value a rule writes into `field`, or null when none do. */
function updateText(schema: ObjectSchema | undefined, field: string, value: unknown): { kind: string; text: string } | null {
  if (typeof value === "object" && value !== null) {
    const v = value as { ref?: unknown; template?: unknown };
    if (typeof v.ref === "string") return { kind: "ref", text: v.ref };
    return typeof v.template === "string" ? { kind: "template", text: v.template } : null;
  }
  const text = literalText(value);
  if (text === null || JSON.stringify(scalarFromText(schema?.byName.get(field), text)) !== JSON.stringify(value)) return null;
  return { kind: "value", text };
}

/**
 * The inputs that give back a stored rule definition (as the settings API lists it), or null when
 * the form cannot give it back exactly (a field update whose literal the inputs would read
 * differently): changing it there could change what the rule does unnoticed.
 */
export function ruleForm(kind: RuleKind, definition: Record<string, unknown>, schemas: Schemas): URLSearchParams | null {
  const form = new URLSearchParams();
  const schema = schemaOf(schemas, definition.object);
  for (const key of ["name", "object", "message", "error_field", "trigger", "timing", "entry_mode"]) {
    if (typeof definition[key] === "string") form.set(key, definition[key] as string);
  }
  if (definition.active === true) form.set("active", "on");
  if (kind === "flow") {
    // An entry of all-of-nothing is the default the empty inputs give.
    if (JSON.stringify(definition.entry) !== '{"all":[]}') setCondition(form, "entry", schema, definition.entry);
    form.set("steps", JSON.stringify(definition.steps, null, 2));
    return form;
  }
  setCondition(form, "condition", schema, definition.condition);
  const updates = Array.isArray(definition.updates) ? (definition.updates as { field: string; value: unknown }[]) : [];
  for (const [i, u] of updates.entries()) {
    const shown = updateText(schema, u.field, u.value);
    if (shown === null) return null;
    form.set(`updates.${i}.field`, u.field);
    form.set(`updates.${i}.kind`, shown.kind);
    form.set(`updates.${i}.value`, shown.text);
  }
  return form;
}

/** The inputs that give back a sharing rule (as the settings API shows it), or null when they cannot exactly. */
export function sharingRuleForm(rule: Record<string, unknown>, schemas: Schemas): URLSearchParams | null {
  const form = new URLSearchParams();
  for (const key of ["object", "name", "access"]) if (typeof rule[key] === "string") form.set(key, rule[key] as string);
  for (const prefix of ["share_with", "owned_by"]) {
    const ref = rule[prefix] as { role?: string | null; include_subordinates?: boolean } | undefined;
    if (ref === undefined) continue;
    form.set(`${prefix}.role`, ref.role ?? "");
    if (ref.include_subordinates === true) form.set(`${prefix}.include_subordinates`, "on");
  }
  form.set("basis", rule.owned_by !== undefined ? "owner" : "criteria");
  const schema = schemaOf(schemas, rule.object);
  const criteria = Array.isArray(rule.criteria) ? rule.criteria : [];
  for (const [i, c] of criteria.entries()) {
    // A criterion left out would widen the rule: all of them, exactly, or no form.
    const row = rowFromComparison(schema, c);
    if (row === null) return null;
    form.set(`criteria.${i}.field`, row.field);
    form.set(`criteria.${i}.op`, row.op);
    form.set(`criteria.${i}.value`, row.value);
  }
  return form;
}
