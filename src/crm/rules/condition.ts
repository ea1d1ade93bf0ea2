/**
 * Conditions: trees of `{"all": [...]}` / `{"any": [...]}` over comparisons `{field, op, value}`,
 * and their evaluation against a record and, for changed/changed_to, the record before the save.
 * The JSON an admin writes is the parsed form itself, so a stored definition reads back as sent.
 */
import { fieldValue, isBlank, order, type Scalar, sameValue } from "./compare.ts";
import type { RecordData } from "./record.ts";

export const ops = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "blank", "not_blank", "changed", "changed_to"] as const;
export type Op = (typeof ops)[number];

export interface Comparison {
  field: string;
  op: Op;
  /** A scalar for most ops, a list for `in`, absent for blank, not_blank and changed. */
  value?: Scalar | Scalar[];
}

export interface AllOf {
  all: Condition[];
}

export interface AnyOf {
  any: Condition[];
}

export type Condition = AllOf | AnyOf | Comparison;

/** The condition that always holds: `all` of nothing. */
export const always: Condition = { all: [] };

/** What a condition is evaluated against. */
export interface Subject {
  record: RecordData;
  /**
   * The record before this save; null on a create, where changed and changed_to are false
   * (Salesforce's ISCHANGED returns FALSE for a new record; use a create trigger instead).
   */
  old: RecordData | null;
}

export function evaluate(condition: Condition, subject: Subject): boolean {
  if ("all" in condition) return condition.all.every((c) => evaluate(c, subject));
  if ("any" in condition) return condition.any.some((c) => evaluate(c, subject));
  return compare(condition, subject);
}

function compare(c: Comparison, subject: Subject): boolean {
  const actual = fieldValue(subject.record, c.field);
  switch (c.op) {
    case "eq":
      return sameValue(actual, c.value);
    case "ne":
      return !sameValue(actual, c.value);
    case "gt":
      return ordered(actual, c.value, (n) => n > 0);
    case "gte":
      return ordered(actual, c.value, (n) => n >= 0);
    case "lt":
      return ordered(actual, c.value, (n) => n < 0);
    case "lte":
      return ordered(actual, c.value, (n) => n <= 0);
    case "in":
      return Array.isArray(c.value) && c.value.some((v) => sameValue(actual, v));
    case "contains":
      return typeof actual === "string" && typeof c.value === "string" && actual.includes(c.value);
    case "blank":
      return isBlank(actual);
    case "not_blank":
      return !isBlank(actual);
    case "changed":
      return changed(c.field, subject);
    case "changed_to":
      return changed(c.field, subject) && sameValue(actual, c.value);
  }
}

function ordered(actual: unknown, expected: unknown, holds: (n: number) => boolean): boolean {
  const n = order(actual, expected);
  return n !== null && holds(n);
}

function changed(field: string, subject: Subject): boolean {
  if (subject.old === null) return false;
  return !sameValue(fieldValue(subject.record, field), fieldValue(subject.old, field));
}

/** Whether a condition uses changed or changed_to anywhere (some triggers cannot see changes). */
export function usesChange(condition: Condition): boolean {
  if ("all" in condition) return condition.all.some(usesChange);
  if ("any" in condition) return condition.any.some(usesChange);
  return condition.op === "changed" || condition.op === "changed_to";
}
