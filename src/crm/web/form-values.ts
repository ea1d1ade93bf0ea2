/**
 * Between what an admin types into the admin pages' inputs and the JSON the settings API takes.
 * An input holds text; the API wants a field's values typed (5, not "5"), so a value is read by
 * the type of the field it goes with: a number field's "5" is 5, a boolean's "true" is true, a
 * text field's "5" stays "5"; empty is null; `in` takes values separated by commas. Anything that
 * does not read as the field's type is sent as typed, and the API's answer says what is wrong.
 *
 * The reverse (a stored definition back into inputs, to change it) is exact or not done: when text
 * could not give back the very value stored (a list value holding a comma, a nested condition),
 * the page shows that part as JSON instead.
 */
import type { FieldDef } from "../objects/fields.ts";
import type { ObjectSchema } from "../objects/schema.ts";

/** Condition ops that take no value. */
const noValueOps = new Set(["blank", "not_blank", "changed"]);

/** One row of comparison inputs: field, op, value. */
export interface RowText {
  field: string;
  op: string;
  value: string;
}

/** A scalar read by its field's type. */
export function scalarFromText(field: FieldDef | undefined, text: string): unknown {
  const t = text.trim();
  if (t === "") return null;
  switch (field?.type) {
    case "number":
    case "reference":
    case "id": {
      const n = Number(t);
      return Number.isFinite(n) ? n : t;
    }
    case "boolean":
      return t === "true" ? true : t === "false" ? false : t;
    default:
      return t;
  }
}

/** A comparison's value from its row, or undefined for an op that takes none. */
export function valueFromText(field: FieldDef | undefined, op: string, text: string): unknown {
  if (noValueOps.has(op)) return undefined;
  if (op !== "in") return scalarFromText(field, text);
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => scalarFromText(field, s));
}

/** A comparison from a row; null when the row is empty (no field). */
export function comparisonFromRow(schema: ObjectSchema | undefined, row: RowText): Record<string, unknown> | null {
  const field = row.field.trim();
  if (field === "") return null;
  const value = valueFromText(schema?.byName.get(field), row.op, row.value);
  return value === undefined ? { field, op: row.op } : { field, op: row.op, value };
}

function scalarText(value: unknown): string | null {
  if (value === null) return "";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
}

/** The row that gives back exactly this comparison, or null when no row can. */
export function rowFromComparison(schema: ObjectSchema | undefined, c: unknown): RowText | null {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return null;
  const { field, op, value } = c as { field?: unknown; op?: unknown; value?: unknown };
  if (typeof field !== "string" || typeof op !== "string") return null;
  let text: string | null;
  if (value === undefined) text = "";
  else if (Array.isArray(value)) {
    const parts = value.map(scalarText);
    text = parts.some((p) => p === null || p.includes(",")) ? null : parts.join(", ");
  } else text = scalarText(value);
  if (text === null) return null;
  const row = { field, op, value: text };
  return JSON.stringify(comparisonFromRow(schema, row)) === JSON.stringify(c) ? row : null;
}

/**
 * A condition as rows: a comparison, or an all/any group of at most `rowsMax` comparisons, each
 * of which a row gives back exactly. Null when it needs JSON.
 */
export function rowsFromCondition(schema: ObjectSchema | undefined, condition: unknown, rowsMax: number): { match: "all" | "any"; rows: RowText[] } | null {
  if (typeof condition !== "object" || condition === null) return null;
  const group = condition as { all?: unknown; any?: unknown };
  const match = Array.isArray(group.all) ? "all" : Array.isArray(group.any) ? "any" : null;
  const members = match === null ? [condition] : (group[match] as unknown[]);
  // An empty group holds always (all) or never (any): shown as JSON, so no one sets it by leaving rows blank.
  if (members.length === 0 || members.length > rowsMax || (match !== null && Object.keys(condition).length !== 1)) return null;
  const rows = members.map((m) => rowFromComparison(schema, m));
  if (rows.some((r) => r === null)) return null;
  return { match: match ?? "all", rows: rows as RowText[] };
}

/** A literal a rule writes into `field`, shown in an input (null: empty). */
export function literalText(value: unknown): string | null {
  return scalarText(value);
}
