// Administration (spec: Administration) against a real `svc broker --auth required`: the
// idempotent producers listed with their owners and per-partition sequences, one forgotten (its
// next produce starts over at sequence 0, and another key may take the id), and every group on a
// topic moved back to the topic's first offsets — all for admins on `*` only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type BrokerProcess, freshDataDir, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
let admin: Record<string, string>;
let writer: { headers: Record<string, string>; id: string };
let other: Record<string, string>;

beforeAll(async () => {
  broker = await startBroker(freshDataDir(), ["--auth", "required"]);
  admin = { authorization: `Bearer ${readFileSync(join(broker.dataDir, "bootstrap.key"), "utf8").trim()}` };
  for (const name of ["t", "u"]) expect((await broker.send("POST", "/topics", { name, partitions: 2 }, admin)).status).toBe(201);
  const made = async (name: string) => (await broker.send("POST", "/admin/keys", { name, acls: [{ action: "write", topic_prefix: "*" }] }, admin)).body;
  const w = await made("writer");
  writer = { headers: { authorization: `Bearer ${w.secret}` }, id: w.key_id };
  other = { authorization: `Bearer ${(await made("other")).secret}` };
});
afterAll(() => broker.stop());

const produce = (headers: Record<string, string>, producerId: string, partition: number, sequence: number) =>
  broker.send("POST", "/topics/t/produce", { producer_id: producerId, records: [{ value: `s${sequence}`, partition, sequence }] }, headers);

describe("producers", () => {
  test("are listed with their owner, last use and the sequence each partition expects next; admins only", async () => {
    for (let s = 0; s < 3; s++) expect((await produce(writer.headers, "p1", 0, s)).status).toBe(200);
    expect((await produce(writer.headers, "p1", 1, 0)).status).toBe(200);
    const listed = await broker.send("GET", "/admin/producers", undefined, admin);
    expect(listed.status).toBe(200);
    const p1 = listed.body.producers.find((p: any) => p.producer_id === "p1");
    expect(p1).toMatchObject({
      owner: writer.id,
      partitions: [
        { topic: "t", partition: 0, next_sequence: 3 },
        { topic: "t", partition: 1, next_sequence: 1 },
      ],
    });
    expect(typeof p1.last_used_ms).toBe("number");
    expect((await broker.send("GET", "/admin/producers", undefined, writer.headers)).status).toBe(403);
  });

  test("a forgotten producer starts over at sequence 0, and another key may take its id", async () => {
    expect((await produce(writer.headers, "p2", 0, 0)).status).toBe(200);
    expect((await produce(other, "p2", 0, 1)).status).toBe(403);
    expect((await broker.send("DELETE", "/admin/producers/p2", undefined, writer.headers)).status).toBe(403);
    expect((await broker.send("DELETE", "/admin/producers/p2", undefined, admin)).status).toBe(204);
    expect((await broker.send("GET", "/admin/producers", undefined, admin)).body.producers.map((p: any) => p.producer_id)).not.toContain("p2");
    // Sequence 0 again is a new record, not a duplicate of the first.
    const again = await produce(other, "p2", 0, 0);
    expect(again.status).toBe(200);
    expect(again.body.results[0].duplicate).toBeUndefined();
    expect((await broker.send("DELETE", "/admin/producers/nobody", undefined, admin)).status).toBe(404);
  });

  test("forgetting survives a restart", async () => {
    const dataDir = freshDataDir();
    const b = await startBroker(dataDir);
    await b.call("POST", "/topics", { name: "t", partitions: 1 });
    await b.call("POST", "/topics/t/produce", { producer_id: "gone", records: [{ value: "a", partition: 0, sequence: 0 }] });
    expect((await b.call("DELETE", "/admin/producers/gone")).status).toBe(204);
    await b.kill();
    const again = await startBroker(dataDir);
    try {
      expect((await again.call("GET", "/admin/producers")).body).toEqual({ producers: [] });
      const first = await again.call("POST", "/topics/t/produce", { producer_id: "gone", records: [{ value: "b", partition: 0, sequence: 0 }] });
      expect(first.body.results).toEqual([{ partition: 0, offset: 1 }]);
    } finally {
      await again.stop();
    }
  });
});

describe("reset-offsets", () => {
  test("moves every group on the topic back to its first offsets, and no other topic", async () => {
    await broker.send(
      "POST",
      "/topics/t/produce",
      {
        records: [
          { value: "x", partition: 1 },
          { value: "y", partition: 1 },
        ],
      },
      admin,
    );
    const commit = (group: string, topic: string, partition: number, offset: number) =>
      broker.send("POST", `/groups/${group}/commit`, { topic, partition, offset }, admin);
    expect((await commit("ga", "t", 0, 3)).status).toBe(200);
    expect((await commit("ga", "t", 1, 2)).status).toBe(200);
    expect((await commit("gb", "t", 0, 1)).status).toBe(200);
    expect((await commit("gb", "u", 0, 0)).status).toBe(200);
    expect((await commit("gc", "u", 0, 0)).status).toBe(200);
    const reset = await broker.send("POST", "/admin/reset-offsets", { topic: "t" }, admin);
    expect(reset.body).toEqual({ topic: "t", groups: ["ga", "gb"] });
    expect((await broker.send("GET", "/groups/ga/offsets", undefined, admin)).body).toEqual({ offsets: { t: { "0": 0, "1": 0 } } });
    expect((await broker.send("GET", "/groups/gb/offsets", undefined, admin)).body).toEqual({ offsets: { t: { "0": 0 }, u: { "0": 0 } } });
  });

  test("bad input is a 4xx that moves nothing; it is for admins only", async () => {
    expect((await broker.send("POST", "/admin/reset-offsets", { topic: "nope" }, admin)).status).toBe(404);
    expect((await broker.send("POST", "/admin/reset-offsets", {}, admin)).status).toBe(400);
    expect((await broker.send("POST", "/admin/reset-offsets", { topic: "t", group: "ga" }, admin)).status).toBe(400);
    expect((await broker.send("POST", "/admin/reset-offsets", { topic: "t" }, writer.headers)).status).toBe(403);
  });
});
