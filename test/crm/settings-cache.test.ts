// Settings a crm process keeps between requests (src/crm/store/settings-cache.ts) must never
// outlive a change, whoever makes it: two servers on one PostgreSQL database, and a server beside
// the CLI tools on SQLite. Each change is made after the other process has used (and so kept) what
// it changes, and takes effect there on the very next request: a validation rule, a custom field,
// a sharing rule, and a revoked token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Backend, postgresBackend, sqliteBackend, type World, worldForSuite, worldHookMs } from "./support/crm.ts";
import { type CrmProcess, must, runCrmTool, startCrm } from "./support/process.ts";

function settingsSuite(backend: Backend, other: "server" | "tools"): void {
  describe(`kept settings on ${backend.name}, changed by ${other === "server" ? "another server" : "the CLI tools"}`, () => {
    let w: World;
    let second: CrmProcess | null = null;
    worldForSuite(backend, (made) => {
      w = made;
    });
    beforeAll(async () => {
      if (other === "server") second = await startCrm(w.crm.db);
      expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
    }, worldHookMs);
    afterAll(() => second?.stop());
    /** The process that makes changes through the API: the second server, or the first when the tools are the other party. */
    const changer = () => second ?? w.crm;

    test("a validation rule added and removed elsewhere applies to the next create", async () => {
      const lead = { last_name: "Cached", company: "Keep Co" };
      expect((await w.crm.call(w.alice, "POST", "/api/v1/leads", lead)).status).toBe(201);
      const rule = await changer().call(w.admin, "POST", "/api/v1/settings/validation-rules", {
        name: "needs_email",
        object: "leads",
        condition: { field: "email", op: "blank" },
        message: "an email is needed",
        error_field: "email",
      });
      expect(rule.status).toBe(201);
      const refused = await w.crm.call(w.alice, "POST", "/api/v1/leads", lead);
      expect([refused.status, refused.body.details]).toEqual([422, [{ field: "email", message: "an email is needed" }]]);
      expect((await changer().call(w.admin, "DELETE", `/api/v1/settings/validation-rules/${rule.body.id}`)).status).toBe(204);
      expect((await w.crm.call(w.alice, "POST", "/api/v1/leads", lead)).status).toBe(201);
    });

    test("a custom field added elsewhere is known to the next write", async () => {
      const before = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: "Before", company: "Tiers", cf_tier: "gold" });
      expect([before.status, before.body.details]).toEqual([422, [{ field: "cf_tier", message: "unknown field" }]]);
      const field = await changer().call(w.admin, "POST", "/api/v1/settings/fields", { object: "leads", name: "tier", type: "text" });
      expect([field.status, field.body.api_name]).toEqual([201, "cf_tier"]);
      const made = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: "After", company: "Tiers", cf_tier: "gold" });
      expect([made.status, made.body.cf_tier]).toEqual([201, "gold"]);
    });

    test("a sharing rule added elsewhere opens records on the next read and the next save", async () => {
      const hot = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: "Shared", company: "Hotline", rating: "Hot" });
      expect((await w.crm.call(w.bob, "GET", `/api/v1/leads/${hot.body.id}`)).status).toBe(404);
      const rule = await changer().call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        object: "leads",
        name: "hot to reps",
        access: "read",
        criteria: [{ field: "rating", op: "eq", value: "Hot" }],
        share_with: { role: "sales-rep" },
      });
      expect(rule.status).toBe(201);
      expect((await w.crm.call(w.bob, "GET", `/api/v1/leads/${hot.body.id}`)).status).toBe(200);
      // A save on this server writes the new lead's access rows with the rule it now knows.
      const later = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: "Shared too", company: "Hotline", rating: "Hot" });
      const listed = (await w.crm.call(w.bob, "GET", "/api/v1/leads?q=hotline")).body.data.map((r: { id: number }) => r.id);
      expect(listed).toEqual([later.body.id, hot.body.id]);
      expect((await changer().call(w.admin, "DELETE", `/api/v1/settings/sharing/rules/${rule.body.id}`)).status).toBe(204);
      expect((await w.crm.call(w.bob, "GET", `/api/v1/leads/${later.body.id}`)).status).toBe(404);
    });

    test("a token revoked elsewhere is refused on its next request", async () => {
      const token = (await must(runCrmTool(w.crm.db, ["token", "create", "--user", "bob", "--name", "short-lived"]))).trim();
      expect((await w.crm.call(token, "GET", "/api/v1/leads")).status).toBe(200);
      const listed = JSON.parse(await must(runCrmTool(w.crm.db, ["token", "list", "--json"]))) as { id: number; name: string }[];
      const id = listed.find((t) => t.name === "short-lived")!.id;
      if (other === "tools") await must(runCrmTool(w.crm.db, ["token", "revoke", "--id", String(id)]));
      else expect((await changer().call(token, "DELETE", `/api/v1/settings/tokens/${id}`)).status).toBe(204);
      expect((await w.crm.call(token, "GET", "/api/v1/leads")).status).toBe(401);
    });
  });
}

settingsSuite(postgresBackend(), "server");
settingsSuite(sqliteBackend(), "tools");
