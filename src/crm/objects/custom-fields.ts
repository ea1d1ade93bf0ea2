/**
 * Custom fields (POST /api/v1/settings/fields): an admin names a field, and records carry it as
 * `cf_<name>` — a real column added to the object's table, so lists filter and sort on it in SQL
 * like any standard field. Fields are added, never dropped or retyped (that would rewrite or lose
 * stored values); see docs/crm.md.
 */
import { SvcError } from "../../core/errors.ts";
import { crmCustomFieldsMax, crmPicklistValuesMax, crmTextCharsMax } from "../../core/limits.ts";
import { type CrmObject, crmObjects, type FieldError } from "../rules/record.ts";
import type { Queryable } from "../store/db.ts";
import { customFieldPrefix, type CustomFieldType, customFieldTypes, isCrmObject } from "./fields.ts";
import { type CustomFieldRow, loadCustomFieldRows } from "./schema.ts";
import { storableTextProblem } from "./text.ts";

/** Lower-case letters, digits and underscores; with the prefix it stays a plain SQL identifier. */
export const customFieldNamePattern = /^[a-z][a-z0-9_]{0,39}$/;

const columnType: Record<CustomFieldType, string> = {
  text: "TEXT",
  picklist: "TEXT",
  date: "TEXT",
  number: "DOUBLE PRECISION",
  boolean: "INTEGER",
};

export interface CustomFieldView {
  id: number;
  object: CrmObject;
  name: string;
  api_name: string;
  type: CustomFieldType;
  required: boolean;
  admin_only: boolean;
  values: string[] | null;
  created_at: string;
}

export function customFieldView(row: CustomFieldRow): CustomFieldView {
  return {
    id: Number(row.id),
    object: row.object as CrmObject,
    name: row.name,
    api_name: `${customFieldPrefix}${row.name}`,
    type: row.type as CustomFieldType,
    required: Number(row.required) === 1,
    admin_only: Number(row.admin_only) === 1,
    values: row.picklist_values === null ? null : (JSON.parse(row.picklist_values) as string[]),
    created_at: row.created_at,
  };
}

interface CustomFieldSpec {
  object: CrmObject;
  name: string;
  type: CustomFieldType;
  required: boolean;
  adminOnly: boolean;
  values: string[] | null;
}

const allowedKeys = new Set(["object", "name", "type", "required", "admin_only", "values"]);

/** The body of POST /api/v1/settings/fields, checked; every problem in one 422. */
export function parseCustomFieldSpec(body: unknown): CustomFieldSpec {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new SvcError("invalid", "invalid field", { details: [{ field: "base", message: "expected a JSON object" }] });
  }
  const b = body as Record<string, unknown>;
  const details: FieldError[] = [];
  for (const key of Object.keys(b)) if (!allowedKeys.has(key)) details.push({ field: key, message: "unknown field" });
  if (typeof b.object !== "string" || !isCrmObject(b.object)) details.push({ field: "object", message: `one of ${crmObjects.join(", ")}` });
  if (typeof b.name !== "string" || !customFieldNamePattern.test(b.name)) {
    details.push({ field: "name", message: "1 to 40 lower-case letters, digits or '_', starting with a letter" });
  }
  if (typeof b.type !== "string" || !(customFieldTypes as readonly string[]).includes(b.type)) {
    details.push({ field: "type", message: `one of ${customFieldTypes.join(", ")}` });
  }
  for (const key of ["required", "admin_only"]) {
    if (b[key] !== undefined && typeof b[key] !== "boolean") details.push({ field: key, message: "must be true or false" });
  }
  let values: string[] | null = null;
  if (b.type === "picklist") {
    const v = b.values;
    const ok =
      Array.isArray(v) &&
      v.length >= 1 &&
      v.length <= crmPicklistValuesMax &&
      v.every((x) => typeof x === "string" && x.length >= 1 && x.length <= crmTextCharsMax) &&
      new Set(v).size === v.length;
    const unstorable = ok ? v.flatMap((x, i) => [storableTextProblem(x)].filter((p) => p !== null).map((message) => ({ field: `values[${i}]`, message }))) : [];
    if (!ok) details.push({ field: "values", message: `a picklist needs 1 to ${crmPicklistValuesMax} distinct non-empty strings` });
    else if (unstorable.length > 0) details.push(...unstorable);
    else values = v as string[];
  } else if (b.values !== undefined && b.values !== null) {
    details.push({ field: "values", message: "only a picklist has values" });
  }
  if (details.length > 0) throw new SvcError("invalid", "invalid field", { details });
  return {
    object: b.object as CrmObject,
    name: b.name as string,
    type: b.type as CustomFieldType,
    required: b.required === true,
    adminOnly: b.admin_only === true,
    values,
  };
}

export async function addCustomField(tx: Queryable, spec: CustomFieldSpec): Promise<CustomFieldView> {
  const existing = await loadCustomFieldRows(tx, spec.object);
  if (existing.some((r) => r.name === spec.name)) throw new SvcError("conflict", `${spec.object} already has ${customFieldPrefix}${spec.name}`);
  if (existing.length >= crmCustomFieldsMax) throw new SvcError("conflict", `at most ${crmCustomFieldsMax} custom fields per object`);
  // DDL inside the request's transaction: both SQLite and PostgreSQL roll it back with the rest.
  await tx.run(`ALTER TABLE ${spec.object} ADD COLUMN ${customFieldPrefix}${spec.name} ${columnType[spec.type]}`);
  const row = await tx.get<CustomFieldRow>(
    `INSERT INTO custom_fields (object, name, type, required, admin_only, picklist_values, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id, object, name, type, required, admin_only, picklist_values, created_at`,
    [
      spec.object,
      spec.name,
      spec.type,
      spec.required ? 1 : 0,
      spec.adminOnly ? 1 : 0,
      spec.values === null ? null : JSON.stringify(spec.values),
      new Date().toISOString(),
    ],
  );
  return customFieldView(row!);
}

export async function listCustomFields(q: Queryable): Promise<CustomFieldView[]> {
  const rows = await q.all<CustomFieldRow>("SELECT id, object, name, type, required, admin_only, picklist_values, created_at FROM custom_fields ORDER BY id");
  return rows.map(customFieldView);
}
