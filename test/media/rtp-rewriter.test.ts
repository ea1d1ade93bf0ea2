// A slot's outgoing RTP stays one continuous stream whoever feeds it: sequence numbers step by one
// across a change of source, timestamps keep advancing by at least a frame, both wrap correctly,
// and the header writer puts exactly those numbers on the wire.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readRtpHeader, writeRtpHeader } from "./support/rtp-header.ts";
import { RtpRewriter, seqNewer } from "./support/rtp-rewriter.ts";

const opus = { clockRate: 48_000, frameTicks: 960 };

/** The tests name sources by letter; the rewriter takes numbers (the slot gives it session ids). */
const sourceIds = { a: 1, b: 2, c: 3 } as const;

/** One packet through `rewriter`: its outgoing numbers, or null when it was dropped. */
function rewrite(
  rewriter: RtpRewriter,
  source: keyof typeof sourceIds,
  sequenceNumber: number,
  timestamp: number,
  nowMs: number,
): { sequenceNumber: number; timestamp: number; marker: boolean } | null {
  if (!rewriter.rewrite(sourceIds[source], sequenceNumber, timestamp, nowMs)) return null;
  return { sequenceNumber: rewriter.sequenceNumber, timestamp: rewriter.timestamp, marker: rewriter.marker };
}

/** One source's run of packets: where its numbering starts and how many 20 ms frames it sends. */
const run = fc.record({
  source: fc.constantFrom("a", "b", "c"),
  firstSeq: fc.integer({ min: 0, max: 0xffff }),
  firstTs: fc.integer({ min: 0, max: 0xffff_ffff }),
  packets: fc.integer({ min: 1, max: 40 }),
  gapMs: fc.integer({ min: 0, max: 5_000 }),
});

describe("RtpRewriter", () => {
  test("property: across any sequence of source changes, outgoing sequence numbers step by exactly one (mod 2^16) and timestamps never go back", () => {
    fc.assert(
      fc.property(
        fc.array(run, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        (runs, initialSeq, initialTs) => {
          const rewriter = new RtpRewriter({ ...opus, initialSequenceNumber: initialSeq, initialTimestamp: initialTs });
          let now = 1_000;
          let previous: { seq: number; ts: number } | null = null;
          for (const [i, r] of runs.entries()) {
            now += r.gapMs;
            // Consecutive runs of the same user are still a change of source when the slot was released between them.
            if (i > 0 && runs[i - 1]!.source === r.source) rewriter.release();
            for (let k = 0; k < r.packets; k++) {
              const out = rewrite(rewriter, r.source, (r.firstSeq + k) % 0x10000, (r.firstTs + k * 960) % 2 ** 32, now + k * 20);
              expect(out).not.toBeNull();
              expect(out!.marker).toBe(k === 0);
              if (previous === null) {
                expect(out!.sequenceNumber).toBe(initialSeq);
                expect(out!.timestamp).toBe(initialTs);
              } else {
                expect(out!.sequenceNumber).toBe((previous.seq + 1) % 0x10000);
                const advance = (out!.timestamp - previous.ts + 2 ** 32) % 2 ** 32;
                if (k === 0) expect(advance).toBeGreaterThanOrEqual(960);
                else expect(advance).toBe(960);
              }
              previous = { seq: out!.sequenceNumber, ts: out!.timestamp };
            }
            now += r.packets * 20;
          }
        },
      ),
    );
  });

  test("across a change of source the timestamp advances by the wall time that passed", () => {
    const rewriter = new RtpRewriter({ ...opus, initialSequenceNumber: 10, initialTimestamp: 0 });
    rewrite(rewriter, "a", 500, 7_000, 0);
    const out = rewrite(rewriter, "b", 9, 123, 1_000)!;
    expect(out).toEqual({ sequenceNumber: 11, timestamp: 48_000, marker: true });
  });

  test("16-bit sequence and 32-bit timestamp wrap: a source crossing 65535 and 2^32-1 keeps stepping", () => {
    const rewriter = new RtpRewriter({ ...opus, initialSequenceNumber: 0xfffe, initialTimestamp: 2 ** 32 - 960 });
    const outs = [0, 1, 2].map((k) => rewrite(rewriter, "a", 100 + k, 5_000 + k * 960, k * 20)!);
    expect(outs.map((o) => o.sequenceNumber)).toEqual([0xfffe, 0xffff, 0]);
    expect(outs.map((o) => o.timestamp)).toEqual([2 ** 32 - 960, 0, 960]);
  });

  test("reordering within a source passes through; a packet from before the source took the slot is dropped", () => {
    const rewriter = new RtpRewriter({ ...opus, initialSequenceNumber: 1000, initialTimestamp: 0 });
    rewrite(rewriter, "a", 1, 0, 0);
    rewrite(rewriter, "a", 2, 960, 20);
    expect(rewrite(rewriter, "b", 50, 0, 40)!.sequenceNumber).toBe(1002);
    expect(rewrite(rewriter, "b", 52, 1920, 80)!.sequenceNumber).toBe(1004);
    // 51 arrives late: it still fits in the gap it left.
    expect(rewrite(rewriter, "b", 51, 960, 81)!.sequenceNumber).toBe(1003);
    // 49 was sent by b before it took the slot: its number would be a's 1001.
    expect(rewrite(rewriter, "b", 49, 0, 82)).toBeNull();
  });

  test("one source speaking past half the sequence space (32,768 packets, ~11 minutes of Opus) keeps every packet", () => {
    const rewriter = new RtpRewriter({ ...opus, initialSequenceNumber: 500, initialTimestamp: 0 });
    rewrite(rewriter, "a", 7, 0, 0);
    // b takes the slot and talks for 40,000 packets; none of them predates its turn.
    let dropped = 0;
    let expected = 501;
    for (let k = 0; k < 40_000; k++) {
      const out = rewrite(rewriter, "b", (3_000 + k) % 0x1_0000, k * 960, 20 + k * 20);
      if (out === null) dropped++;
      else {
        expect(out.sequenceNumber).toBe(expected % 0x1_0000);
        expected++;
      }
    }
    expect(dropped).toBe(0);
    // A late packet long after the change is just reordering within b: it passes through.
    expect(rewrite(rewriter, "b", (3_000 + 39_990) % 0x1_0000, 0, 900_000)).not.toBeNull();
  });

  test("seqNewer follows RFC 3550 serial order across the wrap", () => {
    expect(seqNewer(1, 0)).toBe(true);
    expect(seqNewer(0, 0xffff)).toBe(true);
    expect(seqNewer(0xffff, 0)).toBe(false);
    expect(seqNewer(5, 5)).toBe(false);
  });
});

describe("RTP header", () => {
  test("property: write then read gives back the fields and leaves every other byte alone", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 12, maxLength: 200 }),
        fc.record({
          payloadType: fc.integer({ min: 0, max: 127 }),
          marker: fc.boolean(),
          sequenceNumber: fc.integer({ min: 0, max: 0xffff }),
          timestamp: fc.integer({ min: 0, max: 0xffff_ffff }),
          ssrc: fc.integer({ min: 0, max: 0xffff_ffff }),
        }),
        (bytes, header) => {
          const packet = bytes.slice();
          writeRtpHeader(packet, header.payloadType, header.marker, header.sequenceNumber, header.timestamp, header.ssrc);
          expect(readRtpHeader(packet)).toEqual(header);
          expect(packet[0]).toBe(bytes[0]!);
          expect(packet.subarray(12)).toEqual(bytes.subarray(12));
        },
      ),
    );
  });
});
