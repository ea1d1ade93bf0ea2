// save(): the order of execution against an in-memory test double of the store — before-save
// flows, system and custom validation in one 422, persist, workflow field updates persisted once
// without re-validation, after-save flows whose creates and edits are saves of their own — and
// the flow depth limit, at the limit and one past, with the whole request rolled back.
import { describe, expect, test } from "bun:test";
import { crmFlowSaveDepthMax } from "../../../src/core/limits.ts";
import { InvalidRecord } from "../../../src/crm/rules/contract.ts";
import { FlowDepthExceeded } from "../../../src/crm/rules/save.ts";
import { MemoryHost, rejection } from "./memory-host.ts";

async function invalid(promise: Promise<unknown>): Promise<InvalidRecord["details"]> {
  const error = await rejection(promise);
  if (!(error instanceof InvalidRecord)) throw error;
  return error.details;
}

describe("order of execution", () => {
  test("a create with no rules checks, inserts once and returns the stored record", async () => {
    const host = new MemoryHost();
    const rec = await host.request("accounts", { name: "Acme" });
    expect(rec).toMatchObject({ id: 1, name: "Acme" });
    expect(host.log).toEqual(["check accounts name", "insert accounts 1"]);
  });

  test("before-save flow → validation → insert → workflow update → after-save flow's related record", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "Tier",
      object: "accounts",
      timing: "before_save",
      trigger: "created",
      steps: [{ type: "set_field", field: "cf_tier", value: "Gold" }],
    });
    // Sees the before-save flow's value: the flow ran first.
    host.addRule("validation", { name: "NeedsTier", object: "accounts", condition: { field: "cf_tier", op: "blank" }, message: "tier missing" });
    host.addRule("workflow", {
      name: "Rate",
      object: "accounts",
      trigger: "created",
      condition: { field: "cf_tier", op: "eq", value: "Gold" },
      updates: [{ field: "rating", value: "Hot" }],
    });
    host.addRule("flow", {
      name: "OpenCase",
      object: "accounts",
      timing: "after_save",
      trigger: "created",
      entry: { field: "rating", op: "eq", value: "Hot" },
      steps: [{ type: "create_record", object: "cases", values: { subject: { template: "Welcome {name} ({rating})" }, account_id: { ref: "id" } } }],
    });
    const rec = await host.request("accounts", { name: "Acme" });
    expect(host.log).toEqual([
      "check accounts cf_tier,name",
      "insert accounts 1",
      "check accounts rating",
      "update accounts 1 rating",
      "check cases account_id,subject",
      "insert cases 2",
    ]);
    expect(rec).toMatchObject({ id: 1, name: "Acme", cf_tier: "Gold", rating: "Hot" });
    expect(host.all("cases")).toEqual([expect.objectContaining({ id: 2, subject: "Welcome Acme (Hot)", account_id: 1 })]);
  });

  test("an update passes only the changed fields to the store and keeps the rest", async () => {
    const host = new MemoryHost();
    await host.request("accounts", { name: "Acme", industry: "Energy" });
    const rec = await host.request("accounts", { rating: "Warm" }, 1);
    expect(host.log.slice(2)).toEqual(["check accounts rating", "update accounts 1 rating"]);
    expect(rec).toMatchObject({ id: 1, name: "Acme", industry: "Energy", rating: "Warm" });
  });
});

