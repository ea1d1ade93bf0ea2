// API keys, grants, ownership and quotas end to end against a real `svc broker --auth required`
// (spec: Authentication; Keys; Ownership; Quotas), with the bootstrap admin key and keys made
// through the API: the bootstrap file, 401/403/429 on every route as the spec's grant table
// says, separator-aware prefixes, revocation at once, producer ids and groups owned by the key
// that first used them, and byte budgets that refuse before writing and charge after reading.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type BrokerProcess, freshDataDir, highWatermarks, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
let admin: string;

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** A key made through the API; answers its secret and id. */
async function makeKey(body: Record<string, unknown>): Promise<{ secret: string; id: string }> {
  const made = await broker.send("POST", "/admin/keys", body, bearer(admin));
  expect(made.status).toBe(201);
  return { secret: made.body.secret, id: made.body.key_id };
}

let alice: { secret: string; id: string };
let bob: { secret: string; id: string };
let carol: { secret: string; id: string };
let nobody: { secret: string; id: string };

beforeAll(async () => {
  broker = await startBroker(freshDataDir(), ["--auth", "required"]);
  admin = readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim();
  for (const name of ["orders", "orders.eu", "orders-archive", "ordersecret", "payments"]) {
    expect((await broker.send("POST", "/topics", { name, partitions: 2 }, bearer(admin))).status).toBe(201);
  }
  alice = await makeKey({ name: "alice", acls: [{ action: "write", topic_prefix: "orders" }] });
  bob = await makeKey({ name: "bob", acls: [{ action: "read", topic_prefix: "orders." }] });
  carol = await makeKey({
    name: "carol",
    acls: [
      { action: "write", topic_prefix: "orders" },
      { action: "read", topic_prefix: "payments" },
    ],
  });
  nobody = await makeKey({ name: "nobody", acls: [] });
});

afterAll(() => broker.stop());

describe("the bootstrap key", () => {
  test("is written once, readable by the broker's user only, and never again once keys exist", async () => {
    const dataDir = freshDataDir();
    const first = await startBroker(dataDir, ["--auth", "required"]);
    const file = join(dataDir, "bootstrap.key");
    const secret = readFileSync(file, "utf8").trim();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(secret).toMatch(/^svck_[A-Za-z0-9_-]{43}$/);
    expect((await first.send("GET", "/admin/keys", undefined, bearer(secret))).body.keys.map((k: any) => k.name)).toEqual(["bootstrap"]);
    await first.stop();
    // A restart keeps the same key and does not rewrite the file.
    const second = await startBroker(dataDir, ["--auth", "required"]);
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    expect((await second.send("GET", "/topics", undefined, bearer(secret))).status).toBe(200);
    // The operator deletes the file (and even the bootstrap key): it does not come back.
    const keys = (await second.send("GET", "/admin/keys", undefined, bearer(secret))).body.keys;
    const real = await second.send("POST", "/admin/keys", { name: "ops", acls: [{ action: "admin", topic_prefix: "*" }] }, bearer(secret));
    expect((await second.send("DELETE", `/admin/keys/${keys[0].key_id}`, undefined, bearer(real.body.secret))).status).toBe(204);
    rmSync(file);
    await second.stop();
    const third = await startBroker(dataDir, ["--auth", "required"]);
    expect(existsSync(file)).toBe(false);
    expect((await third.send("GET", "/topics", undefined, bearer(secret))).status).toBe(401);
    expect((await third.send("GET", "/topics", undefined, bearer(real.body.secret))).status).toBe(200);
    await third.stop();
  });

  test("is not made while authentication is off", async () => {
    const dataDir = freshDataDir();
    const off = await startBroker(dataDir);
    expect(existsSync(join(dataDir, "bootstrap.key"))).toBe(false);
    await off.stop();
  });
});

