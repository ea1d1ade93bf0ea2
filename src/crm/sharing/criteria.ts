/**
 * The criteria of a criteria-based sharing rule: every condition must hold (Salesforce's
 * criteria-based rules AND their filters by default). Compiled to SQL, so a list filters in the
 * database and a single read asks the same question of one row.
 */
import { crmSharingCriteriaMax } from "../../core/limits.ts";
import type { FieldError } from "../rules/record.ts";
import type { FieldDef } from "../objects/fields.ts";
import type { ObjectSchema } from "../objects/schema.ts";
import { storableTextProblem } from "../objects/text.ts";
import { canonicalValue, toColumn, typeProblem } from "../objects/values.ts";
import { escapeLike, type SqlParams } from "../store/db.ts";

export const criterionOps = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains"] as const;
export type CriterionOp = (typeof criterionOps)[number];

export interface Criterion {
  field: string;
  op: CriterionOp;
  value: unknown;
}

const ordered = new Set(["number", "date", "text", "picklist", "timestamp", "reference"]);
const textual = new Set(["text", "longtext", "picklist"]);

/** Checks criteria against the object's fields; reports problems under `at`. */
export function parseCriteria(raw: unknown, schema: ObjectSchema, at: string, errors: FieldError[]): Criterion[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > crmSharingCriteriaMax) {
    errors.push({ field: at, message: `1 to ${crmSharingCriteriaMax} conditions {field, op, value}` });
    return undefined;
  }
  const out: Criterion[] = [];
  raw.forEach((c: unknown, i) => {
    const here = `${at}[${i}]`;
    const item = c as Partial<Criterion> | null;
    const field = typeof item?.field === "string" ? schema.byName.get(item.field) : undefined;
    if (item === null || typeof item !== "object" || field === undefined) {
      errors.push({ field: `${here}.field`, message: "must name a field of the object" });
      return;
    }
    if (!(criterionOps as readonly string[]).includes(item.op as string)) {
      errors.push({ field: `${here}.op`, message: `one of ${criterionOps.join(", ")}` });
      return;
    }
    const problem = valueProblem(field, item.op!, item.value);
    if (problem !== null) {
      errors.push({ field: `${here}.value`, message: problem });
      return;
    }
    // Timestamps are kept as the UTC text rows hold, so the SQL compares instants, not spellings.
    const value = Array.isArray(item.value) ? item.value.map((v) => canonicalValue(field, v)) : canonicalValue(field, item.value);
    out.push({ field: field.name, op: item.op!, value });
  });
  return out;
}

function valueProblem(field: FieldDef, op: CriterionOp, value: unknown): string | null {
  if (op === "in") {
    if (!Array.isArray(value) || value.length === 0 || value.length > 100) return "in takes a list of 1 to 100 values";
    for (const v of value) if (typeProblem(field, v) !== null) return `each value ${typeProblem(field, v)}`;
    return null;
  }
  if (op === "contains")
    return textual.has(field.type) && typeof value === "string" && value !== ""
      ? storableTextProblem(value)
      : "contains takes a non-empty string on a text field";
  if (value === null) return op === "eq" || op === "ne" ? null : `${op} cannot compare with null`;
  if (op !== "eq" && op !== "ne" && !ordered.has(field.type)) return `${op} does not apply to a ${field.type} field`;
  return typeProblem(field, value);
}

/** One criterion as SQL over the object's table. */
function compileOne(c: Criterion, field: FieldDef, p: SqlParams): string {
  const col = field.name;
  const v = (x: unknown) => p.add(toColumn(field, x));
  switch (c.op) {
    case "eq":
      return c.value === null ? `${col} IS NULL` : `${col} = ${v(c.value)}`;
    case "ne":
      return c.value === null ? `${col} IS NOT NULL` : `(${col} IS NULL OR ${col} <> ${v(c.value)})`;
    case "gt":
      return `${col} > ${v(c.value)}`;
    case "gte":
      return `${col} >= ${v(c.value)}`;
    case "lt":
      return `${col} < ${v(c.value)}`;
    case "lte":
      return `${col} <= ${v(c.value)}`;
    case "in":
      return `${col} IN (${(c.value as unknown[]).map(v).join(", ")})`;
    case "contains":
      return `lower(${col}) LIKE ${p.add(`%${escapeLike((c.value as string).toLowerCase())}%`)} ESCAPE '\\'`;
  }
}

export function compileCriteria(criteria: readonly Criterion[], schema: ObjectSchema, p: SqlParams): string {
  // A field dropped from the schema cannot happen (fields are never dropped); guard anyway.
  const parts = criteria.map((c) => {
    const field = schema.byName.get(c.field);
    return field === undefined ? "1 = 0" : compileOne(c, field, p);
  });
  return `(${parts.join(" AND ")})`;
}
