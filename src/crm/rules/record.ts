/**
 * What crm calls a record and how it reports a problem with one: the vocabulary the record store
 * (src/crm/store, objects, sharing, http, records) and the rules engine (src/crm/rules) share.
 * It is the bottom of the engine's layers and imports nothing, so every module on either side can
 * use it without tying itself to the engine's rules, flows or rule set (contract.ts, the seam,
 * sits at the top and re-exports it).
 */

/** The five standard objects; the path segment of /api/v1/{object}. */
export type CrmObject = "accounts" | "contacts" | "leads" | "opportunities" | "cases";

export const crmObjects: readonly CrmObject[] = ["accounts", "contacts", "leads", "opportunities", "cases"];

/**
 * A record's field values by API name (standard fields and `cf_` custom fields), as JSON values:
 * text and picklist as strings, number as number, boolean as boolean, date as "YYYY-MM-DD",
 * timestamps as ISO-8601 strings, unset as null. Always includes `id` once stored.
 */
export type RecordData = Record<string, unknown>;

/**
 * What automation writes into a field (a workflow field update, a flow's set_field, a value of its
 * create_record): a literal (null clears the field), `{"ref": field}` (that field of the
 * triggering record), or `{"template": text}` (text with `{field}` placeholders). Here because the
 * store checks these against its field types when a rule is defined (ParseOptions.writeProblem).
 */
export type ValueExpr = string | number | boolean | null | { ref: string } | { template: string };

/** One entry of a 422 body: `{"error":"invalid","details":[{field, message}]}`. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * The `field` of an error about the record as a whole rather than one field (a validation rule
 * without error_field, flows nesting too deep): Rails' `errors[:base]`, which Fat Free CRM uses.
 */
export const recordErrorField = "base";

/** Thrown (by either side) to answer 422 with these details and roll the whole request back. */
export class InvalidRecord extends Error {
  constructor(readonly details: FieldError[]) {
    super(`invalid: ${details.map((d) => `${d.field}: ${d.message}`).join("; ")}`);
  }
}
