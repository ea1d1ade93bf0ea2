// The topics API end to end against a real `svc broker`: create, list, describe, read and change
// the config, delete; names and partition counts at their limits and one past; config defaults
// and validation; health; and a restart that keeps every topic and its config.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { topicNameLengthMax, topicPartitionsMax } from "../../src/core/limits.ts";
import { type BrokerProcess, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(() => broker.stop());

const defaults = {
  retention_ms: 604_800_000,
  retention_bytes: -1,
  cleanup_policy: "delete",
  segment_bytes: 1_073_741_824,
  tombstone_retention_ms: 86_400_000,
};

async function expectError(method: string, path: string, body: unknown, status: number, message: RegExp): Promise<void> {
  const answer = await broker.call(method, path, body);
  expect(answer.status).toBe(status);
  expect(answer.body.error).toMatch(message);
}

describe("POST /topics", () => {
  test("creates a topic with Kafka's config defaults and answers 201 with it", async () => {
    const created = await broker.call("POST", "/topics", { name: "orders", partitions: 3 });
    expect(created).toEqual({ status: 201, body: { name: "orders", partitions: 3, config: defaults } });
  });

  test("a config given at create is kept; omitted fields take the defaults", async () => {
    const created = await broker.call("POST", "/topics", { name: "cfg", partitions: 1, config: { cleanup_policy: "compact,delete", retention_ms: -1 } });
    expect(created.body.config).toEqual({ ...defaults, cleanup_policy: "compact,delete", retention_ms: -1 });
  });

  test("a name taken already is 409", async () => {
    await broker.call("POST", "/topics", { name: "dup", partitions: 1 });
    await expectError("POST", "/topics", { name: "dup", partitions: 2 }, 409, /already exists/);
  });

  test(`a name of ${topicNameLengthMax} characters is accepted, ${topicNameLengthMax + 1} is 400`, async () => {
    expect((await broker.call("POST", "/topics", { name: "n".repeat(topicNameLengthMax), partitions: 1 })).status).toBe(201);
    await expectError("POST", "/topics", { name: "m".repeat(topicNameLengthMax + 1), partitions: 1 }, 400, /201 characters; the limit is 200/);
  });

  test("letters, digits, '.', '-' and '_' are accepted; anything else, '.', '..' and '' are 400", async () => {
    expect((await broker.call("POST", "/topics", { name: "Ab9.x-y_z", partitions: 1 })).status).toBe(201);
    for (const name of ["a b", "a/b", "ä", "a:b", "a*", "..", ".", ""]) {
      const answer = await broker.call("POST", "/topics", { name, partitions: 1 });
      expect(answer.status, name).toBe(400);
      expect(answer.body.error, name).toContain("'name'");
    }
    await expectError("POST", "/topics", { name: 7, partitions: 1 }, 400, /'name' must be a string/);
  });

  test(`partition counts 1 and ${topicPartitionsMax} are accepted; 0 and ${topicPartitionsMax + 1} are 400`, async () => {
    expect((await broker.call("POST", "/topics", { name: "p1", partitions: 1 })).status).toBe(201);
    expect((await broker.call("POST", "/topics", { name: "pmax", partitions: topicPartitionsMax })).status).toBe(201);
    await expectError("POST", "/topics", { name: "p0", partitions: 0 }, 400, /'partitions' is 0; it must be from 1 to 10000/);
    await expectError("POST", "/topics", { name: "pover", partitions: topicPartitionsMax + 1 }, 400, /'partitions' is 10001/);
    await expectError("POST", "/topics", { name: "pfrac", partitions: 1.5 }, 400, /'partitions' must be an integer/);
    await expectError("POST", "/topics", { name: "pstr", partitions: "3" }, 400, /'partitions' must be an integer/);
    const described = await broker.call("GET", "/topics/pmax");
    expect(described.body.partition_details).toHaveLength(topicPartitionsMax);
  });

  test("missing fields, unknown fields, bad config values and bad JSON are 400 and create nothing", async () => {
    await expectError("POST", "/topics", { partitions: 1 }, 400, /'name' is required/);
    await expectError("POST", "/topics", { name: "x1" }, 400, /'partitions' is required/);
    await expectError("POST", "/topics", { name: "x2", partitions: 1, replication: 3 }, 400, /unknown field 'replication'/);
    await expectError("POST", "/topics", { name: "x3", partitions: 1, config: { retention: 1 } }, 400, /unknown field 'retention'/);
    await expectError("POST", "/topics", { name: "x4", partitions: 1, config: { cleanup_policy: "keep" } }, 400, /'cleanup_policy' must be one of/);
    await expectError("POST", "/topics", { name: "x5", partitions: 1, config: { retention_ms: -2 } }, 400, /'retention_ms' is -2/);
    await expectError("POST", "/topics", { name: "x6", partitions: 1, config: { segment_bytes: 1023 } }, 400, /'segment_bytes' is 1023/);
    await expectError("POST", "/topics", { name: "x7", partitions: 1, config: [] }, 400, /'config' must be a JSON object/);
    await expectError("POST", "/topics", "{nope", 400, /malformed JSON/);
    await expectError("POST", "/topics", [], 400, /request body must be a JSON object/);
    const list = await broker.call("GET", "/topics");
    expect(list.body.topics.map((t: { name: string }) => t.name).filter((n: string) => /^x\d$/.test(n))).toEqual([]);
    expect(readdirSync(join(broker.dataDir, "topics")).filter((n) => /^x\d$/.test(n))).toEqual([]);
  });
});

describe("reading topics", () => {
  test("GET /topics lists every topic by name with its partition count", async () => {
    await broker.call("POST", "/topics", { name: "list-b", partitions: 2 });
    await broker.call("POST", "/topics", { name: "list-a", partitions: 1 });
    const { status, body } = await broker.call("GET", "/topics");
    expect(status).toBe(200);
    const names = body.topics.map((t: { name: string }) => t.name);
    expect(names).toEqual([...names].sort());
    expect(body.topics).toContainEqual({ name: "list-a", partitions: 1 });
    expect(body.topics).toContainEqual({ name: "list-b", partitions: 2 });
  });

  test("GET /topics/{name} gives partitions, offsets, sizes and config", async () => {
    await broker.call("POST", "/topics", { name: "desc", partitions: 2 });
    await broker.call("POST", "/topics/desc/produce", { records: [{ value: "hello", partition: 1 }] });
    const { body } = await broker.call("GET", "/topics/desc");
    expect(body.name).toBe("desc");
    expect(body.partitions).toBe(2);
    expect(body.config).toEqual(defaults);
    expect(body.partition_details[0]).toEqual({ partition: 0, start_offset: 0, high_watermark: 0, size_bytes: 0, segment_count: 0 });
    expect(body.partition_details[1]).toMatchObject({ partition: 1, start_offset: 0, high_watermark: 1, segment_count: 1 });
    expect(body.partition_details[1].size_bytes).toBeGreaterThan(5);
    expect(body.size_bytes).toBe(body.partition_details[1].size_bytes);
  });

  test("a topic that does not exist is 404 on every topic path", async () => {
    for (const [method, path, body] of [
      ["GET", "/topics/ghost"],
      ["GET", "/topics/ghost/config"],
      ["PUT", "/topics/ghost/config", {}],
      ["DELETE", "/topics/ghost"],
      ["POST", "/topics/ghost/produce", { records: [{ value: "v" }] }],
      ["GET", "/topics/ghost/consume?partition=0&offset=0"],
    ] as const) {
      const answer = await broker.call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error).toBe("topic 'ghost' does not exist");
    }
  });

  test("an unserved method is 405 with Allow", async () => {
    const response = await fetch(`${broker.url}/topics/orders`, { method: "PATCH" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toContain("GET");
  });
});

describe("topic config", () => {
  test("GET config is the resolved config; PUT changes only the fields given and keeps the rest", async () => {
    await broker.call("POST", "/topics", { name: "conf", partitions: 1, config: { retention_bytes: 1000 } });
    expect((await broker.call("GET", "/topics/conf/config")).body).toEqual({ ...defaults, retention_bytes: 1000 });
    const put = await broker.call("PUT", "/topics/conf/config", { segment_bytes: 4096, cleanup_policy: "compact" });
    expect(put).toEqual({ status: 200, body: { ...defaults, retention_bytes: 1000, segment_bytes: 4096, cleanup_policy: "compact" } });
    expect((await broker.call("GET", "/topics/conf/config")).body).toEqual(put.body);
  });

  test("a bad PUT is 400 and changes nothing, not even the valid fields beside the bad one", async () => {
    await broker.call("POST", "/topics", { name: "conf2", partitions: 1 });
    await expectError("PUT", "/topics/conf2/config", { retention_ms: 5, segment_bytes: 3 * 1024 ** 3 }, 400, /'segment_bytes' is 3221225472/);
    await expectError("PUT", "/topics/conf2/config", { retention_ms: 5, bogus: 1 }, 400, /unknown field 'bogus'/);
    await expectError("PUT", "/topics/conf2/config", { tombstone_retention_ms: -1 }, 400, /'tombstone_retention_ms' is -1/);
    await expectError("PUT", "/topics/conf2/config", { retention_bytes: "1" }, 400, /'retention_bytes' must be an integer/);
    expect((await broker.call("GET", "/topics/conf2/config")).body).toEqual(defaults);
  });

  test("segment_bytes at its bounds (1 KiB and 2 GiB) is accepted", async () => {
    await broker.call("POST", "/topics", { name: "conf3", partitions: 1 });
    expect((await broker.call("PUT", "/topics/conf3/config", { segment_bytes: 1024 })).status).toBe(200);
    expect((await broker.call("PUT", "/topics/conf3/config", { segment_bytes: 2 * 1024 ** 3 })).status).toBe(200);
    expect((await broker.call("PUT", "/topics/conf3/config", { segment_bytes: 2 * 1024 ** 3 + 1 })).status).toBe(400);
  });
});

describe("DELETE /topics/{name}", () => {
  test("deletes the topic and its data; the name can be created again, empty", async () => {
    await broker.call("POST", "/topics", { name: "gone", partitions: 2 });
    await broker.call("POST", "/topics/gone/produce", {
      records: [
        { value: "a", partition: 0 },
        { value: "b", partition: 1 },
      ],
    });
    expect(existsSync(join(broker.dataDir, "topics", "gone", "0"))).toBe(true);
    const deleted = await broker.call("DELETE", "/topics/gone");
    expect(deleted.status).toBe(204);
    expect(existsSync(join(broker.dataDir, "topics", "gone"))).toBe(false);
    expect(readdirSync(join(broker.dataDir, "trash"))).toEqual([]);
    expect((await broker.call("GET", "/topics/gone")).status).toBe(404);
    expect((await broker.call("POST", "/topics", { name: "gone", partitions: 1 })).status).toBe(201);
    const read = await broker.call("GET", "/topics/gone/consume?partition=0&offset=0");
    expect(read.body).toEqual({ records: [], next_offset: 0, high_watermark: 0 });
  });
});

describe("health", () => {
  test("/healthz reports the topic count; /readyz is ready", async () => {
    const list = await broker.call("GET", "/topics");
    expect(await broker.call("GET", "/healthz")).toEqual({ status: 200, body: { status: "ok", topics: list.body.topics.length } });
    expect(await broker.call("GET", "/readyz")).toEqual({ status: 200, body: { status: "ready" } });
  });
});

describe("restart", () => {
  test("topics and their configs survive a restart, and so does a SIGKILL right after create", async () => {
    const first = await startBroker();
    await first.call("POST", "/topics", { name: "keep", partitions: 4, config: { retention_ms: 1234 } });
    await first.call("PUT", "/topics/keep/config", { cleanup_policy: "compact" });
    await first.call("POST", "/topics", { name: "keep2", partitions: 1 });
    await first.call("DELETE", "/topics/keep2");
    await first.stop();
    const second = await startBroker(first.dataDir);
    await second.call("POST", "/topics", { name: "killed", partitions: 2 });
    await second.kill();
    const third = await startBroker(first.dataDir);
    try {
      expect((await third.call("GET", "/topics")).body.topics).toEqual([
        { name: "keep", partitions: 4 },
        { name: "killed", partitions: 2 },
      ]);
      expect((await third.call("GET", "/topics/keep/config")).body).toEqual({ ...defaults, retention_ms: 1234, cleanup_policy: "compact" });
      expect((await third.call("GET", "/healthz")).body.topics).toBe(2);
    } finally {
      await third.stop();
    }
  });
});
