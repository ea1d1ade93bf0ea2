/**
 * Record-triggered flows: `{name, object, timing, trigger, entry_mode?, entry?, steps, active?}`.
 * - timing "before_save" runs before validation and may only change the triggering record (as a
 *   Salesforce before-save flow); "after_save" runs once the record is stored and may also create
 *   related records.
 * - trigger "created" | "updated" | "created_or_updated"; entry is a condition (default: always);
 *   entry_mode "updated_to_meet" runs an update only when the record newly meets entry.
 * - steps: set_field, create_record, decision (branches of condition → steps, then else steps).
 */
import { crmFlowBranchesMax, crmFlowCreateFieldsMax, crmFlowDecisionDepthMax, crmFlowStepsMax } from "../../core/limits.ts";
import { always, type Condition, evaluate, type Subject } from "./condition.ts";
import { parseConditionAt } from "./condition-parse.ts";
import {
  checkKeys,
  isObject,
  type JsonObject,
  objectAt,
  own,
  parseActive,
  parseChoice,
  parseObjectName,
  parseRuleName,
  parseSettableField,
} from "./definition-parts.ts";
import { at, atIndex, type Problems } from "./problems.ts";
import type { CrmObject, RecordData } from "./record.ts";
import { checkWrite, parseValueExpr, resolveValue, type ValueExpr } from "./value.ts";

export const flowTimings = ["before_save", "after_save"] as const;
export const flowTriggers = ["created", "updated", "created_or_updated"] as const;
export const flowEntryModes = ["every_time", "updated_to_meet"] as const;

export interface SetFieldStep {
  type: "set_field";
  field: string;
  value: ValueExpr;
}

export interface CreateRecordStep {
  type: "create_record";
  object: CrmObject;
  /** Field → value; refs and templates read the triggering record. */
  values: Record<string, ValueExpr>;
}

export interface DecisionStep {
  type: "decision";
  /** Tried in order; the first whose condition holds runs its steps. */
  branches: { condition: Condition; steps: Step[] }[];
  /** Run when no branch's condition holds. */
  else: Step[];
}

export type Step = SetFieldStep | CreateRecordStep | DecisionStep;

export interface Flow {
  name: string;
  object: CrmObject;
  timing: (typeof flowTimings)[number];
  trigger: (typeof flowTriggers)[number];
  entry_mode: (typeof flowEntryModes)[number];
  entry: Condition;
  steps: Step[];
  active: boolean;
}

const keys = ["name", "object", "timing", "trigger", "entry_mode", "entry", "steps", "active"] as const;

interface StepWalk {
  problems: Problems;
  object: CrmObject | undefined;
  timing: Flow["timing"] | undefined;
  steps: number;
}

export function parseFlow(json: JsonObject, problems: Problems): Flow | undefined {
  checkKeys(json, keys, "", problems);
  const name = parseRuleName(own(json, "name"), "name", problems);
  const object = parseObjectName(own(json, "object"), "object", problems);
  const timing = parseChoice(own(json, "timing"), flowTimings, "timing", problems);
  const trigger = parseChoice(own(json, "trigger"), flowTriggers, "trigger", problems);
  const entryMode = parseChoice(own(json, "entry_mode"), flowEntryModes, "entry_mode", problems, "every_time");
  const rawEntry = own(json, "entry");
  const entry = rawEntry === undefined ? always : parseConditionAt(rawEntry, "entry", problems, object);
  const walk: StepWalk = { problems, object, timing, steps: 0 };
  const steps = parseSteps(own(json, "steps"), "steps", 0, walk);
  if (walk.steps > crmFlowStepsMax) problems.add("steps", `a flow has at most ${crmFlowStepsMax} steps, branches included`);
  const active = parseActive(own(json, "active"), "active", problems);
  if (
    name === undefined ||
    object === undefined ||
    timing === undefined ||
    trigger === undefined ||
    entryMode === undefined ||
    entry === undefined ||
    steps === undefined ||
    walk.steps > crmFlowStepsMax
  ) {
    return undefined;
  }
  return { name, object, timing, trigger, entry_mode: entryMode, entry, steps, active };
}

function parseSteps(value: unknown, path: string, depth: number, walk: StepWalk): Step[] | undefined {
  if (!Array.isArray(value)) {
    walk.problems.add(path, value === undefined ? "is required" : "must be an array of steps");
    return undefined;
  }
  if (value.length > crmFlowStepsMax) {
    walk.problems.add(path, `must have at most ${crmFlowStepsMax} steps`);
    return undefined;
  }
  const steps: Step[] = [];
  let ok = true;
  value.forEach((entry, i) => {
    walk.steps++;
    const step = parseStep(entry, atIndex(path, i), depth, walk);
    if (step === undefined) ok = false;
    else steps.push(step);
  });
  return ok ? steps : undefined;
}

function parseStep(value: unknown, path: string, depth: number, walk: StepWalk): Step | undefined {
  const json = objectAt(value, path, walk.problems);
  if (json === undefined) return undefined;
  const type = parseChoice(own(json, "type"), ["set_field", "create_record", "decision"] as const, at(path, "type"), walk.problems);
  switch (type) {
    case undefined:
      return undefined;
    case "set_field":
      return parseSetField(json, path, walk);
    case "create_record":
      return parseCreateRecord(json, path, walk);
    case "decision":
      return parseDecision(json, path, depth, walk);
  }
}

