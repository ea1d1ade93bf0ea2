// The SV01 wire format (src/broker/binary/): payloads round-trip through their encoders and
// decoders, arbitrary bytes never crash or hang a decoder (a 400 at worst), frames split at every
// byte boundary read as the whole, a length past the bound is refused before the frame is
// buffered, the broker's native produce decoder reads what the reference reads, lz4 payloads are
// the standard LZ4 block after its size, compressed payloads of any bytes inflate or are a 4xx,
// and one produce request checked byte by byte against the layout docs/broker.md shows.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { SvcError } from "../../src/core/errors.ts";
import { compress, inflate } from "../../src/broker/binary/compression.ts";
import { FrameReader, WireError } from "../../src/broker/binary/frame-reader.ts";
import {
  decodeConsumeRequest,
  decodeConsumeResponse,
  decodeProduceFrames,
  decodeProduceRequest,
  decodeProduceResponse,
  encodeConsumeRequest,
  encodeConsumeResponse,
  encodeProduceRequest,
  encodeProduceResponse,
  type ProduceRequest,
} from "../../src/broker/binary/payloads.ts";
import { encodeClientHandshake, encodeFrame } from "../../src/broker/binary/wire.ts";
import { unstampedFrames } from "../../src/broker/log/record.ts";
import { decodeLz4Block } from "./support/lz4-block.ts";

const bytes = (max: number) => fc.uint8Array({ maxLength: max });
const produceRequest: fc.Arbitrary<ProduceRequest> = fc.record({
  topic: fc.stringMatching(/^[a-z0-9._-]{1,20}$/),
  producerId: fc.option(fc.string({ maxLength: 20 }), { nil: null }),
  records: fc.array(
    fc.record({
      key: fc.option(bytes(40), { nil: null }),
      value: bytes(100),
      partition: fc.option(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { nil: null }),
      sequence: fc.option(fc.maxSafeNat(), { nil: null }),
    }),
    { maxLength: 10 },
  ),
});

function outcome(decode: () => unknown): "ok" | "400" {
  try {
    decode();
    return "ok";
  } catch (error) {
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).status).toBe(400);
    return "400";
  }
}

