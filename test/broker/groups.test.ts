// Consumer groups end to end against a real `svc broker` process (spec: Consumer groups):
// join, heartbeat, leave and the assignment; the member timeout (--coord-member-timeout);
// commits, offsets and reading through a group; the bad input the spec names answered with a
// clear 4xx that changes nothing; and commits kept across a clean stop and across kill -9,
// losing at most about the last second.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type BrokerProcess, freshDataDir, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;

async function produce(b: BrokerProcess, topic: string, partition: number, count: number): Promise<void> {
  const records = Array.from({ length: count }, (_, i) => ({ value: `v${i}`, partition }));
  expect((await b.call("POST", `/topics/${topic}/produce`, { records })).status).toBe(200);
}

beforeAll(async () => {
  broker = await startBroker(freshDataDir(), ["--coord-member-timeout", "1s"]);
  for (const [name, partitions] of [
    ["orders", 6],
    ["audit", 1],
  ] as const) {
    expect((await broker.call("POST", "/topics", { name, partitions })).status).toBe(201);
  }
  await produce(broker, "orders", 0, 10);
});

afterAll(() => broker.stop());

describe("membership over HTTP", () => {
  test("join, a second join, heartbeat's three answers, the assignment, leave", async () => {
    const a = await broker.call("POST", "/groups/g1/join", { topics: ["orders"], member_id: null });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ generation: 1 });
    expect(a.body.assignment).toHaveLength(6);
    const b = await broker.call("POST", "/groups/g1/join", { topics: ["orders"] });
    expect(b.body.generation).toBe(2);
    expect(b.body.assignment).toHaveLength(3);
    expect((await broker.call("POST", "/groups/g1/heartbeat", { member_id: a.body.member_id, generation: 1 })).body).toEqual({
      status: "rebalance_required",
      generation: 2,
    });
    const mine = await broker.call("GET", `/groups/g1/assignment?member_id=${a.body.member_id}`);
    expect(mine.body.generation).toBe(2);
    const all = [...mine.body.assignment, ...b.body.assignment].map((p: any) => p.partition).sort();
    expect(all).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await broker.call("POST", "/groups/g1/heartbeat", { member_id: a.body.member_id, generation: 2 })).body.status).toBe("ok");
    const left = await broker.call("POST", "/groups/g1/leave", { member_id: b.body.member_id });
    expect(left).toEqual({ status: 200, body: { member_id: b.body.member_id, generation: 3 } });
    expect((await broker.call("POST", "/groups/g1/heartbeat", { member_id: b.body.member_id, generation: 3 })).body.status).toBe("unknown_member");
    expect((await broker.call("GET", `/groups/g1/assignment?member_id=${a.body.member_id}`)).body.assignment).toHaveLength(6);
  });

  test("a member that stops heartbeating is removed after --coord-member-timeout and the group rebalances", async () => {
    const a = (await broker.call("POST", "/groups/g2/join", { topics: ["orders"] })).body;
    const b = (await broker.call("POST", "/groups/g2/join", { topics: ["orders"] })).body;
    let status = "ok";
    const start = Date.now();
    // Only a heartbeats; b goes silent. The 1 s timeout is checked every 100 ms.
    while (Date.now() - start < 5000) {
      await Bun.sleep(250);
      status = (await broker.call("POST", "/groups/g2/heartbeat", { member_id: a.member_id, generation: b.generation })).body.status;
      if (status === "rebalance_required") break;
    }
    expect(status).toBe("rebalance_required");
    expect(Date.now() - start).toBeGreaterThanOrEqual(900);
    expect((await broker.call("POST", "/groups/g2/heartbeat", { member_id: b.member_id, generation: b.generation })).body.status).toBe("unknown_member");
    const after = (await broker.call("GET", `/groups/g2/assignment?member_id=${a.member_id}`)).body;
    expect(after.generation).toBe(3);
    expect(after.assignment).toHaveLength(6);
  });
});

