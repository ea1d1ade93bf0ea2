/**
 * What the store tells the rules parser when an admin defines a rule (ParseOptions): the fields
 * each object has, whether a value a rule writes could ever be stored in its field, and which
 * fields a record a flow creates must be given. A definition that fails these would fail every
 * save it fires on — a workflow rule writing a template into a picklist breaks every later create
 * that meets its condition — so the settings routes refuse it with a 422 instead, as Salesforce
 * checks a field update's value against the field when the update is saved (docs/crm-rules.md).
 *
 * "Could ever be stored" is the test: a ref to a field that may be blank into a required field is
 * accepted (it fails only on records where it is blank); a ref to a number field into a text field
 * is not (it fails on every record).
 */
import type { ParseOptions } from "../rules/problems.ts";
import type { CrmObject, ValueExpr } from "../rules/record.ts";
import type { FieldDef, FieldType } from "./fields.ts";
import type { ObjectSchema } from "./schema.ts";
import { typeProblem } from "./values.ts";

/** Types whose JSON values are strings. */
const stringTypes: ReadonlySet<FieldType> = new Set(["text", "longtext", "picklist", "date", "timestamp"]);
/** Types whose JSON values are numbers. */
const numberTypes: ReadonlySet<FieldType> = new Set(["number", "reference", "id"]);

/** How a field's values are described in a problem: its type, and what a reference points to. */
function describe(field: FieldDef, object: CrmObject): string {
  if (field.type === "id") return `the ${object} record's id`;
  if (field.type === "reference") return `a reference to ${field.references}`;
  return `a ${field.type} field`;
}

/** The object a field's value names a record of, when it is an id or a reference; else null. */
function referenced(field: FieldDef, object: CrmObject): string | null {
  if (field.type === "id") return object;
  return field.type === "reference" ? (field.references ?? null) : null;
}

/** Whether some value of `source` (a field of the record being saved) could be stored in `target`. */
function refFits(target: FieldDef, source: FieldDef, sourceObject: CrmObject): boolean {
  switch (target.type) {
    case "text":
    case "longtext":
      return stringTypes.has(source.type);
    case "picklist":
      // A picklist source fits only if the two lists share a value.
      if (source.type === "picklist") return source.values!.some((v) => target.values!.includes(v));
      return stringTypes.has(source.type) && source.type !== "timestamp";
    case "date":
      // A timestamp is never a calendar date; text may hold one.
      return stringTypes.has(source.type) && source.type !== "timestamp";
    case "number":
      return numberTypes.has(source.type);
    case "boolean":
      return source.type === "boolean";
    case "reference":
      // An id of another object would link the wrong kind of record.
      return referenced(source, sourceObject) === target.references;
    case "id":
    case "timestamp":
      return false;
  }
}

function writeProblem(target: FieldDef, targetObject: CrmObject, value: ValueExpr, source: ObjectSchema): string | null {
  if (value === null) return target.required ? `${target.name} is required; a rule cannot clear it` : null;
  if (typeof value !== "object") {
    const problem = typeProblem(target, value);
    return problem === null ? null : `${target.name} ${problem}`;
  }
  if ("template" in value) {
    if (target.type === "text" || target.type === "longtext") return null;
    return `a template makes text, and ${target.name} is ${describe(target, targetObject)}: write a literal value or a ref`;
  }
  const from = source.byName.get(value.ref);
  // A field the object lacks is reported by the parser itself.
  if (from === undefined || refFits(target, from, source.object)) return null;
  return `${target.name} is ${describe(target, targetObject)} and cannot hold ${value.ref}, ${describe(from, source.object)}`;
}

/** ParseOptions for rules defined against these schemas (every object's, as they are now). */
export function ruleParseOptions(schemas: ReadonlyMap<CrmObject, ObjectSchema>): ParseOptions {
  const names = new Map([...schemas].map(([object, schema]) => [object, new Set(schema.byName.keys())]));
  return {
    fieldsOf: (object) => names.get(object),
    writeProblem(object, field, value, sourceObject) {
      const target = schemas.get(object)?.byName.get(field);
      const source = schemas.get(sourceObject);
      return target === undefined || source === undefined ? null : writeProblem(target, object, value, source);
    },
    requiredOf: (object) =>
      schemas
        .get(object)
        ?.fields.filter((f) => f.required && f.defaultValue === undefined && !f.readOnly)
        .map((f) => f.name),
  };
}
