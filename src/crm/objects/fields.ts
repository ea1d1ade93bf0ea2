/**
 * Fields: what a record of each object holds. Standard fields are declared here, once, as data
 * (the table DDL of migration 1 matches them); custom fields come from the custom_fields table
 * and are named `cf_<name>` as Fat Free CRM names them. Picklist values and required fields
 * follow Salesforce's standard objects (docs/crm.md).
 */
import { type CrmObject, crmObjects } from "../rules/record.ts";

export function isCrmObject(name: string): name is CrmObject {
  return (crmObjects as readonly string[]).includes(name);
}

/** Types an admin may give a custom field. */
export const customFieldTypes = ["text", "number", "boolean", "date", "picklist"] as const;
export type CustomFieldType = (typeof customFieldTypes)[number];

/**
 * Every field type: the custom ones, plus long text (descriptions), a reference to another
 * record (its id) and the system's own id and timestamps.
 */
export type FieldType = CustomFieldType | "longtext" | "reference" | "id" | "timestamp";

export interface FieldDef {
  name: string;
  type: FieldType;
  required: boolean;
  /** Hidden from non-admins on read; a non-admin may not write it. */
  adminOnly: boolean;
  /** Set by the system only (id, timestamps). */
  readOnly: boolean;
  /** The allowed values of a picklist. */
  values?: readonly string[];
  /** The object a reference points to; owner_id points to users. */
  references?: CrmObject | "users";
  /** Applied on create when the client does not send the field. */
  defaultValue?: unknown;
  custom: boolean;
}

type Spec = Partial<Omit<FieldDef, "name" | "type">>;
const f = (name: string, type: FieldType, spec: Spec = {}): FieldDef => ({
  name,
  type,
  required: false,
  adminOnly: false,
  readOnly: false,
  custom: false,
  ...spec,
});
const text = (name: string, spec: Spec = {}) => f(name, "text", spec);
const picklist = (name: string, values: string[], spec: Spec = {}) => f(name, "picklist", { values, ...spec });

const system = [
  f("id", "id", { readOnly: true }),
  f("owner_id", "reference", { references: "users" }),
  f("created_at", "timestamp", { readOnly: true }),
  f("updated_at", "timestamp", { readOnly: true }),
];

export const leadStatuses = ["Open - Not Contacted", "Working - Contacted", "Closed - Converted", "Closed - Not Converted"];
export const opportunityStages = [
  "Prospecting",
  "Qualification",
  "Needs Analysis",
  "Value Proposition",
  "Id. Decision Makers",
  "Perception Analysis",
  "Proposal/Price Quote",
  "Negotiation/Review",
  "Closed Won",
  "Closed Lost",
];

export const standardFields: Record<CrmObject, readonly FieldDef[]> = {
  accounts: [
    ...system,
    text("name", { required: true }),
    text("website"),
    text("phone"),
    text("industry"),
    text("billing_city"),
    text("billing_country"),
    f("annual_revenue", "number"),
    f("employees", "number"),
    f("description", "longtext"),
  ],
  contacts: [
    ...system,
    text("first_name"),
    text("last_name", { required: true }),
    f("account_id", "reference", { references: "accounts" }),
    text("email"),
    text("phone"),
    text("title"),
    text("mailing_city"),
    f("description", "longtext"),
  ],
  leads: [
    ...system,
    text("first_name"),
    text("last_name", { required: true }),
    text("company", { required: true }),
    text("email"),
    text("phone"),
    picklist("status", leadStatuses, { required: true, defaultValue: "Open - Not Contacted" }),
    picklist("rating", ["Hot", "Warm", "Cold"]),
    picklist("source", ["Web", "Phone Inquiry", "Partner Referral", "Purchased List", "Other"]),
    f("description", "longtext"),
  ],
  opportunities: [
    ...system,
    text("name", { required: true }),
    f("account_id", "reference", { references: "accounts" }),
    picklist("stage", opportunityStages, { required: true, defaultValue: "Prospecting" }),
    f("amount", "number"),
    f("close_date", "date", { required: true }),
    f("probability", "number"),
    f("description", "longtext"),
  ],
  cases: [
    ...system,
    text("subject"),
    picklist("status", ["New", "Working", "Escalated", "Closed"], { required: true, defaultValue: "New" }),
    picklist("priority", ["High", "Medium", "Low"], { required: true, defaultValue: "Medium" }),
    picklist("origin", ["Phone", "Email", "Web"]),
    f("account_id", "reference", { references: "accounts" }),
    f("contact_id", "reference", { references: "contacts" }),
    f("description", "longtext"),
  ],
};

/**
 * The name-like fields `q` searches: what a person types to find a record. Their values, joined
 * and lower-cased, are kept in each row's search_text column, which the full-text index covers.
 */
export const searchFields: Record<CrmObject, readonly string[]> = {
  accounts: ["name", "website"],
  contacts: ["first_name", "last_name", "email"],
  leads: ["first_name", "last_name", "company", "email"],
  opportunities: ["name"],
  cases: ["subject"],
};

/** The column a custom field is stored in and addressed by. */
export const customFieldPrefix = "cf_";
