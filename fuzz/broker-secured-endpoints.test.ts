// The consumer group, key, schema and admin endpoints fuzzed against a real `svc broker --auth
// required`: arbitrary bodies, field values, query strings and credentials, sent as the admin,
// as a reader of one prefix and as no one. Never a 5xx; a 4xx has an `error` and changes
// nothing — no key or schema appears or goes, no group's offsets or membership move.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BrokerProcess, startBroker } from "../test/broker/support/broker.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 1000 : 200;

let broker: BrokerProcess;
let admin: string;
let reader: string;
let memberId: string;

beforeAll(async () => {
  broker = await startBroker(undefined, ["--auth", "required"]);
  admin = readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim();
  const auth = { authorization: `Bearer ${admin}` };
  await broker.send("POST", "/topics", { name: "fz", partitions: 3 }, auth);
  await broker.send("POST", "/topics", { name: "fz.two", partitions: 1 }, auth);
  await broker.send(
    "POST",
    "/topics/fz/produce",
    {
      records: [
        { value: "a", partition: 0 },
        { value: "b", partition: 0 },
      ],
    },
    auth,
  );
  reader = (await broker.send("POST", "/admin/keys", { name: "reader", acls: [{ action: "read", topic_prefix: "fz." }] }, auth)).body.secret;
  memberId = (await broker.send("POST", "/groups/fg/join", { topics: ["fz"] }, auth)).body.member_id;
  await broker.send("POST", "/groups/fg/commit", { topic: "fz", partition: 0, offset: 1 }, auth);
});
afterAll(() => broker.stop());

const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.integer({ min: -3, max: 200 }),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e300, "3", "", "*", "fz", "fz.", "fz.two", "nope", "\ud800", null, true, [], {}, "read", "write", "admin"),
  fc.string({ unit: "binary", maxLength: 40 }),
);
const objectWith = (fields: string[]) => fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 6 })), anyValue, { maxKeys: 5 });
const grant = objectWith(["action", "topic_prefix"]);
const keyBody = fc.oneof(
  fc.record(
    { name: anyValue, acls: fc.oneof(fc.array(grant, { maxLength: 3 }), anyValue), produce_bytes_per_sec: anyValue, consume_bytes_per_sec: anyValue },
    { requiredKeys: [] },
  ),
  objectWith(["name", "acls", "produce_bytes_per_sec", "consume_bytes_per_sec"]),
);
const groupBody = fc.oneof(
  fc.record({ topics: fc.oneof(fc.array(anyValue, { maxLength: 4 }), anyValue), member_id: fc.oneof(anyValue, fc.constant("MEMBER")) }, { requiredKeys: [] }),
  fc.record(
    { topic: anyValue, partition: anyValue, offset: anyValue, member_id: fc.oneof(anyValue, fc.constant("MEMBER")), generation: anyValue },
    { requiredKeys: [] },
  ),
  objectWith(["topics", "member_id", "generation", "topic", "partition", "offset"]),
);
const queryValue = fc.oneof(fc.constantFrom("0", "1", "2", "3", "-1", "fz", "fz.two", "MEMBER", "", "x y", "1e3", "%zz"), fc.string({ maxLength: 6 }));
const query = fc.dictionary(fc.constantFrom("topic", "partition", "member_id", "max_records", "max_bytes", "encoding", "offset", "x"), queryValue, {
  maxKeys: 4,
});
const groupName = fc.oneof(fc.constant("fg"), fc.constant("other"), fc.stringMatching(/^[a-z.\-_%]{1,6}$/));
const who = fc.constantFrom("admin", "reader", "none", "garbage");

function headersFor(principal: string): Record<string, string> {
  if (principal === "admin") return { authorization: `Bearer ${admin}` };
  if (principal === "reader") return { "x-svc-key": reader };
  if (principal === "garbage") return { authorization: "Bearer svck_garbage" };
  return {};
}

