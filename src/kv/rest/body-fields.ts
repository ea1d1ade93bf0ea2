/**
 * Checking request bodies field by field. A body is a JSON object with the route's fields and no
 * others (a misspelt `tll` is an error, not a silently missing TTL); each field has one JSON
 * type. Anything else is a 400 that names the field, before any command runs, so a bad body
 * changes nothing. Values meant as bytes accept a string or `{"base64": ...}` (bytes-json.ts).
 *
 * Numbers become the argument text the equivalent command would get; their range (a negative TTL,
 * a bit that is not 0 or 1) is the engine's to judge, with Redis's own error messages.
 */
import { SvcError } from "../../core/errors.ts";
import { jsonToBytes } from "./bytes-json.ts";

export type Body = Record<string, unknown>;

const bad = (message: string) => new SvcError("bad_request", message);
const describe = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`);

/** `value` as an object holding only `allowed` fields. `where` names it in errors. */
export function objectBody(value: unknown, allowed: readonly string[], where = "the request body"): Body {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw bad(`${where} must be a JSON object with ${allowed.length === 0 ? "no fields" : `fields ${allowed.join(", ")}`}, not ${describe(value)}`);
  }
  for (const name of Object.keys(value)) {
    if (!allowed.includes(name)) throw bad(`unknown field '${name}' in ${where}; expected ${allowed.join(", ")}`);
  }
  return value as Body;
}

function required(body: Body, name: string, where: string): unknown {
  const value = body[name];
  if (value === undefined) throw bad(`'${where}' is required`);
  return value;
}

/** A required byte-string field. */
export function bytesField(body: Body, name: string, where = name): string {
  const value = required(body, name, where);
  const bytes = jsonToBytes(value, where);
  if (bytes === undefined) throw bad(`'${where}' must be a string or {"base64": "..."}, not ${describe(value)}`);
  return bytes;
}

/** An array of byte strings; `nonEmpty` when the command needs at least one. */
export function bytesListField(body: Body, name: string, options: { nonEmpty: boolean }): string[] {
  const value = required(body, name, name);
  if (!Array.isArray(value)) throw bad(`'${name}' must be an array of strings, not ${describe(value)}`);
  if (options.nonEmpty && value.length === 0) throw bad(`'${name}' must hold at least one string`);
  return value.map((item, i) => {
    const bytes = jsonToBytes(item, `${name}[${i}]`);
    if (bytes === undefined) throw bad(`'${name}[${i}]' must be a string or {"base64": "..."}, not ${describe(item)}`);
    return bytes;
  });
}

/** An array of objects, each with only `allowed` fields; at least one. */
export function objectListField(body: Body, name: string, allowed: readonly string[]): Body[] {
  const value = required(body, name, name);
  if (!Array.isArray(value)) throw bad(`'${name}' must be an array of objects, not ${describe(value)}`);
  if (value.length === 0) throw bad(`'${name}' must hold at least one object`);
  return value.map((item, i) => objectBody(item, allowed, `${name}[${i}]`));
}

/** An integer field as argument text; undefined when optional and absent. */
export function integerField(body: Body, name: string, optional: true, where?: string): string | undefined;
export function integerField(body: Body, name: string, optional?: false, where?: string): string;
export function integerField(body: Body, name: string, optional = false, where = name): string | undefined {
  const value = body[name];
  if (value === undefined && optional) return undefined;
  required(body, name, where);
  if (typeof value !== "number" || !Number.isSafeInteger(value)) {
    throw bad(`'${where}' must be an integer (a JSON number without a fraction, within ±2^53), not ${typeof value === "number" ? value : describe(value)}`);
  }
  return String(value);
}

/** A number field as argument text. JSON has no infinities; `allowInfinity` takes "inf"/"-inf"/"+inf". */
export function numberField(body: Body, name: string, where = name, allowInfinity = false): string {
  const value = required(body, name, where);
  if (typeof value === "number") return String(value);
  if (allowInfinity && typeof value === "string" && /^[+-]?inf$/i.test(value)) return value;
  throw bad(`'${where}' must be a number${allowInfinity ? ' (or "inf", "-inf")' : ""}, not ${describe(value)}`);
}

export function optionalNumberField(body: Body, name: string): string | undefined {
  return body[name] === undefined ? undefined : numberField(body, name);
}

export function optionalBooleanField(body: Body, name: string): boolean {
  const value = body[name];
  if (value === undefined) return false;
  if (typeof value !== "boolean") throw bad(`'${name}' must be true or false, not ${describe(value)}`);
  return value;
}

/** An optional word (a unit, a sort order), passed on as sent: the engine checks the word. */
export function optionalWordField(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[\x21-\x7e]{1,32}$/.test(value)) throw bad(`'${name}' must be a short word, not ${JSON.stringify(value)}`);
  return value;
}