describe("authentication", () => {
  test("no key or an unknown key is a 401 on every route but health; either header carries a key", async () => {
    const routes: [string, string, unknown][] = [
      ["GET", "/topics", undefined],
      ["POST", "/topics", { name: "x", partitions: 1 }],
      ["GET", "/topics/orders", undefined],
      ["GET", "/topics/orders/config", undefined],
      ["PUT", "/topics/orders/config", {}],
      ["DELETE", "/topics/orders", undefined],
      ["POST", "/topics/orders/produce", { records: [{ value: "v" }] }],
      ["GET", "/topics/orders/consume?partition=0&offset=0", undefined],
      ["POST", "/groups/g/join", { topics: ["orders"] }],
      ["POST", "/groups/g/heartbeat", { member_id: "m", generation: 0 }],
      ["POST", "/groups/g/leave", { member_id: "m" }],
      ["GET", "/groups/g/assignment?member_id=m", undefined],
      ["POST", "/groups/g/commit", { topic: "orders", partition: 0, offset: 0 }],
      ["GET", "/groups/g/offsets", undefined],
      ["GET", "/groups/g/consume?topic=orders&partition=0", undefined],
      ["POST", "/admin/keys", { name: "k", acls: [] }],
      ["GET", "/admin/keys", undefined],
      ["DELETE", `/admin/keys/${nobody.id}`, undefined],
      ["POST", "/admin/run-retention", undefined],
      ["POST", "/admin/run-compaction", undefined],
    ];
    for (const [method, path, body] of routes) {
      expect([method, path, (await broker.send(method, path, body)).status]).toEqual([method, path, 401]);
      expect([method, path, (await broker.send(method, path, body, bearer("svck_wrong"))).status]).toEqual([method, path, 401]);
      expect([method, path, (await broker.send(method, path, body, { "x-svc-key": "svck_wrong" })).status]).toEqual([method, path, 401]);
    }
    expect((await broker.send("GET", "/healthz")).status).toBe(200);
    expect((await broker.send("GET", "/readyz")).status).toBe(200);
    expect((await broker.send("GET", "/topics", undefined, { "x-svc-key": alice.secret })).status).toBe(200);
    expect((await broker.send("GET", "/topics", undefined, { authorization: `Basic ${alice.secret}` })).status).toBe(401);
    expect((await broker.send("GET", "/topics", undefined, { ...bearer(alice.secret), "x-svc-key": bob.secret })).status).toBe(400);
    // Nothing any of them asked for happened.
    expect((await broker.send("GET", "/topics/x", undefined, bearer(admin))).status).toBe(404);
    expect((await broker.send("GET", "/topics/orders", undefined, bearer(admin))).status).toBe(200);
  });

  test("a key without grants sees an empty topic list and gets 403 on everything else", async () => {
    const key = bearer(nobody.secret);
    expect((await broker.send("GET", "/topics", undefined, key)).body).toEqual({ topics: [] });
    for (const [method, path, body] of [
      ["GET", "/topics/orders", undefined],
      ["POST", "/topics/orders/produce", { records: [{ value: "v" }] }],
      ["GET", "/topics/orders/consume?partition=0&offset=0", undefined],
      ["POST", "/groups/n/join", { topics: ["orders"] }],
      ["POST", "/groups/n/commit", { topic: "orders", partition: 0, offset: 0 }],
      ["GET", "/admin/keys", undefined],
      ["POST", "/topics", { name: "mine", partitions: 1 }],
    ] as [string, string, unknown][]) {
      const answer = await broker.send(method, path, body, key);
      expect([method, path, answer.status]).toEqual([method, path, 403]);
      expect(answer.body.error).toContain("key 'nobody' has no");
    }
  });
});

