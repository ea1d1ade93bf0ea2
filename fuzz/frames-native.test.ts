// The batch calls on broker record frames (native/log/src/frames.rs) against their TypeScript
// references: sealing the same frames writes the same bytes, the checked prefix of
// any buffer — whole, cut anywhere, with any byte damaged, or arbitrary — is the same length, and
// a binary produce's records — well formed, cut, damaged or arbitrary — become the same frames,
// partitions and sequences, or are refused by both.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { encodeProduceRequest } from "../src/broker/binary/payloads.ts";
import { encodeRecords, frameBodyBytesMax } from "../src/broker/log/record.ts";
import {
  checkedFramesPrefix,
  checkedFramesPrefixReference,
  frameProduceRecords,
  frameProduceRecordsReference,
  sealFrames,
  sealFramesReference,
} from "../src/native/frames.ts";

const record = fc.record({
  offset: fc.nat(),
  timestampMs: fc.integer({ min: 0, max: 2 ** 45 }),
  key: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: null }),
  value: fc.uint8Array({ maxLength: 300 }),
});
const frames = fc.array(record, { minLength: 1, maxLength: 12 }).map((records) => encodeRecords(records));

/** Flips bits in every frame's CRC field, so that sealing has to rewrite each one. */
function scrambleCrcs(frames: Uint8Array, mask: number): void {
  const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
  for (let pos = 0; pos < frames.length; pos += 4 + view.getUint32(pos, true)) frames[pos + 4]! ^= mask;
}

test("sealing frames natively writes exactly what the reference writes", () => {
  fc.assert(
    fc.property(frames, fc.nat(), (sealed, noise) => {
      const native = Uint8Array.from(sealed);
      const reference = Uint8Array.from(sealed);
      scrambleCrcs(native, 1 + (noise % 255));
      scrambleCrcs(reference, 1 + (noise % 255));
      expect(sealFrames(native, frameBodyBytesMax)).toBe(sealFramesReference(reference, frameBodyBytesMax));
      expect(native).toEqual(reference);
      expect(native).toEqual(Uint8Array.from(sealed));
    }),
    { numRuns: 300 },
  );
});

test("the checked prefix is the same natively for whole, cut, damaged and arbitrary buffers", () => {
  const damaged = fc.tuple(frames, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 })).map(([bytes, cut, at, flip]) => {
    const copy = bytes.slice(0, bytes.length - (cut % (bytes.length + 1)));
    if (copy.length > 0) copy[at % copy.length]! ^= flip;
    return copy;
  });
  fc.assert(
    fc.property(fc.oneof(frames, damaged, fc.uint8Array({ maxLength: 200 })), fc.nat(), (bytes, from) => {
      const start = bytes.length === 0 ? 0 : from % (bytes.length + 1);
      expect(checkedFramesPrefix(bytes, start, bytes.length, frameBodyBytesMax)).toBe(
        checkedFramesPrefixReference(bytes, start, bytes.length, frameBodyBytesMax),
      );
    }),
    { numRuns: 1000 },
  );
});

test("lengths that do not tile the buffer are refused by both", () => {
  const sealed = encodeRecords([{ offset: 1, timestampMs: 2, key: null, value: new Uint8Array(3) }]);
  const padded = new Uint8Array(sealed.length + 1);
  padded.set(sealed);
  expect(() => sealFrames(padded, frameBodyBytesMax)).toThrow("do not tile");
  expect(() => sealFramesReference(padded, frameBodyBytesMax)).toThrow("do not tile");
});

/** A binary produce's records (the payload after its count), well formed or damaged, and the count it claims. */
const produceRecords = fc
  .tuple(
    fc.array(
      fc.record({
        key: fc.option(fc.uint8Array({ maxLength: 20 }), { nil: null }),
        value: fc.uint8Array({ maxLength: 60 }),
        partition: fc.option(fc.nat({ max: 2 ** 31 - 1 }), { nil: null }),
        sequence: fc.option(fc.maxSafeNat(), { nil: null }),
      }),
      { maxLength: 8 },
    ),
    fc.nat(),
    fc.nat(),
    fc.integer({ min: 0, max: 255 }),
    fc.integer({ min: -1, max: 1 }),
  )
  .map(([records, cut, at, flip, countSkew]) => {
    const payload = encodeProduceRequest({ topic: "t", producerId: null, records });
    // topic_len, "t", producer_id_len, count: the records start after these 11 bytes.
    const src = payload.slice(11, payload.length - (cut % 3 === 0 ? cut % 5 : 0));
    if (src.length > 0 && flip > 0) src[at % src.length]! ^= flip;
    return { src, count: Math.max(0, records.length + countSkew) };
  });

test("a binary produce's records become the same frames natively as by the reference, or neither takes them", () => {
  const arbitrary = fc.tuple(fc.uint8Array({ maxLength: 120 }), fc.nat({ max: 6 })).map(([src, count]) => ({ src, count }));
  fc.assert(
    fc.property(fc.oneof(produceRecords, arbitrary), fc.nat({ max: 4 }), ({ src, count }, lead) => {
      // The records may start anywhere in the payload.
      const payload = new Uint8Array(lead + src.length);
      payload.set(src, lead);
      const size = src.length + 12 * count;
      const made = () => ({ out: new Uint8Array(size).fill(0xee), partitions: new Float64Array(count), sequences: new Float64Array(count) });
      const native = made();
      const reference = made();
      const ok = frameProduceRecords(payload, lead, count, native.out, native.partitions, native.sequences);
      expect(ok).toBe(frameProduceRecordsReference(payload, lead, count, reference.out, reference.partitions, reference.sequences));
      if (ok) expect(native).toEqual(reference);
    }),
    { numRuns: 3000 },
  );
});
