// CRC32C: the native (SSE4.2) path equals the TypeScript definition on arbitrary input, and a
// checksum continued across any split equals the checksum of the whole.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { crc32c, crc32cReference } from "../src/native/crc32c.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("crc32c", () => {
  test("matches published check values (RFC 3720 B.4 and the CRC catalogue)", () => {
    for (const impl of [crc32c, crc32cReference]) {
      expect(impl(bytes("123456789"))).toBe(0xe3069283);
      expect(impl(new Uint8Array(32))).toBe(0x8a9136aa);
      expect(impl(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
      expect(impl(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
      expect(impl(new Uint8Array(0))).toBe(0);
    }
  });

  test("native equals reference over arbitrary buffers and ranges", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), fc.nat(), fc.nat(), fc.nat(0xffffffff), (data, a, b, seed) => {
        const start = data.length === 0 ? 0 : a % (data.length + 1);
        const end = start + (data.length === 0 ? 0 : b % (data.length - start + 1));
        expect(crc32c(data, start, end, seed)).toBe(crc32cReference(data, start, end, seed));
      }),
      { numRuns: 500 },
    );
  });

  test("a checksum continued across a split equals the checksum of the whole", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.nat(), (data, at) => {
        const split = data.length === 0 ? 0 : at % (data.length + 1);
        const whole = crc32c(data);
        expect(crc32c(data, split, data.length, crc32c(data, 0, split))).toBe(whole);
      }),
      { numRuns: 300 },
    );
  });

  test("a range outside the buffer is refused by both paths, never read", () => {
    const data = bytes("abc");
    for (const [start, end] of [
      [0, 4],
      [2, 1],
      [4, 4],
    ] as const) {
      expect(() => crc32c(data, start, end)).toThrow(/outside a buffer of 3 bytes/);
      expect(() => crc32cReference(data, start, end)).toThrow(/outside a buffer of 3 bytes/);
    }
  });

  test("a subarray view is checksummed over its own bytes, not its backing buffer", () => {
    const backing = bytes("xx123456789yy");
    expect(crc32c(backing.subarray(2, 11))).toBe(0xe3069283);
  });
});
