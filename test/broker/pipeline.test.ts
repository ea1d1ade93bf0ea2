// The broker's request pipeline (src/broker/requests/pipeline.ts) behind its HTTP routes: every
// route hands its operation to the pipeline with the action and topic the spec's grant table
// names, the authorizer sees a principal (never the HTTP request), and a refused operation is
// answered 403 before its body is read and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { SvcError } from "../../src/core/errors.ts";
import { createLogger } from "../../src/core/log.ts";
import type { HttpService } from "../../src/http/server.ts";
import type { Action, Authorizer } from "../../src/broker/auth/authorizer.ts";
import type { Principal } from "../../src/broker/auth/principal.ts";
import { Broker } from "../../src/broker/broker.ts";
import { startBrokerHttp } from "../../src/broker/http/server.ts";
import { freshDataDir } from "./support/broker.ts";

/** Records every check; refuses what `refused` names ("action topic", topic "*" for null). */
class RecordingAuthorizer implements Authorizer {
  readonly checks: string[] = [];
  readonly principals: Principal[] = [];
  refused = new Set<string>();
  check(principal: Principal, action: Action, topic: string | null): void {
    const what = `${action} ${topic ?? "*"}`;
    this.checks.push(what);
    this.principals.push(principal);
    if (this.refused.has(what)) throw new SvcError("forbidden", `no grant for ${what}`);
  }
  canRead(_principal: Principal, topic: string): boolean {
    return !this.refused.has(`read ${topic}`);
  }
  isGlobalAdmin(): boolean {
    return false;
  }
  checkSomewhere(): void {}
}

const authorizer = new RecordingAuthorizer();
let broker: Broker;
let http: HttpService;
const log = createLogger({ level: "silent" });

beforeAll(async () => {
  broker = new Broker({
    dataDir: freshDataDir(),
    flushEveryRecords: 1,
    recordBytesMax: 1 << 20,
    fetchRecordsMax: 1000,
    fetchBytesMax: 1 << 20,
    clock: new ManualClock(),
    authorizer,
    memberTimeoutMs: 45_000,
    authRequired: false,
  });
  await broker.open(log);
  http = startBrokerHttp(broker, { hostname: "127.0.0.1", port: 0, bodyBytesMax: 1 << 20, corsOrigins: [], tls: null, log });
});

afterAll(async () => {
  await http.stop();
  await broker.close();
});

const call = (method: string, path: string, body?: unknown) =>
  fetch(new URL(path, http.url), {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("every route runs through the pipeline", () => {
  test("each asks the authorizer for the spec's action on its topic, as anonymous while auth is off", async () => {
    authorizer.checks.length = 0;
    const steps: [string, string, unknown, number][] = [
      ["POST", "/topics", { name: "orders", partitions: 2 }, 201],
      ["GET", "/topics", undefined, 200],
      ["GET", "/topics/orders", undefined, 200],
      ["GET", "/topics/orders/config", undefined, 200],
      ["PUT", "/topics/orders/config", { retention_ms: 1000 }, 200],
      ["POST", "/topics/orders/produce", { records: [{ value: "v", partition: 0 }] }, 200],
      ["GET", "/topics/orders/consume?partition=0&offset=0", undefined, 200],
      ["POST", "/admin/run-retention", undefined, 200],
      ["POST", "/admin/run-compaction", undefined, 200],
      ["DELETE", "/topics/orders", undefined, 204],
    ];
    for (const [method, path, body, status] of steps) expect([method, path, (await call(method, path, body)).status]).toEqual([method, path, status]);
    expect(authorizer.checks).toEqual([
      "read *",
      "admin orders",
      "read *",
      "read orders",
      "read orders",
      "admin orders",
      "write orders",
      "read orders",
      "admin *",
      "admin *",
      "admin orders",
    ]);
    expect(authorizer.principals.every((p) => p.kind === "anonymous")).toBe(true);
  });
});

describe("a refused operation", () => {
  test("is answered 403 before its body is read, and changes nothing", async () => {
    expect((await call("POST", "/topics", { name: "events", partitions: 1 })).status).toBe(201);
    authorizer.refused = new Set(["write events", "admin *", "admin events", "admin other"]);
    try {
      // A body that would be a 400 is not read: the refusal comes first.
      const produce = await call("POST", "/topics/events/produce", "{not json");
      expect(produce.status).toBe(403);
      expect(await produce.json()).toEqual({ error: "no grant for write events" });
      expect((await call("POST", "/topics/events/produce", { records: [{ value: "v" }] })).status).toBe(403);
      expect((await call("POST", "/topics", { name: "other", partitions: 1 })).status).toBe(403);
      expect((await call("DELETE", "/topics/events")).status).toBe(403);
      expect((await call("PUT", "/topics/events/config", { retention_ms: 5 })).status).toBe(403);
    } finally {
      authorizer.refused = new Set();
    }
    // Nothing was written, created, deleted or changed.
    const consumed = await (await call("GET", "/topics/events/consume?partition=0&offset=0")).json();
    expect(consumed).toEqual({ records: [], next_offset: 0, high_watermark: 0 });
    expect((await call("GET", "/topics/other")).status).toBe(404);
    expect(((await (await call("GET", "/topics/events/config")).json()) as { retention_ms: number }).retention_ms).not.toBe(5);
  });

  test("a topic the principal may not read is left out of the list", async () => {
    authorizer.refused = new Set(["read events"]);
    try {
      const listed = (await (await call("GET", "/topics")).json()) as { topics: { name: string }[] };
      expect(listed.topics.map((t) => t.name)).not.toContain("events");
    } finally {
      authorizer.refused = new Set();
    }
    const listed = (await (await call("GET", "/topics")).json()) as { topics: { name: string }[] };
    expect(listed.topics.map((t) => t.name)).toContain("events");
  });
});
