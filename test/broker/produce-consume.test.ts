// Produce and consume over HTTP against a real `svc broker`: partition choice, results in request
// order, whole-request validation that writes nothing on a refusal, record and body limits at the
// limit and one past, consume parameters and their limits, both encodings, and records that
// survive a restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { partitionForKey } from "../../src/broker/produce/partitioner.ts";
import { Partition } from "../../src/broker/log/partition.ts";
import { fetchBytesMax, fetchRecordsMax } from "../../src/core/limits.ts";
import { type BrokerProcess, highWatermarks, readAll, startBroker } from "./support/broker.ts";

/** Small limits so "at the limit and one past" needs small requests. */
const recordBytesMax = 1000;
const bodyBytesMax = 64 * 1024;

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker(undefined, ["--max-record-bytes", String(recordBytesMax), "--max-request-body-bytes", String(bodyBytesMax)]);
});
afterAll(() => broker.stop());

let topics = 0;
async function topic(partitions: number): Promise<string> {
  const name = `t${++topics}`;
  expect((await broker.call("POST", "/topics", { name, partitions })).status).toBe(201);
  return name;
}

const produce = (name: string, body: unknown) => broker.call("POST", `/topics/${name}/produce`, body);

describe("partition choice", () => {
  test("an explicit partition wins over the key", async () => {
    const t = await topic(4);
    const { body } = await produce(t, {
      records: [
        { key: "k", value: "v", partition: 3 },
        { key: "k", value: "w", partition: 0 },
      ],
    });
    expect(body.results).toEqual([
      { partition: 3, offset: 0 },
      { partition: 0, offset: 0 },
    ]);
  });

  test("a key goes to XXH64(key) mod partitions, always the same one, in order", async () => {
    const t = await topic(5);
    const keys = ["alpha", "beta", "gamma", "delta", "alpha", "alpha"];
    const { body } = await produce(t, { records: keys.map((key, i) => ({ key, value: `v${i}` })) });
    const expected = keys.map((k) => partitionForKey(new TextEncoder().encode(k), 5));
    expect(body.results.map((r: { partition: number }) => r.partition)).toEqual(expected);
    const again = await produce(t, { records: [{ key: "alpha", value: "v6" }] });
    expect(again.body.results[0].partition).toBe(expected[0]);
    const alpha = (await readAll(broker, t, expected[0]!)).filter((r) => r.key === "alpha").map((r) => r.value);
    expect(alpha).toEqual(["v0", "v4", "v5", "v6"]);
  });

  test("records without key or partition go round robin, across requests", async () => {
    const t = await topic(3);
    const first = await produce(t, { records: [{ value: "a" }, { value: "b" }] });
    const second = await produce(t, { records: [{ value: "c" }, { value: "d" }, { value: "e" }, { value: "f", key: null, partition: null }] });
    const parts = [...first.body.results, ...second.body.results].map((r: { partition: number }) => r.partition);
    expect(parts).toEqual([0, 1, 2, 0, 1, 2]);
  });
});

describe("produce results", () => {
  test("one result per record in request order, offsets consecutive per partition, readable at once", async () => {
    const t = await topic(2);
    const records = Array.from({ length: 10 }, (_, i) => ({ value: `r${i}`, partition: i % 3 === 0 ? 1 : 0 }));
    const { status, body } = await produce(t, { records });
    expect(status).toBe(200);
    const next = [0, 0];
    expect(body.results).toEqual(records.map((r) => ({ partition: r.partition, offset: next[r.partition]!++ })));
    const p1 = await readAll(broker, t, 1);
    expect(p1.map((r) => r.value)).toEqual(["r0", "r3", "r6", "r9"]);
    expect(p1.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
  });

  test("concurrent produces to one partition each get distinct offsets, each request's own in order", async () => {
    const t = await topic(1);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => produce(t, { records: [{ value: `${i}-a` }, { value: `${i}-b` }] })));
    const offsets = answers.flatMap((a) => a.body.results.map((r: { offset: number }) => r.offset));
    expect(new Set(offsets).size).toBe(40);
    for (const a of answers) expect(a.body.results[1].offset).toBe(a.body.results[0].offset + 1);
    const all = await readAll(broker, t, 0);
    answers.forEach((a, i) => expect(all[a.body.results[0].offset].value).toBe(`${i}-a`));
  });

  test("a consumed record carries partition, offset, timestamp, key and value", async () => {
    const t = await topic(1);
    const before = Date.now();
    await produce(t, { records: [{ key: "k1", value: "héllo ✓ \u{1F600}" }, { value: "" }] });
    const [a, b] = await readAll(broker, t, 0);
    expect(a).toMatchObject({ partition: 0, offset: 0, key: "k1", value: "héllo ✓ \u{1F600}" });
    expect(a.timestamp_ms).toBeGreaterThanOrEqual(before - 1000);
    expect(b).toMatchObject({ partition: 0, offset: 1, key: null, value: "" });
  });
});

