/**
 * Client input at its edges, per database (api-sqlite.test.ts, api-postgres.test.ts): each case
 * the no-500 property found or stands for, written out — owner_id null, exact dates, text a store
 * cannot keep, ids at and past the store's integer range, blank values in typed fields, and two
 * requests racing for one name — with the status and body the client gets and what is stored after.
 */
import { describe, expect, test } from "bun:test";
import { crmPasswordCharsMax, crmPasswordCharsMin, crmRecordIdMax } from "../../../src/core/limits.ts";
import { type Backend, type World, worldForSuite } from "./crm.ts";

export function crmInputSuite(backend: Backend): void {
  let w: World;
  worldForSuite(backend, (made) => {
    w = made;
  });
  const call = (token: string | null, method: string, path: string, body?: unknown) => w.crm.call(token, method, path, body);
  const created = async (token: string, object: string, body: unknown) => {
    const r = await call(token, "POST", `/api/v1/${object}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body;
  };
  const details = (r: { status: number; body: any }) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    return r.body.details;
  };

  describe(`crm on ${backend.name}: owner_id`, () => {
    test("on create, owner_id null means the caller, as leaving it out does, for every object", async () => {
      for (const [object, body] of [
        ["accounts", { name: "Owned" }],
        ["contacts", { last_name: "Owned" }],
        ["leads", { last_name: "Owned", company: "Owned" }],
        ["opportunities", { name: "Owned", close_date: "2025-01-01" }],
        ["cases", { subject: "Owned" }],
      ] as const) {
        expect((await created(w.alice, object, { ...body, owner_id: null })).owner_id, object).toBe(w.ids.alice);
        expect((await created(w.manager, object, body)).owner_id, object).toBe(w.ids.manager);
      }
    });

    test("on PATCH, owner_id null is a 422 detail on owner_id and the record keeps its owner", async () => {
      const lead = await created(w.alice, "leads", { last_name: "Keeps", company: "Owner" });
      const r = await call(w.alice, "PATCH", `/api/v1/leads/${lead.id}`, { owner_id: null, rating: "Hot" });
      expect(details(r)).toEqual([{ field: "owner_id", message: "a record always has an owner" }]);
      expect((await call(w.alice, "GET", `/api/v1/leads/${lead.id}`)).body).toEqual(lead);
      // Another owner is a change of owner, as before.
      expect((await call(w.alice, "PATCH", `/api/v1/leads/${lead.id}`, { owner_id: w.ids.bob })).body.owner_id).toBe(w.ids.bob);
    });
  });

  describe(`crm on ${backend.name}: updated_since is an exact date or date-time`, () => {
    const status = async (since: string) => (await call(w.alice, "GET", `/api/v1/accounts?updated_since=${encodeURIComponent(since)}`)).status;

    test("real calendar days pass, impossible ones are 400 (not rolled over to the next month)", async () => {
      for (const ok of ["2024-02-29", "2000-02-29", "2024-02-29T23:59:59Z", "2024-02-29T23:59:59.999999999+14:00", "2024-02-29T00:00-23:59"]) {
        expect(await status(ok), ok).toBe(200);
      }
      for (const bad of ["2023-02-29", "1900-02-29", "2024-02-30", "2024-04-31", "2024-13-01", "2024-02-29T24:00:00Z", "2024-02-29T23:59:60Z"]) {
        const r = await call(w.alice, "GET", `/api/v1/accounts?updated_since=${encodeURIComponent(bad)}`);
        expect(r.status, bad).toBe(400);
        expect(r.body.error, bad).toBe("bad_request");
        expect(r.body.message, bad).toContain("updated_since");
      }
      for (const bad of ["2024-02-29T12:00:00+24:00", "2024-02-29T12:00:00", "2024-02-29t12:00:00z", "2024-02-29 12:00:00Z", "9999-12-31T23:59:59-00:01"]) {
        expect(await status(bad), bad).toBe(400);
      }
    });

    test("an offset is applied: a record stamped T is in the list since T written in any zone, and not since T + 1 ms", async () => {
      const record = await created(w.alice, "accounts", { name: "Zoned since" });
      const t = new Date(record.updated_at);
      const ids = async (since: string) =>
        (await call(w.alice, "GET", `/api/v1/accounts?q=zoned&updated_since=${encodeURIComponent(since)}`)).body.data.map((r: { id: number }) => r.id);
      // T in +05:30: the same instant, five and a half hours later on the clock.
      const plus = new Date(t.getTime() + 330 * 60_000).toISOString().replace("Z", "+05:30");
      expect(await ids(plus)).toEqual([record.id]);
      const minus = new Date(t.getTime() - 600 * 60_000 + 1).toISOString().replace("Z", "-10:00");
      expect(await ids(minus)).toEqual([]);
    });
  });

  describe(`crm on ${backend.name}: text a store cannot keep as sent`, () => {
    test("NUL and unpaired surrogates in a text field are 422 details, on create and PATCH, and nothing is stored", async () => {
      const before = (await call(w.admin, "GET", "/api/v1/leads?per=1")).body.total;
      const r = await call(w.alice, "POST", "/api/v1/leads", { last_name: "a\u0000b", company: "\ud800", description: "ok\udfff" });
      expect(details(r)).toEqual([
        { field: "last_name", message: "must not contain the NUL character" },
        { field: "company", message: "must be valid Unicode text (no unpaired surrogates)" },
        { field: "description", message: "must be valid Unicode text (no unpaired surrogates)" },
      ]);
      expect((await call(w.admin, "GET", "/api/v1/leads?per=1")).body.total).toBe(before);
      // A pair of surrogates is one character (an emoji), stored and read back as sent.
      const lead = await created(w.alice, "leads", { last_name: "Smile \ud83d\ude00", company: "Emoji" });
      expect((await call(w.alice, "GET", `/api/v1/leads/${lead.id}`)).body.last_name).toBe("Smile \ud83d\ude00");
      expect(details(await call(w.alice, "PATCH", `/api/v1/leads/${lead.id}`, { first_name: "\u0000" }))).toEqual([
        { field: "first_name", message: "must not contain the NUL character" },
      ]);
    });

    test("q with a NUL is 400; token, sharing rule and picklist names with one are 422", async () => {
      const q = await call(w.alice, "GET", `/api/v1/leads?q=${encodeURIComponent("a\u0000b")}`);
      expect(q.status).toBe(400);
      expect(q.body.message).toBe("q: must not contain the NUL character");
      expect(details(await call(w.alice, "POST", "/api/v1/settings/tokens", { name: "lap\u0000top" }))).toEqual([
        { field: "name", message: "must not contain the NUL character" },
      ]);
      const rule = { object: "leads", access: "read", share_with: { role: "sales-rep" } };
      expect(details(await call(w.admin, "POST", "/api/v1/settings/sharing/rules", { ...rule, name: "n\u0000", owned_by: { role: "ceo" } }))).toEqual([
        { field: "name", message: "must not contain the NUL character" },
      ]);
      const contains = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        ...rule,
        name: "nul criteria",
        criteria: [{ field: "company", op: "contains", value: "a\u0000" }],
      });
      expect(details(contains)).toEqual([{ field: "criteria[0].value", message: "must not contain the NUL character" }]);
      const picklist = await call(w.admin, "POST", "/api/v1/settings/fields", {
        object: "leads",
        name: "nul_pick",
        type: "picklist",
        values: ["ok", "\ud800"],
      });
      expect(details(picklist)).toEqual([{ field: "values[1]", message: "must be valid Unicode text (no unpaired surrogates)" }]);
      expect((await call(w.admin, "GET", "/api/v1/settings/sharing/rules")).body.data).toEqual([]);
      expect((await call(w.admin, "GET", "/api/v1/settings/fields")).body.data).toEqual([]);
    });
  });

  describe(`crm on ${backend.name}: blank values in typed fields`, () => {
    test('"" in a number, date or reference field is a type error, not a blank; in a picklist it clears the field', async () => {
      const account = await created(w.alice, "accounts", { name: "Blanks" });
      expect(details(await call(w.alice, "PATCH", `/api/v1/accounts/${account.id}`, { employees: "", annual_revenue: " " }))).toEqual([
        { field: "employees", message: "must be a number" },
        { field: "annual_revenue", message: "must be a number" },
      ]);
      expect(details(await call(w.alice, "POST", "/api/v1/contacts", { last_name: "Blank", account_id: "" }))).toEqual([
        { field: "account_id", message: `must be a record id (a whole number from 1 to ${crmRecordIdMax})` },
      ]);
      expect(details(await call(w.alice, "POST", "/api/v1/opportunities", { name: "Blank", close_date: "" }))).toEqual([
        { field: "close_date", message: "must be a date YYYY-MM-DD" },
      ]);
      const kase = await created(w.alice, "cases", { subject: "Blank origin", origin: "" });
      expect(kase.origin).toBeNull();
      expect(details(await call(w.alice, "PATCH", `/api/v1/cases/${kase.id}`, { origin: " " }))).toEqual([
        { field: "origin", message: "must be one of: Phone, Email, Web" },
      ]);
    });
  });

  describe(`crm on ${backend.name}: ids at and past the store's integer range`, () => {
    test(`a path id of ${crmRecordIdMax} is looked up (404), one past it is 404 without asking; so are tokens and rules`, async () => {
      for (const id of [crmRecordIdMax, crmRecordIdMax + 1, 2 ** 53 + 1]) {
        expect((await call(w.alice, "GET", `/api/v1/leads/${id}`)).status, String(id)).toBe(404);
        expect((await call(w.alice, "PATCH", `/api/v1/leads/${id}`, { rating: "Hot" })).status, String(id)).toBe(404);
        expect((await call(w.alice, "DELETE", `/api/v1/settings/tokens/${id}`)).status, String(id)).toBe(404);
        expect((await call(w.admin, "DELETE", `/api/v1/settings/flows/${id}`)).status, String(id)).toBe(404);
      }
      expect((await call(w.alice, "GET", `/api/v1/leads/${crmRecordIdMax}`)).body.message).toBe(`no leads record ${crmRecordIdMax}`);
    });

    test(`a reference of ${crmRecordIdMax} names no record; one past it, or past 2^53, is not a record id`, async () => {
      const body = (account_id: unknown) => ({ last_name: "Far", account_id });
      expect(details(await call(w.alice, "POST", "/api/v1/contacts", body(crmRecordIdMax)))).toEqual([
        { field: "account_id", message: `no accounts record ${crmRecordIdMax} that you can see` },
      ]);
      for (const id of [crmRecordIdMax + 1, 2 ** 53 + 2, 1.5, 0, -1]) {
        expect(details(await call(w.alice, "POST", "/api/v1/contacts", body(id))), String(id)).toEqual([
          { field: "account_id", message: `must be a record id (a whole number from 1 to ${crmRecordIdMax})` },
        ]);
      }
      expect(details(await call(w.alice, "POST", "/api/v1/contacts", { last_name: "Far", owner_id: crmRecordIdMax + 1 }))[0].field).toBe("owner_id");
    });

    test("a sharing rule's criteria on a reference take the same ids; a timestamp is stored as the UTC instant rows hold", async () => {
      const base = { object: "contacts", access: "read", share_with: { role: "sales-rep" } };
      expect(
        details(
          await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
            ...base,
            name: "far",
            criteria: [{ field: "account_id", op: "gt", value: crmRecordIdMax + 1 }],
          }),
        ),
      ).toEqual([{ field: "criteria[0].value", message: `must be a record id (a whole number from 1 to ${crmRecordIdMax})` }]);
      const bad = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        ...base,
        name: "feb30",
        criteria: [{ field: "created_at", op: "gte", value: "2024-02-30" }],
      });
      expect(details(bad)[0].field).toBe("criteria[0].value");
      const zoned = await call(w.admin, "POST", "/api/v1/settings/sharing/rules", {
        ...base,
        name: "zoned",
        criteria: [{ field: "created_at", op: "gte", value: "2024-01-01T00:00:00+01:00" }],
      });
      expect(zoned.status, JSON.stringify(zoned.body)).toBe(201);
      expect(zoned.body.criteria).toEqual([{ field: "created_at", op: "gte", value: "2023-12-31T23:00:00.000Z" }]);
      expect((await call(w.admin, "DELETE", `/api/v1/settings/sharing/rules/${zoned.body.id}`)).status).toBe(204);
    });
  });

  describe(`crm on ${backend.name}: settings input`, () => {
    test(`a password through the API has ${crmPasswordCharsMin} to ${crmPasswordCharsMax} characters, as the CLI asks`, async () => {
      const user = (username: string, password: string) => call(w.admin, "POST", "/api/v1/settings/users", { username, password });
      const message = `${crmPasswordCharsMin} to ${crmPasswordCharsMax} characters`;
      expect(details(await user("pw-short", "p".repeat(crmPasswordCharsMin - 1)))).toEqual([{ field: "password", message }]);
      expect(details(await user("pw-empty", ""))).toEqual([{ field: "password", message }]);
      expect((await user("pw-min", "p".repeat(crmPasswordCharsMin))).status).toBe(201);
      expect((await user("pw-max", "p".repeat(crmPasswordCharsMax))).status).toBe(201);
      expect(details(await user("pw-long", "p".repeat(crmPasswordCharsMax + 1)))).toEqual([{ field: "password", message }]);
      const names = (await call(w.admin, "GET", "/api/v1/settings/users")).body.data.map((u: { username: string }) => u.username);
      expect(names.filter((n: string) => n.startsWith("pw-")).sort()).toEqual(["pw-max", "pw-min"]);
    });

    test("two admins adding the same custom field, or the same user, at once: one 201, the other 409, and one column", async () => {
      const field = { object: "accounts", name: "raced", type: "text" };
      const fields = await Promise.all([1, 2, 3, 4, 5, 6].map(() => call(w.admin, "POST", "/api/v1/settings/fields", field)));
      expect(fields.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      const users = await Promise.all([1, 2, 3, 4, 5, 6].map(() => call(w.admin, "POST", "/api/v1/settings/users", { username: "raced" })));
      expect(users.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      expect((await created(w.alice, "accounts", { name: "Raced", cf_raced: "x" })).cf_raced).toBe("x");
    });
  });
}
