// Unit tests of the bitmap modules: BITFIELD's integer arithmetic at the limits of every width,
// field reads and writes at any bit offset, and the BITCOUNT/BITPOS ranges against definitions
// written one bit at a time.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MutableString } from "../../../../src/kv/types/string/bytes.ts";
import { parseIndex, reversedNegatives } from "../../../../src/kv/commands/bitmap/bit-args.ts";
import { clampRange, countBits, findBit, wholeString } from "../../../../src/kv/types/bitmap/bit-range.ts";
import { addInField, type FieldType, parseFieldType, readField, writeField } from "../../../../src/kv/types/bitmap/bitfield.ts";

const i64 = { signed: true, bits: 64 };
const u63 = { signed: false, bits: 63 };
const int64Max = 2n ** 63n - 1n;
const int64Min = -(2n ** 63n);
const u63Max = 2n ** 63n - 1n;

const limits = (t: FieldType) =>
  (t.signed ? [-(1n << BigInt(t.bits - 1)), (1n << BigInt(t.bits - 1)) - 1n] : [0n, (1n << BigInt(t.bits)) - 1n]) as [bigint, bigint];

/** INCRBY by definition: the exact sum, wrapped modulo 2^bits into the type's range, clamped, or refused. */
function incrModel(t: FieldType, value: bigint, increment: bigint, policy: "wrap" | "sat" | "fail"): bigint | null {
  const [min, max] = limits(t);
  const sum = value + increment;
  if (sum >= min && sum <= max) return sum;
  if (policy === "fail") return null;
  if (policy === "sat") return sum > max ? max : min;
  const span = 1n << BigInt(t.bits);
  return ((((sum - min) % span) + span) % span) + min;
}

