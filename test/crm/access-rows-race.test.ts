// Materialized read access under concurrency on PostgreSQL, where a request's transactions run
// side by side: creates racing a sharing rule that is added, removed and added again must end
// with every user's list equal to what their single reads allow, and concurrent changes of a
// default all succeed. (SQLite runs writes one at a time, so these races exist only here.)
import { beforeAll, describe, expect, test } from "bun:test";
import { postgresBackend, type World, worldForSuite, worldHookMs } from "./support/crm.ts";

const backend = postgresBackend();
const creates = 60;
/** Creates in flight at once: more than the server's pool, so transactions overlap the rule's. */
const concurrency = 12;

describe("materialized read access under concurrent writes (PostgreSQL)", () => {
  let w: World;
  worldForSuite(backend, (made) => {
    w = made;
  });
  beforeAll(async () => {
    expect((await w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" })).status).toBe(200);
  });

  test(
    "creates racing a sharing rule's changes leave each list equal to the single reads",
    async () => {
      const rule = {
        object: "leads",
        name: "hot to reps",
        access: "read",
        criteria: [{ field: "rating", op: "eq", value: "Hot" }],
        share_with: { role: "sales-rep" },
      };
      let next = 0;
      const ids: number[] = [];
      const worker = async () => {
        while (next < creates) {
          next += 1;
          const r = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: `Race${next}`, company: "Racing", rating: "Hot" });
          expect(r.status).toBe(201);
          ids.push(r.body.id);
        }
      };
      const flips = async () => {
        for (let i = 0; i < 3; i++) {
          const added = await w.crm.call(w.admin, "POST", "/api/v1/settings/sharing/rules", rule);
          expect(added.status).toBe(201);
          if (i < 2) expect((await w.crm.call(w.admin, "DELETE", `/api/v1/settings/sharing/rules/${added.body.id}`)).status).toBe(204);
        }
      };
      await Promise.all([...Array.from({ length: concurrency }, worker), flips()]);
      // The rule is in place at the end: bob (alice's peer) reads every one of her Hot leads.
      const reads = await Promise.all(ids.map(async (id) => (await w.crm.call(w.bob, "GET", `/api/v1/leads/${id}`)).status));
      expect(reads.every((s) => s === 200)).toBe(true);
      const list = (await w.crm.call(w.bob, "GET", "/api/v1/leads?q=racing&per=100")).body;
      expect([list.total, list.data.length]).toEqual([creates, creates]);
    },
    worldHookMs,
  );

  test(
    "two admins setting an object's default at once both succeed, and one of theirs stands",
    async () => {
      const answers = await Promise.all(
        ["read", "private", "read", "private"].map((access) => w.crm.call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { contacts: access })),
      );
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      const settings = (await w.crm.call(w.admin, "GET", "/api/v1/settings/sharing")).body;
      expect(["read", "private"]).toContain(settings.defaults.contacts);
    },
    worldHookMs,
  );
});
