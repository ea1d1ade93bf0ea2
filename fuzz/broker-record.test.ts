// The broker's record frame codec (src/broker/log/record.ts): what is encoded decodes to the same
// records, no input bytes crash or hang the decoder, a cut batch decodes its whole prefix and calls
// the rest torn, and every frame's stored CRC is the CRC32C the TypeScript reference computes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { decodeRecords, encodeRecords, frameBytes, type LogRecord } from "../src/broker/log/record.ts";
import { crc32c, crc32cReference } from "../src/native/crc32c.ts";

const recordArb: fc.Arbitrary<LogRecord> = fc.record({
  offset: fc.maxSafeNat(),
  timestampMs: fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  key: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
  value: fc.uint8Array({ maxLength: 512 }),
});
const batchArb = fc.array(recordArb, { maxLength: 20 });

const plain = (r: LogRecord) => ({
  offset: r.offset,
  timestampMs: r.timestampMs,
  key: r.key === null ? null : Array.from(r.key),
  value: Array.from(r.value),
});

describe("record codec", () => {
  test("encode then decode returns the same records and consumes every byte", () => {
    fc.assert(
      fc.property(batchArb, (records) => {
        const bytes = encodeRecords(records);
        expect(bytes.length).toBe(records.reduce((n, r) => n + frameBytes(r.key, r.value), 0));
        const decoded = decodeRecords(bytes);
        expect(decoded.stop).toBe("end");
        expect(decoded.validBytes).toBe(bytes.length);
        expect(decoded.records.map(plain)).toEqual(records.map(plain));
      }),
      { numRuns: 300 },
    );
  });

  test("a null key and an empty key stay distinct", () => {
    const records = [
      { offset: 0, timestampMs: 1, key: null, value: new Uint8Array() },
      { offset: 1, timestampMs: 2, key: new Uint8Array(), value: new Uint8Array([7]) },
    ];
    const decoded = decodeRecords(encodeRecords(records)).records;
    expect(decoded[0]!.key).toBeNull();
    expect(decoded[1]!.key).toEqual(new Uint8Array());
  });

  test("arbitrary bytes never throw, and whatever decodes re-encodes to the same prefix", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (bytes) => {
        const decoded = decodeRecords(bytes);
        expect(decoded.validBytes).toBeLessThanOrEqual(bytes.length);
        expect(Buffer.from(encodeRecords(decoded.records)).equals(Buffer.from(bytes.subarray(0, decoded.validBytes)))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test("valid frames followed by garbage decode the frames and stop at the garbage", () => {
    fc.assert(
      fc.property(batchArb, fc.uint8Array({ minLength: 1, maxLength: 256 }), (records, garbage) => {
        const good = encodeRecords(records);
        const decoded = decodeRecords(Buffer.concat([good, garbage]));
        // Garbage can by chance be a valid frame only with a matching CRC: then it decodes too.
        expect(decoded.validBytes).toBeGreaterThanOrEqual(good.length);
        expect(decoded.records.slice(0, records.length).map(plain)).toEqual(records.map(plain));
      }),
      { numRuns: 300 },
    );
  });

  test("a batch cut at any byte decodes its whole frames and reports the rest as torn", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 10 }), fc.nat(), (records, at) => {
        const bytes = encodeRecords(records);
        const cut = at % bytes.length; // strictly inside the batch
        const ends: number[] = [];
        let end = 0;
        for (const r of records) ends.push((end += frameBytes(r.key, r.value)));
        const whole = ends.filter((e) => e <= cut).length;
        const decoded = decodeRecords(bytes.subarray(0, cut));
        expect(decoded.records.map(plain)).toEqual(records.slice(0, whole).map(plain));
        expect(decoded.validBytes).toBe(whole === 0 ? 0 : ends[whole - 1]!);
        expect(decoded.stop).toBe(decoded.validBytes === cut ? "end" : "torn");
      }),
      { numRuns: 500 },
    );
  });

  test("any single flipped bit in a frame is caught, never decoded as a different record", () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 5 }), fc.nat(), (records, at) => {
        const bytes = encodeRecords(records);
        const bit = at % (bytes.length * 8);
        bytes[bit >> 3]! ^= 1 << (bit & 7);
        const decoded = decodeRecords(bytes);
        expect(decoded.stop).not.toBe("end");
        const intact = decoded.records.length;
        expect(decoded.records.map(plain)).toEqual(records.slice(0, intact).map(plain));
      }),
      { numRuns: 500 },
    );
  });

  test("the CRC stored in every frame equals both the native and the reference CRC32C of its body", () => {
    fc.assert(
      fc.property(batchArb, (records) => {
        const bytes = encodeRecords(records);
        const view = new DataView(bytes.buffer);
        for (let pos = 0; pos < bytes.length; ) {
          const end = pos + 4 + view.getUint32(pos, true);
          const stored = view.getUint32(pos + 4, true);
          expect(crc32c(bytes, pos + 8, end)).toBe(stored);
          expect(crc32cReference(bytes, pos + 8, end)).toBe(stored);
          pos = end;
        }
      }),
      { numRuns: 200 },
    );
  });

  test("a length field past the record limit is corrupt at once, not a wait for 4 GiB", () => {
    const bytes = new Uint8Array(64);
    new DataView(bytes.buffer).setUint32(0, 0xffff_fff0, true);
    expect(decodeRecords(bytes)).toMatchObject({ records: [], validBytes: 0, stop: "corrupt" });
  });

  test("the documented layout: little-endian fields at their offsets", () => {
    const bytes = encodeRecords([{ offset: 0x1_0000_0002, timestampMs: -5, key: new Uint8Array([9]), value: new Uint8Array([1, 2]) }]);
    const view = new DataView(bytes.buffer);
    expect(bytes.length).toBe(35);
    expect(view.getUint32(0, true)).toBe(31);
    expect(view.getBigUint64(8, true)).toBe(0x1_0000_0002n);
    expect(view.getBigInt64(16, true)).toBe(-5n);
    expect(view.getInt32(24, true)).toBe(1);
    expect(bytes[28]).toBe(9);
    expect(view.getUint32(29, true)).toBe(2);
    expect(Array.from(bytes.subarray(33))).toEqual([1, 2]);
  });
});