describe("grants", () => {
  test("a prefix covers its topic and the names below it at a separator, not a longer word", async () => {
    const produce = (secret: string, topic: string) =>
      broker.send("POST", `/topics/${topic}/produce`, { records: [{ value: "v", partition: 0 }] }, bearer(secret));
    const read = (secret: string, topic: string) => broker.send("GET", `/topics/${topic}/consume?partition=0&offset=0`, undefined, bearer(secret));
    const expected: [string, string, number, number][] = [
      // key, topic, produce, consume
      [alice.secret, "orders", 200, 200],
      [alice.secret, "orders.eu", 200, 200],
      [alice.secret, "orders-archive", 200, 200],
      [alice.secret, "ordersecret", 403, 403],
      [alice.secret, "payments", 403, 403],
      // bob reads "orders." only: names that start with it, and not "orders" itself; read is not write.
      [bob.secret, "orders.eu", 403, 200],
      [bob.secret, "orders", 403, 403],
      [bob.secret, "orders-archive", 403, 403],
    ];
    for (const [secret, topic, p, c] of expected) {
      const who = secret === alice.secret ? "alice" : "bob";
      expect([who, topic, (await produce(secret, topic)).status, (await read(secret, topic)).status]).toEqual([who, topic, p, c]);
    }
  });

  test("GET /topics lists only the topics the key can read", async () => {
    const names = async (secret: string) => (await broker.send("GET", "/topics", undefined, bearer(secret))).body.topics.map((t: any) => t.name);
    expect(await names(alice.secret)).toEqual(["orders", "orders-archive", "orders.eu"]);
    expect(await names(bob.secret)).toEqual(["orders.eu"]);
    expect(await names(admin)).toEqual(["orders", "orders-archive", "orders.eu", "ordersecret", "payments"]);
  });

  test("admin actions need admin: on '*' for the whole broker, on a covering prefix for a topic", async () => {
    for (const [method, path, body] of [
      ["POST", "/topics", { name: "orders.new", partitions: 1 }],
      ["DELETE", "/topics/orders.eu", undefined],
      ["PUT", "/topics/orders/config", { retention_ms: 1000 }],
      ["POST", "/admin/run-retention", undefined],
      ["GET", "/admin/keys", undefined],
    ] as [string, string, unknown][]) {
      expect([method, path, (await broker.send(method, path, body, bearer(alice.secret))).status]).toEqual([method, path, 403]);
    }
    const ops = await makeKey({ name: "orders-ops", acls: [{ action: "admin", topic_prefix: "orders" }] });
    expect((await broker.send("POST", "/topics", { name: "orders.new", partitions: 1 }, bearer(ops.secret))).status).toBe(201);
    expect((await broker.send("POST", "/topics", { name: "billing", partitions: 1 }, bearer(ops.secret))).status).toBe(403);
    expect((await broker.send("DELETE", "/topics/orders.new", undefined, bearer(ops.secret))).status).toBe(204);
    expect((await broker.send("POST", "/admin/run-retention", undefined, bearer(ops.secret))).status).toBe(403);
  });

  test("a key with a bad grant is refused with a 400 that names it, and no key is made", async () => {
    const before = (await broker.send("GET", "/admin/keys", undefined, bearer(admin))).body.keys.length;
    const cases: [unknown, string][] = [
      [[{ action: "read", topic_prefix: "" }], "must not be empty"],
      [[{ action: "read", topic_prefix: "ord*" }], "'*' stands alone"],
      [[{ action: "own", topic_prefix: "orders" }], "read, write or admin"],
      [[{ action: "read" }], "acls[0].topic_prefix"],
      [[{ action: "read", topic_prefix: "a b" }], "only letters"],
      ["orders", "must be an array"],
      [Array.from({ length: 101 }, () => ({ action: "read", topic_prefix: "x" })), "at most 100"],
    ];
    for (const [acls, message] of cases) {
      const answer = await broker.send("POST", "/admin/keys", { name: "bad", acls }, bearer(admin));
      expect(answer.status).toBe(400);
      expect(answer.body.error).toContain(message);
    }
    expect((await broker.send("POST", "/admin/keys", { name: "bad" }, bearer(admin))).status).toBe(400);
    expect((await broker.send("POST", "/admin/keys", { name: "bad", acls: [], produce_bytes_per_sec: 0 }, bearer(admin))).status).toBe(400);
    expect((await broker.send("GET", "/admin/keys", undefined, bearer(admin))).body.keys.length).toBe(before);
  });
});