describe("validation", () => {
  test("every failing rule and every system error comes back in one InvalidRecord; nothing is stored", async () => {
    const host = new MemoryHost();
    host.addRule("validation", {
      name: "B_Negative",
      object: "opportunities",
      condition: { field: "amount", op: "lt", value: 0 },
      error_field: "amount",
      message: "must not be negative",
    });
    host.addRule("validation", {
      name: "A_Closed",
      object: "opportunities",
      condition: {
        all: [
          { field: "stage", op: "eq", value: "Closed Won" },
          { field: "close_date", op: "blank" },
        ],
      },
      message: "a won deal needs a close date",
    });
    host.addRule("validation", { name: "C_Passes", object: "opportunities", condition: { field: "amount", op: "gt", value: 1e9 }, message: "never" });
    const details = await invalid(host.request("opportunities", { name: "", amount: -5, stage: "Closed Won", color: "red" }));
    expect(details).toEqual([
      { field: "color", message: "unknown field" },
      { field: "name", message: "is required" },
      { field: "base", message: "a won deal needs a close date" },
      { field: "amount", message: "must not be negative" },
    ]);
    expect(host.count("opportunities")).toBe(0);
    expect(host.log).toEqual(["check opportunities amount,color,name,stage"]);
  });

  test("an inactive rule does not run; a rule of another object does not run", async () => {
    const host = new MemoryHost();
    host.addRule("validation", { name: "Off", object: "accounts", condition: { all: [] }, message: "off", active: false });
    host.addRule("validation", { name: "Leads", object: "leads", condition: { all: [] }, message: "leads only" });
    expect(await host.request("accounts", { name: "Acme" })).toMatchObject({ id: 1 });
  });

  test("changed_to on an update sees the stored record; the same rule lets a create through", async () => {
    const host = new MemoryHost();
    host.addRule("validation", {
      name: "NoReopen",
      object: "opportunities",
      error_field: "stage",
      message: "a won deal cannot be reopened",
      condition: {
        all: [
          { field: "stage", op: "changed" },
          { field: "stage", op: "ne", value: "Closed Won" },
          { field: "stage", op: "ne", value: null },
        ],
      },
    });
    host.addRule("validation", {
      name: "Frozen",
      object: "opportunities",
      condition: { field: "stage", op: "changed_to", value: "Frozen" },
      message: "not by hand",
    });
    await host.request("opportunities", { name: "D", stage: "Frozen" });
    await host.request("opportunities", { stage: "Closed Won" }, 1);
    expect(await invalid(host.request("opportunities", { stage: "Prospecting" }, 1))).toEqual([{ field: "stage", message: "a won deal cannot be reopened" }]);
    // Rules report in name order: Frozen before NoReopen.
    expect(await invalid(host.request("opportunities", { stage: "Frozen" }, 1))).toEqual([
      { field: "base", message: "not by hand" },
      { field: "stage", message: "a won deal cannot be reopened" },
    ]);
    expect((await host.read("opportunities", 1))?.stage).toBe("Closed Won");
  });
});

describe("workflow rules", () => {
  const hot = { field: "rating", op: "eq", value: "Hot" };
  const setup = (trigger: string) => {
    const host = new MemoryHost();
    host.addRule("workflow", { name: "W", object: "leads", trigger, condition: hot, updates: [{ field: "status", value: { template: "rated {rating}" } }] });
    return host;
  };
  const lead = { last_name: "L", company: "C" };

  test("created: fires on a create that meets the condition, never on an edit", async () => {
    const host = setup("created");
    expect((await host.request("leads", { ...lead, rating: "Hot" })).status).toBe("rated Hot");
    await host.request("leads", { status: "x" }, 1);
    expect((await host.request("leads", { rating: "Hot", status: "y" }, 1)).status).toBe("y");
  });

  test("created_and_edited: fires on every save where the condition holds", async () => {
    const host = setup("created_and_edited");
    await host.request("leads", { ...lead, rating: "Cold" });
    expect((await host.request("leads", { rating: "Hot" }, 1)).status).toBe("rated Hot");
    expect((await host.request("leads", { status: "manual" }, 1)).status).toBe("rated Hot");
  });

  test("created_and_edited_to_meet: fires only when an edit makes the condition newly true", async () => {
    const host = setup("created_and_edited_to_meet");
    await host.request("leads", { ...lead, rating: "Cold" });
    expect((await host.request("leads", { rating: "Hot" }, 1)).status).toBe("rated Hot");
    expect((await host.request("leads", { status: "manual" }, 1)).status).toBe("manual");
    await host.request("leads", { rating: "Cold" }, 1);
    expect((await host.request("leads", { rating: "Hot" }, 1)).status).toBe("rated Hot");
  });

  test("applied once: an update that meets another rule's condition does not fire it (no re-evaluation)", async () => {
    const host = new MemoryHost();
    host.addRule("workflow", { name: "A", object: "leads", trigger: "created", condition: { all: [] }, updates: [{ field: "rating", value: "Hot" }] });
    host.addRule("workflow", { name: "B", object: "leads", trigger: "created", condition: hot, updates: [{ field: "status", value: "Hot lead" }] });
    const rec = await host.request("leads", lead);
    expect(rec).toMatchObject({ rating: "Hot" });
    expect(rec.status).toBeUndefined();
  });

  test("field updates skip custom validation rules but not system validation (which rolls back)", async () => {
    const host = new MemoryHost();
    host.addRule("validation", { name: "NoJunk", object: "leads", condition: { field: "status", op: "eq", value: "Junk" }, message: "no junk" });
    host.addRule("workflow", {
      name: "Junk",
      object: "leads",
      trigger: "created",
      condition: { field: "source", op: "eq", value: "spam" },
      updates: [{ field: "status", value: "Junk" }],
    });
    host.addRule("workflow", {
      name: "Bad",
      object: "leads",
      trigger: "created",
      condition: { field: "source", op: "eq", value: "bad" },
      updates: [{ field: "rating", value: 5 }],
    });
    expect((await host.request("leads", { ...lead, source: "spam" })).status).toBe("Junk");
    expect(await invalid(host.request("leads", { ...lead, source: "bad" }))).toEqual([{ field: "rating", message: "set by a workflow rule: must be text" }]);
    expect(host.count("leads")).toBe(1);
  });

  test("two rules on one field: the later by name wins; an update to the value already stored writes nothing", async () => {
    const host = new MemoryHost();
    host.addRule("workflow", { name: "Z", object: "leads", trigger: "created", condition: { all: [] }, updates: [{ field: "status", value: "z" }] });
    host.addRule("workflow", { name: "A", object: "leads", trigger: "created", condition: { all: [] }, updates: [{ field: "status", value: "a" }] });
    expect((await host.request("leads", lead)).status).toBe("z");
    host.log = [];
    await host.request("leads", { ...lead, status: "z" });
    expect(host.log).toEqual(["check leads company,last_name,status", "insert leads 2"]);
  });
});

