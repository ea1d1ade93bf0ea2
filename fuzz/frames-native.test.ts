// The batch checksum calls for broker record frames (native/log/src/frames.rs) against their
// TypeScript references: sealing the same frames writes the same bytes, and the checked prefix of
// any buffer — whole, cut anywhere, with any byte damaged, or arbitrary — is the same length.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { encodeRecords, frameBodyBytesMax } from "../src/broker/log/record.ts";
import { checkedFramesPrefix, checkedFramesPrefixReference, sealFrames, sealFramesReference } from "../src/native/frames.ts";

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