describe("commits, offsets and reading through a group", () => {
  test("a group reads from its committed offset, from the start before any commit, and never commits itself", async () => {
    const first = await broker.call("GET", "/groups/g3/consume?topic=orders&partition=0&max_records=4");
    expect(first.status).toBe(200);
    expect(first.body.records.map((r: any) => r.offset)).toEqual([0, 1, 2, 3]);
    // Reading did not commit: the same records again.
    expect((await broker.call("GET", "/groups/g3/consume?topic=orders&partition=0&max_records=4")).body.records[0].offset).toBe(0);
    expect((await broker.call("POST", "/groups/g3/commit", { topic: "orders", partition: 0, offset: first.body.next_offset })).body).toEqual({
      topic: "orders",
      partition: 0,
      offset: 4,
    });
    const next = await broker.call("GET", "/groups/g3/consume?topic=orders&partition=0&max_records=100");
    expect(next.body.records.map((r: any) => r.value)).toEqual(["v4", "v5", "v6", "v7", "v8", "v9"]);
    expect(next.body).toMatchObject({ next_offset: 10, high_watermark: 10 });
    expect((await broker.call("POST", "/groups/g3/commit", { topic: "audit", partition: 0, offset: 0 })).status).toBe(200);
    expect((await broker.call("GET", "/groups/g3/offsets")).body).toEqual({ offsets: { audit: { "0": 0 }, orders: { "0": 4 } } });
  });

  test("the offset committed may be the high watermark, not one past it", async () => {
    expect((await broker.call("POST", "/groups/g4/commit", { topic: "orders", partition: 0, offset: 10 })).status).toBe(200);
    const past = await broker.call("POST", "/groups/g4/commit", { topic: "orders", partition: 0, offset: 11 });
    expect(past.status).toBe(400);
    expect(past.body.error).toContain("past the high watermark 10");
    expect((await broker.call("GET", "/groups/g4/offsets")).body.offsets.orders["0"]).toBe(10);
  });

  test("a commit naming its member and a stale generation is a 409 and records nothing", async () => {
    const a = (await broker.call("POST", "/groups/g5/join", { topics: ["audit"] })).body;
    const ok = await broker.call("POST", "/groups/g5/commit", { topic: "audit", partition: 0, offset: 0, member_id: a.member_id, generation: a.generation });
    expect(ok.status).toBe(200);
    await broker.call("POST", "/groups/g5/join", { topics: ["audit"] });
    const stale = await broker.call("POST", "/groups/g5/commit", { topic: "audit", partition: 0, offset: 0, member_id: a.member_id, generation: a.generation });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toContain("stale");
  });
});

