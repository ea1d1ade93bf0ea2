/**
 * What a rule parser collects while it walks admin-supplied JSON: every problem found, each named
 * by a path-like field (`condition.all[2].op`), so one 422 answers for the whole definition. The
 * parsers never throw on what they are given; they only add problems here.
 */
import { crmRuleFieldNameCharsMax, crmRuleNameCharsMax, crmRuleProblemsMax, crmRuleTextCharsMax } from "../../core/limits.ts";
import { type CrmObject, crmObjects, type FieldError, recordErrorField } from "./contract.ts";

/** Lower-case API names as the store uses them: `last_name`, `cf_region`. */
const fieldNamePattern = /^[a-z][a-z0-9_]*$/;
/** Rule and flow names: Salesforce-style API names, letters first. */
const ruleNamePattern = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Fields the store writes itself; no rule may set them. */
export const systemFieldNames: ReadonlySet<string> = new Set(["id", "created_at", "updated_at"]);

export interface ParseOptions {
  /**
   * The fields an object has now (standard and custom). When given, a rule that names a field the
   * object lacks is refused; buildRuleSet omits it, so a rule outlives a field later removed (the
   * field then reads as null).
   */
  fieldsOf?: (object: CrmObject) => ReadonlySet<string> | undefined;
}

export type JsonObject = Record<string, unknown>;

export class Problems {
  readonly list: FieldError[] = [];
  private dropped = 0;

  constructor(readonly options: ParseOptions = {}) {}

  add(field: string, message: string): void {
    if (this.list.length < crmRuleProblemsMax) this.list.push({ field, message });
    else this.dropped++;
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  /** The problems as a 422's details, with a last entry counting any left out. */
  details(): FieldError[] {
    if (this.dropped === 0) return this.list;
    return [...this.list, { field: recordErrorField, message: `${this.dropped} more problems not shown` }];
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A key of `path`; the root path is "". */
export function at(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

export function atIndex(path: string, index: number): string {
  return `${path}[${index}]`;
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

export function parseChoice<T extends string>(
  value: unknown,
  choices: readonly T[],
  path: string,
  problems: Problems,
  fallback?: T,
): T | undefined {
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