function parseSetField(json: JsonObject, path: string, walk: StepWalk): Step | undefined {
  checkKeys(json, ["type", "field", "value"], path, walk.problems);
  const field = parseSettableField(own(json, "field"), at(path, "field"), walk.problems, walk.object);
  if (!Object.hasOwn(json, "value")) {
    walk.problems.add(at(path, "value"), "is required (null clears the field)");
    return undefined;
  }
  const value = parseValueExpr(own(json, "value"), at(path, "value"), walk.problems, walk.object);
  if (field === undefined || value === undefined) return undefined;
  if (walk.object !== undefined) checkWrite(walk.object, field, value, walk.object, at(path, "value"), walk.problems);
  return { type: "set_field", field, value };
}

function parseCreateRecord(json: JsonObject, path: string, walk: StepWalk): Step | undefined {
  const { problems } = walk;
  checkKeys(json, ["type", "object", "values"], path, problems);
  if (walk.timing === "before_save") {
    // The triggering record has no id yet, and Salesforce's before-save flows only change it.
    problems.add(at(path, "type"), "create_record runs only in after_save flows");
  }
  const object = parseObjectName(own(json, "object"), at(path, "object"), problems);
  const raw = own(json, "values");
  if (!isObject(raw)) {
    problems.add(at(path, "values"), raw === undefined ? "is required" : "must be an object of field → value");
    return undefined;
  }
  const fields = Object.keys(raw);
  if (fields.length > crmFlowCreateFieldsMax) {
    problems.add(at(path, "values"), `must set at most ${crmFlowCreateFieldsMax} fields`);
    return undefined;
  }
  const values: Record<string, ValueExpr> = {};
  let ok = true;
  for (const key of fields) {
    const fieldPath = at(at(path, "values"), key.slice(0, 64));
    // The key names a field of the created object; refs inside read the triggering record.
    const field = parseSettableField(key, fieldPath, problems, object);
    const value = parseValueExpr(raw[key], fieldPath, problems, walk.object);
    if (field === undefined || value === undefined) ok = false;
    else {
      values[field] = value;
      if (object !== undefined && walk.object !== undefined) checkWrite(object, field, value, walk.object, fieldPath, problems);
    }
  }
  // A required field left out would fail every record this step creates.
  const required = object === undefined ? undefined : problems.options.requiredOf?.(object);
  for (const field of required ?? []) {
    if (!Object.hasOwn(raw, field)) problems.add(at(path, "values"), `${object} needs ${field}: it is required`);
  }
  if (!ok || object === undefined || walk.timing === "before_save") return undefined;
  return { type: "create_record", object, values };
}

function parseDecision(json: JsonObject, path: string, depth: number, walk: StepWalk): Step | undefined {
  const { problems } = walk;
  checkKeys(json, ["type", "branches", "else"], path, problems);
  if (depth >= crmFlowDecisionDepthMax) {
    problems.add(path, `decisions nest at most ${crmFlowDecisionDepthMax} deep`);
    return undefined;
  }
  const raw = own(json, "branches");
  const branchesPath = at(path, "branches");
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > crmFlowBranchesMax) {
    problems.add(branchesPath, `must be an array of 1 to ${crmFlowBranchesMax} {condition, steps}`);
    return undefined;
  }
  const branches: DecisionStep["branches"] = [];
  let ok = true;
  raw.forEach((entry, i) => {
    const branchPath = atIndex(branchesPath, i);
    const branch = objectAt(entry, branchPath, problems);
    if (branch === undefined) return void (ok = false);
    checkKeys(branch, ["condition", "steps"], branchPath, problems);
    const condition = parseConditionAt(own(branch, "condition"), at(branchPath, "condition"), problems, walk.object);
    const steps = parseSteps(own(branch, "steps"), at(branchPath, "steps"), depth + 1, walk);
    if (condition === undefined || steps === undefined) ok = false;
    else branches.push({ condition, steps });
  });
  const rawElse = own(json, "else");
  const elseSteps = rawElse === undefined ? [] : parseSteps(rawElse, at(path, "else"), depth + 1, walk);
  if (!ok || elseSteps === undefined) return undefined;
  return { type: "decision", branches, else: elseSteps };
}

/** Whether a flow runs for this save: timing, trigger and entry condition (and entry_mode). */
export function flowStarts(flow: Flow, timing: Flow["timing"], subject: Subject): boolean {
  if (flow.timing !== timing) return false;
  const isCreate = subject.old === null;
  if (flow.trigger === "created" && !isCreate) return false;
  if (flow.trigger === "updated" && isCreate) return false;
  if (!evaluate(flow.entry, subject)) return false;
  if (flow.entry_mode === "every_time" || subject.old === null) return true;
  return !evaluate(flow.entry, { record: subject.old, old: null });
}

/** What running a flow's steps asks of the save in progress. */
export interface FlowEffects {
  /** Saves a new related record (an after-save flow's create_record). */
  createRecord(object: CrmObject, values: RecordData): Promise<void>;
}

/**
 * Runs steps in order. set_field writes into `changes` (the flow's edits to the triggering record),
 * and later steps see them: conditions and refs read `record` with `changes` laid over it.
 */
export async function runSteps(steps: readonly Step[], record: RecordData, old: RecordData | null, changes: RecordData, effects: FlowEffects): Promise<void> {
  for (const step of steps) {
    const current = { ...record, ...changes };
    switch (step.type) {
      case "set_field":
        changes[step.field] = resolveValue(step.value, current);
        break;
      case "create_record": {
        const values: RecordData = {};
        for (const [field, expr] of Object.entries(step.values)) values[field] = resolveValue(expr, current);
        await effects.createRecord(step.object, values);
        break;
      }
      case "decision": {
        const chosen = step.branches.find((b) => evaluate(b.condition, { record: current, old }));
        await runSteps(chosen?.steps ?? step.else, record, old, changes, effects);
        break;
      }
    }
  }
}
