/**
 * The seam between crm's record store (src/crm/store, objects, http) and its rules engine
 * (src/crm/rules): what the store hands the engine for one save, and what the engine asks of the
 * store while it runs. The store owns types, sharing and SQL; the engine owns conditions,
 * validation rules, workflow rules, flows and the order in which they run (docs/crm.md,
 * docs/crm-rules.md).
 *
 * It sits at the top of the engine's layers, beside save.ts: a SaveHost hands over a RuleSet, so
 * this module depends on rule-set.ts and nothing below may import it. The record vocabulary the
 * engine's own modules need lives in record.ts, which this module re-exports so that the store
 * side can take the whole seam from one import.
 */
import type { CrmObject, FieldError, RecordData } from "./record.ts";
import type { RuleSet } from "./rule-set.ts";

export { type CrmObject, crmObjects, type FieldError, InvalidRecord, type RecordData, recordErrorField } from "./record.ts";
export type { RuleSet } from "./rule-set.ts";

/** What the store provides to the engine, inside the request's one transaction. */
export interface SaveHost {
  /** The active validation rules, workflow rules and flows of an object (as admins defined them). */
  rulesFor(object: CrmObject): Promise<RuleSet>;
  /**
   * System validation of values about to be stored: unknown fields, wrong types, picklist values,
   * required fields, admin-only fields the acting user may not write. Returns the problems found.
   * For a create `values` holds every field to store; for an update only the fields to change.
   * `automated` names the fields among `values` whose value a flow or workflow rule set rather
   * than the client: automation runs in system context (as in Salesforce), so the host should
   * check their types but not the acting user's right to write them.
   */
  checkFields(object: CrmObject, values: RecordData, isCreate: boolean, automated?: ReadonlySet<string>): Promise<FieldError[]>;
  /**
   * Inserts (old === null) or updates a row and returns it as stored (id, timestamps included).
   * For an update `values` holds only the fields to change; `old` is the record as last stored.
   */
  persist(object: CrmObject, old: RecordData | null, values: RecordData): Promise<RecordData>;
  /** Reads a record by id, ignoring sharing (flows may read a parent the user cannot see). */
  read(object: CrmObject, id: number): Promise<RecordData | null>;
}

/** One create or change as the API received it, after sharing has allowed it. */
export interface SaveRequest {
  object: CrmObject;
  /** The stored record before the change; null for a create. */
  old: RecordData | null;
  /** The fields the client sent (for a create: all of them). */
  changes: RecordData;
  /** How many flows deep this save is; the API's own save is 0. */
  depth: number;
}