async function state(): Promise<string> {
  const auth = { authorization: `Bearer ${admin}` };
  const keys = (await broker.send("GET", "/admin/keys", undefined, auth)).body;
  const offsets = (await broker.send("GET", "/groups/fg/offsets", undefined, auth)).body;
  const schemas = (await broker.send("GET", "/schemas", undefined, auth)).body;
  const assignment = (await broker.send("GET", `/groups/fg/assignment?member_id=${memberId}`, undefined, auth)).body;
  return JSON.stringify({ keys, offsets, schemas, generation: assignment.generation });
}

async function check(method: string, path: string, body: string | undefined, principal: string): Promise<number> {
  const before = await state();
  const response = await fetch(`${broker.url}${path}`, { method, headers: { "content-type": "application/json", ...headersFor(principal) }, body });
  const text = await response.text();
  const what = `${principal} ${method} ${path} ${body ?? ""} → ${response.status} ${text}`;
  expect(response.status, what).toBeLessThan(500);
  if (response.status >= 400) {
    expect(typeof JSON.parse(text).error, what).toBe("string");
    expect(await state(), what).toBe(before);
  }
  return response.status;
}

const schemaText = fc.oneof(
  fc.json(),
  fc.constantFrom('{"type":"object"}', '{"type":"object","properties":{"a":{"type":"string"}}}', '{"type":"object","required":["a"]}', "{", "[]"),
  fc.jsonValue().map((properties) => JSON.stringify({ type: "object", properties })),
  fc.jsonValue().map((required) => JSON.stringify({ type: "object", required })),
);
const schemaBody = fc.oneof(
  fc.record(
    {
      subject: fc.oneof(fc.constantFrom("fz-value", "fz.two-key", "fz", "-value", "x y-value"), anyValue),
      type: fc.oneof(fc.constant("json_schema"), anyValue),
      schema: fc.oneof(schemaText, anyValue),
    },
    { requiredKeys: [] },
  ),
  objectWith(["subject", "type", "schema"]),
);

describe("group, key and schema endpoints under fuzzing", () => {
  test("POST /schemas: 200/201 or a 4xx that registered nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        schemaBody.map((b) => JSON.stringify(b)),
        who,
        async (body, principal) => {
          await check("POST", "/schemas", body, principal);
        },
      ),
      { numRuns: runs },
    );
  });

  test("POST /admin/reset-offsets and DELETE /admin/producers/{id}: never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        objectWith(["topic"]).map((b) => JSON.stringify(b)),
        fc.stringMatching(/^[a-z%.]{1,6}$/),
        who,
        async (body, id, principal) => {
          await check("POST", "/admin/reset-offsets", body, principal);
          await check("DELETE", `/admin/producers/${id}`, undefined, principal);
        },
      ),
      { numRuns: runs },
    );
  });

  test("POST /admin/keys: 201 or a 4xx that made no key", async () => {
    await fc.assert(
      fc.asyncProperty(
        keyBody.map((b) => JSON.stringify(b)),
        who,
        async (body, principal) => {
          const status = await check("POST", "/admin/keys", body, principal);
          if (status === 201) expect(principal).toBe("admin");
        },
      ),
      { numRuns: runs },
    );
  });

  test("POST /groups/{group}/{join,heartbeat,leave,commit}: never a 5xx; a 4xx changes nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("join", "heartbeat", "leave", "commit"), groupName, groupBody, who, async (action, group, body, principal) => {
        // Leaving the fuzz's own member would change state legitimately; keep it in the group.
        const text = JSON.stringify(body).replaceAll('"MEMBER"', action === "leave" ? '"someone-else"' : JSON.stringify(memberId));
        await check("POST", `/groups/${group}/${action}`, text, principal);
      }),
      { numRuns: runs },
    );
  });

  test("GET /groups/{group}/{assignment,offsets,consume} with arbitrary queries: never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("assignment", "offsets", "consume"), groupName, query, who, async (action, group, q, principal) => {
        const search = Object.entries(q)
          .map(([k, v]) => `${k}=${v === "MEMBER" ? memberId : encodeURIComponent(v)}`)
          .join("&");
        await check("GET", `/groups/${group}/${action}${search === "" ? "" : `?${search}`}`, undefined, principal);
      }),
      { numRuns: runs },
    );
  });
});