describe("BITFIELD arithmetic", () => {
  test("i64 at its limits and one past: wrap, saturate or refuse", () => {
    expect(addInField(i64, int64Max, 1n, "wrap")).toBe(int64Min);
    expect(addInField(i64, int64Max, 1n, "sat")).toBe(int64Max);
    expect(addInField(i64, int64Max, 1n, "fail")).toBeNull();
    expect(addInField(i64, int64Min, -1n, "wrap")).toBe(int64Max);
    expect(addInField(i64, int64Min, -1n, "sat")).toBe(int64Min);
    expect(addInField(i64, int64Min, -1n, "fail")).toBeNull();
    expect(addInField(i64, int64Max, 0n, "fail")).toBe(int64Max);
    expect(addInField(i64, int64Min, int64Max, "fail")).toBe(-1n);
    expect(addInField(i64, -1n, int64Min, "fail")).toBeNull();
    expect(addInField(i64, 0n, int64Min, "fail")).toBe(int64Min);
  });

  test("u63 at its limits and one past: wrap, saturate or refuse", () => {
    expect(addInField(u63, u63Max, 1n, "wrap")).toBe(0n);
    expect(addInField(u63, u63Max, 1n, "sat")).toBe(u63Max);
    expect(addInField(u63, u63Max, 1n, "fail")).toBeNull();
    expect(addInField(u63, 0n, -1n, "wrap")).toBe(u63Max);
    expect(addInField(u63, 0n, -1n, "sat")).toBe(0n);
    expect(addInField(u63, 0n, -1n, "fail")).toBeNull();
    expect(addInField(u63, 0n, int64Max, "fail")).toBe(u63Max);
    expect(addInField(u63, u63Max, int64Min, "wrap")).toBe(u63Max);
    expect(addInField(u63, 1n, int64Min, "sat")).toBe(0n);
  });

  test("SET takes the value as INCRBY from it by 0 does, with Redis's quirks for values far out of range", () => {
    // An unsigned SET of a negative value arrives as its uint64: above any maximum.
    expect(addInField({ signed: false, bits: 8 }, BigInt.asUintN(64, -1n), 0n, "sat")).toBe(255n);
    expect(addInField({ signed: false, bits: 8 }, BigInt.asUintN(64, -1n), 0n, "wrap")).toBe(255n);
    expect(addInField({ signed: true, bits: 8 }, -200n, 0n, "sat")).toBe(-128n);
    expect(addInField({ signed: true, bits: 8 }, 200n, 0n, "wrap")).toBe(-56n);
    // max - value wraps in int64 and Redis reads that as an overflow upwards (checked against 7.0.15).
    expect(addInField({ signed: true, bits: 8 }, int64Min, 0n, "sat")).toBe(127n);
    expect(addInField({ signed: true, bits: 63 }, -(2n ** 62n) - 1n, 0n, "sat")).toBe(2n ** 62n - 1n);
    expect(addInField({ signed: true, bits: 63 }, -(2n ** 62n), 0n, "sat")).toBe(-(2n ** 62n));
  });

  test("INCRBY of any int64 to any in-range value is the wrapped, saturated or refused exact sum", () => {
    const type = fc.oneof(
      fc.integer({ min: 1, max: 64 }).map((bits) => ({ signed: true, bits })),
      fc.integer({ min: 1, max: 63 }).map((bits) => ({ signed: false, bits })),
    );
    const int64 = fc.oneof(fc.bigInt({ min: int64Min, max: int64Max }), fc.bigInt({ min: -300n, max: 300n }), fc.constantFrom(int64Min, int64Max, 0n, -1n, 1n));
    fc.assert(
      fc.property(type, fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), int64, fc.constantFrom("wrap", "sat", "fail" as const), (t, raw, increment, policy) => {
        const [min, max] = limits(t);
        const value = t.signed ? BigInt.asIntN(t.bits, raw) : BigInt.asUintN(t.bits, raw);
        expect(value >= min && value <= max).toBe(true);
        expect(addInField(t, value, increment, policy)).toBe(incrModel(t, value, increment, policy));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("BITFIELD types", () => {
  test("i1..i64 and u1..u63 parse; u64, i65, zero, signs, leading zeros and capitals do not", () => {
    expect(parseFieldType("i64")).toEqual({ signed: true, bits: 64 });
    expect(parseFieldType("u63")).toEqual({ signed: false, bits: 63 });
    expect(parseFieldType("i1")).toEqual({ signed: true, bits: 1 });
    // Redis reads the width as a C string: it ends at a NUL byte.
    expect(parseFieldType("u8\0junk")).toEqual({ signed: false, bits: 8 });
    for (const bad of ["u64", "i65", "i0", "u0", "i-1", "i+8", "i08", "I8", "U8", "x8", "i", "", "i8 ", "\0i8"]) {
      expect(() => parseFieldType(bad)).toThrow("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    }
  });
});

describe("BITFIELD fields", () => {
  /** The field read one bit at a time, most significant first. */
  const bitAt = (bytes: Uint8Array, p: number) => ((bytes[p >> 3] ?? 0) >> (7 - (p & 7))) & 1;
  const naiveRead = (bytes: Uint8Array, offset: number, bits: number) => {
    let v = 0n;
    for (let i = 0; i < bits; i++) v = (v << 1n) | BigInt(bitAt(bytes, offset + i));
    return v;
  };

  test("reads equal the bit-by-bit definition at every alignment, past the end too", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 1, max: 64 }), (bytes, offset, bits) => {
        expect(readField(bytes, offset, bits)).toBe(naiveRead(bytes, offset, bits));
      }),
      { numRuns: 2000 },
    );
  });

  test("a write changes exactly its bits and reads back as the value modulo 2^bits", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 20 }),
        fc.integer({ min: 0, max: 64 }),
        fc.integer({ min: 1, max: 64 }),
        fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
        (bytes, offset, bits, value) => {
          const before = bytes.slice();
          writeField(bytes, offset, bits, value);
          expect(readField(bytes, offset, bits)).toBe(BigInt.asUintN(bits, value));
          for (let p = 0; p < bytes.length * 8; p++) if (p < offset || p >= offset + bits) expect(bitAt(bytes, p)).toBe(bitAt(before, p));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("BITCOUNT and BITPOS ranges", () => {
  test("start and end clamp as Redis clamps them, in bytes and in bits", () => {
    expect(clampRange(0, -1, "byte", 3)).toEqual({ firstBit: 0, lastBit: 23 });
    expect(clampRange(-100, 100, "byte", 3)).toEqual({ firstBit: 0, lastBit: 23 });
    expect(clampRange(1, 0, "byte", 3)).toBeNull();
    expect(clampRange(0, -1, "byte", 0)).toBeNull();
    expect(clampRange(5, 10, "bit", 1)).toEqual({ firstBit: 5, lastBit: 7 });
    expect(clampRange(-3, -1, "bit", 2)).toEqual({ firstBit: 13, lastBit: 15 });
    expect(clampRange(-(2 ** 53), 2 ** 53, "bit", 2)).toEqual({ firstBit: 0, lastBit: 15 });
    expect(wholeString(0)).toBeNull();
  });

  test("ends past ±2^53 clamp there, yet BITCOUNT's reversed-negatives check still compares them exactly", () => {
    expect(parseIndex("-9223372036854775808")).toBe(-(2 ** 53));
    expect(parseIndex("9223372036854775807")).toBe(2 ** 53);
    expect(parseIndex("123456789012345")).toBe(123456789012345);
    expect(() => parseIndex("9223372036854775808")).toThrow("ERR value is not an integer or out of range");
    expect(() => parseIndex("-0")).toThrow("ERR value is not an integer or out of range");
    const reversed = (a: string, b: string) => reversedNegatives(parseIndex(a), parseIndex(b), a, b);
    expect(reversed("-9223372036854775807", "-9223372036854775808")).toBe(true);
    expect(reversed("-9223372036854775808", "-9223372036854775807")).toBe(false);
    expect(reversed("-9223372036854775808", "-9223372036854775808")).toBe(false);
    expect(reversed("-1", "-2")).toBe(true);
    expect(reversed("-2", "-1")).toBe(false);
    expect(reversed("1", "-2")).toBe(false);
  });

  const bitsOf = (bytes: Uint8Array) => Array.from({ length: bytes.length * 8 }, (_, p) => (bytes[p >> 3]! >> (7 - (p & 7))) & 1);
  const value = fc
    .tuple(fc.uint8Array({ maxLength: 300 }), fc.boolean())
    .map(([bytes, plain]) => (plain ? Buffer.from(bytes).toString("latin1") : MutableString.from(Buffer.from(bytes).toString("latin1"))));
  const bytesOfValue = (v: string | MutableString) => Buffer.from(v.toString(), "latin1");

  test("counts and first positions equal the bit-by-bit definition over any range of either string form", () => {
    fc.assert(
      fc.property(
        value,
        fc.integer({ min: -2500, max: 2500 }),
        fc.integer({ min: -2500, max: 2500 }),
        fc.constantFrom("bit", "byte" as const),
        fc.constantFrom(0 as const, 1 as const),
        (v, start, end, unit, bit) => {
          const range = clampRange(start, end, unit, v.length);
          if (range === null) return;
          const bits = bitsOf(bytesOfValue(v)).slice(range.firstBit, range.lastBit + 1);
          expect(countBits(v, range)).toBe(bits.filter((b) => b === 1).length);
          const at = bits.indexOf(bit);
          expect(findBit(v, bit, range)).toBe(at === -1 ? -1 : range.firstBit + at);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
