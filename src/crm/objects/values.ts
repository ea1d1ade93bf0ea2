/**
 * Field values between JSON, the checks every save makes, and table rows. JSON carries text,
 * picklists, dates ("YYYY-MM-DD") and timestamps as strings, numbers as numbers, booleans as
 * booleans; the tables store booleans as 0/1 in both databases, so one SQL serves both.
 */
import { crmLongTextCharsMax, crmRecordIdMax, crmTextCharsMax } from "../../core/limits.ts";
import type { FieldError, RecordData } from "../rules/record.ts";
import { type FieldDef, searchFields } from "./fields.ts";
import { isCalendarDate, parseInstant } from "./iso-time.ts";
import type { ObjectSchema } from "./schema.ts";
import { storableTextProblem } from "./text.ts";

/** The field every record has and that is never empty: on create null means "the caller" (docs/crm.md). */
export const ownerField = "owner_id";

const isTextual = (field: FieldDef) => field.type === "text" || field.type === "longtext" || field.type === "picklist";

/**
 * An absent value: null, text of only whitespace, or "" in a picklist (one of its values, or
 * nothing). In a number, date or reference field "" is a value of the wrong type: it used to reach
 * the column, where PostgreSQL refused it and SQLite stored it.
 */
function isBlank(field: FieldDef, v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (typeof v !== "string") return false;
  return field.type === "picklist" ? v === "" : (field.type === "text" || field.type === "longtext") && v.trim() === "";
}

/** Why `value` cannot be stored in `field`, or null when it can (blank is checked elsewhere). */
export function typeProblem(field: FieldDef, value: unknown): string | null {
  switch (field.type) {
    case "text":
    case "longtext": {
      const max = field.type === "text" ? crmTextCharsMax : crmLongTextCharsMax;
      if (typeof value !== "string") return "must be a string";
      return value.length > max ? `at most ${max} characters` : storableTextProblem(value);
    }
    case "picklist":
      if (typeof value !== "string") return "must be a string";
      return field.values!.includes(value) ? null : `must be one of: ${field.values!.join(", ")}`;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "must be a number";
    case "boolean":
      return typeof value === "boolean" ? null : "must be true or false";
    case "date":
      return typeof value === "string" && isCalendarDate(value) ? null : "must be a date YYYY-MM-DD";
    case "reference":
    case "id":
      return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= crmRecordIdMax
        ? null
        : `must be a record id (a whole number from 1 to ${crmRecordIdMax})`;
    case "timestamp":
      return typeof value === "string" && parseInstant(value) !== null ? null : "must be an ISO-8601 date or date-time with a zone";
  }
}

/** A value as it is compared with stored ones: timestamps in the UTC text rows hold, the rest as given. */
export function canonicalValue(field: FieldDef, value: unknown): unknown {
  return field.type === "timestamp" && typeof value === "string" ? (parseInstant(value) ?? value) : value;
}

export interface CheckOptions {
  isAdmin: boolean;
  isCreate: boolean;
  /** Fields automation set: checked for type, not for the user's right to write them. */
  automated?: ReadonlySet<string>;
}

/**
 * The synchronous checks of one save: unknown fields, admin-only fields, types and picklist
 * values, required fields. References are checked by the caller (they need the database).
 */
export function checkValues(schema: ObjectSchema, values: RecordData, options: CheckOptions): FieldError[] {
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(values)) {
    const field = schema.byName.get(name);
    if (field === undefined) {
      errors.push({ field: name, message: "unknown field" });
      continue;
    }
    // id and timestamps come back in a merged record; the store sets them, so they are not checked.
    if (field.readOnly) continue;
    if (field.adminOnly && !options.isAdmin && !options.automated?.has(name)) {
      errors.push({ field: name, message: "only an admin may set this field" });
      continue;
    }
    if (name === ownerField && value === null) {
      // On a create the store fills in the caller; a stored record cannot lose its owner.
      if (!options.isCreate) errors.push({ field: name, message: "a record always has an owner" });
      continue;
    }
    if (isBlank(field, value)) {
      if (field.required) errors.push({ field: name, message: "is required" });
      continue;
    }
    const problem = typeProblem(field, value);
    if (problem !== null) errors.push({ field: name, message: problem });
  }
  if (options.isCreate) {
    for (const field of schema.fields) {
      // A field with a default gets it when the save leaves it out (persist fills it in).
      if (field.required && field.defaultValue === undefined && !(field.name in values)) errors.push({ field: field.name, message: "is required" });
    }
  }
  return errors;
}

/** A JSON value as its column holds it. */
export function toColumn(field: FieldDef, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (field.type === "boolean") return value ? 1 : 0;
  if (isTextual(field) && value === "") return null;
  return value;
}

/** A column's value as JSON. */
export function fromColumn(field: FieldDef, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (field.type) {
    case "boolean":
      return Number(value) === 1;
    case "number":
    case "reference":
    case "id":
      return Number(value);
    default:
      return value;
  }
}

/** A row as a record; admin-only fields left out unless `showAdminOnly`. */
export function rowToRecord(schema: ObjectSchema, row: Record<string, unknown>, showAdminOnly: boolean): RecordData {
  const record: RecordData = {};
  for (const field of schema.fields) {
    if (field.adminOnly && !showAdminOnly) continue;
    record[field.name] = fromColumn(field, row[field.name]);
  }
  return record;
}

/** What `q` searches in a record: its name-like fields, joined and lower-cased. */
export function searchText(schema: ObjectSchema, record: RecordData): string {
  return searchFields[schema.object]
    .map((name) => record[name])
    .filter((v): v is string => typeof v === "string" && v !== "")
    .join(" ")
    .toLowerCase();
}
