// The schema registry against a real `svc broker --auth required` (spec: Schema registry):
// versions and ids, the same schema registered twice, the compatibility 400s with the spec's
// message, bad schemas, subjects named after their topic and covered by its grants (403
// without), the list filtered by what a key can read, and schemas kept across kill -9.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BrokerProcess, freshDataDir, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
let admin: Record<string, string>;
let ordersReader: Record<string, string>;
let ordersAdmin: Record<string, string>;

const v1 = JSON.stringify({ type: "object", properties: { id: { type: "string" } }, required: ["id"] });
const v2 = JSON.stringify({ type: "object", properties: { id: { type: "string" }, note: { type: "string" } }, required: ["id"] });

beforeAll(async () => {
  broker = await startBroker(freshDataDir(), ["--auth", "required"]);
  admin = { authorization: `Bearer ${readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim()}` };
  const key = async (name: string, action: string) => ({
    authorization: `Bearer ${(await broker.send("POST", "/admin/keys", { name, acls: [{ action, topic_prefix: "orders" }] }, admin)).body.secret}`,
  });
  ordersReader = await key("reader", "read");
  ordersAdmin = await key("orders-admin", "admin");
});
afterAll(() => broker.stop());

const register = (subject: string, schema: string, headers = admin, type = "json_schema") =>
  broker.send("POST", "/schemas", { subject, type, schema }, headers);

describe("registering", () => {
  test("each new version gets a new id; the same schema again answers its id and adds nothing", async () => {
    const first = await register("orders-value", v1);
    expect(first).toMatchObject({ status: 201, body: { id: 1 } });
    const second = await register("orders-value", v2);
    expect(second).toMatchObject({ status: 201, body: { id: 2 } });
    // The same JSON, spaced differently: already there.
    const again = await register("orders-value", JSON.stringify(JSON.parse(v1), null, 2));
    expect(again).toMatchObject({ status: 200, body: { id: 1 } });
    const latest = await broker.send("GET", "/subjects/orders-value/versions/latest", undefined, admin);
    expect(latest.body).toEqual({ id: 2, subject: "orders-value", version: 2, type: "json_schema", schema: v2 });
    expect((await broker.send("GET", "/schemas/1", undefined, admin)).body).toEqual({
      id: 1,
      subject: "orders-value",
      version: 1,
      type: "json_schema",
      schema: v1,
    });
  });

  test("an incompatible version is a 400 with the spec's message and registers nothing", async () => {
    const addsRequired = JSON.stringify({
      type: "object",
      properties: { id: { type: "string" }, note: { type: "string" }, sku: { type: "string" } },
      required: ["id", "sku"],
    });
    const answer = await register("orders-value", addsRequired);
    expect(answer).toEqual({ status: 400, body: { error: "backward-incompatible: new schema adds required field 'sku'" }, headers: expect.anything() });
    const removes = JSON.stringify({ type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false });
    expect((await register("orders-value", removes)).body.error).toBe("backward-incompatible: new schema removes property 'note'");
    expect((await broker.send("GET", "/subjects/orders-value/versions/latest", undefined, admin)).body.version).toBe(2);
  });

  test("bad schemas, types and subjects are 400s that say why", async () => {
    const cases: [string, string, string, string][] = [
      ["orders-value", "{not json", "json_schema", "not valid JSON"],
      ["orders-value", '{"type": "array"}', "json_schema", "JSON Schema of an object"],
      ["orders-value", v1, "avro", "'type' \"avro\" is not supported"],
      ["orders", v1, "json_schema", "<topic>-value or <topic>-key"],
      ["bad name-value", v1, "json_schema", "<topic>-value or <topic>-key"],
    ];
    for (const [subject, schema, type, message] of cases) {
      const answer = await register(subject, schema, admin, type);
      expect([subject, answer.status]).toEqual([subject, 400]);
      expect(answer.body.error).toContain(message);
    }
    expect((await broker.send("POST", "/schemas", { subject: "orders-key", type: "json_schema" }, admin)).status).toBe(400);
    expect((await broker.send("GET", "/schemas", undefined, admin)).body.schemas).toHaveLength(2);
  });
});

describe("grants on the subject's topic", () => {
  test("registering needs admin on the topic: a prefix admin may, a reader may not", async () => {
    expect((await register("orders.eu-key", v1, ordersAdmin)).status).toBe(201);
    expect((await register("orders-key", v1, ordersReader)).status).toBe(403);
    expect((await register("payments-value", v1, ordersAdmin)).status).toBe(403);
  });

  test("reading needs read on the topic; the list shows only what the key can read", async () => {
    expect((await register("payments-value", v1)).status).toBe(201);
    const paymentsId = (await broker.send("GET", "/subjects/payments-value/versions/latest", undefined, admin)).body.id;
    expect((await broker.send("GET", `/schemas/${paymentsId}`, undefined, ordersReader)).status).toBe(403);
    expect((await broker.send("GET", "/subjects/payments-value/versions/latest", undefined, ordersReader)).status).toBe(403);
    expect((await broker.send("GET", "/subjects/orders-value/versions/latest", undefined, ordersReader)).status).toBe(200);
    const visible = (await broker.send("GET", "/schemas", undefined, ordersReader)).body.schemas.map((s: any) => s.subject);
    expect(visible).toEqual(["orders-value", "orders-value", "orders.eu-key"]);
    expect((await broker.send("GET", "/schemas", undefined, admin)).body.schemas.map((s: any) => s.subject)).toContain("payments-value");
    expect((await broker.send("GET", "/schemas")).status).toBe(401);
  });

  test("unknown ids and subjects are 404s, a malformed id a 400", async () => {
    expect((await broker.send("GET", "/schemas/999", undefined, admin)).status).toBe(404);
    expect((await broker.send("GET", "/schemas/0", undefined, admin)).status).toBe(400);
    expect((await broker.send("GET", "/schemas/abc", undefined, admin)).status).toBe(400);
    expect((await broker.send("GET", "/subjects/nothing-value/versions/latest", undefined, admin)).status).toBe(404);
    expect((await broker.send("GET", "/subjects/nothing/versions/latest", undefined, admin)).status).toBe(400);
  });
});

test("schemas survive kill -9, and ids go on from the last", async () => {
  const dataDir = freshDataDir();
  const b = await startBroker(dataDir);
  expect((await b.call("POST", "/schemas", { subject: "t-value", type: "json_schema", schema: v1 })).body).toEqual({ id: 1 });
  await b.kill();
  const again = await startBroker(dataDir);
  try {
    expect((await again.call("GET", "/subjects/t-value/versions/latest")).body).toMatchObject({ id: 1, version: 1, schema: v1 });
    expect((await again.call("POST", "/schemas", { subject: "t-key", type: "json_schema", schema: v1 })).body).toEqual({ id: 2 });
  } finally {
    await again.stop();
  }
});
