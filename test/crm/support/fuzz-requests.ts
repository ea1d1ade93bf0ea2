/**
 * Random requests to every crm route, for the "no 500, and a refusal changes nothing" property
 * (no-500-suite.ts). Bodies start near valid — the fields a route takes, with plausible values —
 * and any part may be missing, replaced by junk (wrong types, NUL, lone surrogates, numbers past
 * 2^31 and 2^53, text at and past its limit, impossible dates) or joined by unknown keys, so the
 * requests reach past the first check into the store. Ids are small (they name existing rows
 * often) or edge values; query strings mix valid values with malformed ones.
 */
import fc from "fast-check";
import { customFieldTypes, type FieldDef, standardFields } from "../../../src/crm/objects/fields.ts";
import { crmObjects } from "../../../src/crm/rules/record.ts";

/** Who sends a request: `disabled` holds the token of a user the CLI disabled; `bogus` one that never existed. */
export type Actor = "admin" | "manager" | "rep" | "anonymous" | "bogus" | "disabled";

export type FuzzBody = { json: unknown } | { raw: string; contentType: string };

export interface FuzzRequest {
  actor: Actor;
  method: string;
  path: string;
  body?: FuzzBody;
}

/** Custom fields the suite creates on every object before fuzzing, and names the fuzz may add. */
export const setupCustomFields: { name: string; type: string; values?: string[] }[] = [
  { name: "tier", type: "picklist", values: ["Gold", "Silver"] },
  { name: "score", type: "number" },
  { name: "vip", type: "boolean" },
  { name: "renewal", type: "date" },
  { name: "notes", type: "text" },
];
const fuzzFieldNames = ["f1", "f2", "zz"];
const roles = ["ceo", "sales-manager", "sales-rep"];
const accessLevels = ["private", "read", "read_write"];

const edgeNumbers = [0, -1, -0, 0.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, 2 ** 63, 2 ** 64, 1e308, -1e308, 5e-324];
const edgeStrings = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfff",
  "x".repeat(255),
  "x".repeat(256),
  "é".repeat(256),
  "1",
  "1e3",
  "NaN",
  "'; DROP TABLE leads; --",
  "%",
  "_",
  "\\",
  '"',
  "*",
  "NEAR(a b)",
  "a OR b",
  "2024-02-29",
  "2023-02-29",
  "2024-02-30",
  "0000-01-01",
  "9999-12-31",
  "2024-02-29T24:00:00Z",
];

/** Values of the wrong kind for most fields, and values at the edges of every kind. */
/** Text no store can keep as sent: PostgreSQL refuses NUL, and an unpaired surrogate has no UTF-8 form. */
const unstorable = fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udfff");

export const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: unstorable },
  { weight: 4, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { a: 1 }, ...edgeNumbers, ...edgeStrings) },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** Mostly `arb`, sometimes junk. */
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 8, arbitrary: arb }, { weight: 1, arbitrary: junk });

