// Idempotent producers against a real `svc broker`, row by row of the spec's table (first
// sequence, in order, duplicate with its original offset, too low, gap, the window's edge at 128
// and 129 back), a request that mixes new records and retries, whole-request refusal, independence
// of partitions and of producers, and retries recognised after a clean restart and after kill -9.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { idempotentSequenceWindow } from "../../src/core/limits.ts";
import { type BrokerProcess, freshDataDir, highWatermarks, readAll, startBroker } from "./support/broker.ts";

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker();
});
afterAll(() => broker.stop());

let topics = 0;
async function topic(b: BrokerProcess, partitions = 1): Promise<string> {
  const name = `t${++topics}`;
  expect((await b.call("POST", "/topics", { name, partitions })).status).toBe(201);
  return name;
}

interface Rec {
  sequence: number;
  partition?: number;
  value?: string;
}
const produce = (b: BrokerProcess, t: string, producer: string, records: Rec[]) =>
  b.call("POST", `/topics/${t}/produce`, {
    producer_id: producer,
    records: records.map((r) => ({ partition: r.partition ?? 0, value: r.value ?? `v${r.sequence}`, sequence: r.sequence })),
  });
const seqs = (from: number, to: number, partition = 0): Rec[] => Array.from({ length: to - from }, (_, i) => ({ sequence: from + i, partition }));

describe("the spec's table", () => {
  test("first sequence is 0; later ones are written in order", async () => {
    const t = await topic(broker);
    expect((await produce(broker, t, "p", [{ sequence: 0 }])).body).toEqual({ results: [{ partition: 0, offset: 0 }] });
    expect((await produce(broker, t, "p", seqs(1, 3))).body.results).toEqual([
      { partition: 0, offset: 1 },
      { partition: 0, offset: 2 },
    ]);
  });

  test("a producer new to a partition starting past 0 is a gap", async () => {
    const t = await topic(broker);
    const { status, body } = await produce(broker, t, "p", [{ sequence: 5 }]);
    expect(status).toBe(400);
    expect(body.error).toStartWith("sequence gap; send the missing records first");
    expect(body.error).toContain("expects sequence 0");
  });

  test("a duplicate within the window is not written again and returns its original offset", async () => {
    const t = await topic(broker);
    await broker.call("POST", `/topics/${t}/produce`, { records: [{ value: "plain" }] }); // offsets differ from sequences
    await produce(broker, t, "p", seqs(0, 3));
    const { status, body } = await produce(broker, t, "p", [{ sequence: 1, value: "changed" }]);
    expect(status).toBe(200);
    expect(body.results).toEqual([{ partition: 0, offset: 2, duplicate: true }]);
    expect((await readAll(broker, t, 0)).map((r) => r.value)).toEqual(["plain", "v0", "v1", "v2"]);
  });

  test("a gap is a 400 and writes nothing", async () => {
    const t = await topic(broker);
    await produce(broker, t, "p", seqs(0, 2));
    const { status, body } = await produce(broker, t, "p", [{ sequence: 3 }]);
    expect(status).toBe(400);
    expect(body.error).toStartWith("sequence gap; send the missing records first");
    expect(await highWatermarks(broker, t)).toEqual([2]);
  });

  test("the window's edge: 128 back is a duplicate, 129 back is too low", async () => {
    const t = await topic(broker);
    const total = idempotentSequenceWindow + 10;
    await produce(broker, t, "p", seqs(0, total));
    const edge = total - idempotentSequenceWindow;
    const dup = await produce(broker, t, "p", [{ sequence: edge }]);
    expect(dup.body.results).toEqual([{ partition: 0, offset: edge, duplicate: true }]);
    const low = await produce(broker, t, "p", [{ sequence: edge - 1 }]);
    expect(low.status).toBe(400);
    expect(low.body.error).toStartWith("sequence too low");
    expect(await highWatermarks(broker, t)).toEqual([total]);
  });
});

