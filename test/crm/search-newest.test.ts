// A search looks for its page among the user's --search-newest-rows newest records first
// (docs/crm.md, "List"): the page must be exactly the page of all the user's matches, and a total
// that is not exact a true lower bound that covers the page. Checked against a model built from
// each user's plain list (exact at this size) filtered as the search's terms say, on SQLite and
// PostgreSQL.
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type Backend, postgresBackend, runCrmTool, sqliteBackend, type World, worldForSuite } from "./support/crm.ts";

const newestRows = 6;
const lastNames = ["Smith", "Smithers", "Jones", "Ng", "Goldsmith"];
const companies = ["Acme Corp", "Globex Corp", "Initech Corp"];

interface Lead {
  id: number;
  last_name: string;
  company: string;
  created_at: string;
  updated_at: string;
}

interface Listed {
  data: Lead[];
  total: number;
  total_exact: boolean;
}

/** What a list of `leads` (the user's, newest first) asked for `terms` and `since` must hold: every match, in order. */
const modelMatches = (leads: readonly Lead[], terms: readonly string[], since: string | undefined) =>
  leads.filter((l) => {
    const text = `${l.last_name} ${l.company}`.toLowerCase();
    return terms.every((t) => text.includes(t)) && (since === undefined || l.updated_at >= since);
  });

function suite(backend: Backend): void {
  describe(`searches from the newest rows on ${backend.name}`, () => {
    let w: World;
    worldForSuite(
      backend,
      (made) => {
        w = made;
      },
      ["--search-newest-rows", String(newestRows)],
    );
    const created: string[] = [];
    beforeAll(async () => {
      expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
      // Alice's and bob's leads interleaved, so each one's newest rows are not everyone's. Bob has
      // fewer than --search-newest-rows: his newest rows are all he can see.
      for (let i = 0; i < 24; i++) {
        const token = i % 5 === 4 ? w.bob : w.alice;
        const body = { last_name: lastNames[(i * 7) % lastNames.length], company: companies[i % companies.length] };
        const r = await w.crm.call(token, "POST", "/api/v1/leads", body);
        expect(r.status).toBe(201);
        created.push(r.body.updated_at);
      }
    }, 60_000);

    const list = async (token: string, query: string): Promise<Listed> => {
      const r = await w.crm.call(token, "GET", `/api/v1/leads?${query}`);
      expect(r.status).toBe(200);
      return r.body;
    };

    test("a page is the page of all the user's matches; a total that is not exact covers the page and never passes the true count", async () => {
      const users = [w.alice, w.bob, w.manager, w.admin];
      // Each user's leads from the plain list: exact, newest first, all on one page at this size.
      const visible = await Promise.all(users.map(async (token) => (await list(token, "per=100")).data));
      expect(visible.map((v) => v.length)).toEqual([20, 4, 24, 24]);
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: users.length - 1 }),
          fc.constantFrom("smith", "smi", "ng", "acme", "corp", "o", "jones smith", "zz", ""),
          fc.option(fc.integer({ min: 0, max: created.length - 1 }), { nil: undefined }),
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 4 }),
          async (who, q, sinceAt, page, per) => {
            const since = sinceAt === undefined ? undefined : created[sinceAt];
            const params = new URLSearchParams({ page: String(page), per: String(per) });
            if (q !== "") params.set("q", q);
            if (since !== undefined) params.set("updated_since", since);
            const got = await list(users[who]!, params.toString());
            const matches = modelMatches(visible[who]!, q.split(" ").filter(Boolean), since);
            const skipped = (page - 1) * per;
            expect(got.data.map((r) => r.id)).toEqual(matches.slice(skipped, skipped + per).map((r) => r.id));
            if (got.total_exact) expect(got.total).toBe(matches.length);
            else {
              expect(got.total).toBeLessThanOrEqual(matches.length);
              expect(got.total).toBeGreaterThan(skipped + got.data.length - 1);
            }
          },
        ),
        { numRuns: 100 },
      );
    });

    test("a common term's page comes from the newest rows: its total says at least the page and one more, and is not exact", async () => {
      // "corp" is in every company: alice's 20 leads all match.
      const alice = await list(w.alice, "q=corp&per=2&page=2");
      expect([alice.total, alice.total_exact, alice.data.length]).toEqual([5, false, 2]);
      // Bob sees fewer records than --search-newest-rows: his last page there is counted exactly.
      const bob = await list(w.bob, "q=corp&per=3&page=2");
      expect([bob.total, bob.total_exact, bob.data.length]).toEqual([4, true, 1]);
      // An admin's newest rows are the table's.
      const admin = await list(w.admin, "q=smith&per=1");
      expect([admin.total, admin.total_exact, admin.data.length]).toEqual([2, false, 1]);
    });

    test("a page past the newest rows, or one they do not fill, is chosen from all the matches and counted exactly", async () => {
      const deep = await list(w.alice, "q=corp&per=5&page=3");
      expect([deep.total, deep.total_exact, deep.data.length]).toEqual([20, true, 5]);
      // Alice's five Joneses are not all among her six newest leads.
      const few = await list(w.alice, "q=jones");
      expect([few.total, few.total_exact, few.data.length]).toEqual([5, true, 5]);
    });

    test("--search-newest-rows below 1 or past 1,000,000 is refused before the server starts", async () => {
      for (const value of ["0", "1000001"]) {
        const r = await runCrmTool(w.crm.db, ["--search-newest-rows", value, "--bind", "127.0.0.1:0"]);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toContain("--search-newest-rows");
      }
    });
  });
}

suite(sqliteBackend());
suite(postgresBackend());
