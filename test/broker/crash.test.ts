// Crash safety over HTTP: a broker under a produce load is killed with SIGKILL at a random point;
// after a restart every record it acknowledged reads back at the partition and offset it was
// acknowledged with and with its content, and no record appears twice. Repeated on one data dir,
// so each run also recovers what the previous kill left behind.
import { describe, expect, test } from "bun:test";
import { type BrokerProcess, freshDataDir, readAll, startBroker } from "./support/broker.ts";

const runs = 3;
const partitions = 3;
const producers = 6;

interface Ack {
  partition: number;
  offset: number;
  value: string;
}

/** Produces from several clients until the broker dies; kills it after `killAfterAcks` acks. */
async function loadAndKill(broker: BrokerProcess, run: number, killAfterAcks: number): Promise<Ack[]> {
  const acks: Ack[] = [];
  let n = 0;
  let killing: Promise<void> | null = null;
  const producer = async () => {
    for (;;) {
      const values = Array.from({ length: 1 + (n % 5) }, () => `${run}-${n++}`);
      let answer: { status: number; body: any };
      try {
        answer = await broker.call("POST", "/topics/load/produce", { records: values.map((value, i) => ({ value, key: i % 2 === 0 ? null : value })) });
      } catch {
        return; // the broker is gone: this request was never acknowledged
      }
      expect(answer.status).toBe(200);
      answer.body.results.forEach((r: { partition: number; offset: number }, i: number) => acks.push({ ...r, value: values[i]! }));
      if (acks.length >= killAfterAcks && killing === null) killing = broker.kill();
    }
  };
  await Promise.all(Array.from({ length: producers }, producer));
  await killing;
  return acks;
}

describe("crash safety over HTTP", () => {
  test(`kill -9 under produce load, ${runs} times: every acknowledged record survives with its offset, none twice`, async () => {
    const dataDir = freshDataDir();
    const first = await startBroker(dataDir);
    expect((await first.call("POST", "/topics", { name: "load", partitions })).status).toBe(201);
    let broker = first;
    const acknowledged = new Map<string, string>();
    for (let run = 0; run < runs; run++) {
      const acks = await loadAndKill(broker, run, 50 + Math.floor(Math.random() * 300));
      expect(broker.proc.signalCode).toBe("SIGKILL");
      for (const ack of acks) {
        const at = `${ack.partition}/${ack.offset}`;
        expect(acknowledged.has(at)).toBe(false); // an acknowledged offset is never handed out again
        acknowledged.set(at, ack.value);
      }
      broker = await startBroker(dataDir);
      const found = new Map<string, string>();
      for (let p = 0; p < partitions; p++) {
        const records = await readAll(broker, "load", p);
        expect(records.map((r) => r.offset)).toEqual(records.map((_, i) => i));
        for (const r of records) found.set(`${p}/${r.offset}`, r.value);
      }
      for (const [at, value] of acknowledged) expect(found.get(at)).toBe(value);
      const values = [...found.values()];
      expect(new Set(values).size).toBe(values.length);
    }
    await broker.stop();
    expect(acknowledged.size).toBeGreaterThan(0);
  });
});