describe("whole requests", () => {
  test("new records and retries mixed: each judged in order, retries answered, new ones written", async () => {
    const t = await topic(broker);
    await produce(broker, t, "p", seqs(0, 2));
    const { body } = await produce(broker, t, "p", [{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }, { sequence: 2 }]);
    expect(body.results).toEqual([
      { partition: 0, offset: 1, duplicate: true },
      { partition: 0, offset: 2 },
      { partition: 0, offset: 3 },
      { partition: 0, offset: 2, duplicate: true },
    ]);
    expect(await highWatermarks(broker, t)).toEqual([4]);
  });

  test("one bad sequence in any partition refuses the request; nothing of it is written", async () => {
    const t = await topic(broker, 2);
    const { status } = await produce(broker, t, "p", [...seqs(0, 3, 0), { sequence: 1, partition: 1 }]);
    expect(status).toBe(400);
    expect(await highWatermarks(broker, t)).toEqual([0, 0]);
    // The refused request left no state behind: sequence 0 is still the one expected.
    expect((await produce(broker, t, "p", [{ sequence: 0 }])).body.results).toEqual([{ partition: 0, offset: 0 }]);
  });

  test("a record with neither partition nor key is refused with producer_id", async () => {
    const t = await topic(broker, 2);
    const { status, body } = await broker.call("POST", `/topics/${t}/produce`, { producer_id: "p", records: [{ value: "v", sequence: 0 }] });
    expect(status).toBe(400);
    expect(body.error).toContain("needs a 'partition' or a 'key'");
  });

  test("concurrent retries of one request are written once", async () => {
    const t = await topic(broker);
    const answers = await Promise.all(Array.from({ length: 8 }, () => produce(broker, t, "p", seqs(0, 5))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.results[0].duplicate === undefined)).toHaveLength(1);
    for (const a of answers) expect(a.body.results.map((r: any) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    expect(await highWatermarks(broker, t)).toEqual([5]);
  });
});

describe("independence", () => {
  test("sequences count per partition", async () => {
    const t = await topic(broker, 2);
    const { body } = await produce(broker, t, "p", [
      { sequence: 0, partition: 0 },
      { sequence: 0, partition: 1 },
      { sequence: 1, partition: 1 },
    ]);
    expect(body.results).toEqual([
      { partition: 0, offset: 0 },
      { partition: 1, offset: 0 },
      { partition: 1, offset: 1 },
    ]);
    expect((await produce(broker, t, "p", [{ sequence: 1, partition: 0 }])).body.results).toEqual([{ partition: 0, offset: 1 }]);
  });

  test("different producers have their own sequences", async () => {
    const t = await topic(broker);
    await produce(broker, t, "a", seqs(0, 3));
    expect((await produce(broker, t, "b", [{ sequence: 0 }])).body.results).toEqual([{ partition: 0, offset: 3 }]);
    expect((await produce(broker, t, "a", [{ sequence: 0 }])).body.results).toEqual([{ partition: 0, offset: 0, duplicate: true }]);
  });
});

describe("after a restart", () => {
  async function acknowledgedThenRestarted(how: "stop" | "kill"): Promise<void> {
    const dataDir = freshDataDir();
    let b = await startBroker(dataDir);
    const t = await topic(b, 2);
    // Enough traffic that the journal is folded into a snapshot on restart and more is added after.
    for (let i = 0; i < 20; i++) {
      const r = await produce(b, t, "p", [...seqs(i * 10, i * 10 + 10, 0), { sequence: i, partition: 1 }]);
      expect(r.status).toBe(200);
    }
    await (how === "stop" ? b.stop() : b.kill());
    b = await startBroker(dataDir);
    try {
      const retry = await produce(b, t, "p", [...seqs(190, 200, 0), { sequence: 19, partition: 1 }]);
      expect(retry.status).toBe(200);
      expect(retry.body.results.every((r: any) => r.duplicate === true)).toBe(true);
      expect(retry.body.results.map((r: any) => r.offset)).toEqual([190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 19]);
      expect(await highWatermarks(b, t)).toEqual([200, 20]);
      // And the producer carries on where it was.
      expect((await produce(b, t, "p", [{ sequence: 200 }])).body.results).toEqual([{ partition: 0, offset: 200 }]);
      await b.kill();
      b = await startBroker(dataDir);
      expect((await produce(b, t, "p", [{ sequence: 200 }, { sequence: 201 }])).body.results).toEqual([
        { partition: 0, offset: 200, duplicate: true },
        { partition: 0, offset: 201 },
      ]);
      const values = (await readAll(b, t, 0)).map((r) => r.value);
      expect(new Set(values).size).toBe(values.length);
    } finally {
      await b.stop();
    }
  }

  test("a clean stop", () => acknowledgedThenRestarted("stop"));
  test("kill -9: every acknowledged sequence is recognised; nothing is written twice", () => acknowledgedThenRestarted("kill"));

  test("kill -9 during a load of idempotent produces, then every request retried", async () => {
    const dataDir = freshDataDir();
    let b = await startBroker(dataDir);
    const t = await topic(b);
    const acked = new Map<number, number>();
    let sent = 0;
    const load = (async () => {
      for (let s = 0; ; s++) {
        sent = s + 1;
        const r = await produce(b, t, "p", [{ sequence: s }]).catch(() => null);
        if (r === null || r.status !== 200) return;
        acked.set(s, r.body.results[0].offset);
      }
    })();
    while (acked.size < 30) await Bun.sleep(5);
    await b.kill();
    await load;
    b = await startBroker(dataDir);
    try {
      // Retry everything sent, including the one in flight at the kill; none may land twice.
      const r = await produce(b, t, "p", seqs(0, sent));
      expect(r.status).toBe(200);
      for (const [s, offset] of acked) expect(r.body.results[s]).toEqual({ partition: 0, offset, duplicate: true });
      const values = (await readAll(b, t, 0)).map((x) => x.value);
      expect(values).toEqual(seqs(0, sent).map((x) => `v${x.sequence}`));
    } finally {
      await b.stop();
    }
  });
});
