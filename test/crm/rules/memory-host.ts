// An in-memory SaveHost for the engine's unit tests: a test double of crm's store with a small
// typed schema, required fields, an admin-only field, rule definitions parsed as the settings
// routes store them, a call log (to see the order of execution) and a transaction that restores
// every table when the save throws, as the real store's database transaction does.
import type { CrmObject, FieldError, RecordData, SaveHost, SaveRequest } from "../../../src/crm/rules/contract.ts";
import { buildRuleSet, type RuleKind, type RuleSet, type StoredRule } from "../../../src/crm/rules/rule-set.ts";
import { save } from "../../../src/crm/rules/save.ts";

type FieldType = "text" | "number" | "boolean" | "date";

const schema: Record<CrmObject, Record<string, FieldType>> = {
  accounts: { name: "text", industry: "text", rating: "text", cf_tier: "text", cf_escalations: "number", cf_secret: "text" },
  contacts: { first_name: "text", last_name: "text", email: "text", account_id: "number" },
  leads: { first_name: "text", last_name: "text", company: "text", email: "text", status: "text", rating: "text", source: "text" },
  opportunities: { name: "text", account_id: "number", stage: "text", amount: "number", close_date: "date", probability: "number" },
  cases: { subject: "text", status: "text", priority: "text", account_id: "number", contact_id: "number" },
};

const required: Record<CrmObject, string[]> = {
  accounts: ["name"],
  contacts: ["last_name"],
  leads: ["last_name", "company"],
  opportunities: ["name"],
  cases: ["subject"],
};

/** Written only by admins; the acting test user is not one unless `admin` is set. */
const adminOnly = new Set(["cf_secret"]);

export function fieldsOf(object: CrmObject): ReadonlySet<string> {
  return new Set(["id", "created_at", "updated_at", "owner_id", ...Object.keys(schema[object])]);
}

export class MemoryHost implements SaveHost {
  tables: Record<CrmObject, Map<number, RecordData>> = {
    accounts: new Map(),
    contacts: new Map(),
    leads: new Map(),
    opportunities: new Map(),
    cases: new Map(),
  };
  rules: StoredRule[] = [];
  log: string[] = [];
  admin = false;
  /** Record the automated set passed to each checkFields, for the permission tests. */
  automatedSeen: string[][] = [];
  private nextId = 1;
  private clock = 0;

  addRule(kind: RuleKind, definition: unknown): void {
    this.rules.push({ kind, definition });
  }

  async rulesFor(object: CrmObject): Promise<RuleSet> {
    return buildRuleSet(object, this.rules);
  }

  async checkFields(object: CrmObject, values: RecordData, isCreate: boolean, automated?: ReadonlySet<string>): Promise<FieldError[]> {
    this.log.push(`check ${object} ${Object.keys(values).sort().join(",")}`);
    this.automatedSeen.push([...(automated ?? [])].sort());
    const errors: FieldError[] = [];
    const fields = schema[object];
    for (const [field, value] of Object.entries(values)) {
      const type = fields[field];
      if (field === "owner_id") continue;
      if (type === undefined) errors.push({ field, message: "unknown field" });
      else if (value !== null && !hasType(type, value)) errors.push({ field, message: `must be ${type}` });
      else if (adminOnly.has(field) && !this.admin && !automated?.has(field)) errors.push({ field, message: "only admins may write this field" });
    }
    for (const field of required[object]) {
      if ((isCreate || Object.hasOwn(values, field)) && (values[field] === null || values[field] === undefined || values[field] === "")) {
        errors.push({ field, message: "is required" });
      }
    }
    return errors;
  }

  async persist(object: CrmObject, old: RecordData | null, values: RecordData): Promise<RecordData> {
    const now = new Date(Date.UTC(2026, 0, 1, 0, 0, this.clock++)).toISOString();
    let row: RecordData;
    if (old === null) {
      const id = this.nextId++;
      row = { id, created_at: now, updated_at: now, ...values };
      this.log.push(`insert ${object} ${id}`);
    } else {
      const id = old.id as number;
      const stored = this.tables[object].get(id);
      if (stored === undefined) throw new Error(`no ${object} ${id}`);
      row = { ...stored, ...values, updated_at: now };
      this.log.push(`update ${object} ${id} ${Object.keys(values).sort().join(",")}`);
    }
    this.tables[object].set(row.id as number, row);
    return { ...row };
  }

  async read(object: CrmObject, id: number): Promise<RecordData | null> {
    const row = this.tables[object].get(id);
    return row === undefined ? null : { ...row };
  }

  /** One request: a save inside a transaction that puts every table back when it throws. */
  async request(object: CrmObject, changes: RecordData, id?: number): Promise<RecordData> {
    const snapshot = this.snapshot();
    try {
      const old = id === undefined ? null : await this.read(object, id);
      if (id !== undefined && old === null) throw new Error(`no ${object} ${id}`);
      return await save(this, { object, old, changes, depth: 0 } satisfies SaveRequest);
    } catch (error) {
      this.tables = snapshot.tables;
      this.nextId = snapshot.nextId;
      throw error;
    }
  }

  count(object: CrmObject): number {
    return this.tables[object].size;
  }

  all(object: CrmObject): RecordData[] {
    return [...this.tables[object].values()];
  }

  private snapshot() {
    const tables = {} as Record<CrmObject, Map<number, RecordData>>;
    for (const [object, rows] of Object.entries(this.tables)) {
      tables[object as CrmObject] = new Map([...rows].map(([id, row]) => [id, { ...row }]));
    }
    return { tables, nextId: this.nextId };
  }
}

function hasType(type: FieldType, value: unknown): boolean {
  switch (type) {
    case "text":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "date":
      return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value);
  }
}

/** Catches the InvalidRecord (or other error) a call throws. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}
