/**
 * Rules whose writes could never be stored are refused when they are defined (422, nothing stored),
 * and writes that can succeed are accepted — against a real `svc crm`, through the settings API an
 * admin uses (src/crm/objects/rule-writes.ts, docs/crm-rules.md "Values written by rules").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type CrmProcess, runCrmTool, sqliteBackend, startCrm } from "./support/crm.ts";

const backend = sqliteBackend();
let crm: CrmProcess;
let admin: string;
/** Tool processes and a server on a loaded machine: a bound, not a timing claim. */
const hookMs = 30_000;

beforeAll(async () => {
  const db = await backend.freshDb();
  expect((await runCrmTool(db, ["user", "add", "--username", "admin", "--admin"])).code).toBe(0);
  admin = (await runCrmTool(db, ["token", "create", "--user", "admin"])).stdout.trim();
  crm = await startCrm(db);
  const field = await crm.call(admin, "POST", "/api/v1/settings/fields", { object: "accounts", name: "tier", type: "picklist", values: ["Key", "Standard"] });
  expect(field.status).toBe(201);
}, hookMs);
afterAll(() => crm?.stop());

const workflow = (updates: unknown[], object = "leads") => ({
  name: "W",
  object,
  trigger: "created",
  condition: { all: [] },
  updates,
});

const flow = (steps: unknown[], object = "accounts") => ({ name: "F", object, timing: "after_save", trigger: "created", steps });

async function refused(path: string, body: unknown) {
  const r = await crm.call(admin, "POST", `/api/v1/settings/${path}`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect((await crm.call(admin, "GET", `/api/v1/settings/${path}`)).body.data).toEqual([]);
  return r.body.details;
}

async function accepted(path: string, body: unknown) {
  const r = await crm.call(admin, "POST", `/api/v1/settings/${path}`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  expect((await crm.call(admin, "DELETE", `/api/v1/settings/${path}/${r.body.id}`)).status).toBe(204);
}

describe("a workflow rule's updates are checked against the fields when it is defined", () => {
  test("literals of the wrong type, off the picklist, too long, or null into a required field are refused, each at its path", async () => {
    const details = await refused(
      "workflow-rules",
      workflow([
        { field: "rating", value: "Scorching" },
        { field: "email", value: 5 },
        { field: "first_name", value: "x".repeat(256) },
        { field: "company", value: null },
      ]),
    );
    expect(details).toEqual([
      { field: "updates[0].value", message: "rating must be one of: Hot, Warm, Cold" },
      { field: "updates[1].value", message: "email must be a string" },
      { field: "updates[2].value", message: "first_name at most 255 characters" },
      { field: "updates[3].value", message: "company is required; a rule cannot clear it" },
    ]);
  });

  test("a template goes only into text; a ref only from a field whose values can fit", async () => {
    const details = await refused(
      "workflow-rules",
      workflow(
        [
          { field: "stage", value: { template: "{name}" } },
          { field: "name", value: { ref: "amount" } },
          { field: "amount", value: { ref: "name" } },
          { field: "close_date", value: { ref: "created_at" } },
        ],
        "opportunities",
      ),
    );
    expect(details).toEqual([
      { field: "updates[0].value", message: "a template makes text, and stage is a picklist field: write a literal value or a ref" },
      { field: "updates[1].value", message: "name is a text field and cannot hold amount, a number field" },
      { field: "updates[2].value", message: "amount is a number field and cannot hold name, a text field" },
      { field: "updates[3].value", message: "close_date is a date field and cannot hold created_at, a timestamp field" },
    ]);
  });

  test("what can be stored is accepted: right literals, null into an optional field, text refs into text, numbers into numbers", async () => {
    await accepted(
      "workflow-rules",
      workflow([
        { field: "status", value: "Working - Contacted" },
        { field: "source", value: null },
        { field: "description", value: { template: "from {company}" } },
        { field: "first_name", value: { ref: "rating" } },
        // last_name is required and email may be blank: that fails only the saves where it is blank.
        { field: "last_name", value: { ref: "email" } },
      ]),
    );
    await accepted("workflow-rules", workflow([{ field: "probability", value: { ref: "amount" } }], "opportunities"));
  });
});

describe("a flow's writes are checked the same way", () => {
  test("a set_field off the picklist, a created record's wrong reference, a required field left out", async () => {
    const details = await refused(
      "flows",
      flow([
        { type: "decision", branches: [{ condition: { all: [] }, steps: [{ type: "set_field", field: "cf_tier", value: "Gold" }] }] },
        { type: "create_record", object: "contacts", values: { account_id: { ref: "owner_id" }, first_name: { ref: "name" } } },
      ]),
    );
    expect(details).toEqual([
      { field: "steps[0].branches[0].steps[0].value", message: "cf_tier must be one of: Key, Standard" },
      { field: "steps[1].values.account_id", message: "account_id is a reference to accounts and cannot hold owner_id, a reference to users" },
      { field: "steps[1].values", message: "contacts needs last_name: it is required" },
    ]);
  });

  test("a contact linked to the triggering account by its id is accepted, and the flow creates it", async () => {
    const made = await crm.call(admin, "POST", "/api/v1/settings/flows", {
      ...flow([{ type: "create_record", object: "contacts", values: { account_id: { ref: "id" }, last_name: { ref: "name" } } }]),
      name: "ContactPerAccount",
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const account = await crm.call(admin, "POST", "/api/v1/accounts", { name: "Linked Co" });
    expect(account.status).toBe(201);
    const contacts = (await crm.call(admin, "GET", "/api/v1/contacts?q=linked")).body.data;
    expect(contacts.map((c: { account_id: number; last_name: string }) => [c.account_id, c.last_name])).toEqual([[account.body.id, "Linked Co"]]);
    expect((await crm.call(admin, "DELETE", `/api/v1/settings/flows/${made.body.id}`)).status).toBe(204);
  });

  test("the triggering account's id into a reference to contacts is refused: it would link the wrong kind of record", async () => {
    const details = await refused("flows", flow([{ type: "create_record", object: "cases", values: { contact_id: { ref: "id" } } }]));
    expect(details).toEqual([
      { field: "steps[0].values.contact_id", message: "contact_id is a reference to contacts and cannot hold id, the accounts record's id" },
    ]);
  });
});
