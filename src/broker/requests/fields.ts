/**
 * Checking JSON request bodies field by field, before anything changes: a body is an object with
 * the route's fields and no others (a misspelt `partiton` is an error, not a silently ignored
 * field), each field has one JSON type, and every error names the field it is about.
 */
import { SvcError } from "../../core/errors.ts";

export type Fields = Record<string, unknown>;

export const badRequest = (message: string) => new SvcError("bad_request", message);

export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return "a string";
  return `an ${typeof value}`;
}

/** `value` as an object holding only `allowed` fields; `where` names it in errors. */
export function objectFields(value: unknown, allowed: readonly string[], where: string): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badRequest(`${where} must be a JSON object, not ${describeJson(value)}`);
  }
  for (const name of Object.keys(value)) {
    if (!allowed.includes(name)) throw badRequest(`unknown field '${name}' in ${where}; expected ${allowed.join(", ")}`);
  }
  return value as Fields;
}

/** A safe integer within [min, max]; `where` names it in errors. */
export function integerIn(value: unknown, min: number, max: number, where: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw badRequest(`'${where}' must be an integer, not ${describeJson(value)}`);
  }
  if (value < min || value > max) throw badRequest(`'${where}' is ${value}; it must be from ${min} to ${max}`);
  return value;
}

/**
 * A string that holds only whole Unicode characters. JSON can carry a lone surrogate ("\ud800"),
 * which has no UTF-8 form: encoding it would silently store U+FFFD instead, so it is refused.
 */
export function textField(value: unknown, where: string): string {
  if (typeof value !== "string") throw badRequest(`'${where}' must be a string, not ${describeJson(value)}`);
  if (!value.isWellFormed()) throw badRequest(`'${where}' holds a lone UTF-16 surrogate, which has no UTF-8 form`);
  return value;
}
