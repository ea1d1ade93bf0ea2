/**
 * A slot switched inside the worker (src/media/worker-slot.ts and the worker patch in
 * media-worker/patches/): a real worker, producers fed RTP through a DirectTransport, and one
 * consumer whose packets are read back. Whichever producer feeds it, the consumer's stream stays
 * one stream: one SSRC, sequence numbers stepping by one, timestamps advancing by at least a
 * frame across a change, the marker bit on each new source's first packet, and the payload type
 * its receiver offered.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import * as mediasoup from "mediasoup";
import type { types as ms } from "mediasoup";
import { readRtpHeader, writeRtpHeader } from "./support/rtp-header.ts";
import { RtpRewriter } from "./support/rtp-rewriter.ts";
import { mediasoupWorkerBin } from "../../src/media/worker-bin.ts";
import { setSlotProducer } from "../../src/media/worker-slot.ts";

const opus: ms.RouterRtpCodecCapability = { kind: "audio", mimeType: "audio/opus", clockRate: 48_000, channels: 2 };
/** The payload type producers send Opus with, and the one the slot's receiver offered. */
const producedPayloadType = 100;
const offeredPayloadType = 111;
const frameTicks = 960;
const frameMs = 20;

/**
 * Resolves once the worker has handled everything sent to it before: packets a DirectTransport's
 * producers send, closes and requests all go down the worker's one channel in order, and what it
 * sends back for them (forwarded packets, events) is read before this request's answer. A barrier,
 * not a timer, so a loaded machine only makes the tests slower.
 */
async function workerCaughtUp(transport: ms.DirectTransport): Promise<void> {
  await transport.dump();
  // mediasoup emits the worker's events one setImmediate after reading them, and answers at once:
  // one more turn lets the events read before the answer out.
  await new Promise((resolve) => setImmediate(resolve));
}

/** One Opus-sized RTP packet. */
function rtpPacket(sequenceNumber: number, timestamp: number, ssrc: number): Buffer {
  const packet = Buffer.alloc(12 + 60, 0xaa);
  packet[0] = 0x80;
  writeRtpHeader(packet, producedPayloadType, false, sequenceNumber & 0xffff, timestamp >>> 0, ssrc);
  return packet;
}

