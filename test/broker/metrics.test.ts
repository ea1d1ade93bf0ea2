// GET /metrics against a real `svc broker --auth required` (spec: Health, metrics): every series
// of the spec's table with its type and exact labels and values that follow what happened —
// produces, reads, commits, a retention and a compaction pass — the exposition accepted by
// Prometheus's own `promtool check metrics`, and what a key sees: only topics it can read and
// groups it owns, everything for a global admin, nothing without a key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { logSegmentBytesMin } from "../../src/core/limits.ts";
import { type BrokerProcess, freshDataDir, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
let admin: Record<string, string>;
let reader: Record<string, string>;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples and TYPE lines of an exposition (our own output: no escapes in label values here). */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) types.set(type[1]!, type[2]!);
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (sample === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { samples, types };
}

async function scrape(headers: Record<string, string> = admin): Promise<{ text: string; samples: Sample[]; types: Map<string, string> }> {
  const response = await fetch(`${broker.url}/metrics`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  const text = await response.text();
  return { text, ...parse(text) };
}

const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

beforeAll(async () => {
  broker = await startBroker(freshDataDir(), ["--auth", "required"]);
  admin = { authorization: `Bearer ${readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim()}` };
  reader = {
    authorization: `Bearer ${(await broker.send("POST", "/admin/keys", { name: "reader", acls: [{ action: "read", topic_prefix: "orders" }] }, admin)).body.secret}`,
  };
  const small = { segment_bytes: logSegmentBytesMin };
  for (const [name, partitions, config] of [
    ["orders", 2, {}],
    ["payments", 1, {}],
    ["logs", 1, { ...small, retention_bytes: 0 }],
    ["table", 1, { ...small, cleanup_policy: "compact" }],
  ] as const) {
    expect((await broker.send("POST", "/topics", { name, partitions, config }, admin)).status).toBe(201);
  }
  const produce = (topic: string, records: unknown[]) => broker.send("POST", `/topics/${topic}/produce`, { records }, admin);
  expect(
    (
      await produce("orders", [
        { value: "abc", partition: 0 },
        { value: "de", key: "k", partition: 0 },
        { value: "f", partition: 1 },
      ])
    ).status,
  ).toBe(200);
  expect((await produce("payments", [{ value: "1234", partition: 0 }])).status).toBe(200);
  // One request per record, so the 1 KiB segments roll: retention then drops every sealed one.
  const big = "x".repeat(300);
  for (let i = 0; i < 8; i++) expect((await produce("logs", [{ value: big }])).status).toBe(200);
  for (let i = 0; i < 8; i++) expect((await produce("table", [{ key: `k${i % 2}`, value: big }])).status).toBe(200);
  expect((await broker.send("POST", "/admin/run-retention", undefined, admin)).status).toBe(200);
  expect((await broker.send("POST", "/admin/run-compaction", undefined, admin)).body.records_dropped).toBeGreaterThan(0);
  // Reads: two records of orders/0 by the topic endpoint, one of payments by a group.
  expect((await broker.send("GET", "/topics/orders/consume?partition=0&offset=0", undefined, reader)).body.records).toHaveLength(2);
  expect((await broker.send("GET", "/groups/admins/consume?topic=payments&partition=0", undefined, admin)).body.records).toHaveLength(1);
  expect((await broker.send("POST", "/groups/readers/commit", { topic: "orders", partition: 0, offset: 1 }, reader)).status).toBe(200);
  expect((await broker.send("POST", "/groups/admins/commit", { topic: "payments", partition: 0, offset: 0 }, admin)).status).toBe(200);
});
afterAll(() => broker.stop());

describe("the spec's series", () => {
  const table: [string, string, string[]][] = [
    ["svc_partition_start_offset", "gauge", ["topic", "partition"]],
    ["svc_partition_end_offset", "gauge", ["topic", "partition"]],
    ["svc_partition_size_bytes", "gauge", ["topic", "partition"]],
    ["svc_partition_segment_count", "gauge", ["topic", "partition"]],
    ["svc_topic_records_produced_total", "counter", ["topic"]],
    ["svc_topic_bytes_produced_total", "counter", ["topic"]],
    ["svc_topic_records_consumed_total", "counter", ["topic"]],
    ["svc_topic_bytes_consumed_total", "counter", ["topic"]],
    ["svc_group_committed_offset", "gauge", ["group", "topic", "partition"]],
    ["svc_group_lag", "gauge", ["group", "topic", "partition"]],
    ["svc_retention_segments_deleted_total", "counter", ["topic", "partition"]],
    ["svc_retention_bytes_reclaimed_total", "counter", ["topic", "partition"]],
    ["svc_compaction_runs_total", "counter", ["topic", "partition"]],
    ["svc_compaction_records_dropped_total", "counter", ["topic", "partition"]],
  ];
  test("each is there with its type and exactly its labels", async () => {
    const { samples, types } = await scrape();
    for (const [name, type, labels] of table) {
      expect([name, types.get(name)]).toEqual([name, type]);
      const series = samples.filter((s) => s.name === name);
      expect([name, series.length > 0]).toEqual([name, true]);
      for (const s of series) expect([name, Object.keys(s.labels).sort()]).toEqual([name, [...labels].sort()]);
    }
  });

  test("the values follow what happened", async () => {
    const { samples } = await scrape();
    const value = (name: string, labels: Record<string, string>) => find(samples, name, labels)[0]?.value;
    expect(value("svc_partition_end_offset", { topic: "orders", partition: "0" })).toBe(2);
    expect(value("svc_partition_end_offset", { topic: "orders", partition: "1" })).toBe(1);
    expect(value("svc_topic_records_produced_total", { topic: "orders" })).toBe(3);
    expect(value("svc_topic_bytes_produced_total", { topic: "orders" })).toBe(3 + 1 + 2 + 1);
    expect(value("svc_topic_records_consumed_total", { topic: "orders" })).toBe(2);
    expect(value("svc_topic_bytes_consumed_total", { topic: "orders" })).toBe(6);
    expect(value("svc_topic_records_consumed_total", { topic: "payments" })).toBe(1);
    expect(value("svc_group_committed_offset", { group: "readers", topic: "orders", partition: "0" })).toBe(1);
    expect(value("svc_group_lag", { group: "readers", topic: "orders", partition: "0" })).toBe(1);
    expect(value("svc_group_lag", { group: "admins", topic: "payments", partition: "0" })).toBe(1);
    const deleted = value("svc_retention_segments_deleted_total", { topic: "logs", partition: "0" })!;
    expect(deleted).toBeGreaterThan(0);
    expect(value("svc_partition_start_offset", { topic: "logs", partition: "0" })).toBeGreaterThan(0);
    expect(value("svc_retention_bytes_reclaimed_total", { topic: "logs", partition: "0" })).toBeGreaterThan(0);
    expect(value("svc_compaction_runs_total", { topic: "table", partition: "0" })).toBe(1);
    expect(value("svc_compaction_records_dropped_total", { topic: "table", partition: "0" })).toBeGreaterThan(0);
    // Ours, beside the spec's: one write per produce here, since each waited for the one before.
    expect(value("svc_partition_flushes_total", { topic: "orders", partition: "0" })).toBe(1);
    expect(value("svc_partition_flushes_total", { topic: "orders", partition: "1" })).toBe(1);
    expect(value("svc_partition_flushes_total", { topic: "logs", partition: "0" })).toBe(8);
    // The produces of beforeAll: orders, payments, 8 to logs, 8 to table.
    expect(find(samples, "svc_broker_requests_total", { action: "write", outcome: "ok" })[0]!.value).toBe(18);
  });

  test("promtool check metrics parses the exposition, and lints only the name the spec gives", async () => {
    const { text } = await scrape();
    const promtool = Bun.spawnSync(["promtool", "check", "metrics"], { stdin: new TextEncoder().encode(text), stdout: "pipe", stderr: "pipe" });
    const findings = `${promtool.stdout.toString()}${promtool.stderr.toString()}`.trim().split("\n");
    // Exit 1 is a parse error; 3 is lint findings. The one finding is the spec's own name:
    // Prometheus reserves the _count suffix for histograms and summaries.
    expect(findings).toEqual(['svc_partition_segment_count non-histogram and non-summary metrics should not have "_count" suffix']);
    expect(promtool.exitCode).toBe(3);
  });

  test("promtool would catch a broken exposition (the check can fail)", () => {
    const promtool = Bun.spawnSync(["promtool", "check", "metrics"], {
      stdin: new TextEncoder().encode('svc_x{topic="a" 1\n'),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(promtool.exitCode).toBe(1);
  });
});

describe("what a key sees", () => {
  test("without a key, a 401", async () => {
    expect((await fetch(`${broker.url}/metrics`)).status).toBe(401);
  });

  test("a reader sees only the topics it can read and the groups it owns; the admin sees all", async () => {
    const mine = await scrape(reader);
    const topics = new Set(mine.samples.map((s) => s.labels.topic).filter((t) => t !== undefined));
    expect([...topics].sort()).toEqual(["orders"]);
    expect(new Set(mine.samples.map((s) => s.labels.group).filter((g) => g !== undefined))).toEqual(new Set(["readers"]));
    // Series about neither topic nor group are shown to every key.
    expect(find(mine.samples, "process_resident_memory_bytes", {})).toHaveLength(1);
    const all = await scrape();
    expect(new Set(all.samples.map((s) => s.labels.topic).filter((t) => t !== undefined))).toEqual(new Set(["orders", "payments", "logs", "table"]));
    expect(new Set(all.samples.map((s) => s.labels.group).filter((g) => g !== undefined))).toEqual(new Set(["readers", "admins"]));
  });

  test("a deleted topic's series go", async () => {
    expect((await broker.send("DELETE", "/topics/payments", undefined, admin)).status).toBe(204);
    const { samples } = await scrape();
    expect(samples.filter((s) => s.labels.topic === "payments")).toEqual([]);
  });
});
