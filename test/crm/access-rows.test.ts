// Materialized read access (src/crm/sharing/access-rows.ts) stays in step with what was written
// outside the API: records loaded straight into the database appear in lists once an operator
// runs `svc crm sharing recalculate`, and a database from before the access tables existed gets
// them, filled, when the server that introduced them first opens it.
import { beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { sqliteBackend, type World, worldForSuite } from "./support/crm.ts";
import { startCrm } from "./support/process.ts";

const backend = sqliteBackend();

describe("materialized read access on SQLite", () => {
  let w: World;
  worldForSuite(backend, (made) => {
    w = made;
  });
  beforeAll(async () => {
    expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
  });

  const path = () => w.crm.db.replace(/^sqlite:/, "");
  const totals = async () =>
    Promise.all([w.alice, w.manager, w.bob].map(async (t) => (await w.crm.call(t, "GET", "/api/v1/leads?q=imported")).body.total as number));

  /** Leads owned by alice, inserted as a bulk import would: straight into the table. */
  function importLeads(count: number): void {
    const db = new Database(path());
    const now = new Date().toISOString();
    const insert = db.query(
      "INSERT INTO leads (owner_id, created_at, updated_at, search_text, last_name, company, status) VALUES (?1, ?2, ?2, ?3, ?4, 'Imported', 'Open - Not Contacted')",
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(w.ids.alice, now, `imported${i} imported`, `Imported${i}`);
    })();
    db.close();
  }

  test("records loaded straight into the database are listed after `svc crm sharing recalculate`, to exactly those who can read them", async () => {
    importLeads(5);
    // The rows of the import are not there yet: alice's list does not show her imported leads.
    expect(await totals()).toEqual([0, 0, 0]);
    const r = await w.crm.tool(["sharing", "recalculate"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/sharing recalculated in \d+\.\d s/);
    // alice owns them, the manager is above her, bob (a peer) sees none.
    expect(await totals()).toEqual([5, 5, 0]);
    // A single read agrees with the list.
    const first = (await w.crm.call(w.alice, "GET", "/api/v1/leads?q=imported")).body.data[0];
    expect((await w.crm.call(w.bob, "GET", `/api/v1/leads/${first.id}`)).status).toBe(404);
    expect((await w.crm.call(w.manager, "GET", `/api/v1/leads/${first.id}`)).status).toBe(200);
  });

  test("a database from before the access tables gets them, filled, when it is first opened by this version", async () => {
    await w.crm.stop();
    const db = new Database(path());
    for (const object of ["accounts", "contacts", "leads", "opportunities", "cases"]) db.exec(`DROP TABLE ${object}_access`);
    db.exec("DELETE FROM schema_migrations WHERE version = 3");
    db.close();
    w.crm = await startCrm(w.crm.db);
    expect(await totals()).toEqual([5, 5, 0]);
  });
});
