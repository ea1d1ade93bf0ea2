/**
 * Validation rules: `{name, object, condition, error_field?, message, active?}`. As in Salesforce,
 * a condition that holds means the record is invalid, and every rule that fails is reported in
 * the same 422, each on its error_field (or on "base" for the record as a whole).
 */
import { type Condition, evaluate, type Subject } from "./condition.ts";
import { parseConditionAt } from "./condition-parse.ts";
import { checkKeys, type JsonObject, own, parseActive, parseFieldOf, parseObjectName, parseRuleName, parseText } from "./definition-parts.ts";
import type { Problems } from "./problems.ts";
import { type CrmObject, type FieldError, recordErrorField } from "./record.ts";

export interface ValidationRule {
  name: string;
  object: CrmObject;
  condition: Condition;
  /** The field the error is reported on; absent means the record as a whole. */
  error_field?: string;
  message: string;
  active: boolean;
}

const keys = ["name", "object", "condition", "error_field", "message", "active"] as const;

export function parseValidationRule(json: JsonObject, problems: Problems): ValidationRule | undefined {
  checkKeys(json, keys, "", problems);
  const name = parseRuleName(own(json, "name"), "name", problems);
  const object = parseObjectName(own(json, "object"), "object", problems);
  const condition = parseConditionAt(own(json, "condition"), "condition", problems, object);
  const rawField = own(json, "error_field");
  const errorField = rawField === undefined || rawField === null ? undefined : parseFieldOf(object, rawField, "error_field", problems);
  const message = parseText(own(json, "message"), "message", problems);
  const active = parseActive(own(json, "active"), "active", problems);
  if (name === undefined || object === undefined || condition === undefined || message === undefined) return undefined;
  const rule: ValidationRule = { name, object, condition, message, active };
  if (errorField !== undefined) rule.error_field = errorField;
  return rule;
}

/** The errors of every rule whose condition holds for the record about to be saved. */
export function failedValidations(rules: readonly ValidationRule[], subject: Subject): FieldError[] {
  const errors: FieldError[] = [];
  for (const rule of rules) {
    if (evaluate(rule.condition, subject)) errors.push({ field: rule.error_field ?? recordErrorField, message: rule.message });
  }
  return errors;
}
