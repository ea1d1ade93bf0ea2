// A list's `total` counts matches up to --list-count-max and then says `total_exact: false`, so
// no list walks every row a user can see just to count them. At the cap the count is exact; one
// past it, it stops at the cap, while the page itself is unaffected. The same for an admin (the
// table itself), for a rep under a private default (their materialized access rows) and for a
// search, on SQLite and PostgreSQL.
import { beforeAll, describe, expect, test } from "bun:test";
import { type Backend, postgresBackend, sqliteBackend, type World, worldForSuite } from "./support/crm.ts";
import { runCrmTool } from "./support/process.ts";

const countMax = 3;

function suite(backend: Backend): void {
  describe(`list counts on ${backend.name}`, () => {
    let w: World;
    worldForSuite(
      backend,
      (made) => {
        w = made;
      },
      ["--list-count-max", String(countMax)],
    );
    beforeAll(async () => {
      const defaults = await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" });
      expect(defaults.status).toBe(200);
    });

    const list = async (token: string, query = "") => (await w.crm.call(token, "GET", `/api/v1/leads${query}`)).body;
    const create = async (token: string, company: string) => {
      const r = await w.crm.call(token, "POST", "/api/v1/leads", { last_name: "Count", company });
      expect(r.status).toBe(201);
    };

    test("at the cap the total is exact; one past it the total stops at the cap and total_exact is false; the page is whole", async () => {
      for (let i = 0; i < countMax; i++) await create(w.alice, `Acme ${i}`);
      for (const token of [w.alice, w.admin]) {
        const atCap = await list(token);
        expect([atCap.total, atCap.total_exact, atCap.data.length]).toEqual([countMax, true, countMax]);
      }
      await create(w.alice, "Acme past");
      for (const token of [w.alice, w.admin]) {
        const past = await list(token);
        expect([past.total, past.total_exact, past.data.length]).toEqual([countMax, false, countMax + 1]);
        const searched = await list(token, "?q=acme");
        expect([searched.total, searched.total_exact, searched.data.length]).toEqual([countMax, false, countMax + 1]);
      }
      // Bob sees none of alice's leads under the private default: an exact zero.
      expect(await list(w.bob)).toEqual({ data: [], page: 1, per: 20, total: 0, total_exact: true });
      // The manager sees them through the hierarchy, from materialized rows as well.
      const managed = await list(w.manager, "?q=acme");
      expect([managed.total, managed.total_exact, managed.data.length]).toEqual([countMax, false, countMax + 1]);
    });

    test("--list-count-max below 1 or past 1,000,000 is refused before the server starts", async () => {
      for (const value of ["0", "1000001"]) {
        const r = await runCrmTool(w.crm.db, ["--list-count-max", value, "--bind", "127.0.0.1:0"]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/--list-count-max/);
      }
    });
  });
}

suite(sqliteBackend());
suite(postgresBackend());