const smallId = fc.integer({ min: 1, max: 15 });
const idValue = fc.oneof(
  { weight: 4, arbitrary: smallId },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, 2 ** 53, 1e20) },
);

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** Calendar dates, valid or nearly so: day 0 to 32 of month 0 to 13, years 0 to 10000. */
const dateText = fc.oneof(
  fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc
    .tuple(fc.integer({ min: 0, max: 10000 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`),
  fc.constantFrom("2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2024-02-30", "2024-04-31", "2024-1-1", "24-01-01", "2024/01/01"),
);

const zone = fc.oneof(
  fc.constant("Z"),
  fc.constant(""),
  fc.constant("z"),
  fc
    .tuple(fc.constantFrom("+", "-"), fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.boolean())
    .map(([s, h, m, colon]) => `${s}${pad(h, 2)}${colon ? ":" : ""}${pad(m, 2)}`),
);

/** Date-times, valid or nearly: hours to 25, minutes and seconds to 61, zones to ±25:61. */
const dateTimeText = fc.oneof(
  fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString()),
  fc
    .tuple(
      dateText,
      fc.integer({ min: 0, max: 25 }),
      fc.integer({ min: 0, max: 61 }),
      fc.option(fc.integer({ min: 0, max: 61 })),
      fc.option(fc.nat(999999999)),
      zone,
    )
    .map(([date, h, mi, s, frac, z]) => `${date}T${pad(h, 2)}:${pad(mi, 2)}${s === null ? "" : `:${pad(s, 2)}${frac === null ? "" : `.${frac}`}`}${z}`),
  fc.constantFrom(
    "2024-02-29T24:00:00Z",
    "2024-02-28T24:00Z",
    "2024-12-31T23:59:60Z",
    "2024-01-01T00:00:00+14:00",
    "2024-01-01T00:00:00+24:00",
    "2024-01-01T00:00:00-00:00",
    "2024-01-01T00:00:00+0530",
    "2024-01-01t00:00:00z",
    "2024-01-01 00:00:00Z",
    "9999-12-31T23:59:59-23:59",
    "0000-01-01T00:00:00+23:59",
    "+010000-01-01T00:00:00Z",
    "2024-W01",
    "2024-001",
    "1714521600",
  ),
);

const fieldsOf = (object: string): FieldDef[] => [
  ...standardFields[object as keyof typeof standardFields],
  ...setupCustomFields.map((c) => ({ name: `cf_${c.name}`, type: c.type, values: c.values }) as FieldDef),
];

/** A plausible value for a field, by its type. */
function valueFor(field: FieldDef): fc.Arbitrary<unknown> {
  switch (field.type) {
    case "text":
      return fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom("Acme", "Initech", "Zed", "a@b.example") },
        { weight: 8, arbitrary: fc.string({ maxLength: 12 }) },
        { weight: 1, arbitrary: unstorable },
      );
    case "longtext":
      return fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("d".repeat(32000), "d".repeat(32001)));
    case "picklist":
      return fc.constantFrom(...(field.values ?? ["x"]), ...(field.values ?? []).map((v) => v.toLowerCase()));
    case "number":
      return fc.oneof(fc.integer({ min: -1000, max: 1_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
    case "boolean":
      return fc.boolean();
    case "date":
      return dateText;
    case "reference":
      return field.name === "owner_id" ? fc.oneof(fc.integer({ min: 1, max: 10 }), fc.constant(null), idValue) : idValue;
    case "id":
      return idValue;
    case "timestamp":
      return dateTimeText;
  }
}

const extraKeys = fc.dictionary(fc.oneof(fc.constantFrom("nickname", "__proto__", "constructor", "cf_nope", ""), fc.string({ maxLength: 6 })), junk, {
  maxKeys: 2,
});

/**
 * An object of `required` keys (one sometimes left out) and up to four of `spec`'s other keys, with
 * plausible-or-junk values, sometimes with unknown keys; now and then junk or malformed JSON instead.
 */
function bodyOf(spec: Record<string, fc.Arbitrary<unknown>>, required: readonly string[] = []): fc.Arbitrary<FuzzBody> {
  const optional = Object.keys(spec).filter((k) => !required.includes(k));
  const dropped =
    required.length === 0 ? fc.constant(null) : fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...required) });
  const near = fc
    .tuple(fc.subarray(optional, { maxLength: Math.min(4, optional.length) }), dropped)
    .chain(([chosen, drop]) => fc.record(Object.fromEntries([...required.filter((k) => k !== drop), ...chosen].map((k) => [k, maybe(spec[k]!)]))));
  const extras = fc.oneof({ weight: 7, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extraKeys });
  const withExtras = fc.tuple(near, extras).map(([b, extra]) => ({ ...extra, ...b }));
  return fc.oneof(
    { weight: 20, arbitrary: withExtras.map((json) => ({ json })) },
    { weight: 1, arbitrary: junk.map((json) => ({ json })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<FuzzBody>(
        { raw: "{nope", contentType: "application/json" },
        { raw: "", contentType: "application/json" },
        { raw: "{}", contentType: "text/plain" },
        { raw: '{"a":1', contentType: "application/json" },
        { raw: `${"[".repeat(5000)}${"]".repeat(5000)}`, contentType: "application/json" },
        { raw: '{"last_name":"\\ud800","company":"x"}', contentType: "application/json" },
      ),
    },
  );
}

const recordBody = (object: string, isCreate: boolean) =>
  bodyOf(
    Object.fromEntries(fieldsOf(object).map((f) => [f.name, valueFor(f)])),
    isCreate
      ? fieldsOf(object)
          .filter((f) => f.required && f.defaultValue === undefined)
          .map((f) => f.name)
      : [],
  );

const objectName = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom(...crmObjects) },
  { weight: 1, arbitrary: fc.constantFrom("widgets", "users", "LEADS", "") },
);

const pathId = fc.oneof(
  { weight: 5, arbitrary: smallId.map(String) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "0",
      "-1",
      "1.5",
      "abc",
      "2147483647",
      "2147483648",
      "4294967296",
      "9007199254740991",
      "9007199254740993",
      "999999999999999",
      "1000000000000000",
      "99999999999999999999",
      "1e3",
      "0x10",
      "%201",
      "01",
      "%31",
      "%00",
      "%D9%A1",
    ),
  },
);

const intText = fc.oneof(
  fc.integer({ min: -5, max: 120 }).map(String),
  fc.constantFrom("", "0", "1", "100", "101", "100000", "100001", "1.0", "1e2", " 1", "+1", "0x1", "999999999", "9999999999", "١"),
);

const searchText = fc.oneof(
  fc.constantFrom(
    "acme",
    "zed initech",
    "a",
    "ab",
    '"',
    '""',
    "*",
    "a*",
    "NEAR(a b)",
    "a OR b",
    "%",
    "_",
    "\u0000",
    "a\u0000bc",
    "x".repeat(200),
    "x".repeat(201),
  ),
  fc.string({ maxLength: 12 }),
  fc.array(fc.constantFrom("acme", "ze", "zz"), { minLength: 8, maxLength: 9 }).map((t) => t.join(" ")),
);

const toQuery = ({ extra, ...params }: Record<string, string | undefined>) => {
  const search = new URLSearchParams(params as Record<string, string>);
  if (extra !== undefined) search.set(extra, "1");
  const text = search.toString();
  return text === "" ? "" : `?${text}`;
};

const listQuery = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          q: fc.constantFrom("acme", "zed", "ze ac", "initech", "a"),
          updated_since: fc.oneof(dateText, dateTimeText).filter((t) => /^\d{4}-\d{2}-\d{2}(T.*Z)?$/.test(t)),
          page: fc.integer({ min: 1, max: 3 }).map(String),
          per: fc.integer({ min: 1, max: 100 }).map(String),
        },
        { requiredKeys: [] },
      )
      .map(toQuery),
  },
  {
    weight: 3,
    arbitrary: fc
      .record(
        { q: searchText, updated_since: fc.oneof(dateText, dateTimeText), page: intText, per: intText, extra: fc.string({ maxLength: 4 }) },
        { requiredKeys: [] },
      )
      .map(toQuery),
  },
  { weight: 1, arbitrary: fc.constantFrom("?q=%", "?q=%00", "?q=%ff%fe", "?updated_since=2024-02-30", "?page=1&page=2", "?per=", "?updated_since=%00") },
);

const name = (samples: string[]) =>
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...samples) }, { weight: 2, arbitrary: fc.string({ maxLength: 10 }) }, { weight: 1, arbitrary: unstorable });

/** A comparison of one field, with an op and a value of the kind the op takes (docs/crm-rules.md). */
const typedComparison = (object: string) =>
  fc
    .constantFrom(...fieldsOf(object))
    .chain((f) =>
      fc.oneof(
        fc.record({ field: fc.constant(f.name), op: fc.constantFrom("eq", "ne", "changed_to", "gt", "gte", "lt", "lte"), value: valueFor(f) }),
        fc.record({ field: fc.constant(f.name), op: fc.constant("in"), value: fc.array(valueFor(f), { minLength: 1, maxLength: 3 }) }),
        fc.record({ field: fc.constant(f.name), op: fc.constant("contains"), value: fc.constantFrom("a", "Zed", "\u0000") }),
        fc.record({ field: fc.constant(f.name), op: fc.constantFrom("blank", "not_blank", "changed") }),
      ),
    );
const comparison = (object: string) =>
  fc.oneof(
    { weight: 4, arbitrary: typedComparison(object) },
    {
      weight: 1,
      arbitrary: fc.record(
        {
          field: maybe(fc.constantFrom(...fieldsOf(object).map((f) => f.name))),
          op: maybe(fc.constantFrom("eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "blank", "not_blank", "changed", "changed_to")),
          value: fc.oneof(...fieldsOf(object).map(valueFor), junk),
        },
        { requiredKeys: ["field", "op"] },
      ),
    },
  );
const condition = (object: string) =>
  fc.oneof(
    { weight: 3, arbitrary: comparison(object) },
    { weight: 1, arbitrary: fc.record({ all: fc.array(comparison(object), { maxLength: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ any: fc.array(comparison(object), { maxLength: 3 }) }) },
  );
const valueExpr = (object: string) =>
  fc.oneof(
    fc.oneof(...fieldsOf(object).map(valueFor), junk),
    fc.record({ ref: fc.constantFrom(...fieldsOf(object).map((f) => f.name)) }),
    fc.record({
      template: fc.oneof(fc.constantFrom(...fieldsOf(object).map((f) => `Hi {${f.name}}`)), fc.constantFrom("plain", "{nope}", "x".repeat(300))),
    }),
  );
const settableNames = (object: string) =>
  fieldsOf(object)
    .filter((f) => !["id", "created_at", "updated_at"].includes(f.name))
    .map((f) => f.name);
const settableField = (object: string) => maybe(fc.constantFrom(...settableNames(object)));

const ruleBodies = (object: string) => ({
  validation: bodyOf(
    {
      name: name(["v1", "v2", "Check_1"]),
      object: fc.constant(object),
      condition: condition(object),
      message: name(["bad", "x".repeat(1000), "x".repeat(1001)]),
      error_field: settableField(object),
      active: fc.boolean(),
    },
    ["name", "object", "condition", "message"],
  ),
  workflow: bodyOf(
    {
      name: name(["w1", "w2"]),
      object: fc.constant(object),
      trigger: fc.constantFrom("created", "created_and_edited", "created_and_edited_to_meet"),
      condition: condition(object),
      updates: fc.array(fc.record({ field: settableField(object), value: valueExpr(object) }), { maxLength: 3 }),
    },
    ["name", "object", "trigger", "condition", "updates"],
  ),
  flow: bodyOf(
    {
      name: name(["fl1", "fl2"]),
      object: fc.constant(object),
      timing: fc.constantFrom("before_save", "after_save", "after_save"),
      trigger: fc.constantFrom("created", "updated", "created_or_updated"),
      entry: condition(object),
      steps: fc.array(
        fc.oneof(
          fc.record({ type: fc.constant("set_field"), field: settableField(object), value: valueExpr(object) }),
          fc.constantFrom(...crmObjects).chain((target) =>
            fc.record({
              type: fc.constant("create_record"),
              object: fc.constant(target),
              values: fc.dictionary(fc.constantFrom(...settableNames(target)), valueExpr(object), { maxKeys: 4 }),
            }),
          ),
          fc.record({
            type: fc.constant("decision"),
            branches: fc.array(fc.record({ condition: condition(object), steps: fc.constant([]) }), { maxLength: 2 }),
          }),
        ),
        { maxLength: 3 },
      ),
    },
    ["name", "object", "timing", "trigger", "steps"],
  ),
});

const get = (path: fc.Arbitrary<string>) => path.map((p) => ({ method: "GET", path: p }));

const settingsRequests = fc.oneof(
  get(fc.constantFrom("/api/v1/settings/tokens", "/api/v1/settings/users", "/api/v1/settings/roles", "/api/v1/settings/fields")),
  get(fc.constantFrom("/api/v1/settings/sharing", "/api/v1/settings/sharing/defaults", "/api/v1/settings/sharing/rules")),
  get(fc.constantFrom("/api/v1/settings/validation-rules", "/api/v1/settings/workflow-rules", "/api/v1/settings/flows")),
  bodyOf({ name: name(["laptop", "n".repeat(100), "n".repeat(101)]) }).map((body) => ({ method: "POST", path: "/api/v1/settings/tokens", body })),
  pathId.map((id) => ({ method: "DELETE", path: `/api/v1/settings/tokens/${id}` })),
  bodyOf(
    {
      username: name(["u1", "u2", "alice", "a".repeat(64), "a".repeat(65), "bad name"]),
      password: name(["long enough password", "short"]),
      role: fc.constantFrom(...roles, "ghost"),
      admin: fc.boolean(),
    },
    ["username"],
  ).map((body) => ({ method: "POST", path: "/api/v1/settings/users", body })),
  bodyOf({ name: name(["r1", "r2", "ceo", "a".repeat(64), "a".repeat(65)]), parent: fc.constantFrom(...roles, "ghost") }, ["name"]).map((body) => ({
    method: "POST",
    path: "/api/v1/settings/roles",
    body,
  })),
  fc
    .constantFrom(...customFieldTypes, "json")
    .chain((type) =>
      bodyOf(
        {
          object: fc.constantFrom(...crmObjects),
          name: fc.oneof(name([...fuzzFieldNames, "a".repeat(40), "a".repeat(41), "Bad", "1x"]), fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/)),
          type: fc.constant(type),
          // Rarely required: a required field stays (fields are never dropped) and refuses every later create without it.
          required: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
          admin_only: fc.boolean(),
          values: fc.uniqueArray(
            fc.oneof({ weight: 6, arbitrary: fc.constantFrom("A", "B", "C") }, { weight: 1, arbitrary: fc.constantFrom("", "\u0000", "x".repeat(256)) }),
            {
              maxLength: 3,
            },
          ),
        },
        type === "picklist" ? ["object", "name", "type", "values"] : ["object", "name", "type"],
      ),
    )
    .map((body) => ({ method: "POST", path: "/api/v1/settings/fields", body })),
  bodyOf(Object.fromEntries([...crmObjects, "widgets"].map((o) => [o, fc.constantFrom(...accessLevels, "edit")]))).map((body) => ({
    method: "PATCH",
    path: "/api/v1/settings/sharing/defaults",
    body,
  })),
  fc
    .constantFrom(...crmObjects)
    .chain((object) =>
      bodyOf(
        {
          object: fc.constant(object),
          name: name(["s1", "x".repeat(100), "x".repeat(101)]),
          access: fc.constantFrom("read", "read_write", "edit"),
          share_with: fc.record({ role: fc.constantFrom(...roles, "ghost"), include_subordinates: maybe(fc.boolean()) }, { requiredKeys: [] }),
          criteria: fc.array(
            fc.oneof(
              { weight: 3, arbitrary: typedComparison(object).filter((c) => !["blank", "not_blank", "changed", "changed_to"].includes(c.op)) },
              {
                weight: 1,
                arbitrary: fc.record({
                  field: fc.constantFrom(...fieldsOf(object).map((f) => f.name), "nope"),
                  op: fc.constantFrom("eq", "ne", "gt", "gte", "lt", "lte", "in", "contains", "like"),
                  value: fc.oneof(...fieldsOf(object).map(valueFor), junk, fc.array(fc.oneof(...fieldsOf(object).map(valueFor)), { maxLength: 3 })),
                }),
              },
            ),
            { minLength: 1, maxLength: 3 },
          ),
        },
        ["object", "name", "access", "share_with", "criteria"],
      ),
    )
    .map((body) => ({ method: "POST", path: "/api/v1/settings/sharing/rules", body })),
  bodyOf(
    {
      object: fc.constantFrom(...crmObjects),
      name: name(["o1"]),
      access: fc.constantFrom("read", "read_write"),
      share_with: fc.record({ role: fc.constantFrom(...roles) }),
      owned_by: fc.record({ role: fc.constantFrom(...roles, "ghost"), include_subordinates: fc.boolean() }),
    },
    ["object", "name", "access", "share_with", "owned_by"],
  ).map((body) => ({ method: "POST", path: "/api/v1/settings/sharing/rules", body })),
  pathId.map((id) => ({ method: "DELETE", path: `/api/v1/settings/sharing/rules/${id}` })),
  fc.tuple(fc.constantFrom(...crmObjects), fc.constantFrom("validation", "workflow", "flow")).chain(([object, kind]) =>
    ruleBodies(object)[kind as "validation" | "workflow" | "flow"].map((body) => ({
      method: "POST",
      path: `/api/v1/settings/${kind === "flow" ? "flows" : `${kind}-rules`}`,
      body,
    })),
  ),
  fc
    .tuple(fc.constantFrom("validation-rules", "workflow-rules", "flows"), pathId)
    .map(([kind, id]) => ({ method: "DELETE", path: `/api/v1/settings/${kind}/${id}` })),
);

const recordRequests = objectName.chain((object) => {
  const known = (crmObjects as readonly string[]).includes(object) ? object : "leads";
  return fc.oneof(
    { weight: 3, arbitrary: listQuery.map((q) => ({ method: "GET", path: `/api/v1/${object}${q}` })) },
    { weight: 5, arbitrary: recordBody(known, true).map((body) => ({ method: "POST", path: `/api/v1/${object}`, body })) },
    { weight: 2, arbitrary: pathId.map((id) => ({ method: "GET", path: `/api/v1/${object}/${id}` })) },
    { weight: 5, arbitrary: fc.tuple(pathId, recordBody(known, false)).map(([id, body]) => ({ method: "PATCH", path: `/api/v1/${object}/${id}`, body })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("DELETE", "PUT"), pathId).map(([method, id]) => ({ method, path: `/api/v1/${object}/${id}` })) },
  );
});

const form = (fields: Record<string, fc.Arbitrary<string>>) =>
  fc
    .record(fields, { requiredKeys: [] })
    .map((f) => ({ raw: new URLSearchParams(f as Record<string, string>).toString(), contentType: "application/x-www-form-urlencoded" }) as FuzzBody);

/** The /settings page's form posts, without a session (sign-in checks an argon2id hash: kept rare). */
const webRequests = fc.oneof(
  fc.constant({ method: "GET", path: "/settings" }),
  form({ username: name(["admin", "alice", "a\u0000b"]), password: fc.string({ maxLength: 8 }) }).map((body) => ({
    method: "POST",
    path: "/settings/sign-in",
    body,
  })),
  form({ name: fc.string({ maxLength: 8 }) }).map((body) => ({ method: "POST", path: "/settings/tokens", body })),
  pathId.map((id) => ({
    method: "POST",
    path: `/settings/tokens/${id}/revoke`,
    body: { raw: "", contentType: "application/x-www-form-urlencoded" } as FuzzBody,
  })),
);

const actor = (weights: Record<Actor, number>) => fc.oneof(...Object.entries(weights).map(([a, weight]) => ({ weight, arbitrary: fc.constant(a as Actor) })));
const withActor = (weights: Record<Actor, number>, requests: fc.Arbitrary<Omit<FuzzRequest, "actor">>) =>
  fc.tuple(actor(weights), requests).map(([a, r]) => ({ actor: a, ...r }) as FuzzRequest);

/** Records as every kind of user; settings mostly as the admin (for others they are 403 at once). */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 12, arbitrary: withActor({ admin: 3, manager: 2, rep: 3, anonymous: 1, bogus: 1, disabled: 1 }, recordRequests) },
  { weight: 7, arbitrary: withActor({ admin: 8, manager: 1, rep: 1, anonymous: 1, bogus: 0, disabled: 1 }, settingsRequests) },
  { weight: 1, arbitrary: withActor({ admin: 1, manager: 0, rep: 1, anonymous: 1, bogus: 0, disabled: 0 }, webRequests) },
);
