/**
 * One save of one record, in Salesforce's order of execution cut down to what crm has:
 *   1. before-save flows (they may change the record being saved);
 *   2. system validation (host.checkFields) and custom validation rules, all errors in one 422;
 *   3. persist;
 *   4. workflow rules: their field updates are checked by system validation only and persisted
 *      once more (custom validation rules and flows do not run again, as in Salesforce);
 *   5. after-save flows: a related record they create, or a change to this record they make, is a
 *      save of its own through save() at depth + 1, with this whole order again;
 * and returns the record as finally stored. All of it runs inside the host's one transaction:
 * whatever throws (InvalidRecord included) rolls every write of the request back.
 */
import { AssertionError } from "../../core/assert.ts";
import { crmFlowSaveDepthMax } from "../../core/limits.ts";
import { sameValue } from "./compare.ts";
import type { Subject } from "./condition.ts";
import type { SaveHost, SaveRequest } from "./contract.ts";
import { type Flow, flowStarts, runSteps } from "./flow.ts";
import { type CrmObject, InvalidRecord, type RecordData, recordErrorField } from "./record.ts";
import type { RuleSet } from "./rule-set.ts";
import { failedValidations } from "./validation-rule.ts";
import { workflowUpdates } from "./workflow-rule.ts";

/** Flows kept triggering saves past crmFlowSaveDepthMax: the request fails as a whole (422). */
export class FlowDepthExceeded extends InvalidRecord {
  constructor(flow: string | undefined) {
    super([
      {
        field: recordErrorField,
        message: `flows nest saves more than ${crmFlowSaveDepthMax} deep${flow === undefined ? "" : ` (flow ${flow})`}; nothing was saved`,
      },
    ]);
  }
}

export async function save(host: SaveHost, request: SaveRequest): Promise<RecordData> {
  if (request.depth > crmFlowSaveDepthMax) throw new FlowDepthExceeded(undefined);
  const rules = await host.rulesFor(request.object);
  const { changes, automated } = await beforeSaveFlows(rules, request);
  await validate(host, rules, request, changes, automated);
  const stored = await host.persist(request.object, request.old, changes);
  const updated = await workflow(host, rules, request, stored);
  return afterSaveFlows(host, rules, request, updated);
}

/** The values to store: the client's changes with every starting before-save flow's edits over them. */
async function beforeSaveFlows(rules: RuleSet, request: SaveRequest): Promise<{ changes: RecordData; automated: Set<string> }> {
  const changes: RecordData = { ...request.changes };
  const automated = new Set<string>();
  for (const flow of rules.flows) {
    const draft = { ...request.old, ...changes };
    if (!flowStarts(flow, "before_save", { record: draft, old: request.old })) continue;
    const edits: RecordData = {};
    await runSteps(flow.steps, draft, request.old, edits, noCreates);
    for (const [field, value] of Object.entries(edits)) {
      changes[field] = value;
      // A field the client sent stays the client's write for permission checks.
      if (!Object.hasOwn(request.changes, field)) automated.add(field);
    }
  }
  return { changes, automated };
}

const noCreates = {
  createRecord(): Promise<void> {
    // parseFlow refuses create_record in before_save flows.
    throw new AssertionError("create_record in a before-save flow");
  },
};

/** System and custom validation together, so the client hears every problem in one 422. */
async function validate(host: SaveHost, rules: RuleSet, request: SaveRequest, changes: RecordData, automated: Set<string>): Promise<void> {
  const isCreate = request.old === null;
  const subject: Subject = { record: { ...request.old, ...changes }, old: request.old };
  const errors = [...(await host.checkFields(request.object, changes, isCreate, automated)), ...failedValidations(rules.validation, subject)];
  if (errors.length > 0) throw new InvalidRecord(errors);
}

/** Workflow field updates, evaluated once against the stored record and persisted once. */
async function workflow(host: SaveHost, rules: RuleSet, request: SaveRequest, stored: RecordData): Promise<RecordData> {
  const diff = differences(stored, workflowUpdates(rules.workflow, { record: stored, old: request.old }));
  if (diff === null) return stored;
  const errors = await host.checkFields(request.object, diff, false, new Set(Object.keys(diff)));
  if (errors.length > 0) {
    throw new InvalidRecord(errors.map((e) => ({ field: e.field, message: `set by a workflow rule: ${e.message}` })));
  }
  return host.persist(request.object, stored, diff);
}

async function afterSaveFlows(host: SaveHost, rules: RuleSet, request: SaveRequest, stored: RecordData): Promise<RecordData> {
  let current = stored;
  for (const flow of rules.flows) {
    if (!flowStarts(flow, "after_save", { record: current, old: request.old })) continue;
    const edits: RecordData = {};
    const effects = {
      createRecord: (object: CrmObject, values: RecordData) =>
        nestedSave(host, flow, `${object}.`, { object, old: null, changes: values, depth: request.depth + 1 }).then(() => undefined),
    };
    await runSteps(flow.steps, current, request.old, edits, effects);
    const diff = differences(current, edits);
    // An edit that changes nothing is not saved, so a flow that sets a field to what it already
    // holds does not trigger itself again.
    if (diff !== null) current = await nestedSave(host, flow, "", { object: request.object, old: current, changes: diff, depth: request.depth + 1 });
  }
  return current;
}

/**
 * A save a flow causes. Its errors are reported under `flows.<flow>.` (and the created object),
 * so the client sees which automation failed on which field; a depth error passes through as is.
 */
async function nestedSave(host: SaveHost, flow: Flow, prefix: string, request: SaveRequest): Promise<RecordData> {
  if (request.depth > crmFlowSaveDepthMax) throw new FlowDepthExceeded(flow.name);
  try {
    return await save(host, request);
  } catch (error) {
    if (error instanceof FlowDepthExceeded || !(error instanceof InvalidRecord)) throw error;
    throw new InvalidRecord(error.details.map((d) => ({ field: `flows.${flow.name}.${prefix}${d.field}`, message: d.message })));
  }
}

/** The entries of `values` that differ from `record`; null when none do. */
function differences(record: RecordData, values: RecordData): RecordData | null {
  let diff: RecordData | null = null;
  for (const [field, value] of Object.entries(values)) {
    if (sameValue(record[field], value)) continue;
    diff ??= {};
    diff[field] = value;
  }
  return diff;
}