describe("payloads", () => {
  test("a produce request round-trips", () => {
    fc.assert(
      fc.property(produceRequest, (request) => {
        const decoded = decodeProduceRequest(encodeProduceRequest(request));
        expect(decoded).toEqual(request);
      }),
      { numRuns: 500 },
    );
  });

  test("a produce response, a consume request and a consume response round-trip", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ partition: fc.nat({ max: 2 ** 32 - 1 }), offset: fc.maxSafeNat(), duplicate: fc.boolean() }), { maxLength: 20 }),
        fc.record({
          topic: fc.stringMatching(/^[a-z]{1,10}$/),
          partition: fc.nat({ max: 2 ** 32 - 1 }),
          offset: fc.maxSafeNat(),
          maxRecords: fc.nat({ max: 2 ** 32 - 1 }),
          maxBytes: fc.nat({ max: 2 ** 32 - 1 }),
        }),
        fc.array(fc.record({ offset: fc.maxSafeNat(), timestampMs: fc.maxSafeNat(), key: fc.option(bytes(20), { nil: null }), value: bytes(50) }), {
          maxLength: 10,
        }),
        (results, consume, records) => {
          const produced = results.map((r) =>
            r.duplicate ? { partition: r.partition, offset: r.offset, duplicate: true as const } : { partition: r.partition, offset: r.offset },
          );
          expect(decodeProduceResponse(encodeProduceResponse(produced))).toEqual(produced);
          expect(decodeConsumeRequest(encodeConsumeRequest(consume))).toEqual(consume);
          const response = { nextOffset: 7, highWatermark: 9, partition: records.length === 0 ? 0 : 3, records };
          expect(decodeConsumeResponse(encodeConsumeResponse(response))).toEqual(response);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("the broker's produce decoder (records as frames, natively) reads what the reference reads, or refuses with its message", () => {
    const damaged = fc.tuple(produceRequest, fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 })).map(([request, cut, at, flip]) => {
      const whole = encodeProduceRequest(request);
      const bytes = whole.slice(0, whole.length - (cut % 4 === 0 ? 0 : cut % 7));
      if (cut % 3 === 0 && bytes.length > 0) bytes[at % bytes.length]! ^= flip;
      return bytes;
    });
    const attempt = <T>(decode: () => T): T | string => {
      try {
        return decode();
      } catch (error) {
        return `${(error as SvcError).status} ${(error as Error).message}`;
      }
    };
    fc.assert(
      fc.property(
        fc.oneof(
          produceRequest.map((r) => encodeProduceRequest(r)),
          damaged,
          bytes(200),
        ),
        (payload) => {
          const fast = attempt(() => decodeProduceFrames(payload));
          const reference = attempt(() => decodeProduceRequest(payload));
          if (typeof reference === "string") return expect(fast).toBe(reference);
          expect(fast).toEqual({
            topic: reference.topic,
            producerId: reference.producerId,
            records: {
              run: unstampedFrames(reference.records),
              partitions: Float64Array.from(reference.records, (r) => r.partition ?? -1),
              sequences: Float64Array.from(reference.records, (r) => r.sequence ?? -1),
            },
          });
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("an lz4 payload is the inflated size (u32, little-endian) and one standard LZ4 block", () => {
    // Runs of repeated bytes, so the blocks hold matches (overlapping ones too), not only literals.
    const compressible = fc
      .array(fc.tuple(fc.uint8Array({ maxLength: 20 }), fc.integer({ min: 1, max: 40 })), { maxLength: 30 })
      .map((parts) => Uint8Array.from(parts.flatMap(([bytes, times]) => Array.from({ length: times }, () => [...bytes]).flat())));
    fc.assert(
      fc.property(fc.oneof(compressible, bytes(300)), (original) => {
        const payload = compress("lz4", original);
        const size = new DataView(payload.buffer, payload.byteOffset).getUint32(0, true);
        expect(size).toBe(original.length);
        expect(decodeLz4Block(payload.subarray(4), size)).toEqual(original);
        expect(inflate("lz4", payload, original.length)).toEqual(original);
      }),
      { numRuns: 500 },
    );
  });

  test("arbitrary bytes as a compressed payload inflate, or are a 400 or (past the bound) a 413", () => {
    const statusOf = (codec: "gzip" | "lz4", payload: Uint8Array) => {
      try {
        inflate(codec, payload, 4096);
        return 200;
      } catch (error) {
        expect(error).toBeInstanceOf(SvcError);
        return (error as SvcError).status;
      }
    };
    fc.assert(
      fc.property(bytes(200), fc.nat(), fc.integer({ min: 1, max: 255 }), (original, at, flip) => {
        for (const codec of ["gzip", "lz4"] as const) {
          expect([200, 400, 413]).toContain(statusOf(codec, original));
          const damaged = Uint8Array.from(compress(codec, original));
          damaged[at % damaged.length]! ^= flip;
          expect([200, 400, 413]).toContain(statusOf(codec, damaged));
        }
      }),
      { numRuns: 1000 },
    );
  });

  test("arbitrary bytes never crash a decoder: each decodes or is a 400", () => {
    fc.assert(
      fc.property(bytes(200), (payload) => {
        outcome(() => decodeProduceRequest(payload));
        outcome(() => decodeProduceFrames(payload));
        outcome(() => decodeConsumeRequest(payload));
        outcome(() => decodeProduceResponse(payload));
        outcome(() => decodeConsumeResponse(payload));
      }),
      { numRuns: 2000 },
    );
  });

  test("a valid request cut short or run on is a 400, and a huge count is refused before it is believed", () => {
    fc.assert(
      fc.property(produceRequest, fc.nat(), (request, cut) => {
        const whole = encodeProduceRequest(request);
        const at = cut % whole.length;
        if (at > 0) expect(outcome(() => decodeProduceRequest(whole.subarray(0, at)))).toBe("400");
        expect(outcome(() => decodeProduceRequest(new Uint8Array([...whole, 0])))).toBe("400");
      }),
      { numRuns: 500 },
    );
    const huge = encodeProduceRequest({ topic: "t", producerId: null, records: [] });
    new DataView(huge.buffer).setUint32(huge.length - 4, 0xffffffff);
    expect(() => decodeProduceRequest(huge)).toThrow(/count is 4294967295/);
  });

  test("one produce request byte by byte, as docs/broker.md lays it out", () => {
    const payload = encodeProduceRequest({
      topic: "ab",
      producerId: null,
      records: [{ key: new Uint8Array([0x6b]), value: new Uint8Array([0x76, 0x31]), partition: null, sequence: null }],
    });
    expect(Buffer.from(payload).toString("hex")).toBe(
      "0002" +
        "6162" + // topic_len 2, "ab"
        "ffffffff" + // producer_id_len -1: none
        "00000001" + // count 1
        "00000001" +
        "6b" + // key_len 1, "k"
        "00000002" +
        "7631" + // value_len 2, "v1"
        "ffffffff" + // partition -1: by key
        "8000000000000000", // sequence: i64's least value, none
    );
    expect(payload.length).toBe(35);
    expect(Buffer.from(encodeFrame(7, 0x01, payload).subarray(0, 9)).toString("hex")).toBe("00000028" + "00000007" + "01");
  });
});

describe("the frame reader", () => {
  const frames = fc.array(fc.record({ requestId: fc.nat({ max: 2 ** 32 - 1 }), opcode: fc.integer({ min: 0, max: 255 }), payload: bytes(60) }), {
    maxLength: 8,
  });

  test("a stream split at any boundaries reads as the same handshake and frames as in one piece", () => {
    fc.assert(
      fc.property(bytes(30), frames, fc.array(fc.nat(), { maxLength: 10 }), (token, list, cuts) => {
        const stream = Buffer.concat([encodeClientHandshake(1, token), ...list.map((f) => encodeFrame(f.requestId, f.opcode, f.payload))]);
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const reader = new FrameReader(1000, 1024);
        let handshake: ReturnType<FrameReader["takeHandshake"]> = null;
        const read: unknown[] = [];
        let from = 0;
        for (const to of [...points, stream.length]) {
          reader.push(stream.subarray(from, to));
          from = to;
          handshake ??= reader.takeHandshake();
          if (handshake !== null) for (let f = reader.takeFrame(); f !== null; f = reader.takeFrame()) read.push(f);
        }
        expect(handshake).toEqual({ magicOk: true, requested: 1, token: new Uint8Array(token) });
        expect(read).toEqual(list.map((f) => ({ ...f, payload: new Uint8Array(f.payload) })));
        expect(reader.buffered).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  test("every one-byte split of a frame reads as the whole frame", () => {
    const frame = encodeFrame(42, 0x02, new Uint8Array([1, 2, 3, 4, 5]));
    for (let at = 0; at <= frame.length; at++) {
      const reader = new FrameReader(100, 0);
      reader.push(frame.subarray(0, at));
      const early = reader.takeFrame();
      reader.push(frame.subarray(at));
      const frameRead = early ?? reader.takeFrame();
      expect(frameRead).toEqual({ requestId: 42, opcode: 2, payload: new Uint8Array([1, 2, 3, 4, 5]) });
    }
  });

  test("a payload at the bound is read; one byte past it is refused from its length alone", () => {
    const reader = new FrameReader(10, 0);
    reader.push(encodeFrame(1, 1, new Uint8Array(10)));
    expect(reader.takeFrame()?.payload.length).toBe(10);
    const past = new FrameReader(10, 0);
    past.push(encodeFrame(1, 1, new Uint8Array(11)).subarray(0, 4));
    expect(() => past.takeFrame()).toThrow(WireError);
  });

  test("a token of 1024 bytes is read, 1025 refused; bad magic is known from four bytes", () => {
    const ok = new FrameReader(10, 1024);
    ok.push(encodeClientHandshake(0, new Uint8Array(1024)));
    expect(ok.takeHandshake()?.token.length).toBe(1024);
    const long = new FrameReader(10, 1024);
    long.push(encodeClientHandshake(0, new Uint8Array(1025)).subarray(0, 12));
    expect(() => long.takeHandshake()).toThrow(/1025 bytes; at most 1024/);
    const bad = new FrameReader(10, 1024);
    bad.push(new TextEncoder().encode("GET "));
    expect(bad.takeHandshake()?.magicOk).toBe(false);
  });

  test("arbitrary bytes after a handshake never crash or hang the reader", () => {
    fc.assert(
      fc.property(bytes(300), (junk) => {
        const reader = new FrameReader(64, 16);
        reader.push(encodeClientHandshake(0, new Uint8Array(0)));
        reader.takeHandshake();
        reader.push(junk);
        try {
          for (let i = 0; i < 400 && reader.takeFrame() !== null; i++);
        } catch (error) {
          expect(error).toBeInstanceOf(WireError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
