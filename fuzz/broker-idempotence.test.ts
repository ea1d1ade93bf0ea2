// Idempotent produce (src/broker/produce/idempotent.ts over real partitions and their producer
// journals) agrees with a small reference model of the spec's table — every accepted, duplicate
// and refused decision and every offset — for random runs of produce attempts by several producers
// to several partitions, with the partitions closed and reopened from disk at random points (so
// the journal and snapshot must bring back exactly the state the model holds).
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Partition } from "../src/broker/log/partition.ts";
import { frameStarts, unstampedFrames } from "../src/broker/log/record.ts";
import { produceIdempotent } from "../src/broker/produce/idempotent.ts";
import { attachProducerJournal } from "../src/broker/produce/producer-journal.ts";
import type { ProducePlan } from "../src/broker/produce/request.ts";
import type { Topic } from "../src/broker/topics/topic.ts";
import { idempotentSequenceWindow } from "../src/core/limits.ts";

const root = mkdtempSync(join(tmpdir(), "svc-broker-idem-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

const partitions = 2;
const producers = ["a", "b"];

/** The spec's table, kept naively: every sequence ever accepted and its offset. */
class Model {
  end = new Array<number>(partitions).fill(0);
  next = new Map<string, number>();
  offsets = new Map<string, number>();

  produce(producer: string, records: { partition: number; sequence: number }[]): { partition: number; offset: number; duplicate?: true }[] | "gap" | "too_low" {
    const next = new Map(this.next);
    const offsets = new Map(this.offsets);
    const end = [...this.end];
    const out: { partition: number; offset: number; duplicate?: true }[] = [];
    for (const { partition, sequence } of records) {
      const key = `${producer}/${partition}`;
      const expected = next.get(key) ?? 0;
      if (sequence === expected) {
        offsets.set(`${key}/${sequence}`, end[partition]!);
        out.push({ partition, offset: end[partition]!++ });
        next.set(key, expected + 1);
      } else if (sequence > expected) return "gap";
      else if (expected - sequence <= idempotentSequenceWindow) out.push({ partition, offset: offsets.get(`${key}/${sequence}`)!, duplicate: true });
      else return "too_low";
    }
    Object.assign(this, { next, offsets, end });
    return out;
  }

  nextOf(producer: string, partition: number): number {
    return this.next.get(`${producer}/${partition}`) ?? 0;
  }
}

/** Just enough of a Topic for produceIdempotent: every partition opened with its journal. */
function fakeTopic(dir: string): { topic: Topic; close(): Promise<void> } {
  const logs = Array.from({ length: partitions }, (_, p) => {
    const log = Partition.open(join(dir, String(p)));
    attachProducerJournal(log);
    return log;
  });
  const topic = { name: "t", partitionCount: partitions, existingLog: (p: number) => logs[p]!, logForWrite: (p: number) => logs[p]! };
  return { topic: topic as unknown as Topic, close: async () => void (await Promise.all(logs.map((l) => l.close()))) };
}

const attempt = fc.record({
  producer: fc.constantFrom(...producers),
  reopen: fc.boolean(),
  // Each record's sequence relative to the model's next one: mostly in order, some retries, some
  // far back (past the window), some ahead (a gap).
  records: fc.array(
    fc.record({
      partition: fc.nat(partitions - 1),
      delta: fc.oneof(
        { weight: 6, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.integer({ min: -5, max: -1 }) },
        fc.integer({ min: -140, max: -120 }),
        fc.constant(1),
      ),
      burst: fc.oneof({ weight: 4, arbitrary: fc.constant(1) }, fc.integer({ min: 2, max: 60 })),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

test("produce decisions and offsets equal the reference model, across reopens", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(attempt, { minLength: 1, maxLength: 25 }), async (attempts) => {
      const dir = join(root, `r${++runs}`);
      const model = new Model();
      let open = fakeTopic(dir);
      try {
        for (const { producer, reopen, records } of attempts) {
          // Sequences from the deltas, counting up within the request as a producer would.
          const running = new Map<number, number>();
          const planned: { partition: number; sequence: number }[] = [];
          for (const { partition, delta, burst } of records) {
            const start = Math.max(0, (running.get(partition) ?? model.nextOf(producer, partition)) + delta);
            for (let i = 0; i < burst; i++) planned.push({ partition, sequence: start + i });
            running.set(partition, start + burst);
          }
          const run = unstampedFrames(planned.map((r) => ({ key: null, value: new TextEncoder().encode(`${producer}${r.sequence}`) })));
          const plan: ProducePlan = {
            producerId: producer,
            run,
            starts: frameStarts(run),
            partitions: Float64Array.from(planned, (r) => r.partition),
            sequences: Float64Array.from(planned, (r) => r.sequence),
            keyValueBytes: 0,
          };
          const expected = model.produce(producer, planned);
          const got = await produceIdempotent(open.topic, plan, producer).then(
            (results) => results,
            (error: Error) => (error.message.startsWith("sequence gap") ? "gap" : error.message.startsWith("sequence too low") ? "too_low" : `${error}`),
          );
          expect(got).toEqual(expected);
          if (reopen) {
            await open.close();
            open = fakeTopic(dir);
          }
        }
        for (let p = 0; p < partitions; p++) expect(open.topic.existingLog(p)!.highWatermark).toBe(model.end[p]!);
      } finally {
        await open.close();
      }
    }),
    { numRuns: 60 },
  );
}, 20_000);