describe("keys", () => {
  test("the secret is shown once: the list has no secrets or hashes", async () => {
    const listed = (await broker.send("GET", "/admin/keys", undefined, bearer(admin))).body.keys;
    const a = listed.find((k: any) => k.key_id === alice.id);
    expect(a).toMatchObject({ name: "alice", acls: [{ action: "write", topic_prefix: "orders" }], produce_bytes_per_sec: null, consume_bytes_per_sec: null });
    expect(JSON.stringify(listed)).not.toContain("secret");
    expect(JSON.stringify(listed)).not.toContain(alice.secret);
  });

  test("a revoked key stops at once; revoking an unknown key is a 404", async () => {
    const temp = await makeKey({ name: "temp", acls: [{ action: "read", topic_prefix: "*" }] });
    expect((await broker.send("GET", "/topics", undefined, bearer(temp.secret))).status).toBe(200);
    expect((await broker.send("DELETE", `/admin/keys/${temp.id}`, undefined, bearer(admin))).status).toBe(204);
    const after = await broker.send("GET", "/topics", undefined, bearer(temp.secret));
    expect(after.status).toBe(401);
    expect((await broker.send("DELETE", `/admin/keys/${temp.id}`, undefined, bearer(admin))).status).toBe(404);
  });
});

describe("ownership", () => {
  test("a producer id belongs to the first key that used it; a global admin may use it too", async () => {
    const produce = (secret: string, producerId: string, sequence: number) =>
      broker.send("POST", "/topics/orders/produce", { producer_id: producerId, records: [{ value: "v", partition: 1, sequence }] }, bearer(secret));
    expect((await produce(alice.secret, "p-alice", 0)).status).toBe(200);
    const stolen = await produce(carol.secret, "p-alice", 1);
    expect(stolen.status).toBe(403);
    expect(stolen.body.error).toContain("belongs to another key");
    expect((await produce(carol.secret, "p-carol", 0)).status).toBe(200);
    expect((await produce(admin, "p-alice", 1)).status).toBe(200);
    // The refused produce wrote nothing: alice's next sequence is 2, written once.
    expect((await produce(alice.secret, "p-alice", 2)).body.results[0].duplicate).toBeUndefined();
  });

  test("a group belongs to the first key that joined or committed; a member to the key that made it", async () => {
    const a = (await broker.send("POST", "/groups/ga/join", { topics: ["orders"] }, bearer(alice.secret))).body;
    expect(a.generation).toBe(1);
    const intruder = [
      await broker.send("POST", "/groups/ga/join", { topics: ["orders"] }, bearer(carol.secret)),
      await broker.send("POST", "/groups/ga/heartbeat", { member_id: a.member_id, generation: 1 }, bearer(carol.secret)),
      await broker.send("GET", `/groups/ga/assignment?member_id=${a.member_id}`, undefined, bearer(carol.secret)),
      await broker.send("POST", "/groups/ga/commit", { topic: "orders", partition: 0, offset: 0 }, bearer(carol.secret)),
      await broker.send("GET", "/groups/ga/offsets", undefined, bearer(carol.secret)),
      await broker.send("GET", "/groups/ga/consume?topic=orders&partition=0", undefined, bearer(carol.secret)),
      await broker.send("POST", "/groups/ga/leave", { member_id: a.member_id }, bearer(carol.secret)),
    ];
    expect(intruder.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403]);
    expect((await broker.send("POST", "/groups/ga/heartbeat", { member_id: a.member_id, generation: 1 }, bearer(alice.secret))).body.status).toBe("ok");
    // A commit claims a group no one has joined.
    expect((await broker.send("POST", "/groups/gc/commit", { topic: "orders", partition: 0, offset: 0 }, bearer(carol.secret))).status).toBe(200);
    expect((await broker.send("POST", "/groups/gc/join", { topics: ["orders"] }, bearer(alice.secret))).status).toBe(403);
    // A global admin may use any group.
    expect((await broker.send("GET", "/groups/ga/offsets", undefined, bearer(admin))).status).toBe(200);
  });

  test("a join naming a topic the key cannot read is a 403 and claims nothing", async () => {
    expect((await broker.send("POST", "/groups/gx/join", { topics: ["orders", "payments"] }, bearer(alice.secret))).status).toBe(403);
    expect((await broker.send("POST", "/groups/gx/join", { topics: ["orders"] }, bearer(carol.secret))).status).toBe(200);
  });

  test("a group's offsets show only the topics the key can read", async () => {
    expect((await broker.send("POST", "/groups/gc/commit", { topic: "payments", partition: 0, offset: 0 }, bearer(admin))).status).toBe(200);
    expect((await broker.send("POST", "/groups/gc/commit", { topic: "ordersecret", partition: 0, offset: 0 }, bearer(admin))).status).toBe(200);
    expect(Object.keys((await broker.send("GET", "/groups/gc/offsets", undefined, bearer(carol.secret))).body.offsets).sort()).toEqual(["orders", "payments"]);
    expect(Object.keys((await broker.send("GET", "/groups/gc/offsets", undefined, bearer(admin))).body.offsets).sort()).toEqual([
      "orders",
      "ordersecret",
      "payments",
    ]);
  });
});

