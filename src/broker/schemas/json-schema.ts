/**
 * JSON Schema as the registry checks it (spec: Schema registry rule 2): the text must be a JSON
 * Schema of an object, and a new version must stay backward compatible with the one before —
 * data written with the old schema must still be valid under the new one — which the spec
 * states as two rules: a new version must not add required fields, and must not remove
 * properties. Both apply at every depth, to the properties of nested object schemas too, named
 * by their path (`address.zip`).
 *
 * Only the structure those rules read is checked (`type`, `properties`, `required`); the rest of
 * a schema's keywords are stored as given, as Confluent's registry stores what it does not judge.
 */
import { badRequest, describeJson } from "../requests/fields.ts";

/** Deepest nesting of object schemas checked (the compatibility walk recurses once per level). */
export const schemaNestingMax = 64;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Parses `text` as a JSON Schema of an object; a 400 that says what is wrong otherwise. */
export function parseObjectSchema(text: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw badRequest(`'schema' is not valid JSON: ${(error as Error).message}`);
  }
  checkShape(parsed, "the schema", 1);
  return parsed as Json;
}

function checkShape(schema: unknown, where: string, depth: number): void {
  if (!isObject(schema) || schema.type !== "object") {
    throw badRequest(
      `${where} must be a JSON Schema of an object ({"type": "object", ...}), not ${isObject(schema) ? `one of type ${JSON.stringify(schema.type ?? null)}` : describeJson(schema)}`,
    );
  }
  if (depth > schemaNestingMax) throw badRequest(`the schema nests object schemas deeper than ${schemaNestingMax} levels`);
  if (schema.properties !== undefined && !isObject(schema.properties)) throw badRequest(`'properties' of ${where} must be an object`);
  if (schema.required !== undefined && !(Array.isArray(schema.required) && schema.required.every((name) => typeof name === "string"))) {
    throw badRequest(`'required' of ${where} must be an array of property names`);
  }
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) {
    if (isObject(property) && property.type === "object") checkShape(property, `property '${name}'`, depth + 1);
  }
}

/**
 * The first way `next` breaks data written under `previous`, as the spec's 400 message
 * (`backward-incompatible: new schema adds required field 'x'`), or null when it breaks none.
 */
export function backwardIncompatibility(previous: Json, next: Json): string | null {
  return compare(previous, next, "");
}

function compare(previous: Json, next: Json, path: string): string | null {
  const oldRequired = new Set((previous.required ?? []) as string[]);
  for (const name of (next.required ?? []) as string[]) {
    if (!oldRequired.has(name)) return `backward-incompatible: new schema adds required field '${path}${name}'`;
  }
  const oldProperties = (previous.properties ?? {}) as Json;
  const newProperties = (next.properties ?? {}) as Json;
  for (const name of Object.keys(oldProperties)) {
    if (!Object.hasOwn(newProperties, name)) return `backward-incompatible: new schema removes property '${path}${name}'`;
  }
  for (const [name, before] of Object.entries(oldProperties)) {
    const after = newProperties[name];
    if (isObject(before) && before.type === "object" && isObject(after) && after.type === "object") {
      const problem = compare(before, after, `${path}${name}.`);
      if (problem !== null) return problem;
    }
  }
  return null;
}
