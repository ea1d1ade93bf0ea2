/**
 * An object's schema as one request sees it: its standard fields plus the custom fields admins
 * have added (read from custom_fields, so several servers on one PostgreSQL agree at once).
 */
import type { CrmObject } from "../rules/record.ts";
import type { Queryable } from "../store/db.ts";
import { type CustomFieldType, customFieldPrefix, type FieldDef, standardFields } from "./fields.ts";

export interface ObjectSchema {
  object: CrmObject;
  fields: readonly FieldDef[];
  byName: ReadonlyMap<string, FieldDef>;
  /** The columns a read selects, in field order: never `*`, so a prepared plan stays valid as columns are added. */
  columns: string;
}

export type CustomFieldRow = {
  id: number;
  object: string;
  name: string;
  type: string;
  required: number;
  admin_only: number;
  picklist_values: string | null;
  created_at: string;
};

export function customFieldDef(row: CustomFieldRow): FieldDef {
  const def: FieldDef = {
    name: `${customFieldPrefix}${row.name}`,
    type: row.type as CustomFieldType,
    required: Number(row.required) === 1,
    adminOnly: Number(row.admin_only) === 1,
    readOnly: false,
    custom: true,
  };
  if (row.picklist_values !== null) def.values = JSON.parse(row.picklist_values) as string[];
  return def;
}

export function makeSchema(object: CrmObject, fields: FieldDef[]): ObjectSchema {
  return { object, fields, byName: new Map(fields.map((f) => [f.name, f])), columns: fields.map((f) => f.name).join(", ") };
}

export async function loadCustomFieldRows(q: Queryable, object: CrmObject): Promise<CustomFieldRow[]> {
  return q.all<CustomFieldRow>(
    "SELECT id, object, name, type, required, admin_only, picklist_values, created_at FROM custom_fields WHERE object = $1 ORDER BY id",
    [object],
  );
}

export async function loadSchema(q: Queryable, object: CrmObject): Promise<ObjectSchema> {
  const custom = (await loadCustomFieldRows(q, object)).map(customFieldDef);
  return makeSchema(object, [...standardFields[object], ...custom]);
}
