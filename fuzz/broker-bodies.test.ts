// JSON bodies of the broker's topic and produce endpoints, fuzzed against a real `svc broker`:
// arbitrary bytes, arbitrary JSON, and objects with the endpoint's own field names holding
// arbitrary JSON values (plus stray fields) never reach a 500. A refused body gets a 4xx with a
// non-empty `error` and changes nothing: no topic appears, no config changes, no partition's high
// watermark moves.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type BrokerProcess, highWatermarks, startBroker } from "../test/broker/support/broker.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 1000 : 200;

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker(undefined, ["--max-record-bytes", "64"]);
  await broker.call("POST", "/topics", { name: "fz", partitions: 3 });
});
afterAll(() => broker.stop());

/** Values that probe types and ranges: huge, fractional, negative, strings of digits, nested. */
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.integer({ min: -3, max: 12_000 }),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e300, "3", "", "\ud800", null, true, [], {}, "delete", "compact", "compact,delete"),
  fc.string({ unit: "binary", maxLength: 80 }),
);

function objectWith(fields: string[]) {
  return fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), anyValue, { maxKeys: 5 });
}

const record = objectWith(["key", "value", "partition", "sequence"]);
const produceBody = fc.oneof(
  fc.record({ records: fc.array(record, { maxLength: 6 }) }, { requiredKeys: [] }),
  fc.record({ producer_id: anyValue, records: fc.array(record, { maxLength: 4 }) }, { requiredKeys: [] }),
  objectWith(["records", "producer_id"]),
);
const configBody = objectWith(["retention_ms", "retention_bytes", "cleanup_policy", "segment_bytes", "tombstone_retention_ms"]);
const createBody = fc.oneof(
  fc.record(
    { name: fc.oneof(fc.stringMatching(/^[a-z]{0,3}$/), anyValue), partitions: anyValue, config: fc.oneof(configBody, anyValue) },
    { requiredKeys: [] },
  ),
  objectWith(["name", "partitions", "config"]),
);

/** The body as sent: usually JSON text, sometimes raw bytes. */
function asSent(body: fc.Arbitrary<unknown>): fc.Arbitrary<string | Uint8Array> {
  return fc.oneof(
    { weight: 6, arbitrary: body.map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
    { weight: 1, arbitrary: fc.json() },
  );
}

async function send(method: string, path: string, body: string | Uint8Array): Promise<{ status: number; body: any }> {
  const response = await fetch(`${broker.url}${path}`, { method, headers: { "content-type": "application/json" }, body });
  const text = await response.text();
  const what = `${method} ${path} ${typeof body === "string" ? body : Buffer.from(body).toString("hex")} → ${response.status} ${text}`;
  expect(response.status, what).not.toBe(500);
  const answer = JSON.parse(text);
  if (response.status >= 400) {
    expect(response.status, what).toBeLessThan(500);
    expect(typeof answer.error === "string" && answer.error.length > 0, what).toBe(true);
  }
  return { status: response.status, body: answer };
}

describe("broker JSON bodies under fuzzing", () => {
  test("POST /topics/{name}/produce: 200 with one result per record, or a 4xx that wrote nothing", async () => {
    await fc.assert(
      fc.asyncProperty(asSent(produceBody), async (body) => {
        const before = await highWatermarks(broker, "fz");
        const answer = await send("POST", "/topics/fz/produce", body);
        const after = await highWatermarks(broker, "fz");
        if (answer.status === 200) {
          const written = after.reduce((s, n, i) => s + n - before[i]!, 0);
          expect(answer.body.results.length).toBe(written);
        } else {
          expect(after).toEqual(before);
        }
      }),
      { numRuns: runs },
    );
  });

  test("POST /topics: 201, or a 4xx that created nothing", async () => {
    await fc.assert(
      fc.asyncProperty(asSent(createBody), async (body) => {
        const before = (await broker.call("GET", "/healthz")).body.topics;
        const answer = await send("POST", "/topics", body);
        const after = (await broker.call("GET", "/healthz")).body.topics;
        expect(after).toBe(answer.status === 201 ? before + 1 : before);
        if (answer.status === 201) await broker.call("DELETE", `/topics/${answer.body.name}`);
      }),
      { numRuns: runs },
    );
  });

  test("PUT /topics/{name}/config: 200 with the merged config, or a 4xx that changed nothing", async () => {
    await fc.assert(
      fc.asyncProperty(asSent(configBody), async (body) => {
        const before = (await broker.call("GET", "/topics/fz/config")).body;
        const answer = await send("PUT", "/topics/fz/config", body);
        const after = (await broker.call("GET", "/topics/fz/config")).body;
        if (answer.status === 200) expect(after).toEqual({ ...before, ...JSON.parse(body as string) });
        else expect(after).toEqual(before);
      }),
      { numRuns: runs },
    );
  });
});
