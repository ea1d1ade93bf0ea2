/**
 * The property of docs/crm.md "Errors", run against a real `svc crm` on each database: whatever a
 * client sends — to any route, as an admin, a manager, a rep, with no token, a bogus one or a
 * disabled user's — the answer is never a 5xx; an /api/v1 refusal has the spec's error body with
 * the code its status means; without a working token every /api/v1 route it reaches is 401; and a
 * refusal (any 4xx) changes nothing in the database, schema included.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { errorStatus } from "../../../src/core/errors.ts";
import { crmObjects } from "../../../src/crm/rules/record.ts";
import { type Backend, makeWorld, type World } from "./crm.ts";
import { changedTables, type DbSnapshots, openSnapshots } from "./db-snapshot.ts";
import { type Actor, type FuzzRequest, fuzzRequest, setupCustomFields } from "./fuzz-requests.ts";

const hookMs = 60_000;

export interface No500Options {
  /** Random requests sent; each costs a request and a snapshot of every table. */
  runs: number;
  timeoutMs: number;
}

export function crmNo500Suite(backend: Backend, options: No500Options): void {
  let w: World;
  let snapshots: DbSnapshots;
  const tokens = {} as Record<Actor, string | null>;
  /** The fuzzing users' own tokens: revoking one would turn every later request of theirs into a 401. */
  const ownTokenIds = new Set<string>();

  beforeAll(async () => {
    w = await makeWorld(backend);
    const tool = async (args: string[]) => {
      const r = await w.crm.tool(args);
      if (r.code !== 0) throw new Error(`svc crm ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    await tool(["user", "add", "--username", "dora", "--role", "sales-rep"]);
    const disabled = await tool(["token", "create", "--user", "dora"]);
    await tool(["user", "disable", "--username", "dora"]);
    Object.assign(tokens, { admin: w.admin, manager: w.manager, rep: w.alice, anonymous: null, bogus: `crm_${"A".repeat(43)}`, disabled });
    const must = async (token: string, method: string, path: string, body?: unknown) => {
      const r = await w.crm.call(token, method, path, body);
      if (r.status >= 300) throw new Error(`setup ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    for (const object of crmObjects) for (const field of setupCustomFields) await must(w.admin, "POST", "/api/v1/settings/fields", { object, ...field });
    for (const token of [w.alice, w.bob, w.manager]) {
      const account = await must(token, "POST", "/api/v1/accounts", { name: "Acme", cf_tier: "Gold" });
      const contact = await must(token, "POST", "/api/v1/contacts", { last_name: "Zed", account_id: account.id });
      await must(token, "POST", "/api/v1/leads", { last_name: "Zed", company: "Initech", rating: "Hot" });
      await must(token, "POST", "/api/v1/opportunities", { name: "Acme deal", account_id: account.id, close_date: "2025-01-31", amount: 10 });
      await must(token, "POST", "/api/v1/cases", { subject: "Acme case", account_id: account.id, contact_id: contact.id });
    }
    await must(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", { leads: "private", accounts: "read" });
    await must(w.admin, "POST", "/api/v1/settings/sharing/rules", {
      object: "leads",
      name: "hot leads",
      access: "read",
      criteria: [{ field: "rating", op: "eq", value: "Hot" }],
      share_with: { role: "sales-rep" },
    });
    await must(w.admin, "POST", "/api/v1/settings/workflow-rules", {
      name: "hot_status",
      object: "leads",
      trigger: "created_and_edited",
      condition: { field: "rating", op: "eq", value: "Hot" },
      updates: [{ field: "status", value: "Working - Contacted" }],
    });
    for (const token of [w.admin, w.manager, w.alice]) {
      for (const t of (await must(token, "GET", "/api/v1/settings/tokens")).data) ownTokenIds.add(String(t.id));
    }
    snapshots = await openSnapshots(w.crm.db);
  }, hookMs);
  afterAll(async () => {
    await snapshots?.close();
    await w?.crm.stop();
  }, hookMs);

  async function send(r: FuzzRequest): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = {};
    const token = tokens[r.actor];
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (r.body !== undefined) {
      if ("json" in r.body) {
        body = JSON.stringify(r.body.json) ?? "null";
        headers["content-type"] = "application/json";
      } else {
        body = r.body.raw;
        headers["content-type"] = r.body.contentType;
      }
    }
    const response = await fetch(`${w.crm.url}${r.path}`, { method: r.method, headers, body, redirect: "manual" });
    return { status: response.status, text: await response.text() };
  }

  describe(`crm on ${backend.name}: client input never gives a 5xx, and a refusal changes nothing`, () => {
    test(
      "random requests to every route as every kind of user",
      async () => {
        let last = await snapshots.take();
        const stats = new Map<string, number>();
        await fc.assert(
          fc.asyncProperty(fuzzRequest, async (r) => {
            const tokenId = /^\/api\/v1\/settings\/tokens\/(.+)$/.exec(r.path)?.[1];
            if (r.method === "DELETE" && tokenId !== undefined && ownTokenIds.has(decodeURIComponent(tokenId))) return;
            const logged = w.crm.output().length;
            const { status, text } = await send(r);
            const key = `${r.method} ${r.path.replace(/\?.*/, "").replace(/\/[^/]*$/, (m) => (/^\/(\d+|[^a-z].*)?$/.test(m) ? "/:id" : m))} ${status}`;
            stats.set(key, (stats.get(key) ?? 0) + 1);
            const what = `${r.actor} ${r.method} ${r.path} → ${status} ${text.slice(0, 300)}`;
            expect(status, what).toBeLessThan(500);
            // Routing (404 for no route, 405 for another method) answers before authentication.
            if (["anonymous", "bogus", "disabled"].includes(r.actor) && r.path.startsWith("/api/v1") && status !== 404 && status !== 405) {
              expect(status, what).toBe(401);
            }
            if (status >= 400 && r.path.startsWith("/api/v1")) {
              const body = JSON.parse(text);
              expect(errorStatus[body.error as keyof typeof errorStatus] as number, what).toBe(status);
              if (status === 422) {
                expect(body.details.length, what).toBeGreaterThan(0);
                for (const d of body.details) expect([typeof d.field, typeof d.message], what).toEqual(["string", "string"]);
              } else {
                expect(typeof body.message, what).toBe("string");
              }
            }
            // The store's refusals are answered as 4xx too (store-errors.ts), but each means a check is missing.
            expect(w.crm.output().slice(logged), what).not.toContain("crm store refused");
            const now = await snapshots.take();
            if (status >= 400) expect(changedTables(last, now), what).toEqual([]);
            last = now;
          }),
          { numRuns: options.runs },
        );
        // A refusal logged after its answer arrived (the log is piped) would have slipped past the check above.
        await Bun.sleep(100);
        expect(w.crm.output()).not.toContain("crm store refused");
        if (process.env.SVC_CRM_FUZZ_STATS)
          console.log(
            [...stats]
              .sort()
              .map(([k, n]) => `${k}: ${n}`)
              .join("\n"),
          );
      },
      options.timeoutMs,
    );
  });
}