describe("produce validation: the whole request is checked, and a refused one writes nothing", () => {
  async function refused(body: unknown, status: number, message: RegExp): Promise<void> {
    const t = await topic(2);
    await produce(t, { records: [{ value: "seed", partition: 0 }] });
    const before = await highWatermarks(broker, t);
    const answer = await produce(t, body);
    expect(answer.status).toBe(status);
    expect(answer.body.error).toMatch(message);
    expect(await highWatermarks(broker, t)).toEqual(before);
  }

  const good = { value: "ok" };
  test("a bad record after good ones", () => refused({ records: [good, good, { value: 5 }] }, 400, /'records\[2\].value' must be a string/));
  test("a partition past the last one", () =>
    refused({ records: [good, { value: "x", partition: 2 }] }, 400, /'records\[1\].partition' is 2; it must be from 0 to 1/));
  test("a negative or fractional partition", async () => {
    await refused({ records: [{ value: "x", partition: -1 }] }, 400, /'records\[0\].partition' is -1/);
    await refused({ records: [{ value: "x", partition: 0.5 }] }, 400, /'records\[0\].partition' must be an integer/);
  });
  test("a missing value", () => refused({ records: [good, { key: "k" }] }, 400, /'records\[1\].value' is required/));
  test("a key that is not a string", () => refused({ records: [{ key: 1, value: "v" }] }, 400, /'records\[0\].key' must be a string/));
  test("an unknown record field", () => refused({ records: [{ value: "v", headers: {} }] }, 400, /unknown field 'headers' in records\[0\]/));
  test("an unknown body field", () => refused({ records: [good], acks: "all" }, 400, /unknown field 'acks'/));
  test("no records, or records that are not an array", async () => {
    await refused({ records: [] }, 400, /at least one record/);
    await refused({ records: {} }, 400, /'records' must be an array/);
    await refused({}, 400, /'records' must be an array/);
  });
  test("a lone surrogate, which has no UTF-8 form", () => refused('{"records":[{"value":"ok"},{"value":"\\ud800"}]}', 400, /lone UTF-16 surrogate/));
  test("malformed JSON and a non-JSON content type", async () => {
    await refused('{"records": [', 400, /malformed JSON/);
    const t = await topic(1);
    const response = await fetch(`${broker.url}/topics/${t}/produce`, {
      method: "POST",
      body: '{"records":[{"value":"v"}]}',
      headers: { "content-type": "text/plain" },
    });
    expect(response.status).toBe(415);
    expect(await highWatermarks(broker, t)).toEqual([0]);
  });
  test("a sequence without producer_id, and producer_id without sequences", async () => {
    await refused({ records: [{ value: "v", sequence: 0 }] }, 400, /needs the request's 'producer_id'/);
    await refused({ producer_id: "p", records: [{ value: "v" }] }, 400, /every record needs a 'sequence'/);
  });
  test("with producer_id, a record without a partition or key is refused: round robin could send its retry elsewhere", () =>
    refused({ producer_id: "p", records: [{ value: "v", sequence: 0 }] }, 400, /needs a 'partition' or a 'key'/));
});

describe("limits", () => {
  test(`a record of ${recordBytesMax} bytes of key and value is written; one byte more is 413 and writes nothing`, async () => {
    const t = await topic(1);
    const atLimit = await produce(t, { records: [{ key: "kk", value: "v".repeat(recordBytesMax - 2) }] });
    expect(atLimit.status).toBe(200);
    const past = await produce(t, { records: [{ value: "ok" }, { key: "kk", value: "v".repeat(recordBytesMax - 1) }] });
    expect(past.status).toBe(413);
    expect(past.body.error).toBe(`'records[1]' has ${recordBytesMax + 1} bytes of key and value; the limit is ${recordBytesMax} (--max-record-bytes)`);
    expect(await highWatermarks(broker, t)).toEqual([1]);
  });

  test("record size counts UTF-8 bytes, not characters", async () => {
    const t = await topic(1);
    const past = await produce(t, { records: [{ value: "é".repeat(recordBytesMax / 2 + 1) }] });
    expect(past.status).toBe(413);
  });

  test(`a body of ${bodyBytesMax} bytes is read; one byte more is 413 and writes nothing`, async () => {
    const t = await topic(1);
    const shell = JSON.stringify({ records: [{ value: "" }] });
    const values = (n: number) => Array.from({ length: Math.ceil(n / 900) }, () => "x".repeat(900));
    // Fill the body to exactly the limit with records, padding the last value.
    const build = (bytes: number): string => {
      const records = values(bytes - shell.length).map((v) => ({ value: v }));
      let text = JSON.stringify({ records });
      while (text.length > bytes) {
        records.pop();
        text = JSON.stringify({ records });
      }
      records.push({ value: "" });
      text = JSON.stringify({ records });
      const pad = bytes - text.length;
      records[records.length - 1] = { value: "y".repeat(pad) };
      return JSON.stringify({ records });
    };
    const exact = build(bodyBytesMax);
    expect(exact.length).toBe(bodyBytesMax);
    expect((await produce(t, exact)).status).toBe(200);
    const before = await highWatermarks(broker, t);
    const over = build(bodyBytesMax + 1);
    expect(over.length).toBe(bodyBytesMax + 1);
    const answer = await produce(t, over);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toBe(`request body exceeds the limit of ${bodyBytesMax} bytes`);
    expect(await highWatermarks(broker, t)).toEqual(before);
  });
});

describe("consume", () => {
  let t: string;
  beforeAll(async () => {
    t = await topic(2);
    await produce(t, { records: Array.from({ length: 250 }, (_, i) => ({ value: `m${i}`, partition: 0 })) });
  });
  const consume = (query: string) => broker.call("GET", `/topics/${t}/consume?${query}`);

  test("max_records defaults to 100; next_offset and high_watermark come back", async () => {
    const { status, body } = await consume("partition=0&offset=0");
    expect(status).toBe(200);
    expect(body.records).toHaveLength(100);
    expect(body.next_offset).toBe(100);
    expect(body.high_watermark).toBe(250);
    const rest = await consume("partition=0&offset=200&max_records=1000");
    expect(rest.body.records.map((r: { value: string }) => r.value)).toEqual(Array.from({ length: 50 }, (_, i) => `m${200 + i}`));
    expect(rest.body.next_offset).toBe(250);
  });

  test(`max_records ${fetchRecordsMax} is accepted, ${fetchRecordsMax + 1} and 0 are 400`, async () => {
    expect((await consume(`partition=0&offset=0&max_records=${fetchRecordsMax}`)).body.records).toHaveLength(250);
    const over = await consume(`partition=0&offset=0&max_records=${fetchRecordsMax + 1}`);
    expect(over.status).toBe(400);
    expect(over.body.error).toBe(`query parameter 'max_records' is ${fetchRecordsMax + 1}; it must be from 1 to ${fetchRecordsMax}`);
    expect((await consume("partition=0&offset=0&max_records=0")).status).toBe(400);
  });

  test(`max_bytes ${fetchBytesMax} is accepted, ${fetchBytesMax + 1} is 400; a small max_bytes still returns one record`, async () => {
    expect((await consume(`partition=0&offset=0&max_bytes=${fetchBytesMax}`)).status).toBe(200);
    const over = await consume(`partition=0&offset=0&max_bytes=${fetchBytesMax + 1}`);
    expect(over.status).toBe(400);
    expect(over.body.error).toContain("'max_bytes'");
    const one = await consume("partition=0&offset=7&max_bytes=1");
    expect(one.body.records.map((r: { offset: number }) => r.offset)).toEqual([7]);
    expect(one.body.next_offset).toBe(8);
  });

  test("partition and offset are required; bad, repeated and unknown parameters are 400", async () => {
    for (const [query, message] of [
      ["offset=0", /'partition' is required/],
      ["partition=0", /'offset' is required/],
      ["partition=0&offset=-1", /'offset' must be a non-negative integer/],
      ["partition=x&offset=0", /'partition' must be/],
      ["partition=0&offset=1.5", /'offset' must be/],
      ["partition=0&offset=0&offset=1", /given 2 times/],
      ["partition=0&offset=0&group=g", /unknown query parameter 'group'/],
      ["partition=0&offset=0&encoding=hex", /utf8 or base64/],
      ["partition=0&offset=99999999999999999999", /'offset' must be/],
    ] as const) {
      const answer = await consume(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error, query).toMatch(message);
    }
  });

  test("an offset past the high watermark is 400; at it, an empty read; a partition that does not exist is 404", async () => {
    expect((await consume("partition=0&offset=250")).body).toEqual({ records: [], next_offset: 250, high_watermark: 250 });
    const past = await consume("partition=0&offset=251");
    expect(past.status).toBe(400);
    expect(past.body.error).toBe("offset 251 is past the high watermark 250");
    expect((await consume("partition=1&offset=0")).body).toEqual({ records: [], next_offset: 0, high_watermark: 0 });
    expect((await consume("partition=1&offset=1")).status).toBe(400);
    const missing = await consume("partition=2&offset=0");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain("has no partition 2");
  });

  test("encoding=base64 returns keys and values as base64", async () => {
    const u = await topic(1);
    await produce(u, { records: [{ key: "ké", value: "v\u0000✓" }] });
    const [record] = await readAll(broker, u, 0, "base64");
    expect(record.key).toBe(Buffer.from("ké").toString("base64"));
    expect(record.value).toBe(Buffer.from("v\u0000✓").toString("base64"));
  });
});

describe("restart", () => {
  test("records and offsets survive a clean stop; a non-UTF-8 value read as utf8 is a 400 naming it, as base64 it reads back", async () => {
    const first = await startBroker();
    await first.call("POST", "/topics", { name: "r", partitions: 2 });
    const acks = await first.call("POST", "/topics/r/produce", { records: Array.from({ length: 30 }, (_, i) => ({ key: `k${i % 4}`, value: `v${i}` })) });
    await first.stop();
    // Bytes only the binary protocol could produce, written straight into partition 0's log.
    const log = Partition.open(join(first.dataDir, "topics", "r", "0"));
    const raw = await log.append([{ key: null, value: new Uint8Array([0xff, 0xfe, 0x41]) }]);
    await log.close();
    const second = await startBroker(first.dataDir);
    try {
      for (const [i, ack] of acks.body.results.entries()) {
        const { body } = await second.call("GET", `/topics/r/consume?partition=${ack.partition}&offset=${ack.offset}&max_records=1`);
        expect(body.records[0]).toMatchObject({ offset: ack.offset, key: `k${i % 4}`, value: `v${i}` });
      }
      const bad = await second.call("GET", `/topics/r/consume?partition=0&offset=${raw.baseOffset}`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe(`the value of the record at partition 0 offset ${raw.baseOffset} is not valid UTF-8; read it with encoding=base64`);
      const asBase64 = await second.call("GET", `/topics/r/consume?partition=0&offset=${raw.baseOffset}&encoding=base64`);
      expect(asBase64.body.records[0].value).toBe(Buffer.from([0xff, 0xfe, 0x41]).toString("base64"));
    } finally {
      await second.stop();
    }
  });
});