describe("before-save flows", () => {
  test("decision branches pick the first match, else runs otherwise; later steps see earlier sets", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "Prio",
      object: "cases",
      timing: "before_save",
      trigger: "created_or_updated",
      steps: [
        { type: "set_field", field: "status", value: { template: "{priority}!" } },
        {
          type: "decision",
          branches: [
            {
              condition: { field: "priority", op: "eq", value: "High" },
              steps: [{ type: "set_field", field: "subject", value: { template: "[P1] {status}" } }],
            },
            { condition: { field: "priority", op: "in", value: ["High", "Medium"] }, steps: [{ type: "set_field", field: "subject", value: "medium" }] },
          ],
          else: [{ type: "set_field", field: "subject", value: { ref: "status" } }],
        },
      ],
    });
    expect((await host.request("cases", { subject: "s", priority: "High" })).subject).toBe("[P1] High!");
    expect((await host.request("cases", { subject: "s", priority: "Medium" })).subject).toBe("medium");
    expect((await host.request("cases", { subject: "s", priority: "Low" })).subject).toBe("Low!");
  });

  test("trigger and entry condition decide whether a flow starts; updated_to_meet needs a transition", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "OnUpdate",
      object: "cases",
      timing: "before_save",
      trigger: "updated",
      entry: { field: "priority", op: "eq", value: "High" },
      entry_mode: "updated_to_meet",
      steps: [{ type: "set_field", field: "status", value: "Escalated" }],
    });
    expect((await host.request("cases", { subject: "s", priority: "High" })).status).toBeUndefined();
    expect((await host.request("cases", { status: "Open", priority: "Low" }, 1)).status).toBe("Open");
    expect((await host.request("cases", { priority: "High" }, 1)).status).toBe("Escalated");
    expect((await host.request("cases", { status: "Open" }, 1)).status).toBe("Open");
  });

  test("a flow's value is validated with the record, and its fields are marked automated", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "Secret",
      object: "accounts",
      timing: "before_save",
      trigger: "created",
      steps: [
        { type: "set_field", field: "cf_secret", value: "s" },
        { type: "set_field", field: "cf_escalations", value: "many" },
      ],
    });
    expect(await invalid(host.request("accounts", { name: "A" }))).toEqual([{ field: "cf_escalations", message: "must be number" }]);
    expect(host.automatedSeen[0]).toEqual(["cf_escalations", "cf_secret"]);
    // A field the client sent itself stays the client's write, so its permission is checked.
    expect(await invalid(host.request("accounts", { name: "A", cf_secret: "mine" }))).toEqual([
      { field: "cf_secret", message: "only admins may write this field" },
      { field: "cf_escalations", message: "must be number" },
    ]);
  });
});

