/**
 * Rule definitions as the settings routes receive and store them, and the RuleSet a save runs.
 * parseRule validates one definition (a 422's details on failure); buildRuleSet turns an object's
 * stored definitions into the active rules in the order they run.
 */
import { assert } from "../../core/assert.ts";
import { type Flow, parseFlow } from "./flow.ts";
import { type ParseOptions, Problems } from "./problems.ts";
import { type CrmObject, type FieldError, recordErrorField } from "./record.ts";
import { parseValidationRule, type ValidationRule } from "./validation-rule.ts";
import { parseWorkflowRule, type WorkflowRule } from "./workflow-rule.ts";

export type RuleKind = "validation" | "workflow" | "flow";

export interface RuleOf {
  validation: ValidationRule;
  workflow: WorkflowRule;
  flow: Flow;
}

/** The active rules of one object, each list sorted by name (the order they run and report in). */
export interface RuleSet {
  validation: ValidationRule[];
  workflow: WorkflowRule[];
  flows: Flow[];
}

export const emptyRuleSet: RuleSet = Object.freeze({ validation: [], workflow: [], flows: [] }) as unknown as RuleSet;

export type ParseRuleResult<K extends RuleKind> = { rule: RuleOf[K] } | { details: FieldError[] };

/**
 * Validates an admin's rule definition (a JSON body). Never throws: any input gives either the
 * rule, in canonical form (defaults filled in; store this), or every problem found, each with a
 * path-like field name, for a 422 `{"error":"invalid","details":[...]}`.
 */
export function parseRule<K extends RuleKind>(kind: K, json: unknown, options: ParseOptions = {}): ParseRuleResult<K> {
  const problems = new Problems(options);
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    problems.add(recordErrorField, "a rule definition must be a JSON object");
    return { details: problems.details() };
  }
  const body = json as Record<string, unknown>;
  const rule =
    kind === "validation" ? parseValidationRule(body, problems) : kind === "workflow" ? parseWorkflowRule(body, problems) : parseFlow(body, problems);
  if (rule === undefined || !problems.empty) {
    // A parser that found nothing wrong returns a rule; make sure a failure always says why.
    if (problems.empty) problems.add(recordErrorField, "invalid rule definition");
    return { details: problems.details() };
  }
  return { rule: rule as RuleOf[K] };
}

export interface StoredRule {
  kind: RuleKind;
  /** The definition as stored (what parseRule returned, or the body it accepted). */
  definition: unknown;
}

/**
 * The RuleSet for `object` from its stored definitions: inactive ones and other objects' dropped,
 * each kind sorted by name so runs are deterministic whatever order the store returns. Stored
 * definitions were accepted by parseRule, so one that fails to parse now is a broken invariant.
 * Field existence is not checked here: a rule naming a field since deleted reads it as null.
 */
export function buildRuleSet(object: CrmObject, stored: Iterable<StoredRule>): RuleSet {
  const set: RuleSet = { validation: [], workflow: [], flows: [] };
  for (const { kind, definition } of stored) {
    const parsed = parseRule(kind, definition);
    assert("rule" in parsed, `stored ${kind} rule does not parse: ${JSON.stringify("details" in parsed ? parsed.details : null)}`);
    const rule = parsed.rule;
    if (!rule.active || rule.object !== object) continue;
    if (kind === "validation") set.validation.push(rule as ValidationRule);
    else if (kind === "workflow") set.workflow.push(rule as WorkflowRule);
    else set.flows.push(rule as Flow);
  }
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  set.validation.sort(byName);
  set.workflow.sort(byName);
  set.flows.sort(byName);
  return set;
}