describe("a slot switched inside the worker", () => {
  let worker: ms.Worker;
  let router: ms.Router;
  let transport: ms.DirectTransport;
  const received: ReturnType<typeof readRtpHeader>[] = [];
  let consumer: ms.Consumer;
  const producers: Record<string, ms.Producer> = {};
  const ssrcs: Record<string, number> = { a: 1111, b: 2222, c: 3333 };
  const nextSeq: Record<string, number> = { a: 100, b: 40_000, c: 65_530 };
  const nextTs: Record<string, number> = { a: 5_000, b: 3_000_000_000, c: 77 };

  /** Sends `count` packets from `name`, 20 ms apart; waits until the worker has forwarded what it will. */
  async function speak(name: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      producers[name]!.send(rtpPacket(nextSeq[name]!, nextTs[name]!, ssrcs[name]!));
      nextSeq[name]! += 1;
      nextTs[name]! += frameTicks;
      await Bun.sleep(frameMs);
    }
    await workerCaughtUp(transport);
  }

  beforeAll(async () => {
    worker = await mediasoup.createWorker({ logLevel: "warn", workerBin: mediasoupWorkerBin() });
    router = await worker.createRouter({ mediaCodecs: [opus] });
    transport = await router.createDirectTransport();
    for (const name of ["a", "b", "c"]) {
      producers[name] = await transport.produce({
        kind: "audio",
        rtpParameters: {
          codecs: [{ mimeType: "audio/opus", payloadType: producedPayloadType, clockRate: 48_000, channels: 2 }],
          encodings: [{ ssrc: ssrcs[name]! }],
        },
      });
    }
    consumer = await transport.consume({ producerId: producers.a!.id, rtpCapabilities: router.rtpCapabilities });
    consumer.on("rtp", (packet) => received.push(readRtpHeader(packet)));
  });

  afterAll(() => worker?.close());

  test("a change of source keeps one stream: the next sequence number, a timestamp a frame or more on, the marker, the offered payload type", async () => {
    await speak("a", 5);
    expect(received.length).toBe(5);
    const before = received.at(-1)!;
    expect(received.map((p) => p.marker)).toEqual([false, false, false, false, false]);

    await setSlotProducer(consumer, producers.b!.id, offeredPayloadType);
    // a goes on talking: none of it reaches the slot now.
    await speak("a", 2);
    await speak("b", 5);
    const after = received.slice(5);
    expect(after.length).toBe(5);
    expect(after.map((p) => p.ssrc)).toEqual(Array(5).fill(before.ssrc));
    expect(after.map((p) => p.sequenceNumber)).toEqual([1, 2, 3, 4, 5].map((k) => (before.sequenceNumber + k) & 0xffff));
    expect(after.map((p) => p.marker)).toEqual([true, false, false, false, false]);
    expect(after.map((p) => p.payloadType)).toEqual(Array(5).fill(offeredPayloadType));
    // b's first packet comes ~2 frames of a plus the waits after the last packet the slot sent:
    // at least a frame on, and within its wall time (generously, for a loaded machine).
    const jump = (after[0]!.timestamp - before.timestamp + 2 ** 32) % 2 ** 32;
    expect(jump).toBeGreaterThanOrEqual(frameTicks);
    expect(jump).toBeLessThan(48_000 * 5);
    // Within b, timestamps step by b's own frame.
    for (let k = 1; k < after.length; k++) expect((after[k]!.timestamp - after[k - 1]!.timestamp + 2 ** 32) % 2 ** 32).toBe(frameTicks);
  });

  test("the same source again changes nothing; a source crossing 65535 keeps stepping", async () => {
    const last = received.at(-1)!;
    await setSlotProducer(consumer, producers.b!.id);
    await speak("b", 2);
    expect(received.slice(-2).map((p) => [p.sequenceNumber, p.marker])).toEqual([
      [(last.sequenceNumber + 1) & 0xffff, false],
      [(last.sequenceNumber + 2) & 0xffff, false],
    ]);
    // c starts at 65530 and wraps while it speaks.
    await setSlotProducer(consumer, producers.c!.id);
    const beforeC = received.at(-1)!;
    await speak("c", 10);
    const fromC = received.slice(-10);
    expect(fromC.map((p) => p.sequenceNumber)).toEqual(Array.from({ length: 10 }, (_, k) => (beforeC.sequenceNumber + 1 + k) & 0xffff));
    expect(fromC[0]!.marker).toBe(true);
  });

  test("a packet the new source numbered before its turn is dropped, not sent under a used number", async () => {
    await setSlotProducer(consumer, producers.a!.id);
    const beforeA = received.at(-1)!;
    await speak("a", 3);
    // A late packet of a, numbered before the first one the slot forwarded.
    producers.a!.send(rtpPacket(nextSeq.a! - 10, nextTs.a! - 10 * frameTicks, ssrcs.a!));
    await workerCaughtUp(transport);
    const fromA = received.slice(-3);
    expect(fromA.map((p) => p.sequenceNumber)).toEqual([1, 2, 3].map((k) => (beforeA.sequenceNumber + k) & 0xffff));
  });

  test("detached, the slot sends nothing; an unknown producer is refused and changes nothing", async () => {
    await setSlotProducer(consumer, null);
    const count = received.length;
    await speak("a", 2);
    expect(received.length).toBe(count);
    await expect(setSlotProducer(consumer, "no-such-producer")).rejects.toThrow(/Producer not found/);
    await setSlotProducer(consumer, producers.b!.id);
    const last = received.at(-1)!;
    await speak("b", 1);
    expect(received.at(-1)!.sequenceNumber).toBe((last.sequenceNumber + 1) & 0xffff);
  });

  test("the slot outlives a producer that closes: it stays open and takes the next source", async () => {
    let producerClosed = false;
    consumer.on("producerclose", () => {
      producerClosed = true;
    });
    producers.b!.close();
    await workerCaughtUp(transport);
    expect(producerClosed).toBe(false);
    expect(consumer.closed).toBe(false);
    await setSlotProducer(consumer, producers.c!.id);
    const last = received.at(-1)!;
    await speak("c", 2);
    expect(received.slice(-2).map((p) => p.sequenceNumber)).toEqual([(last.sequenceNumber + 1) & 0xffff, (last.sequenceNumber + 2) & 0xffff]);
    // Closing the slot itself (a detached or attached one) leaves the worker running.
    await setSlotProducer(consumer, null);
    consumer.close();
    await workerCaughtUp(transport);
    expect(worker.closed).toBe(false);
    expect((await worker.dump()).pid).toBe(worker.pid);
  });

  test("a payload type past 7 bits is refused before anything is sent", () => {
    expect(() => setSlotProducer(consumer, null, 128)).toThrow(RangeError);
  });
});