describe("after-save flows", () => {
  test("a related record failing its own validation fails the request, named by flow and object; all rolled back", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "OpenCase",
      object: "accounts",
      timing: "after_save",
      trigger: "created",
      steps: [{ type: "create_record", object: "cases", values: { account_id: { ref: "id" } } }],
    });
    expect(await invalid(host.request("accounts", { name: "Acme" }))).toEqual([{ field: "flows.OpenCase.cases.subject", message: "is required" }]);
    expect(host.count("accounts")).toBe(0);
    expect(host.count("cases")).toBe(0);
  });

  test("the created record runs its own rules (its workflow and flows) at depth + 1", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "OpenCase",
      object: "accounts",
      timing: "after_save",
      trigger: "created",
      steps: [{ type: "create_record", object: "cases", values: { subject: "Onboard", account_id: { ref: "id" } } }],
    });
    host.addRule("workflow", { name: "CaseStatus", object: "cases", trigger: "created", condition: { all: [] }, updates: [{ field: "status", value: "New" }] });
    host.addRule("flow", {
      name: "Contact",
      object: "cases",
      timing: "after_save",
      trigger: "created",
      steps: [{ type: "create_record", object: "contacts", values: { last_name: { template: "for case {id}" }, account_id: { ref: "account_id" } } }],
    });
    await host.request("accounts", { name: "Acme" });
    expect(host.all("cases")).toEqual([expect.objectContaining({ id: 2, subject: "Onboard", status: "New", account_id: 1 })]);
    expect(host.all("contacts")).toEqual([expect.objectContaining({ last_name: "for case 2", account_id: 1 })]);
  });

  test("an edit of the triggering record is a nested save; the next flow (by name) sees it", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "A_Rate",
      object: "accounts",
      timing: "after_save",
      trigger: "created",
      steps: [{ type: "set_field", field: "rating", value: "Warm" }],
    });
    host.addRule("flow", {
      name: "B_Copy",
      object: "accounts",
      timing: "after_save",
      trigger: "created_or_updated",
      steps: [{ type: "set_field", field: "industry", value: { template: "{rating} lead" } }],
    });
    const rec = await host.request("accounts", { name: "Acme" });
    expect(rec).toMatchObject({ rating: "Warm", industry: "Warm lead" });
    expect(host.log.filter((l) => l.startsWith("update"))).toEqual(["update accounts 1 rating", "update accounts 1 industry"]);
  });

  test("a flow setting a field to the value it holds does not trigger itself again", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "Tier",
      object: "accounts",
      timing: "after_save",
      trigger: "created_or_updated",
      steps: [{ type: "set_field", field: "cf_tier", value: "Gold" }],
    });
    expect(await host.request("accounts", { name: "Acme" })).toMatchObject({ cf_tier: "Gold" });
    expect(host.log.filter((l) => !l.startsWith("check"))).toEqual(["insert accounts 1", "update accounts 1 cf_tier"]);
  });
});

describe(`flow depth limit (${crmFlowSaveDepthMax} nested saves)`, () => {
  // Each run appends "x" to the name until it reads "a" followed by `stop` x's: one nested save per x.
  const grow = (stop: number) => ({
    name: "Grow",
    object: "accounts",
    timing: "after_save",
    trigger: "created_or_updated",
    entry: { field: "name", op: "ne", value: `a${"x".repeat(stop)}` },
    steps: [{ type: "set_field", field: "name", value: { template: "{name}x" } }],
  });

  test(`exactly ${crmFlowSaveDepthMax} nested saves succeed`, async () => {
    const host = new MemoryHost();
    host.addRule("flow", grow(crmFlowSaveDepthMax));
    expect((await host.request("accounts", { name: "a" })).name).toBe(`a${"x".repeat(crmFlowSaveDepthMax)}`);
  });

  test(`${crmFlowSaveDepthMax + 1} fail with a 422 on base and roll everything back`, async () => {
    const host = new MemoryHost();
    host.addRule("flow", grow(crmFlowSaveDepthMax + 1));
    const error = await rejection(host.request("accounts", { name: "a" }));
    expect(error).toBeInstanceOf(FlowDepthExceeded);
    expect((error as InvalidRecord).details).toEqual([
      { field: "base", message: `flows nest saves more than ${crmFlowSaveDepthMax} deep (flow Grow); nothing was saved` },
    ]);
    expect(host.count("accounts")).toBe(0);
  });

  test("a flow that creates records of its own object forever stops at the limit", async () => {
    const host = new MemoryHost();
    host.addRule("flow", {
      name: "Clone",
      object: "accounts",
      timing: "after_save",
      trigger: "created",
      steps: [{ type: "create_record", object: "accounts", values: { name: { template: "copy of {name}" } } }],
    });
    expect(await rejection(host.request("accounts", { name: "a" }))).toBeInstanceOf(FlowDepthExceeded);
    expect(host.count("accounts")).toBe(0);
  });

  test("a save requested deeper than the limit is refused before anything runs", async () => {
    const host = new MemoryHost();
    const { save } = await import("../../../src/crm/rules/save.ts");
    expect(await rejection(save(host, { object: "accounts", old: null, changes: { name: "a" }, depth: crmFlowSaveDepthMax + 1 }))).toBeInstanceOf(
      FlowDepthExceeded,
    );
    expect(host.log).toEqual([]);
  });
});
