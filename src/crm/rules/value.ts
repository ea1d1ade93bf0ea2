/**
 * The values workflow field updates and flow steps write: a literal, the value of a field of the
 * record being saved (`{"ref": "id"}` links a created case to its account), or a text template
 * (`{"template": "Follow up {name}"}`, where each `{field}` is that field's value, blank for null).
 */
import { crmRuleTextCharsMax } from "../../core/limits.ts";
import { fieldValue, type Scalar } from "./compare.ts";
import { checkKeys, isObject, own, parseFieldOf, scalar } from "./definition-parts.ts";
import { at, type Problems } from "./problems.ts";
import type { CrmObject, RecordData, ValueExpr } from "./record.ts";

export type { ValueExpr } from "./record.ts";

const placeholder = /\{([a-z][a-z0-9_]*)\}/g;

/** Parses a value expression; `object` is the record the refs read (the triggering record). */
export function parseValueExpr(value: unknown, path: string, problems: Problems, object: CrmObject | undefined): ValueExpr | undefined {
  if (!isObject(value)) return value !== undefined && scalar(value, path, problems) ? (value as Scalar) : missing(value, path, problems);
  if (Object.hasOwn(value, "ref")) {
    checkKeys(value, ["ref"], path, problems);
    const ref = parseFieldOf(object, own(value, "ref"), at(path, "ref"), problems);
    return ref === undefined ? undefined : { ref };
  }
  if (Object.hasOwn(value, "template")) {
    checkKeys(value, ["template"], path, problems);
    const template = own(value, "template");
    if (typeof template !== "string" || template.length > crmRuleTextCharsMax) {
      problems.add(at(path, "template"), `must be a string of at most ${crmRuleTextCharsMax} characters`);
      return undefined;
    }
    const before = problems.list.length;
    for (const [, field] of template.matchAll(placeholder)) parseFieldOf(object, field, at(path, "template"), problems);
    return problems.list.length === before ? { template } : undefined;
  }
  problems.add(path, "must be a string, number, boolean, null, {ref} or {template}");
  return undefined;
}

/**
 * Reports at `path` a write the store says could never be stored (ParseOptions.writeProblem):
 * `value` into `field` of `object`, its refs and templates reading a record of `source`.
 */
export function checkWrite(object: CrmObject, field: string, value: ValueExpr, source: CrmObject, path: string, problems: Problems): void {
  const problem = problems.options.writeProblem?.(object, field, value, source) ?? null;
  if (problem !== null) problems.add(path, problem);
}

function missing(value: unknown, path: string, problems: Problems): undefined {
  if (value === undefined) problems.add(path, "is required");
  return undefined;
}

/** The value an expression stands for, read from `record` (the triggering record as it is now). */
export function resolveValue(expr: ValueExpr, record: RecordData): unknown {
  if (expr === null || typeof expr !== "object") return expr;
  if ("ref" in expr) return fieldValue(record, expr.ref);
  return expr.template.replace(placeholder, (_, field: string) => text(fieldValue(record, field)));
}

function text(value: unknown): string {
  if (value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}
