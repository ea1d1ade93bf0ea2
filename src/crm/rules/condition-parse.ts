/**
 * Validation of an admin's condition JSON. Every problem is reported with its path; nothing
 * thrown, whatever the input. Nesting stops at crmConditionDepthMax and size at
 * crmConditionNodesMax, so a hostile body cannot make the parser or later evaluations deep or slow.
 */
import { crmConditionDepthMax, crmConditionInValuesMax, crmConditionNodesMax } from "../../core/limits.ts";
import type { Scalar } from "./compare.ts";
import { type Condition, type Op, ops } from "./condition.ts";
import { checkKeys, isObject, own, parseFieldOf, scalar } from "./definition-parts.ts";
import { at, atIndex, type ParseOptions, Problems } from "./problems.ts";
import type { CrmObject, FieldError } from "./record.ts";

/** What each op expects in `value`. */
type ValueKind = "scalar" | "ordered" | "list" | "text" | "none";

const valueKinds: Record<Op, ValueKind> = {
  eq: "scalar",
  ne: "scalar",
  gt: "ordered",
  gte: "ordered",
  lt: "ordered",
  lte: "ordered",
  in: "list",
  contains: "text",
  blank: "none",
  not_blank: "none",
  changed: "none",
  changed_to: "scalar",
};

interface Walk {
  problems: Problems;
  object: CrmObject | undefined;
  nodes: number;
}

/**
 * Parses the condition at `path` of a definition. `object` is the object whose fields it names
 * (checked when the problems' options can list them).
 */
export function parseConditionAt(value: unknown, path: string, problems: Problems, object?: CrmObject): Condition | undefined {
  const walk: Walk = { problems, object, nodes: 0 };
  const condition = node(value, path, 1, walk);
  if (walk.nodes > crmConditionNodesMax) {
    problems.add(path, `must have at most ${crmConditionNodesMax} groups and comparisons`);
    return undefined;
  }
  return condition;
}

/** A condition on its own (tests, tools): the condition, or every problem found. */
export function parseCondition(json: unknown, object?: CrmObject, options?: ParseOptions): { condition: Condition } | { details: FieldError[] } {
  const problems = new Problems(options);
  const condition = parseConditionAt(json, "condition", problems, object);
  if (condition === undefined || !problems.empty) return { details: problems.details() };
  return { condition };
}

function node(value: unknown, path: string, depth: number, walk: Walk): Condition | undefined {
  walk.nodes++;
  if (!isObject(value)) {
    walk.problems.add(path, value === undefined ? "is required" : "must be an object: {all}, {any} or {field, op, value}");
    return undefined;
  }
  const isAll = Object.hasOwn(value, "all");
  const isAny = Object.hasOwn(value, "any");
  if (isAll || isAny) {
    if (isAll && isAny) {
      walk.problems.add(path, "must have either all or any, not both");
      return undefined;
    }
    const key = isAll ? "all" : "any";
    checkKeys(value, [key], path, walk.problems);
    const children = group(own(value, key), at(path, key), depth, walk);
    if (children === undefined) return undefined;
    return isAll ? { all: children } : { any: children };
  }
  return comparison(value, path, walk);
}

function group(value: unknown, path: string, depth: number, walk: Walk): Condition[] | undefined {
  if (!Array.isArray(value)) {
    walk.problems.add(path, "must be an array of conditions");
    return undefined;
  }
  if (value.length > 0 && depth >= crmConditionDepthMax) {
    // Not descending further keeps the walk's recursion bounded by the limit.
    walk.problems.add(path, `conditions may nest at most ${crmConditionDepthMax} levels deep`);
    return undefined;
  }
  if (value.length > crmConditionNodesMax) {
    walk.problems.add(path, `must have at most ${crmConditionNodesMax} entries`);
    return undefined;
  }
  const children: Condition[] = [];
  let ok = true;
  value.forEach((child, i) => {
    const parsed = node(child, atIndex(path, i), depth + 1, walk);
    if (parsed === undefined) ok = false;
    else children.push(parsed);
  });
  return ok ? children : undefined;
}

function comparison(value: Record<string, unknown>, path: string, walk: Walk): Condition | undefined {
  const { problems } = walk;
  checkKeys(value, ["field", "op", "value"], path, problems);
  const field = parseFieldOf(walk.object, own(value, "field"), at(path, "field"), problems);
  const rawOp = own(value, "op");
  if (typeof rawOp !== "string" || !(ops as readonly string[]).includes(rawOp)) {
    problems.add(at(path, "op"), rawOp === undefined ? "is required" : `must be one of ${ops.join(", ")}`);
    return undefined;
  }
  const op = rawOp as Op;
  const hasValue = Object.hasOwn(value, "value");
  const parsed = operand(valueKinds[op], op, own(value, "value"), hasValue, at(path, "value"), problems);
  if (field === undefined || parsed === invalid) return undefined;
  return parsed === absent ? { field, op } : { field, op, value: parsed };
}

const invalid = Symbol("invalid");
const absent = Symbol("absent");

function operand(
  kind: ValueKind,
  op: Op,
  value: unknown,
  present: boolean,
  path: string,
  problems: Problems,
): Scalar | Scalar[] | typeof invalid | typeof absent {
  if (kind === "none") {
    if (!present) return absent;
    problems.add(path, `must be absent: ${op} compares no value`);
    return invalid;
  }
  if (!present) {
    problems.add(path, `is required for ${op}`);
    return invalid;
  }
  switch (kind) {
    case "scalar":
      return scalar(value, path, problems) ? (value as Scalar) : invalid;
    case "ordered":
      if (typeof value !== "number" && typeof value !== "string") {
        problems.add(path, `must be a number or a string (a date is "YYYY-MM-DD") for ${op}`);
        return invalid;
      }
      return scalar(value, path, problems) ? value : invalid;
    case "text":
      if (typeof value !== "string" || value.length === 0) {
        problems.add(path, "must be a non-empty string for contains");
        return invalid;
      }
      return scalar(value, path, problems) ? value : invalid;
    case "list":
      return list(value, path, problems);
  }
}

function list(value: unknown, path: string, problems: Problems): Scalar[] | typeof invalid {
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(path, "must be a non-empty array of values for in");
    return invalid;
  }
  if (value.length > crmConditionInValuesMax) {
    problems.add(path, `must have at most ${crmConditionInValuesMax} values`);
    return invalid;
  }
  let ok = true;
  value.forEach((v, i) => {
    if (!scalar(v, atIndex(path, i), problems)) ok = false;
  });
  return ok ? (value as Scalar[]) : invalid;
}
