/**
 * Workflow rules: `{name, object, trigger, condition, updates: [{field, value}], active?}`, after
 * Salesforce's evaluation criteria:
 * - "created": only when a record is created;
 * - "created_and_edited": on create and on every edit where the condition holds;
 * - "created_and_edited_to_meet": on create, and on an edit only when the record did not meet
 *   the condition before the edit and does now.
 * changed/changed_to are only meaningful on the second, which is where Salesforce allows ISCHANGED.
 */
import { crmWorkflowUpdatesMax } from "../../core/limits.ts";
import { type Condition, evaluate, type Subject, usesChange } from "./condition.ts";
import { parseConditionAt } from "./condition-parse.ts";
import { checkKeys, type JsonObject, objectAt, own, parseActive, parseChoice, parseObjectName, parseRuleName, parseSettableField } from "./definition-parts.ts";
import { at, atIndex, type Problems } from "./problems.ts";
import type { CrmObject, RecordData } from "./record.ts";
import { checkWrite, parseValueExpr, resolveValue, type ValueExpr } from "./value.ts";

export const workflowTriggers = ["created", "created_and_edited", "created_and_edited_to_meet"] as const;
export type WorkflowTrigger = (typeof workflowTriggers)[number];

export interface FieldUpdate {
  field: string;
  value: ValueExpr;
}

export interface WorkflowRule {
  name: string;
  object: CrmObject;
  trigger: WorkflowTrigger;
  condition: Condition;
  updates: FieldUpdate[];
  active: boolean;
}

const keys = ["name", "object", "trigger", "condition", "updates", "active"] as const;

export function parseWorkflowRule(json: JsonObject, problems: Problems): WorkflowRule | undefined {
  checkKeys(json, keys, "", problems);
  const name = parseRuleName(own(json, "name"), "name", problems);
  const object = parseObjectName(own(json, "object"), "object", problems);
  const trigger = parseChoice(own(json, "trigger"), workflowTriggers, "trigger", problems);
  const condition = parseConditionAt(own(json, "condition"), "condition", problems, object);
  if (condition !== undefined && trigger !== undefined && trigger !== "created_and_edited" && usesChange(condition)) {
    problems.add("condition", `changed and changed_to need trigger created_and_edited (${trigger} cannot see a change)`);
  }
  const updates = parseUpdates(own(json, "updates"), "updates", problems, object);
  const active = parseActive(own(json, "active"), "active", problems);
  if (name === undefined || object === undefined || trigger === undefined || condition === undefined || updates === undefined) {
    return undefined;
  }
  return { name, object, trigger, condition, updates, active };
}

export function parseUpdates(value: unknown, path: string, problems: Problems, object: CrmObject | undefined): FieldUpdate[] | undefined {
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(path, value === undefined ? "is required" : "must be a non-empty array of {field, value}");
    return undefined;
  }
  if (value.length > crmWorkflowUpdatesMax) {
    problems.add(path, `must have at most ${crmWorkflowUpdatesMax} entries`);
    return undefined;
  }
  const updates: FieldUpdate[] = [];
  const seen = new Set<string>();
  let ok = true;
  value.forEach((entry, i) => {
    const update = parseUpdate(entry, atIndex(path, i), problems, object);
    if (update !== undefined && seen.has(update.field)) {
      problems.add(at(atIndex(path, i), "field"), `${update.field} is already updated by this rule`);
      ok = false;
    } else if (update === undefined) ok = false;
    else {
      seen.add(update.field);
      updates.push(update);
    }
  });
  return ok ? updates : undefined;
}

function parseUpdate(entry: unknown, path: string, problems: Problems, object: CrmObject | undefined): FieldUpdate | undefined {
  const json = objectAt(entry, path, problems);
  if (json === undefined) return undefined;
  checkKeys(json, ["field", "value"], path, problems);
  const field = parseSettableField(own(json, "field"), at(path, "field"), problems, object);
  if (!Object.hasOwn(json, "value")) {
    problems.add(at(path, "value"), "is required (null clears the field)");
    return undefined;
  }
  const value = parseValueExpr(own(json, "value"), at(path, "value"), problems, object);
  if (field === undefined || value === undefined) return undefined;
  if (object !== undefined) checkWrite(object, field, value, object, at(path, "value"), problems);
  return { field, value };
}

/** Whether a rule fires for this save: its trigger allows it and its condition became or is true. */
export function workflowFires(rule: WorkflowRule, subject: Subject): boolean {
  const isCreate = subject.old === null;
  if (rule.trigger === "created" && !isCreate) return false;
  if (!evaluate(rule.condition, subject)) return false;
  if (rule.trigger !== "created_and_edited_to_meet" || subject.old === null) return true;
  return !evaluate(rule.condition, { record: subject.old, old: null });
}

/**
 * The field updates of every rule that fires, evaluated once against the saved record. Later rules
 * (by name) win where two set the same field; the updated record is not evaluated again, as
 * Salesforce does not re-evaluate workflow rules after a field update unless told to.
 */
export function workflowUpdates(rules: readonly WorkflowRule[], subject: Subject): RecordData {
  const values: RecordData = {};
  for (const rule of rules) {
    if (!workflowFires(rule, subject)) continue;
    for (const update of rule.updates) values[update.field] = resolveValue(update.value, subject.record);
  }
  return values;
}
