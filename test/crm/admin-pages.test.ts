/**
 * The admin pages of /settings in a real browser, against a real `svc crm`: an admin creates, sees,
 * changes and deletes custom fields, sharing defaults and rules, validation rules, workflow rules
 * and flows with forms, and what they make is what the API then does; a refused definition shows
 * the API's 422 details beside the form and changes nothing. Also what a browser cannot easily do:
 * a rep reaching for the pages, posts without a session or from another site.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { sharedBrowser } from "../support/browser.ts";
import { type CrmProcess, runCrmTool, sqliteBackend, startCrm } from "./support/crm.ts";

const browser = sharedBrowser();
const backend = sqliteBackend();
const password = { ada: "ada's admin password", rex: "rex the sales rep" };
let crm: CrmProcess;
/** API tokens, to check through the API what the pages did. */
const token = { ada: "", rex: "" };
/** A browser test signs in (argon2id) and loads several pages: more than bun's default 5 s. */
const browserTestMs = 30_000;

async function tool(db: string, args: string[], stdin?: string): Promise<string> {
  const r = await runCrmTool(db, args, stdin);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

beforeAll(async () => {
  const db = await backend.freshDb();
  await tool(db, ["role", "add", "--name", "sales-manager"]);
  await tool(db, ["role", "add", "--name", "sales-rep", "--parent", "sales-manager"]);
  await tool(db, ["user", "add", "--username", "ada", "--admin", "--password-stdin"], `${password.ada}\n`);
  await tool(db, ["user", "add", "--username", "rex", "--role", "sales-rep", "--password-stdin"], `${password.rex}\n`);
  token.ada = await tool(db, ["token", "create", "--user", "ada"]);
  token.rex = await tool(db, ["token", "create", "--user", "rex"]);
  crm = await startCrm(db);
}, browserTestMs);
afterAll(() => crm?.stop());

async function signedIn(b: Browser, username: "ada" | "rex"): Promise<Page> {
  const page = await (await b.newContext()).newPage();
  await page.goto(`${crm.url}/settings`);
  await page.fill("#username", username);
  await page.fill("#password", password[username]);
  await page.click("#sign-in");
  return page;
}

const api = (method: string, path: string, body?: unknown) => crm.call(token.ada, method, path, body);

/** The refusal shown above a form: every detail as `field: message`. */
async function refusal(page: Page, form: string): Promise<string[]> {
  return page.locator(`${form} .form-errors li`).allTextContents();
}

/** The messages shown beside one input (or row) of a form. */
async function beside(page: Page, form: string, key: string): Promise<string[]> {
  return page.locator(`${form} .field-error[data-for="${key}"]`).allTextContents();
}

describe("admin pages in Chromium", () => {
  test(
    "custom fields: add a picklist field and see it listed and usable; a bad name is refused with the API's details, beside the name",
    async () => {
      const page = await signedIn(await browser(), "ada");
      await page.click("#nav >> text=Custom fields");
      expect(await page.textContent(".note")).toContain("never changed or removed");

      await page.selectOption("#field-form [name=object]", "accounts");
      await page.fill("#field-form [name=name]", "Tier!");
      await page.selectOption("#field-form [name=type]", "picklist");
      await page.click("#add-field");
      expect(await refusal(page, "#field-form")).toEqual([
        "name: 1 to 40 lower-case letters, digits or '_', starting with a letter",
        "values: a picklist needs 1 to 200 distinct non-empty strings",
      ]);
      expect(await beside(page, "#field-form", "name")).toEqual(["1 to 40 lower-case letters, digits or '_', starting with a letter"]);
      // What was typed is kept, so the admin fixes it rather than starting over.
      expect(await page.inputValue("#field-form [name=name]")).toBe("Tier!");
      expect((await api("GET", "/api/v1/settings/fields")).body.data).toEqual([]);

      await page.fill("#field-form [name=name]", "tier");
      await page.fill("#field-form [name=values]", "Key\nStandard\n");
      await page.click("#add-field");
      expect(page.url()).toBe(`${crm.url}/settings/fields`);
      expect(await page.textContent('#fields tr[data-field="cf_tier"]')).toContain("Key, Standard");
      const made = await api("POST", "/api/v1/accounts", { name: "Tiered", cf_tier: "Key" });
      expect(made.status).toBe(201);
      expect((await api("POST", "/api/v1/accounts", { name: "Mistiered", cf_tier: "Gold" })).status).toBe(422);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "sharing: change the default access, add an owner-based and a criteria-based rule, change one, delete one — and reps see what the rules say",
    async () => {
      const page = await signedIn(await browser(), "ada");
      await page.goto(`${crm.url}/settings/sharing`);
      await page.selectOption("#defaults-form [name='default.leads']", "private");
      await page.click("#save-defaults");
      expect((await api("GET", "/api/v1/settings/sharing/defaults")).body.leads).toBe("private");
      expect(await page.inputValue("#defaults-form [name='default.leads']")).toBe("private");

      // A criteria rule on a field leads do not have, without a role to share with: refused, beside each input.
      await page.selectOption("#sharing-rule-form [name=object]", "leads");
      await page.fill("#sharing-rule-form [name=name]", "Hot leads");
      await page.check("#sharing-rule-form [name=basis][value=criteria]");
      await page.fill("#sharing-rule-form [name='criteria.0.field']", "temperature");
      await page.fill("#sharing-rule-form [name='criteria.0.value']", "Hot");
      await page.click("#save-sharing-rule");
      expect(await refusal(page, "#sharing-rule-form")).toEqual([
        "share_with.role: must name an existing role",
        "criteria[0].field: must name a field of the object",
      ]);
      expect(await beside(page, "#sharing-rule-form", "criteria.0")).toEqual(["field: must name a field of the object"]);
      expect((await api("GET", "/api/v1/settings/sharing/rules")).body.data).toEqual([]);

      await page.fill("#sharing-rule-form [name='criteria.0.field']", "rating");
      await page.selectOption("#sharing-rule-form [name='share_with.role']", "sales-rep");
      await page.click("#save-sharing-rule");
      await page.fill("#sharing-rule-form [name=name]", "Managers' leads");
      await page.selectOption("#sharing-rule-form [name='share_with.role']", "sales-rep");
      await page.selectOption("#sharing-rule-form [name='owned_by.role']", "sales-manager");
      await page.click("#save-sharing-rule");
      const rules = (await api("GET", "/api/v1/settings/sharing/rules")).body.data;
      expect(rules.map((r: { name: string }) => r.name)).toEqual(["Hot leads", "Managers' leads"]);
      expect(rules[0]).toMatchObject({ access: "read", share_with: { role: "sales-rep" }, criteria: [{ field: "rating", op: "eq", value: "Hot" }] });
      expect(rules[1]).toMatchObject({ owned_by: { role: "sales-manager", include_subordinates: false } });

      const hot = await api("POST", "/api/v1/leads", { last_name: "Hotly", company: "H", rating: "Hot" });
      const readOnly = await crm.call(token.rex, "PATCH", `/api/v1/leads/${hot.body.id}`, { rating: "Warm" });
      expect(readOnly.status).toBe(403);

      // Change "Hot leads" to read_write: the form comes filled; saving replaces the rule.
      await page.click(`#sharing-rules tr[data-name="Hot leads"] a.edit`);
      expect(await page.inputValue("#sharing-rule-form [name='criteria.0.value']")).toBe("Hot");
      await page.selectOption("#sharing-rule-form [name=access]", "read_write");
      await page.click("#save-sharing-rule");
      expect((await crm.call(token.rex, "PATCH", `/api/v1/leads/${hot.body.id}`, { description: "seen" })).status).toBe(200);
      expect((await api("GET", "/api/v1/settings/sharing/rules")).body.data.map((r: { name: string; access: string }) => [r.name, r.access])).toEqual([
        ["Managers' leads", "read"],
        ["Hot leads", "read_write"],
      ]);

      for (const name of ["Hot leads", "Managers' leads"]) await page.click(`#sharing-rules tr[data-name="${name}"] button.delete`);
      expect(await page.locator("#sharing-rules tr[data-rule-id]").count()).toBe(0);
      expect((await crm.call(token.rex, "GET", `/api/v1/leads/${hot.body.id}`)).status).toBe(404);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "validation rules: written with rows, they refuse records through the API; a refused rule shows its 422 details beside the row; change and delete",
    async () => {
      const page = await signedIn(await browser(), "ada");
      await page.goto(`${crm.url}/settings/validation-rules`);
      await page.fill("#rule-form [name=name]", "WonNeedsAmount");
      await page.selectOption("#rule-form [name=object]", "opportunities");
      await page.fill("#rule-form [name='condition.0.field']", "stage");
      await page.fill("#rule-form [name='condition.0.value']", "Closed Won");
      await page.fill("#rule-form [name='condition.1.field']", "amount");
      await page.selectOption("#rule-form [name='condition.1.op']", "gte");
      await page.fill("#rule-form [name='condition.1.value']", "100000");
      await page.fill("#rule-form [name=error_field]", "amount");
      await page.click("#save-rule");
      expect(await refusal(page, "#rule-form")).toEqual(["message: must be a non-empty string"]);
      expect(await beside(page, "#rule-form", "message")).toEqual(["must be a non-empty string"]);
      await page.fill("#rule-form [name=message]", "Too much");
      await page.click("#save-rule");
      // The value typed into a number field's row is sent as a number.
      expect((await api("GET", "/api/v1/settings/validation-rules")).body.data.map((d: { condition: unknown }) => d.condition)).toEqual([
        {
          all: [
            { field: "stage", op: "eq", value: "Closed Won" },
            { field: "amount", op: "gte", value: 100000 },
          ],
        },
      ]);

      // A refused change (a misspelt field) leaves the old rule as it was.
      await page.click('#rules tr[data-name="WonNeedsAmount"] a.edit');
      expect(await page.inputValue("#rule-form [name='condition.1.value']")).toBe("100000");
      await page.fill("#rule-form [name='condition.1.field']", "amout");
      await page.fill("#rule-form [name='condition.1.value']", "200000");
      await page.click("#save-rule");
      expect(await refusal(page, "#rule-form")).toEqual(["condition.all[1].field: opportunities has no field amout"]);
      expect(await beside(page, "#rule-form", "condition.1")).toEqual(["field: opportunities has no field amout"]);
      const kept = (await api("GET", "/api/v1/settings/validation-rules")).body.data;
      expect(kept.map((d: { condition: { all: { value: unknown }[] } }) => d.condition.all[1]!.value)).toEqual([100000]);

      await page.fill("#rule-form [name='condition.1.field']", "amount");
      await page.click("#save-rule");
      const refused = await api("POST", "/api/v1/opportunities", { name: "Big", stage: "Closed Won", close_date: "2026-01-31", amount: 250000 });
      expect(refused.body.details).toEqual([{ field: "amount", message: "Too much" }]);
      expect((await api("POST", "/api/v1/opportunities", { name: "Mid", stage: "Closed Won", close_date: "2026-01-31", amount: 150000 })).status).toBe(201);

      await page.click('#rules tr[data-name="WonNeedsAmount"] button.delete');
      expect(await page.locator("#rules tr[data-rule-id]").count()).toBe(0);
      expect((await api("POST", "/api/v1/opportunities", { name: "Big", stage: "Closed Won", close_date: "2026-01-31", amount: 250000 })).status).toBe(201);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "workflow rules: field updates as inputs; one that could never be stored is refused beside its row; a kept rule updates leads; pause it by changing it",
    async () => {
      const page = await signedIn(await browser(), "ada");
      await page.goto(`${crm.url}/settings/workflow-rules`);
      await page.fill("#rule-form [name=name]", "HotLeadStatus");
      await page.selectOption("#rule-form [name=object]", "leads");
      await page.selectOption("#rule-form [name=trigger]", "created_and_edited_to_meet");
      await page.fill("#rule-form [name='condition.0.field']", "rating");
      await page.fill("#rule-form [name='condition.0.value']", "Hot");
      await page.fill("#rule-form [name='updates.0.field']", "source");
      await page.selectOption("#rule-form [name='updates.0.kind']", "template");
      await page.fill("#rule-form [name='updates.0.value']", "hot: {company}");
      await page.fill("#rule-form [name='updates.1.field']", "status");
      await page.fill("#rule-form [name='updates.1.value']", "Working - Contacted");
      await page.click("#save-rule");
      expect(await refusal(page, "#rule-form")).toEqual([
        "updates[0].value: a template makes text, and source is a picklist field: write a literal value or a ref",
      ]);
      expect(await beside(page, "#rule-form", "updates.0")).toEqual([
        "value: a template makes text, and source is a picklist field: write a literal value or a ref",
      ]);
      expect((await api("GET", "/api/v1/settings/workflow-rules")).body.data).toEqual([]);

      await page.selectOption("#rule-form [name='updates.0.kind']", "value");
      await page.fill("#rule-form [name='updates.0.value']", "Web");
      await page.click("#save-rule");
      expect(await page.textContent('#rules tr[data-name="HotLeadStatus"] .active')).toBe("yes");
      const lead = await api("POST", "/api/v1/leads", { last_name: "Hot", company: "Co", rating: "Hot" });
      expect(lead.body).toMatchObject({ source: "Web", status: "Working - Contacted" });

      await page.click('#rules tr[data-name="HotLeadStatus"] a.edit');
      expect(await page.inputValue("#rule-form [name='updates.1.value']")).toBe("Working - Contacted");
      await page.uncheck("#rule-form [name=active]");
      await page.click("#save-rule");
      expect(await page.textContent('#rules tr[data-name="HotLeadStatus"] .active')).toBe("no");
      expect((await api("POST", "/api/v1/leads", { last_name: "Hot", company: "Co", rating: "Hot" })).body.status).toBe("Open - Not Contacted");

      await page.click('#rules tr[data-name="HotLeadStatus"] button.delete');
      expect((await api("GET", "/api/v1/settings/workflow-rules")).body.data).toEqual([]);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "flows: steps as JSON; JSON that does not parse is refused before anything is sent, a refused step shows the API's details; a kept flow opens cases",
    async () => {
      const page = await signedIn(await browser(), "ada");
      await page.goto(`${crm.url}/settings/flows`);
      await page.fill("#rule-form [name=name]", "ReviewBigAccounts");
      await page.selectOption("#rule-form [name=object]", "accounts");
      await page.fill("#rule-form [name='entry.0.field']", "annual_revenue");
      await page.selectOption("#rule-form [name='entry.0.op']", "gte");
      await page.fill("#rule-form [name='entry.0.value']", "1000000");
      await page.fill("#rule-form [name=steps]", '[{"type": "create_record", "object": "cases", "values": {"subject": "Review"');
      await page.click("#save-rule");
      const [notJson] = await refusal(page, "#rule-form");
      expect(notJson).toStartWith("steps: not JSON:");
      expect((await api("GET", "/api/v1/settings/flows")).body.data).toEqual([]);

      await page.fill(
        "#rule-form [name=steps]",
        '[{"type": "create_record", "object": "cases", "values": {"subject": {"template": "Review {name}"}, "account_id": {"ref": "owner_id"}}}]',
      );
      await page.click("#save-rule");
      expect(await refusal(page, "#rule-form")).toEqual([
        "steps[0].values.account_id: account_id is a reference to accounts and cannot hold owner_id, a reference to users",
      ]);
      expect(await beside(page, "#rule-form", "steps")).toHaveLength(1);
      expect(await page.inputValue("#rule-form [name='entry.0.value']")).toBe("1000000");

      await page.fill(
        "#rule-form [name=steps]",
        '[{"type": "create_record", "object": "cases", "values": {"subject": {"template": "Review {name}"}, "account_id": {"ref": "id"}}}]',
      );
      await page.click("#save-rule");
      const [flow] = (await api("GET", "/api/v1/settings/flows")).body.data;
      expect(flow).toMatchObject({
        name: "ReviewBigAccounts",
        timing: "after_save",
        trigger: "created",
        entry: { all: [{ field: "annual_revenue", op: "gte", value: 1000000 }] },
      });
      const big = await api("POST", "/api/v1/accounts", { name: "Bigco", annual_revenue: 2000000 });
      await api("POST", "/api/v1/accounts", { name: "Smallco", annual_revenue: 20 });
      const cases = (await api("GET", "/api/v1/cases?q=review")).body.data;
      expect(cases.map((c: { subject: string; account_id: number }) => [c.subject, c.account_id])).toEqual([["Review Bigco", big.body.id]]);

      await page.click('#rules tr[data-name="ReviewBigAccounts"] button.delete');
      expect(await page.locator("#rules tr[data-rule-id]").count()).toBe(0);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "Change, then save unchanged: every kind comes back as the same definition (rows, JSON, refs, templates, criteria)",
    async () => {
      const definitions: [string, Record<string, unknown>][] = [
        [
          "validation-rules",
          {
            name: "Nested",
            object: "opportunities",
            active: true,
            message: "m",
            error_field: "amount",
            condition: {
              all: [
                { field: "stage", op: "eq", value: "Closed Won" },
                {
                  any: [
                    { field: "amount", op: "blank" },
                    { field: "amount", op: "lte", value: 0 },
                  ],
                },
              ],
            },
          },
        ],
        [
          "workflow-rules",
          {
            name: "Rows",
            object: "leads",
            active: false,
            trigger: "created_and_edited",
            condition: {
              any: [
                { field: "rating", op: "in", value: ["Hot", "Warm"] },
                { field: "email", op: "changed" },
              ],
            },
            updates: [
              { field: "description", value: { template: "from {company}" } },
              { field: "first_name", value: { ref: "last_name" } },
              { field: "source", value: null },
            ],
          },
        ],
        [
          "flows",
          {
            name: "Flowing",
            object: "accounts",
            active: true,
            timing: "before_save",
            trigger: "updated",
            entry_mode: "updated_to_meet",
            entry: { all: [{ field: "employees", op: "gt", value: 10 }] },
            steps: [{ type: "set_field", field: "description", value: { template: "{name} grew" } }],
          },
        ],
      ];
      const page = await signedIn(await browser(), "ada");
      for (const [path, definition] of definitions) {
        const made = await api("POST", `/api/v1/settings/${path}`, definition);
        expect(made.status, JSON.stringify(made.body)).toBe(201);
        await page.goto(`${crm.url}/settings/${path}?edit=${made.body.id}`);
        await page.click("#save-rule");
        const [after] = (await api("GET", `/api/v1/settings/${path}`)).body.data;
        const { id, created_at, ...stored } = after;
        expect(id).not.toBe(made.body.id);
        expect(created_at).toBeString();
        expect(stored).toEqual(definition);
        expect((await api("DELETE", `/api/v1/settings/${path}/${id}`)).status).toBe(204);
      }

      const rule = { object: "leads", name: "Criteria", access: "read", share_with: { role: "sales-rep", include_subordinates: true } };
      const criteria = [
        { field: "rating", op: "in", value: ["Hot", "Warm"] },
        { field: "email", op: "contains", value: "@example.com" },
      ];
      const shared = await api("POST", "/api/v1/settings/sharing/rules", { ...rule, criteria });
      await page.goto(`${crm.url}/settings/sharing?edit=${shared.body.id}`);
      await page.click("#save-sharing-rule");
      const [after] = (await api("GET", "/api/v1/settings/sharing/rules")).body.data;
      expect(after).toMatchObject({ ...rule, criteria });
      expect((await api("DELETE", `/api/v1/settings/sharing/rules/${after.id}`)).status).toBe(204);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "a definition the form cannot give back exactly is not put in it: the page says to change it through the API",
    async () => {
      const spaced = await api("POST", "/api/v1/settings/workflow-rules", {
        name: "Spaced",
        object: "leads",
        trigger: "created",
        condition: { all: [] },
        updates: [{ field: "first_name", value: "  padded  " }],
      });
      const listed = await api("POST", "/api/v1/settings/sharing/rules", {
        object: "leads",
        name: "Comma",
        access: "read",
        share_with: { role: "sales-rep" },
        criteria: [{ field: "company", op: "in", value: ["Smith, Jones & Co"] }],
      });
      const page = await signedIn(await browser(), "ada");
      await page.goto(`${crm.url}/settings/workflow-rules?edit=${spaced.body.id}`);
      expect(await page.textContent("#notice")).toContain("change it through the API");
      expect(await page.inputValue("#rule-form [name=name]")).toBe("");
      await page.goto(`${crm.url}/settings/sharing?edit=${listed.body.id}`);
      expect(await page.textContent("#notice")).toContain("change it through the API");
      expect(await page.inputValue("#sharing-rule-form [name=name]")).toBe("");
      expect((await api("DELETE", `/api/v1/settings/workflow-rules/${spaced.body.id}`)).status).toBe(204);
      expect((await api("DELETE", `/api/v1/settings/sharing/rules/${listed.body.id}`)).status).toBe(204);
      await page.context().close();
    },
    browserTestMs,
  );

  test(
    "a rep signed in sees no admin links, and each admin page answers 403",
    async () => {
      const page = await signedIn(await browser(), "rex");
      expect(await page.locator("#nav a").allTextContents()).toEqual(["API tokens"]);
      for (const path of ["fields", "sharing", "validation-rules", "workflow-rules", "flows"]) {
        const response = await page.goto(`${crm.url}/settings/${path}`);
        expect(response!.status()).toBe(403);
        expect(await page.textContent("#error")).toBe("Only an admin may manage these settings.");
      }
      await page.context().close();
    },
    browserTestMs,
  );
});

describe("admin posts a browser would not make", () => {
  async function sessionCookie(username: "ada" | "rex"): Promise<string> {
    const response = await fetch(`${crm.url}/settings/sign-in`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username, password: password[username] }),
    });
    return /crm_session=([^;]+)/.exec(response.headers.get("set-cookie")!)![1]!;
  }

  function postForm(cookie: string | null, path: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return fetch(`${crm.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { ...(cookie === null ? {} : { cookie: `crm_session=${cookie}` }), "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(form),
    });
  }

  const validRule = {
    name: "Planted",
    object: "leads",
    active: "on",
    "condition.0.field": "rating",
    "condition.0.op": "eq",
    "condition.0.value": "Hot",
    message: "m",
  };

  test("a rep's posts are 403, no session's are 401, another site's are 403 — and none changes anything", async () => {
    const rex = await sessionCookie("rex");
    const ada = await sessionCookie("ada");
    expect((await postForm(rex, "/settings/validation-rules", validRule)).status).toBe(403);
    expect((await postForm(rex, "/settings/sharing/defaults", { "default.leads": "private" })).status).toBe(403);
    expect((await postForm(rex, "/settings/fields", { object: "leads", name: "planted", type: "text" })).status).toBe(403);
    expect((await postForm(null, "/settings/validation-rules", validRule)).status).toBe(401);
    expect((await postForm(ada, "/settings/validation-rules", validRule, { origin: "http://evil.example" })).status).toBe(403);
    expect((await api("GET", "/api/v1/settings/validation-rules")).body.data).toEqual([]);
    expect((await api("GET", "/api/v1/settings/fields")).body.data.map((f: { name: string }) => f.name)).not.toContain("planted");
    // The same post from the page's own origin is made: the refusals above were about who sent it.
    const made = await postForm(ada, "/settings/validation-rules", validRule, { origin: crm.url });
    expect(made.status).toBe(303);
    expect(made.headers.get("location")).toBe("/settings/validation-rules");
    const [rule] = (await api("GET", "/api/v1/settings/validation-rules")).body.data;
    expect((await api("DELETE", `/api/v1/settings/validation-rules/${rule.id}`)).status).toBe(204);
  });

  test("changing or deleting what is not there is 404 and changes nothing; a name taken is 409 with the API's message", async () => {
    const ada = await sessionCookie("ada");
    expect((await postForm(ada, "/settings/workflow-rules/999/delete", {})).status).toBe(404);
    expect((await postForm(ada, "/settings/flows/abc/replace", {})).status).toBe(404);
    expect((await postForm(ada, "/settings/validation-rules/999/replace", validRule)).status).toBe(404);
    expect((await api("GET", "/api/v1/settings/validation-rules")).body.data).toEqual([]);
    expect((await postForm(ada, "/settings/validation-rules", validRule)).status).toBe(303);
    const taken = await postForm(ada, "/settings/validation-rules", validRule);
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("leads already has a validation rule named &quot;Planted&quot;");
    const [rule] = (await api("GET", "/api/v1/settings/validation-rules")).body.data;
    expect((await api("DELETE", `/api/v1/settings/validation-rules/${rule.id}`)).status).toBe(204);
  });

  test("rows and JSON for one condition at once are refused before anything is sent", async () => {
    const ada = await sessionCookie("ada");
    const both = await postForm(ada, "/settings/validation-rules", { ...validRule, "condition.json": '{"all": []}' });
    expect(both.status).toBe(422);
    expect(await both.text()).toContain("give the condition as rows or as JSON, not both");
    expect((await api("GET", "/api/v1/settings/validation-rules")).body.data).toEqual([]);
  });
});