describe("bad input gets a clear 4xx and changes nothing", () => {
  const cases: [string, string, string, unknown, number, string][] = [
    ["heartbeat of an unknown member", "POST", "/groups/bad/heartbeat", { member_id: "nobody", generation: 0 }, 200, "unknown_member"],
    ["assignment of an unknown member", "GET", "/groups/bad/assignment?member_id=nobody", undefined, 404, "join again"],
    ["leave of an unknown member", "POST", "/groups/bad/leave", { member_id: "nobody" }, 404, "is not in group"],
    ["join with an unknown member id", "POST", "/groups/bad/join", { topics: ["orders"], member_id: "nobody" }, 404, "member_id null"],
    ["join naming no topic", "POST", "/groups/bad/join", { topics: [] }, 400, "1 to 100"],
    ["join naming 101 topics", "POST", "/groups/bad/join", { topics: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 400, "101 topics"],
    ["join naming a missing topic", "POST", "/groups/bad/join", { topics: ["orders", "nope"] }, 404, "topic 'nope' does not exist"],
    ["join naming a bad topic name", "POST", "/groups/bad/join", { topics: ["a/b"] }, 400, "topics[0]"],
    ["join with an unknown field", "POST", "/groups/bad/join", { topics: ["orders"], extra: 1 }, 400, "unknown field 'extra'"],
    ["commit to a missing partition", "POST", "/groups/bad/commit", { topic: "orders", partition: 6, offset: 0 }, 404, "no partition 6"],
    ["commit to a missing topic", "POST", "/groups/bad/commit", { topic: "nope", partition: 0, offset: 0 }, 404, "does not exist"],
    ["commit of a negative offset", "POST", "/groups/bad/commit", { topic: "orders", partition: 0, offset: -1 }, 400, "'offset'"],
    ["commit with member_id but no generation", "POST", "/groups/bad/commit", { topic: "orders", partition: 0, offset: 0, member_id: "x" }, 400, "go together"],
    ["heartbeat without a generation", "POST", "/groups/bad/heartbeat", { member_id: "x" }, 400, "'generation' is required"],
    ["consume without a topic", "GET", "/groups/bad/consume?partition=0", undefined, 400, "'topic' is required"],
    ["consume with an offset", "GET", "/groups/bad/consume?topic=orders&partition=0&offset=3", undefined, 400, "unknown query parameter 'offset'"],
    ["consume from a missing partition", "GET", "/groups/bad/consume?topic=orders&partition=9", undefined, 404, "no partition 9"],
    ["offsets of a group never used", "GET", "/groups/bad/offsets", undefined, 404, "does not exist"],
    ["a group name with a bad character", "GET", "/groups/b%20d/offsets", undefined, 400, "group name"],
  ];
  for (const [what, method, path, body, status, message] of cases) {
    test(what, async () => {
      const answer = await broker.call(method, path, body);
      expect(answer.status).toBe(status);
      expect(JSON.stringify(answer.body)).toContain(message);
    });
  }

  test("after all of them the group 'bad' still does not exist", async () => {
    expect((await broker.call("GET", "/groups/bad/offsets")).status).toBe(404);
  });

  test("a heartbeat with a generation never given out is a 400", async () => {
    const a = (await broker.call("POST", "/groups/g6/join", { topics: ["audit"] })).body;
    const answer = await broker.call("POST", "/groups/g6/heartbeat", { member_id: a.member_id, generation: a.generation + 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain("never given out");
  });

  test("a second member naming other topics than the group's is a 409", async () => {
    await broker.call("POST", "/groups/g7/join", { topics: ["audit"] });
    const answer = await broker.call("POST", "/groups/g7/join", { topics: ["orders"] });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toContain("same topics");
  });

  test("deleting a topic drops the groups' offsets of it", async () => {
    expect((await broker.call("POST", "/topics", { name: "brief", partitions: 1 })).status).toBe(201);
    await produce(broker, "brief", 0, 2);
    expect((await broker.call("POST", "/groups/g8/commit", { topic: "brief", partition: 0, offset: 2 })).status).toBe(200);
    expect((await broker.call("DELETE", "/topics/brief")).status).toBe(204);
    expect((await broker.call("GET", "/groups/g8/offsets")).body).toEqual({ offsets: {} });
  });
});

describe("commits survive a restart", () => {
  test("a clean stop writes out the last commit", async () => {
    const dataDir = freshDataDir();
    const b = await startBroker(dataDir);
    await b.call("POST", "/topics", { name: "t", partitions: 2 });
    await produce(b, "t", 1, 5);
    expect((await b.call("POST", "/groups/keep/commit", { topic: "t", partition: 1, offset: 3 })).status).toBe(200);
    await b.stop();
    const again = await startBroker(dataDir);
    try {
      expect((await again.call("GET", "/groups/keep/offsets")).body).toEqual({ offsets: { t: { "1": 3 } } });
      expect((await again.call("GET", "/groups/keep/consume?topic=t&partition=1")).body.records.map((r: any) => r.offset)).toEqual([3, 4]);
    } finally {
      await again.stop();
    }
  });

  test("after kill -9 the committed offset is one acknowledged at most about a second before the kill", async () => {
    const dataDir = freshDataDir();
    const b = await startBroker(dataDir);
    await b.call("POST", "/topics", { name: "t", partitions: 1 });
    await produce(b, "t", 0, 1000);
    const acked: { offset: number; atMs: number }[] = [];
    const start = Date.now();
    for (let offset = 1; Date.now() - start < 4500; offset++) {
      expect((await b.call("POST", "/groups/crash/commit", { topic: "t", partition: 0, offset })).status).toBe(200);
      acked.push({ offset, atMs: Date.now() });
      await Bun.sleep(5);
    }
    const killedAtMs = Date.now();
    await b.kill();
    const again = await startBroker(dataDir);
    try {
      const recovered = (await again.call("GET", "/groups/crash/offsets")).body.offsets.t["0"] as number;
      const last = acked[acked.length - 1]!.offset;
      // Written out once a second: a commit acknowledged more than a second before the kill is on
      // disk. Two seconds more of slack cover a loaded machine's late timers and slow fsync, so
      // the test does not depend on this machine's speed.
      const surely = acked.filter((a) => a.atMs <= killedAtMs - 3000).at(-1)!.offset;
      expect(recovered).toBeLessThanOrEqual(last);
      expect(recovered).toBeGreaterThanOrEqual(surely);
      const read = (await again.call("GET", "/groups/crash/consume?topic=t&partition=0&max_records=1")).body;
      expect(read.records[0].offset).toBe(recovered);
    } finally {
      await again.stop();
    }
  });
});