describe("quotas", () => {
  test("a produce is checked by its size before anything is written: 429 with Retry-After, 413 past the whole budget", async () => {
    expect((await broker.send("POST", "/topics", { name: "q", partitions: 1 }, bearer(admin))).status).toBe(201);
    const dave = await makeKey({ name: "dave", acls: [{ action: "write", topic_prefix: "q" }], produce_bytes_per_sec: 1000, consume_bytes_per_sec: 1000 });
    const produce = (bytes: number) => broker.send("POST", "/topics/q/produce", { records: [{ value: "x".repeat(bytes) }] }, bearer(dave.secret));
    expect((await produce(600)).status).toBe(200);
    const refused = await produce(600);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(refused.body.error).toContain("produce quota");
    const tooBig = await produce(1001);
    expect(tooBig.status).toBe(413);
    expect(await highWatermarks(broker, "q", bearer(admin))).toEqual([1]);
    // Waiting as long as Retry-After says lets the produce through.
    await Bun.sleep(Number(refused.headers.get("retry-after")) * 1000);
    expect((await produce(600)).status).toBe(200);
  });

  test("a consume is charged after the read, may go into debt, and is refused until the budget recovers", async () => {
    expect((await broker.send("POST", "/topics", { name: "qc", partitions: 1 }, bearer(admin))).status).toBe(201);
    const records = Array.from({ length: 3 }, () => ({ value: "y".repeat(900) }));
    expect((await broker.send("POST", "/topics/qc/produce", { records }, bearer(admin))).status).toBe(200);
    const erin = await makeKey({ name: "erin", acls: [{ action: "read", topic_prefix: "qc" }], consume_bytes_per_sec: 1000 });
    const read = () => broker.send("GET", "/topics/qc/consume?partition=0&offset=0&max_records=3", undefined, bearer(erin.secret));
    const first = await read();
    expect(first.status).toBe(200);
    expect(first.body.records).toHaveLength(3);
    const inDebt = await read();
    expect(inDebt.status).toBe(429);
    const wait = Number(inDebt.headers.get("retry-after"));
    expect(wait).toBeGreaterThanOrEqual(1);
    // The group endpoint reads from the same budget.
    expect((await broker.send("GET", "/groups/ge/consume?topic=qc&partition=0", undefined, bearer(erin.secret))).status).toBe(429);
    await Bun.sleep(wait * 1000);
    expect((await read()).status).toBe(200);
  });
});
