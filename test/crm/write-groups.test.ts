// SQLite commits the write transactions waiting together as one (store/sqlite.ts): each request
// must still succeed or fail alone. Requests sent at once — creates that succeed, creates refused
// before they write (422), and creates refused after their record was written, when an after-save
// flow's related record is invalid (422) — must each end as if it had run alone: the good ones
// stored with their related case, the refused ones leaving nothing. Then the same with custom
// fields, whose ALTER TABLE changes no row: two admins adding the same field at once make one
// column. And an acknowledged create survives kill -9.
import { beforeAll, describe, expect, test } from "bun:test";
import { sqliteBackend, startCrm, type World, welcomeCaseFlow, worldForSuite } from "./support/crm.ts";

describe("SQLite write transactions committed together", () => {
  let w: World;
  worldForSuite(sqliteBackend(), (made) => {
    w = made;
  });

  beforeAll(async () => {
    const field = await w.crm.call(w.admin, "POST", "/api/v1/settings/fields", { object: "cases", name: "region", type: "text", required: true });
    expect(field.status).toBe(201);
    const flow = await w.crm.call(w.admin, "POST", "/api/v1/settings/flows", welcomeCaseFlow);
    expect(flow.status, JSON.stringify(flow.body)).toBe(201);
  });

  const count = async (path: string) => (await w.crm.call(w.admin, "GET", path)).body.total as number;

  test("creates sent at once each succeed or fail alone: refused before writing, refused after writing, or stored with their flow's case", async () => {
    for (let round = 0; round < 5; round++) {
      const kinds = Array.from({ length: 24 }, (_, i) => (["good", "good", "bad-field", "bad-flow"] as const)[(i * 7 + round) % 4]);
      const bodies = kinds.map((kind, i) => {
        const name = `Group${round}x${i} ${kind === "good" ? "Kept" : "Dropped"}`;
        if (kind === "good") return { name, billing_country: "NZ" };
        // employees must be a number: refused before anything is written.
        if (kind === "bad-field") return { name, billing_country: "NZ", employees: "many" };
        // No billing_country: the account is written, then its case misses cf_region.
        return { name };
      });
      const replies = await Promise.all(bodies.map((body) => w.crm.call(w.alice, "POST", "/api/v1/accounts", body)));
      expect(replies.map((r) => r.status)).toEqual(kinds.map((k) => (k === "good" ? 201 : 422)));
      const good = kinds.filter((k) => k === "good").length;
      expect(await count(`/api/v1/accounts?q=group${round}x&per=100`)).toBe(good);
      expect(await count(`/api/v1/accounts?q=group${round}x%20dropped`)).toBe(0);
      expect(await count(`/api/v1/cases?q=welcome%20group${round}x&per=100`)).toBe(good);
      expect(await count(`/api/v1/cases?q=welcome%20group${round}x%20dropped`)).toBe(0);
      // Each good account is answered with its own stored record.
      for (const [i, r] of replies.entries()) if (kinds[i] === "good") expect(r.body.name).toBe(bodies[i]!.name);
    }
  });

  test("two admins adding the same custom field at once: one 201, the other 409, and one column", async () => {
    for (let round = 0; round < 3; round++) {
      const field = { object: "leads", name: `twice${round}`, type: "text" };
      const replies = await Promise.all([0, 1, 2].map(() => w.crm.call(w.admin, "POST", "/api/v1/settings/fields", field)));
      expect(replies.map((r) => r.status).sort()).toEqual([201, 409, 409]);
      const fields = (await w.crm.call(w.admin, "GET", "/api/v1/settings/fields")).body.data as { api_name: string }[];
      expect(fields.filter((f) => f.api_name === `cf_twice${round}`)).toHaveLength(1);
      const lead = await w.crm.call(w.alice, "POST", "/api/v1/leads", { last_name: "Column", company: "Acme", [`cf_twice${round}`]: "x" });
      expect(lead.status).toBe(201);
    }
  });

  test("creates acknowledged together survive kill -9", async () => {
    const replies = await Promise.all(
      Array.from({ length: 16 }, (_, i) => w.crm.call(w.alice, "POST", "/api/v1/accounts", { name: `Killed${i} Co`, billing_country: "NZ" })),
    );
    expect(replies.every((r) => r.status === 201)).toBe(true);
    await w.crm.crash();
    const again = await startCrm(w.crm.db);
    try {
      const found = (await again.call(w.admin, "GET", "/api/v1/accounts?q=killed&per=100")).body;
      expect(found.data.map((a: { id: number }) => a.id).sort()).toEqual(replies.map((r) => r.body.id).sort());
    } finally {
      await again.stop();
    }
  });
});
