/**
 * The crm API's end-to-end suite, run once per database (api-sqlite.test.ts, api-postgres.test.ts)
 * against a real `svc crm` process: authentication and tokens, list/read/create/change, custom
 * and admin-only fields, sharing, and rules running inside the request's one transaction.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { crmPageMax, crmPageSizeMax, crmRequestBodyBytesMax } from "../../../src/core/limits.ts";
import { type Backend, startCrm, type World, welcomeCaseFlow, worldForSuite } from "./crm.ts";

/**
 * The world takes a database (initdb, for PostgreSQL), seven tool processes and a server: a bound
 * on a loaded 2-core machine, not a timing claim.
 */

const lead = (last: string, extra: Record<string, unknown> = {}) => ({ last_name: last, company: `${last} Inc`, ...extra });

export function crmApiSuite(backend: Backend): void {
  let w: World;
  worldForSuite(backend, (made) => {
    w = made;
  });
  const call = (token: string | null, method: string, path: string, body?: unknown) => w.crm.call(token, method, path, body);
  const create = async (token: string, object: string, body: unknown) => {
    const r = await call(token, "POST", `/api/v1/${object}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };
  const setDefaults = async (defaults: Record<string, string>) => {
    expect((await call(w.admin, "PATCH", "/api/v1/settings/sharing/defaults", defaults)).status).toBe(200);
  };

  describe(`crm on ${backend.name}: authentication and tokens`, () => {
    test("every /api/v1 route answers 401 without a token, with an unknown one, or with another scheme", async () => {
      for (const path of ["/api/v1/leads", "/api/v1/leads/1", "/api/v1/settings/tokens", "/api/v1/settings/fields"]) {
        expect((await call(null, "GET", path)).status).toBe(401);
        expect((await call("crm_not-a-real-token", "GET", path)).status).toBe(401);
        const basic = await fetch(`${w.crm.url}${path}`, { headers: { authorization: `Basic ${btoa("admin:x")}` } });
        expect(basic.status).toBe(401);
      }
      const r = await call(null, "POST", "/api/v1/leads", lead("NoAuth"));
      expect(r.status).toBe(401);
      expect(r.body.error).toBe("unauthorized");
      expect(r.headers.get("www-authenticate")).toContain("Bearer");
      expect((await call(null, "GET", "/healthz")).body).toBe("ok");
    });

    test("a token created through settings works, is listed without its secret, and answers 401 once revoked", async () => {
      const created = await call(w.alice, "POST", "/api/v1/settings/tokens", { name: "laptop" });
      expect(created.status).toBe(201);
      const token = created.body.token as string;
      expect(token).toMatch(/^crm_[A-Za-z0-9_-]{43}$/);
      expect((await call(token, "GET", "/api/v1/leads")).status).toBe(200);
      const listed = await call(w.alice, "GET", "/api/v1/settings/tokens");
      expect(listed.status).toBe(200);
      const mine = listed.body.data.find((t: { id: number }) => t.id === created.body.id);
      expect(mine).toMatchObject({ name: "laptop", prefix: token.slice(0, 10), revoked_at: null });
      expect(JSON.stringify(listed.body)).not.toContain(token);
      // Another user cannot see or revoke it.
      expect((await call(w.bob, "GET", "/api/v1/settings/tokens")).body.data.some((t: { id: number }) => t.id === created.body.id)).toBe(false);
      expect((await call(w.bob, "DELETE", `/api/v1/settings/tokens/${created.body.id}`)).status).toBe(404);
      expect((await call(token, "GET", "/api/v1/leads")).status).toBe(200);
      expect((await call(w.alice, "DELETE", `/api/v1/settings/tokens/${created.body.id}`)).status).toBe(204);
      expect((await call(token, "GET", "/api/v1/leads")).status).toBe(401);
      const after = (await call(w.alice, "GET", "/api/v1/settings/tokens")).body.data.find((t: { id: number }) => t.id === created.body.id);
      expect(after.revoked_at).not.toBeNull();
    });

    test("a token name of 100 characters is accepted, 101 is a 422 detail", async () => {
      expect((await call(w.bob, "POST", "/api/v1/settings/tokens", { name: "n".repeat(100) })).status).toBe(201);
      const r = await call(w.bob, "POST", "/api/v1/settings/tokens", { name: "n".repeat(101) });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({ error: "invalid", details: [{ field: "name", message: "1 to 100 characters" }] });
    });

    test("admin settings are 403 for a non-admin", async () => {
      for (const [method, path, body] of [
        ["GET", "/api/v1/settings/fields"],
        ["POST", "/api/v1/settings/fields", { object: "leads", name: "x", type: "text" }],
        ["PATCH", "/api/v1/settings/sharing/defaults", { leads: "private" }],
        ["GET", "/api/v1/settings/users"],
        ["POST", "/api/v1/settings/validation-rules", {}],
        ["GET", "/api/v1/settings/flows"],
      ] as const) {
        const r = await call(w.manager, method, path, body);
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(r.body.error).toBe("forbidden");
      }
      expect((await call(w.admin, "GET", "/api/v1/settings/sharing")).body.defaults.leads).toBeDefined();
    });
  });

  describe(`crm on ${backend.name}: records`, () => {
    test("create answers 201 with the stored record and its Location; read returns the same record", async () => {
      const r = await call(w.alice, "POST", "/api/v1/leads", lead("Create", { rating: "Hot", email: "c@example.com" }));
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ last_name: "Create", company: "Create Inc", rating: "Hot", status: "Open - Not Contacted", owner_id: w.ids.alice });
      expect(r.body.id).toBeGreaterThan(0);
      expect(r.body.created_at).toBe(r.body.updated_at);
      expect(r.headers.get("location")).toBe(`/api/v1/leads/${r.body.id}`);
      const read = await call(w.alice, "GET", `/api/v1/leads/${r.body.id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(r.body);
    });

    test("every object takes its standard fields", async () => {
      const account = await create(w.alice, "accounts", { name: "Globex", website: "globex.example", employees: 120, annual_revenue: 1.5e6 });
      const contact = await create(w.alice, "contacts", { first_name: "Hank", last_name: "Scorpio", account_id: account.id, email: "h@globex.example" });
      const opp = await create(w.alice, "opportunities", {
        name: "Globex deal",
        account_id: account.id,
        amount: 50000,
        close_date: "2025-12-31",
        probability: 40,
      });
      expect(opp.stage).toBe("Prospecting");
      const kase = await create(w.alice, "cases", { subject: "Doomsday device", account_id: account.id, contact_id: contact.id, priority: "High" });
      expect(kase).toMatchObject({ status: "New", priority: "High", contact_id: contact.id });
    });

    test("PATCH changes only the fields sent and moves updated_at", async () => {
      const made = await create(w.alice, "leads", lead("Patch", { rating: "Warm", phone: "555-0100" }));
      await Bun.sleep(5);
      const r = await call(w.alice, "PATCH", `/api/v1/leads/${made.id}`, { rating: "Cold" });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ ...made, rating: "Cold", updated_at: r.body.updated_at });
      expect(r.body.updated_at > made.updated_at).toBe(true);
      expect((await call(w.alice, "GET", `/api/v1/leads/${made.id}`)).body).toEqual(r.body);
    });

    test("unknown fields, wrong types, bad picklist values, missing required fields and read-only fields are 422 details, and nothing is stored", async () => {
      const before = (await call(w.admin, "GET", "/api/v1/leads?per=1")).body.total;
      const r = await call(w.alice, "POST", "/api/v1/leads", { last_name: 7, rating: "Lukewarm", nickname: "x", id: 5 });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("invalid");
      expect(r.body.details).toEqual(
        expect.arrayContaining([
          { field: "id", message: "read-only field" },
          { field: "last_name", message: "must be a string" },
          { field: "rating", message: "must be one of: Hot, Warm, Cold" },
          { field: "nickname", message: "unknown field" },
          { field: "company", message: "is required" },
        ]),
      );
      expect(Object.keys(r.body).sort()).toEqual(["details", "error"]);
      const opp = await call(w.alice, "POST", "/api/v1/opportunities", { name: "x", close_date: "2025-02-30", amount: "10" });
      expect(opp.body.details).toEqual(
        expect.arrayContaining([
          { field: "close_date", message: "must be a date YYYY-MM-DD" },
          { field: "amount", message: "must be a number" },
        ]),
      );
      const made = await create(w.alice, "leads", lead("Typed"));
      const p = await call(w.alice, "PATCH", `/api/v1/leads/${made.id}`, { last_name: "", email: false, created_at: "2020-01-01T00:00:00Z" });
      expect(p.status).toBe(422);
      expect(p.body.details).toEqual(
        expect.arrayContaining([
          { field: "created_at", message: "read-only field" },
          { field: "last_name", message: "is required" },
          { field: "email", message: "must be a string" },
        ]),
      );
      expect((await call(w.alice, "GET", `/api/v1/leads/${made.id}`)).body).toEqual(made);
      expect((await call(w.admin, "GET", "/api/v1/leads?per=1")).body.total).toBe(before + 1);
    });

    test("text fields take 255 characters, not 256; a reference must name a record one can see", async () => {
      expect((await call(w.alice, "POST", "/api/v1/leads", lead("L", { first_name: "x".repeat(255) }))).status).toBe(201);
      const r = await call(w.alice, "POST", "/api/v1/leads", lead("L", { first_name: "x".repeat(256) }));
      expect(r.body.details).toEqual([{ field: "first_name", message: "at most 255 characters" }]);
      const c = await call(w.alice, "POST", "/api/v1/contacts", { last_name: "Orphan", account_id: 999999 });
      expect(c.body.details).toEqual([{ field: "account_id", message: "no accounts record 999999 that you can see" }]);
    });

    test("bodies that are not a JSON object are refused: 400 malformed, 415 wrong type, 422 array, 413 past the limit", async () => {
      expect((await call(w.alice, "POST", "/api/v1/leads", "{nope")).status).toBe(400);
      const wrongType = await fetch(`${w.crm.url}/api/v1/leads`, {
        method: "POST",
        body: "{}",
        headers: { authorization: `Bearer ${w.alice}`, "content-type": "text/plain" },
      });
      expect(wrongType.status).toBe(415);
      expect((await call(w.alice, "POST", "/api/v1/leads", [])).body).toEqual({
        error: "invalid",
        details: [{ field: "base", message: "expected a JSON object" }],
      });
      // A body exactly at the limit is read (and refused for its content); one byte more is 413.
      const pad = (total: number) => JSON.stringify({ description: "d".repeat(total - '{"description":""}'.length) });
      const atLimit = await call(w.alice, "POST", "/api/v1/leads", pad(crmRequestBodyBytesMax));
      expect(atLimit.status).toBe(422);
      const past = await call(w.alice, "POST", "/api/v1/leads", pad(crmRequestBodyBytesMax + 1));
      expect(past.status).toBe(413);
    });

    test("50 concurrent creates each get their own record; SQLite's one writer takes them in turn", async () => {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) => call(i % 2 ? w.alice : w.bob, "POST", "/api/v1/accounts", { name: `Concurrent ${i}` })),
      );
      expect(replies.map((r) => r.status)).toEqual(Array(50).fill(201));
      expect(new Set(replies.map((r) => r.body.id)).size).toBe(50);
      expect((await call(w.admin, "GET", "/api/v1/accounts?q=concurrent&per=100")).body.total).toBe(50);
    });

    test("an unknown object or id is 404", async () => {
      expect((await call(w.alice, "GET", "/api/v1/widgets")).status).toBe(404);
      expect((await call(w.alice, "GET", "/api/v1/leads/999999")).status).toBe(404);
      expect((await call(w.alice, "GET", "/api/v1/leads/abc")).status).toBe(404);
      expect((await call(w.alice, "PATCH", "/api/v1/leads/999999", { rating: "Hot" })).status).toBe(404);
    });
  });

  describe(`crm on ${backend.name}: lists`, () => {
    test("newest first, the envelope, page and per (default 20, 100 allowed, 101 refused)", async () => {
      const made: number[] = [];
      for (let i = 0; i < 25; i++) made.push((await create(w.bob, "cases", { subject: `Paging case ${i}` })).id);
      const first = await call(w.bob, "GET", "/api/v1/cases?q=paging");
      expect(first.status).toBe(200);
      expect(Object.keys(first.body).sort()).toEqual(["data", "page", "per", "total", "total_exact"]);
      expect(first.body.total_exact).toBe(true);
      expect(first.body).toMatchObject({ page: 1, per: 20, total: 25 });
      expect(first.body.data.map((r: { id: number }) => r.id)).toEqual(made.slice().reverse().slice(0, 20));
      const second = await call(w.bob, "GET", "/api/v1/cases?q=paging&page=2");
      expect(second.body.data.map((r: { id: number }) => r.id)).toEqual(made.slice(0, 5).reverse());
      expect((await call(w.bob, "GET", "/api/v1/cases?q=paging&page=3")).body.data).toEqual([]);
      const all = await call(w.bob, "GET", `/api/v1/cases?q=paging&per=${crmPageSizeMax}`);
      expect(all.body.data.length).toBe(25);
      expect((await call(w.bob, "GET", `/api/v1/cases?q=paging&page=${crmPageMax}`)).body).toMatchObject({ data: [], page: crmPageMax, total: 25 });
      for (const bad of [
        `per=${crmPageSizeMax + 1}`,
        `page=${crmPageMax + 1}`,
        "per=0",
        "page=0",
        "page=-1",
        "per=abc",
        "page=1.5",
        "updated_since=yesterday",
      ]) {
        const r = await call(w.bob, "GET", `/api/v1/cases?${bad}`);
        expect(r.status, bad).toBe(400);
        expect(r.body.error).toBe("bad_request");
      }
    });

    test("q finds records by substrings of their name-like fields, every term, any case", async () => {
      await create(w.alice, "leads", lead("Zanzibar", { first_name: "Quentin", company: "Umbrella Corp" }));
      const renamed = await create(w.alice, "leads", lead("Zanzibaro", { first_name: "Ursula", company: "Initech" }));
      const names = async (q: string) =>
        (await call(w.admin, "GET", `/api/v1/leads?q=${encodeURIComponent(q)}`)).body.data.map((r: { last_name: string }) => r.last_name).sort();
      expect(await names("zanzib")).toEqual(["Zanzibar", "Zanzibaro"]);
      expect(await names("ZANZIBAR umbrella")).toEqual(["Zanzibar"]);
      expect(await names("initech zanz")).toEqual(["Zanzibaro"]);
      expect(await names("quentin")).toEqual(["Zanzibar"]);
      // A term shorter than a trigram still matches.
      expect(await names("zanzibar ro")).toEqual(["Zanzibaro"]);
      expect(await names("zanzibar nomatch")).toEqual([]);
      // Characters that mean something to LIKE or FTS5 are plain text.
      expect(await names('zanz% "_')).toEqual([]);
      // A change to a name-like field moves the record in the index.
      expect((await call(w.alice, "PATCH", `/api/v1/leads/${renamed.id}`, { company: "Vandelay Industries" })).status).toBe(200);
      expect(await names("initech zanz")).toEqual([]);
      expect(await names("vandelay")).toEqual(["Zanzibaro"]);
      // At most 8 terms and 200 characters; one more of either is 400.
      const status = async (q: string) => (await call(w.admin, "GET", `/api/v1/leads?q=${encodeURIComponent(q)}`)).status;
      expect(await status(Array(8).fill("zanzibar").join(" "))).toBe(200);
      expect(await status(Array(9).fill("zanzibar").join(" "))).toBe(400);
      expect(await status("z".repeat(200))).toBe(200);
      expect(await status("z".repeat(201))).toBe(400);
    });

    test("updated_since returns records changed at or after the time, dates and date-times alike", async () => {
      const old = await create(w.alice, "accounts", { name: "Since Old" });
      await Bun.sleep(10);
      const cut = new Date().toISOString();
      await Bun.sleep(10);
      const fresh = await create(w.alice, "accounts", { name: "Since New" });
      const ids = async (since: string) =>
        (await call(w.alice, "GET", `/api/v1/accounts?q=since&updated_since=${encodeURIComponent(since)}`)).body.data.map((r: { id: number }) => r.id);
      expect(await ids(cut)).toEqual([fresh.id]);
      expect(await ids("2000-01-01")).toEqual([fresh.id, old.id]);
      await Bun.sleep(10);
      await call(w.alice, "PATCH", `/api/v1/accounts/${old.id}`, { phone: "1" });
      expect(await ids(cut)).toEqual([fresh.id, old.id]);
      expect(await ids(fresh.updated_at)).toEqual([fresh.id, old.id]);
    });
  });

  describe(`crm on ${backend.name}: custom and admin-only fields`, () => {
    test("an admin adds cf_ fields of each type; records read and write them by API name with type checks", async () => {
      for (const [name, type, extra] of [
        ["tier", "picklist", { values: ["Gold", "Silver"] }],
        ["score", "number"],
        ["vip", "boolean"],
        ["renewal", "date"],
        ["notes", "text"],
      ] as const) {
        const r = await call(w.admin, "POST", "/api/v1/settings/fields", { object: "accounts", name, type, ...extra });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        expect(r.body).toMatchObject({ api_name: `cf_${name}`, type, required: false, admin_only: false });
      }
      const made = await create(w.alice, "accounts", {
        name: "Custom Co",
        cf_tier: "Gold",
        cf_score: 9.5,
        cf_vip: true,
        cf_renewal: "2026-01-31",
        cf_notes: "hi",
      });
      expect(made).toMatchObject({ cf_tier: "Gold", cf_score: 9.5, cf_vip: true, cf_renewal: "2026-01-31", cf_notes: "hi" });
      const bad = await call(w.alice, "PATCH", `/api/v1/accounts/${made.id}`, { cf_tier: "Bronze", cf_score: "9", cf_vip: "yes", cf_renewal: "31/01/2026" });
      expect(bad.status).toBe(422);
      expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(["cf_renewal", "cf_score", "cf_tier", "cf_vip"]);
      const other = await create(w.alice, "accounts", { name: "Plain Co" });
      expect(other).toMatchObject({ cf_tier: null, cf_vip: null });
      const dup = await call(w.admin, "POST", "/api/v1/settings/fields", { object: "accounts", name: "tier", type: "text" });
      expect(dup.status).toBe(409);
      const listed = (await call(w.admin, "GET", "/api/v1/settings/fields")).body.data;
      expect(listed.filter((f: { object: string }) => f.object === "accounts").map((f: { api_name: string }) => f.api_name)).toEqual([
        "cf_tier",
        "cf_score",
        "cf_vip",
        "cf_renewal",
        "cf_notes",
      ]);
    });

    test("a field definition with a bad name, type or picklist is a 422 with every problem", async () => {
      const r = await call(w.admin, "POST", "/api/v1/settings/fields", { object: "widgets", name: "Bad Name", type: "json", color: 1 });
      expect(r.status).toBe(422);
      expect(r.body.details.map((d: { field: string }) => d.field).sort()).toEqual(["color", "name", "object", "type"]);
      const p = await call(w.admin, "POST", "/api/v1/settings/fields", { object: "leads", name: "size", type: "picklist", values: [] });
      expect(p.body.details.map((d: { field: string }) => d.field)).toEqual(["values"]);
      expect((await call(w.admin, "POST", "/api/v1/settings/fields", { object: "leads", name: "a".repeat(40), type: "text" })).status).toBe(201);
      expect((await call(w.admin, "POST", "/api/v1/settings/fields", { object: "leads", name: "a".repeat(41), type: "text" })).status).toBe(422);
    });

    test("a required custom field is required on create and cannot be blanked", async () => {
      expect((await call(w.admin, "POST", "/api/v1/settings/fields", { object: "cases", name: "region", type: "text", required: true })).status).toBe(201);
      const r = await call(w.alice, "POST", "/api/v1/cases", { subject: "no region" });
      expect(r.body.details).toEqual([{ field: "cf_region", message: "is required" }]);
      const made = await create(w.alice, "cases", { subject: "with region", cf_region: "EU" });
      expect((await call(w.alice, "PATCH", `/api/v1/cases/${made.id}`, { cf_region: null })).body.details).toEqual([
        { field: "cf_region", message: "is required" },
      ]);
    });

    test("an admin-only field is hidden from non-admins on read and list, and their write to it is a 422 detail on that field", async () => {
      expect(
        (await call(w.admin, "POST", "/api/v1/settings/fields", { object: "opportunities", name: "margin", type: "number", admin_only: true })).status,
      ).toBe(201);
      const byAdmin = await create(w.admin, "opportunities", { name: "Secret margin", close_date: "2025-06-30", cf_margin: 0.42, owner_id: w.ids.alice });
      expect(byAdmin.cf_margin).toBe(0.42);
      const read = await call(w.alice, "GET", `/api/v1/opportunities/${byAdmin.id}`);
      expect(read.status).toBe(200);
      expect("cf_margin" in read.body).toBe(false);
      const listed = (await call(w.alice, "GET", "/api/v1/opportunities?q=secret")).body.data;
      expect(listed.length).toBe(1);
      expect("cf_margin" in listed[0]).toBe(false);
      const write = await call(w.alice, "PATCH", `/api/v1/opportunities/${byAdmin.id}`, { cf_margin: 0.1, amount: 5 });
      expect(write.status).toBe(422);
      expect(write.body.details).toEqual([{ field: "cf_margin", message: "only an admin may set this field" }]);
      const patched = await call(w.alice, "PATCH", `/api/v1/opportunities/${byAdmin.id}`, { amount: 5 });
      expect(patched.status).toBe(200);
      expect("cf_margin" in patched.body).toBe(false);
      expect((await call(w.admin, "GET", `/api/v1/opportunities/${byAdmin.id}`)).body).toMatchObject({ cf_margin: 0.42, amount: 5 });
    });
  });

  describe(`crm on ${backend.name}: sharing`, () => {
    test("private: an owner sees and changes their own records, a peer gets 404, the manager and the admin see and change them", async () => {
      await setDefaults({ contacts: "private" });
      const mine = await create(w.alice, "contacts", { last_name: "PrivateAlice" });
      const list = async (token: string) => (await call(token, "GET", "/api/v1/contacts?q=privatealice")).body.data.map((r: { id: number }) => r.id);
      expect(await list(w.alice)).toEqual([mine.id]);
      expect(await list(w.bob)).toEqual([]);
      expect((await call(w.bob, "GET", `/api/v1/contacts/${mine.id}`)).status).toBe(404);
      expect((await call(w.bob, "PATCH", `/api/v1/contacts/${mine.id}`, { title: "x" })).status).toBe(404);
      expect(await list(w.manager)).toEqual([mine.id]);
      expect((await call(w.manager, "PATCH", `/api/v1/contacts/${mine.id}`, { title: "Reviewed" })).status).toBe(200);
      expect(await list(w.admin)).toEqual([mine.id]);
      expect((await call(w.admin, "PATCH", `/api/v1/contacts/${mine.id}`, { title: "Audited" })).status).toBe(200);
      // The hierarchy goes down only: alice does not see her manager's records.
      const boss = await create(w.manager, "contacts", { last_name: "PrivateAliceBoss" });
      expect((await call(w.alice, "GET", `/api/v1/contacts/${boss.id}`)).status).toBe(404);
    });

    test("read: a peer reads but PATCH is 403 and changes nothing; read_write: a peer changes it", async () => {
      await setDefaults({ accounts: "read" });
      const mine = await create(w.alice, "accounts", { name: "ReadOnly Ltd" });
      expect((await call(w.bob, "GET", `/api/v1/accounts/${mine.id}`)).status).toBe(200);
      const denied = await call(w.bob, "PATCH", `/api/v1/accounts/${mine.id}`, { phone: "1" });
      expect(denied.status).toBe(403);
      expect(denied.body.error).toBe("forbidden");
      expect((await call(w.alice, "GET", `/api/v1/accounts/${mine.id}`)).body.phone).toBeNull();
      await setDefaults({ accounts: "read_write" });
      expect((await call(w.bob, "PATCH", `/api/v1/accounts/${mine.id}`, { phone: "2" })).status).toBe(200);
    });

    test("an owner-based sharing rule opens one role's records to another role, at the access it grants", async () => {
      await setDefaults({ leads: "private" });
      const roleR = await call(w.admin, "POST", "/api/v1/settings/roles", { name: "support", parent: "ceo" });
      expect(roleR.status).toBe(201);
      const sup = await call(w.admin, "POST", "/api/v1/settings/users", { username: "sam", role: "support" });
      expect(sup.status).toBe(201);
      const token = (await w.crm.tool(["token", "create", "--user", "sam"])).stdout.trim();
      const rep = await create(w.bob, "leads", lead("OwnerShared"));
      expect((await call(token, "GET", `/api/v1/leads/${rep.id}`)).status).toBe(404);
      const rule = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        object: "leads",
        name: "reps to support",
        access: "read",
        owned_by: { role: "sales-rep" },
        share_with: { role: "support" },
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      expect((await call(token, "GET", `/api/v1/leads/${rep.id}`)).status).toBe(200);
      expect((await call(token, "GET", "/api/v1/leads?q=ownershared")).body.total).toBe(1);
      expect((await call(token, "PATCH", `/api/v1/leads/${rep.id}`, { rating: "Hot" })).status).toBe(403);
      // Alice is a sales-rep too, but the rule is not granted to her role.
      expect((await call(w.alice, "GET", `/api/v1/leads/${rep.id}`)).status).toBe(404);
      expect((await call(w.admin, "DELETE", `/api/v1/settings/sharing/rules/${rule.body.id}`)).status).toBe(204);
      expect((await call(token, "GET", `/api/v1/leads/${rep.id}`)).status).toBe(404);
    });

    test("a criteria-based sharing rule opens matching records, read_write, to a role and its subordinates", async () => {
      await setDefaults({ opportunities: "private" });
      const rule = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        object: "opportunities",
        name: "big deals",
        access: "read_write",
        criteria: [{ field: "amount", op: "gte", value: 100000 }],
        share_with: { role: "sales-manager", include_subordinates: true },
      });
      expect(rule.status, JSON.stringify(rule.body)).toBe(201);
      const big = await create(w.bob, "opportunities", { name: "Criteria big", close_date: "2025-01-01", amount: 250000 });
      const small = await create(w.bob, "opportunities", { name: "Criteria small", close_date: "2025-01-01", amount: 5 });
      expect((await call(w.alice, "GET", "/api/v1/opportunities?q=criteria")).body.data.map((r: { id: number }) => r.id)).toEqual([big.id]);
      expect((await call(w.alice, "PATCH", `/api/v1/opportunities/${big.id}`, { probability: 80 })).status).toBe(200);
      expect((await call(w.alice, "GET", `/api/v1/opportunities/${small.id}`)).status).toBe(404);
      // Lowering the amount takes it out of the rule, and out of alice's sight.
      expect((await call(w.bob, "PATCH", `/api/v1/opportunities/${big.id}`, { amount: 10 })).status).toBe(200);
      expect((await call(w.alice, "GET", `/api/v1/opportunities/${big.id}`)).status).toBe(404);
      const bad = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        object: "opportunities",
        name: "bad",
        access: "edit",
        criteria: [{ field: "nope", op: "eq", value: 1 }],
        share_with: { role: "ghost" },
      });
      expect(bad.status).toBe(422);
      expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(["access", "criteria[0].field", "share_with.role"]);
    });
  });

  describe(`crm on ${backend.name}: rules run inside the request's transaction`, () => {
    test("failing validation rules are all reported in one 422 and the record is not stored", async () => {
      const rule = (name: string, condition: unknown, error_field?: string) =>
        call(w.admin, "POST", "/api/v1/settings/validation-rules", {
          name,
          object: "cases",
          condition,
          message: `${name} failed`,
          ...(error_field ? { error_field } : {}),
        });
      expect(
        (
          await rule(
            "urgent_needs_origin",
            {
              all: [
                { field: "priority", op: "eq", value: "High" },
                { field: "origin", op: "blank" },
              ],
            },
            "origin",
          )
        ).status,
      ).toBe(201);
      expect((await rule("no_test_subjects", { field: "subject", op: "contains", value: "TEST" })).status).toBe(201);
      const before = (await call(w.admin, "GET", "/api/v1/cases?q=ruled")).body.total;
      const r = await call(w.alice, "POST", "/api/v1/cases", { subject: "Ruled TEST", priority: "High", cf_region: "EU" });
      expect(r.status).toBe(422);
      expect(r.body.details).toEqual(
        expect.arrayContaining([
          { field: "origin", message: "urgent_needs_origin failed" },
          { field: "base", message: "no_test_subjects failed" },
        ]),
      );
      expect((await call(w.admin, "GET", "/api/v1/cases?q=ruled")).body.total).toBe(before);
      expect((await call(w.alice, "POST", "/api/v1/cases", { subject: "Ruled fine", priority: "High", origin: "Web", cf_region: "EU" })).status).toBe(201);
      const listed = (await call(w.admin, "GET", "/api/v1/settings/validation-rules")).body.data;
      expect(listed.map((d: { name: string }) => d.name)).toEqual(["urgent_needs_origin", "no_test_subjects"]);
      for (const d of listed) expect((await call(w.admin, "DELETE", `/api/v1/settings/validation-rules/${d.id}`)).status).toBe(204);
    });

    test("a rule definition the engine refuses is a 422 and is not stored", async () => {
      const r = await call(w.admin, "POST", "/api/v1/settings/workflow-rules", {
        name: "x",
        object: "leads",
        trigger: "sometimes",
        condition: { field: "nope", op: "eq", value: 1 },
        updates: [],
      });
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("invalid");
      expect(r.body.details.length).toBeGreaterThan(0);
      expect((await call(w.admin, "GET", "/api/v1/settings/workflow-rules")).body.data).toEqual([]);
    });

    test("a workflow rule's field update is stored with the record", async () => {
      const r = await call(w.admin, "POST", "/api/v1/settings/workflow-rules", {
        name: "hot_leads",
        object: "leads",
        trigger: "created_and_edited",
        condition: { field: "rating", op: "eq", value: "Hot" },
        updates: [{ field: "status", value: "Working - Contacted" }],
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const made = await create(w.alice, "leads", lead("Workflowed", { rating: "Hot" }));
      expect(made.status).toBe("Working - Contacted");
      expect((await call(w.alice, "GET", `/api/v1/leads/${made.id}`)).body.status).toBe("Working - Contacted");
      expect((await call(w.admin, "DELETE", `/api/v1/settings/workflow-rules/${r.body.id}`)).status).toBe(204);
    });

    test("a flow that creates a related record commits with the save; when the related record is invalid, the whole request rolls back", async () => {
      const flow = await call(w.admin, "POST", "/api/v1/settings/flows", welcomeCaseFlow);
      expect(flow.status, JSON.stringify(flow.body)).toBe(201);
      const ok = await create(w.alice, "accounts", { name: "Flowed Co", billing_country: "NZ" });
      const cases = (await call(w.alice, "GET", "/api/v1/cases?q=welcome%20flowed")).body.data;
      expect(cases.map((c: { account_id: number; cf_region: string }) => [c.account_id, c.cf_region])).toEqual([[ok.id, "NZ"]]);
      // No billing_country: the case misses its required cf_region, so the account is not stored either.
      const before = (await call(w.admin, "GET", "/api/v1/accounts?q=flowless")).body.total;
      const bad = await call(w.alice, "POST", "/api/v1/accounts", { name: "Flowless Co" });
      expect(bad.status).toBe(422);
      expect((await call(w.admin, "GET", "/api/v1/accounts?q=flowless")).body.total).toBe(before);
      expect((await call(w.admin, "GET", "/api/v1/cases?q=welcome%20flowless")).body.total).toBe(0);
      expect((await call(w.admin, "DELETE", `/api/v1/settings/flows/${flow.body.id}`)).status).toBe(204);
    });
  });

  describe(`crm on ${backend.name}: sharing property`, () => {
    const roles = ["ceo", "sales-manager", "sales-rep", "support"] as const;
    const roleRef = fc.record({ role: fc.constantFrom(...roles), include_subordinates: fc.boolean() });
    const ownerRule = fc.record({ access: fc.constantFrom("read", "read_write"), owned_by: roleRef, share_with: roleRef });
    const criterion = fc.oneof(
      fc.record({ field: fc.constant("rating"), op: fc.constantFrom("eq", "ne"), value: fc.constantFrom("Hot", "Warm", "Cold", null) }),
      fc.record({ field: fc.constant("rating"), op: fc.constant("in"), value: fc.subarray(["Hot", "Warm", "Cold"], { minLength: 1 }) }),
      fc.record({ field: fc.constant("company"), op: fc.constant("contains"), value: fc.constantFrom("acme", "ini", "x") }),
    );
    const criteriaRule = fc.record({
      access: fc.constantFrom("read", "read_write"),
      criteria: fc.array(criterion, { minLength: 1, maxLength: 2 }),
      share_with: roleRef,
    });
    const config = fc.record({
      defaultAccess: fc.constantFrom("private", "read", "read_write"),
      rules: fc.array(fc.oneof(ownerRule, criteriaRule), { maxLength: 3 }),
      // Saves made under those rules: each rewrites its lead's access rows one record at a time
      // (the rules' own change rebuilt every row).
      saves: fc.array(fc.record({ lead: fc.nat({ max: 11 }), rating: fc.constantFrom("Hot", "Warm", "Cold", null), owner: fc.nat({ max: 5 }) }), {
        maxLength: 4,
      }),
    });

    // An independent model of the sharing rules docs/crm.md states, to check the server against.
    const parent: Record<string, string | null> = { ceo: null, "sales-manager": "ceo", "sales-rep": "sales-manager", support: "ceo" };
    const aboveOrSelf = (role: string): string[] => (parent[role] === null ? [role] : [role, ...aboveOrSelf(parent[role]!)]);
    const below = (role: string): string[] => roles.filter((r) => r !== role && aboveOrSelf(r).includes(role));
    type Lead = { owner: string; rating: string | null; company: string };
    type Rule = {
      access: string;
      share_with: { role: string; include_subordinates: boolean };
      owned_by?: { role: string; include_subordinates: boolean };
      criteria?: { field: string; op: string; value: any }[];
    };
    const meets = (lead: Lead, c: { field: string; op: string; value: any }) => {
      const v = c.field === "rating" ? lead.rating : lead.company;
      if (c.op === "eq") return v === c.value;
      if (c.op === "ne") return c.value === null ? v !== null : v === null || v !== c.value;
      if (c.op === "in") return v !== null && c.value.includes(v);
      return v?.toLowerCase().includes(c.value);
    };
    function modelCanRead(
      userRole: string | null,
      isAdmin: boolean,
      user: string,
      lead: Lead,
      ownerRole: string | null,
      defaultAccess: string,
      rules: Rule[],
    ): boolean {
      if (isAdmin || defaultAccess !== "private" || lead.owner === user) return true;
      if (userRole !== null && ownerRole !== null && below(userRole).includes(ownerRole)) return true;
      return rules.some((rule) => {
        const t = rule.share_with;
        const granted = userRole !== null && (aboveOrSelf(t.role).includes(userRole) || (t.include_subordinates && below(t.role).includes(userRole)));
        if (!granted) return false;
        if (rule.owned_by !== undefined)
          return ownerRole !== null && [rule.owned_by.role, ...(rule.owned_by.include_subordinates ? below(rule.owned_by.role) : [])].includes(ownerRole);
        return rule.criteria!.every((c) => meets(lead, c));
      });
    }

    test("for random defaults and sharing rules, each user's list holds exactly the records their single reads allow, as the model says, from the newest records and from all the matches alike", async () => {
      expect((await call(w.admin, "POST", "/api/v1/settings/roles", { name: "support", parent: "ceo" })).status).toBeOneOf([201, 409]);
      const tokens: Record<string, string> = { admin: w.admin, manager: w.manager, alice: w.alice, bob: w.bob };
      const roleless = await call(w.admin, "POST", "/api/v1/settings/users", { username: "nora" });
      expect(roleless.status).toBe(201);
      tokens.nora = (await w.crm.tool(["token", "create", "--user", "nora"])).stdout.trim();
      const supportUser = await call(w.admin, "POST", "/api/v1/settings/users", { username: "sue", role: "support" });
      tokens.sue = (await w.crm.tool(["token", "create", "--user", "sue"])).stdout.trim();
      const owners = [w.ids.alice, w.ids.bob, w.ids.manager, w.ids.admin, roleless.body.id, supportUser.body.id];
      const ratings = ["Hot", "Warm", "Cold", null];
      const companies = ["Acme", "Initech", "Umbrella"];
      const ownerNames = ["alice", "bob", "manager", "admin", "nora", "sue"];
      const roleOf: Record<string, string | null> = { alice: "sales-rep", bob: "sales-rep", manager: "sales-manager", admin: null, nora: null, sue: "support" };
      const ids: number[] = [];
      const leads = new Map<number, Lead>();
      for (let i = 0; i < 12; i++) {
        const made = await create(w.admin, "leads", {
          last_name: `Propcase${i}`,
          company: companies[i % 3],
          rating: ratings[i % 4],
          owner_id: owners[i % owners.length],
        });
        ids.push(made.id);
        leads.set(made.id, { owner: ownerNames[i % owners.length]!, rating: ratings[i % 4]!, company: companies[i % 3]! });
      }
      const sortedIds = (page: { data: { id: number }[] }) => page.data.map((r) => r.id).sort((a, b) => a - b);
      // A second server on the same store that looks among no more than one newest record, so its
      // searches are chosen from all the matches (on PostgreSQL, decided on each match's own row).
      const fromMatches = await startCrm(w.crm.db, ["--search-newest-rows", "1"]);
      try {
        await fc.assert(
          fc.asyncProperty(config, async ({ defaultAccess, rules, saves }) => {
            for (const r of (await call(w.admin, "GET", "/api/v1/settings/sharing/rules")).body.data) {
              if (r.object === "leads") expect((await call(w.admin, "DELETE", `/api/v1/settings/sharing/rules/${r.id}`)).status).toBe(204);
            }
            await setDefaults({ leads: defaultAccess });
            for (const [i, rule] of rules.entries()) {
              const r = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", { object: "leads", name: `prop ${i}`, ...rule });
              expect(r.status, JSON.stringify(r.body)).toBe(201);
            }
            for (const save of saves) {
              const id = ids[save.lead]!;
              const changed = await call(w.admin, "PATCH", `/api/v1/leads/${id}`, { rating: save.rating, owner_id: owners[save.owner] });
              expect(changed.status, JSON.stringify(changed.body)).toBe(200);
              leads.set(id, { ...leads.get(id)!, rating: save.rating, owner: ownerNames[save.owner]! });
            }
            for (const [who, token] of Object.entries(tokens)) {
              const listed = await call(token, "GET", "/api/v1/leads?q=propcase&per=100");
              const listedIds = sortedIds(listed.body);
              expect(listed.body.total).toBe(listedIds.length);
              const matched = (await fromMatches.call(token, "GET", "/api/v1/leads?q=propcase&per=100")).body;
              expect(sortedIds(matched), who).toEqual(listedIds);
              expect([matched.total, matched.total_exact]).toEqual([listedIds.length, true]);
              const readable: number[] = [];
              for (const id of ids) {
                const read = await call(token, "GET", `/api/v1/leads/${id}`);
                expect([200, 404]).toContain(read.status);
                if (read.status === 200) readable.push(id);
              }
              expect(listedIds, who).toEqual(readable);
              const expected = ids.filter((id) => {
                const lead = leads.get(id)!;
                return modelCanRead(roleOf[who]!, who === "admin", who, lead, roleOf[lead.owner]!, defaultAccess, rules as Rule[]);
              });
              expect(readable, `${who} under ${JSON.stringify({ defaultAccess, rules })}`).toEqual(expected);
              if (who === "admin" || defaultAccess !== "private") expect(readable).toEqual(ids);
            }
          }),
          { numRuns: 20 },
        );
      } finally {
        await fromMatches.stop();
      }
    });
  });
}