describe("the worker's numbering against the TypeScript reference (test/media/support/rtp-rewriter.ts)", () => {
  let worker: ms.Worker;
  let router: ms.Router;

  beforeAll(async () => {
    worker = await mediasoup.createWorker({ logLevel: "warn", workerBin: mediasoupWorkerBin() });
    router = await worker.createRouter({ mediaCodecs: [opus] });
  });

  afterAll(() => worker?.close());

  test("property: any run of switches among three sources loses no packet, repeats no number, and numbers as the reference does", async () => {
    const segment = fc.record({ source: fc.integer({ min: 0, max: 2 }), packets: fc.integer({ min: 1, max: 12 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(segment, { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 3, maxLength: 3 }),
        async (segments, firstSeqs) => {
          const transport = await router.createDirectTransport();
          try {
            const producers = await Promise.all(
              [0, 1, 2].map((k) =>
                transport.produce({
                  kind: "audio",
                  rtpParameters: {
                    codecs: [{ mimeType: "audio/opus", payloadType: producedPayloadType, clockRate: 48_000, channels: 2 }],
                    encodings: [{ ssrc: 7000 + k }],
                  },
                }),
              ),
            );
            const consumer = await transport.consume({ producerId: producers[0]!.id, rtpCapabilities: router.rtpCapabilities });
            const out: ReturnType<typeof readRtpHeader>[] = [];
            consumer.on("rtp", (packet) => out.push(readRtpHeader(packet)));
            const seqs = [...firstSeqs];
            const tss = [0, 1_000_000, 2_000_000_000];
            /** Each packet sent: its source, its own numbers, and whether a switch request came just before it. */
            const sentPackets: { source: number; sequenceNumber: number; timestamp: number; afterSwitch: boolean }[] = [];
            let current = 0;
            for (const { source, packets } of segments) {
              const afterSwitch = source !== current;
              if (afterSwitch) {
                await setSlotProducer(consumer, producers[source]!.id);
                current = source;
              }
              for (let i = 0; i < packets; i++) {
                sentPackets.push({ source, sequenceNumber: seqs[source]!, timestamp: tss[source]!, afterSwitch: afterSwitch && i === 0 });
                producers[source]!.send(rtpPacket(seqs[source]!, tss[source]!, 7000 + source));
                seqs[source] = (seqs[source]! + 1) & 0xffff;
                tss[source] = (tss[source]! + frameTicks) >>> 0;
              }
              // The segment forwarded before the next switch.
              await workerCaughtUp(transport);
            }
            expect(out.length).toBe(sentPackets.length);
            // The reference, started where the worker's stream starts, fed the same packets.
            const reference = new RtpRewriter({
              clockRate: 48_000,
              frameTicks,
              initialSequenceNumber: out[0]!.sequenceNumber,
              initialTimestamp: out[0]!.timestamp,
            });
            sentPackets.forEach((sent, k) => {
              const packet = out[k]!;
              expect(reference.rewrite(sent.source, sent.sequenceNumber, sent.timestamp, k)).toBe(true);
              expect([k, packet.sequenceNumber]).toEqual([k, reference.sequenceNumber]);
              // The marker: on the first packet after each switch request, never elsewhere. (The
              // reference also marks the very first packet of the stream, whoever sends it.)
              expect([k, packet.marker]).toEqual([k, sent.afterSwitch]);
              if (k > 0) {
                const step = (packet.timestamp - out[k - 1]!.timestamp + 2 ** 32) % 2 ** 32;
                // Across a switch at least a frame and at most the wall time that passed (bounded); within a source its own step.
                if (sent.source !== sentPackets[k - 1]!.source) expect(step).toBeGreaterThanOrEqual(frameTicks);
                else expect(step).toBe(frameTicks);
                expect(step).toBeLessThan(48_000 * 5);
              }
            });
          } finally {
            transport.close();
          }
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);
});
