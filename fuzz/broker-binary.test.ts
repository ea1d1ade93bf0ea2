// The binary listener fuzzed over real sockets against a real `svc broker --bind-binary`: random
// handshakes, and random frames (valid headers around random payloads, and plain random bytes)
// after a good handshake. Whatever a client sends, the broker stays up: a new connection still
// completes its handshake and is answered, and nothing was written to the topic by a frame that
// could not be read as a produce.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { connect as netConnect } from "node:net";
import { BinaryClient } from "../src/broker/binary/client.ts";
import { encodeProduceRequest } from "../src/broker/binary/payloads.ts";
import { encodeClientHandshake, encodeFrame, opcodes } from "../src/broker/binary/wire.ts";
import { type BinaryBrokerProcess, highWatermarks, startBinaryBroker } from "../test/broker/support/broker.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 400 : 60;

let broker: BinaryBrokerProcess;
beforeAll(async () => {
  broker = await startBinaryBroker(undefined, ["--max-request-body-bytes", "64KiB"]);
  await broker.call("POST", "/topics", { name: "fz", partitions: 2 });
});
afterAll(() => broker.stop());

/** Sends `bytes` on a fresh connection and waits for the broker to answer, close, or go quiet. */
function sendRaw(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    const socket = netConnect(broker.binaryPort, "127.0.0.1", () => socket.write(bytes));
    const done = () => {
      socket.destroy();
      resolve();
    };
    socket.on("close", done);
    socket.on("error", done);
    // A broker waiting for the rest of a frame neither answers nor closes: give up on it soon.
    setTimeout(done, 50);
  });
}

async function stillServing(): Promise<void> {
  const client = await BinaryClient.connect({ host: broker.binaryHost, port: broker.binaryPort });
  expect(await client.ping(new Uint8Array([7]))).toEqual(new Uint8Array([7]));
  client.close();
}

const frameOf = fc.record({
  requestId: fc.nat({ max: 2 ** 32 - 1 }),
  opcode: fc.oneof(fc.constantFrom(opcodes.produce, opcodes.consume, opcodes.ping), fc.integer({ min: 0, max: 255 })),
  payload: fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    // A produce to the fuzz topic, then damaged at one byte.
    fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, b]) => {
      const payload = encodeProduceRequest({
        topic: "fz",
        producerId: null,
        records: [{ key: null, value: new Uint8Array([1, 2, 3]), partition: 0, sequence: null }],
      });
      payload[at % payload.length] = b;
      return payload;
    }),
  ),
});

test("random handshakes never take the broker down", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.uint8Array({ maxLength: 40 }),
        fc.tuple(fc.nat({ max: 2 ** 32 - 1 }), fc.uint8Array({ maxLength: 40 })).map(([features, token]) => encodeClientHandshake(features, token)),
      ),
      async (bytes) => {
        await sendRaw(bytes);
      },
    ),
    { numRuns: runs },
  );
  await stillServing();
});

test("random frames after a good handshake never take the broker down, and a produce that cannot be read writes nothing", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(frameOf, { maxLength: 5 }), fc.uint8Array({ maxLength: 30 }), async (frames, tail) => {
      const before = await highWatermarks(broker, "fz");
      const sent = frames.map((f) => encodeFrame(f.requestId, f.opcode, f.payload));
      await sendRaw(Buffer.concat([encodeClientHandshake(0, new Uint8Array(0)), ...sent, tail]));
      const after = await highWatermarks(broker, "fz");
      // At most the produces that decoded wrote a record each.
      const produces = frames.filter((f) => f.opcode === opcodes.produce).length;
      expect(after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(produces);
    }),
    { numRuns: runs },
  );
  await stillServing();
  expect((await broker.call("GET", "/healthz")).status).toBe(200);
});
