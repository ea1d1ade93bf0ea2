/**
 * Typed comparison of field values, shared by conditions and by the engine's change detection.
 * Values are the JSON values a RecordData holds: numbers compare as numbers; strings by UTF-16
 * code unit, which is chronological for dates ("YYYY-MM-DD") and for UTC ISO-8601 timestamps
 * alike; booleans only for equality. A missing field is null. Values of different types are never
 * equal and never ordered, so `"5"` does not equal `5`.
 */
import type { RecordData } from "./record.ts";

/** A value a rule may compare with or set. */
export type Scalar = string | number | boolean | null;

/** A record's value for `field`; absent (or an own-property miss) reads as null. */
export function fieldValue(record: RecordData, field: string): unknown {
  const value = Object.hasOwn(record, field) ? record[field] : undefined;
  return value === undefined ? null : value;
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null) return a === b;
  if (typeof a !== typeof b) return false;
  if (typeof a === "object") return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** Negative, zero or positive as a < b, a = b, a > b; null when the two cannot be ordered. */
export function order(a: unknown, b: unknown): number | null {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : a === b ? 0 : null;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

/** Salesforce's ISBLANK: no value, or empty text. */
export function isBlank(value: unknown): boolean {
  return value === null || value === undefined || value === "";
}
