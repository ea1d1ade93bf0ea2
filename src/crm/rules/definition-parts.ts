/**
 * Readers of the parts every rule definition is built from: JSON objects and their own keys,
 * scalars, field, rule and object names, texts, choices and `active`. Conditions, value
 * expressions, validation rules, workflow rules and flows are all parsed from these, so they sit
 * below every parser; like the parsers, they never throw on what they are given but report each
 * problem, at its path, into Problems.
 */
import { crmRuleFieldNameCharsMax, crmRuleNameCharsMax, crmRuleTextCharsMax } from "../../core/limits.ts";
import { at, type Problems } from "./problems.ts";
import { type CrmObject, crmObjects } from "./record.ts";

/** Lower-case API names as the store uses them: `last_name`, `cf_region`. */
const fieldNamePattern = /^[a-z][a-z0-9_]*$/;
/** Rule and flow names: Salesforce-style API names, letters first. */
const ruleNamePattern = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Fields the store writes itself; no rule may set them. */
export const systemFieldNames: ReadonlySet<string> = new Set(["id", "created_at", "updated_at"]);

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own properties only: `constructor` or `__proto__` in a body never reach the prototype chain. */
export function own(object: JsonObject, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Reports keys outside `allowed`, so a misspelt option is an error rather than silently ignored. */
export function checkKeys(object: JsonObject, allowed: readonly string[], path: string, problems: Problems): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) problems.add(at(path, key.slice(0, crmRuleFieldNameCharsMax)), "unknown key");
  }
}

/** Expects a JSON object at `path`; reports and returns undefined otherwise. */
export function objectAt(value: unknown, path: string, problems: Problems): JsonObject | undefined {
  if (isObject(value)) return value;
  problems.add(path, value === undefined ? "is required" : "must be an object");
  return undefined;
}

/**
 * A JSON scalar a field can hold: string, finite number, boolean or null. Conditions compare with
 * such values and value expressions write them.
 */
export function scalar(value: unknown, path: string, problems: Problems): boolean {
  if (value === null || typeof value === "boolean") return true;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return true;
    problems.add(path, "must be a finite number");
    return false;
  }
  if (typeof value === "string") {
    if (value.length <= crmRuleTextCharsMax) return true;
    problems.add(path, `must be at most ${crmRuleTextCharsMax} characters`);
    return false;
  }
  problems.add(path, "must be a string, number, boolean or null");
  return false;
}

export function parseFieldName(value: unknown, path: string, problems: Problems): string | undefined {
  if (typeof value !== "string") {
    problems.add(path, value === undefined ? "is required" : "must be a field name (string)");
    return undefined;
  }
  if (value.length > crmRuleFieldNameCharsMax) {
    problems.add(path, `must be at most ${crmRuleFieldNameCharsMax} characters`);
    return undefined;
  }
  if (!fieldNamePattern.test(value)) {
    problems.add(path, "must be a field name: a lower-case letter, then letters, digits or _");
    return undefined;
  }
  return value;
}

/** A field name that must also exist on `object` when the caller told us the object's fields. */
export function parseFieldOf(object: CrmObject | undefined, value: unknown, path: string, problems: Problems): string | undefined {
  const field = parseFieldName(value, path, problems);
  if (field === undefined || object === undefined) return field;
  const known = problems.options.fieldsOf?.(object);
  if (known !== undefined && !known.has(field)) {
    problems.add(path, `${object} has no field ${field}`);
    return undefined;
  }
  return field;
}

/**
 * A field automation may write (a workflow rule's update, a flow's set_field or create_record):
 * any but those the store maintains itself.
 */
export function parseSettableField(value: unknown, path: string, problems: Problems, object: CrmObject | undefined): string | undefined {
  const field = parseFieldOf(object, value, path, problems);
  if (field !== undefined && systemFieldNames.has(field)) {
    problems.add(path, `${field} is set by the store and cannot be written by a rule`);
    return undefined;
  }
  return field;
}

export function parseRuleName(value: unknown, path: string, problems: Problems): string | undefined {
  if (typeof value !== "string" || value.length === 0) {
    problems.add(path, value === undefined ? "is required" : "must be a non-empty string");
    return undefined;
  }
  if (value.length > crmRuleNameCharsMax) {
    problems.add(path, `must be at most ${crmRuleNameCharsMax} characters`);
    return undefined;
  }
  if (!ruleNamePattern.test(value)) {
    problems.add(path, "must start with a letter and hold only letters, digits and _");
    return undefined;
  }
  return value;
}

export function parseText(value: unknown, path: string, problems: Problems): string | undefined {
  if (typeof value !== "string" || value.length === 0) {
    problems.add(path, value === undefined ? "is required" : "must be a non-empty string");
    return undefined;
  }
  if (value.length > crmRuleTextCharsMax) {
    problems.add(path, `must be at most ${crmRuleTextCharsMax} characters`);
    return undefined;
  }
  return value;
}

export function parseObjectName(value: unknown, path: string, problems: Problems): CrmObject | undefined {
  if (typeof value === "string" && (crmObjects as readonly string[]).includes(value)) return value as CrmObject;
  problems.add(path, value === undefined ? "is required" : `must be one of ${crmObjects.join(", ")}`);
  return undefined;
}

export function parseChoice<T extends string>(value: unknown, choices: readonly T[], path: string, problems: Problems, fallback?: T): T | undefined {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value === "string" && (choices as readonly string[]).includes(value)) return value as T;
  problems.add(path, value === undefined ? "is required" : `must be one of ${choices.join(", ")}`);
  return undefined;
}

/** `active` defaults to true: a rule is written to take effect. */
export function parseActive(value: unknown, path: string, problems: Problems): boolean {
  if (value === undefined) return true;
  if (typeof value === "boolean") return value;
  problems.add(path, "must be true or false");
  return false;
}
