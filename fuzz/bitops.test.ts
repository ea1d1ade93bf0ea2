// Bitmap kernels: the wasm module (wasm/bitops.ts) equals the TypeScript kernels, and both equal
// definitions written one byte at a time — on arbitrary bytes, at every alignment of the views
// (values and Buffer copies need not start on a word boundary), and across the chunks in which
// the wasm side copies its input into linear memory.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { combine, findOther, findOtherTs, invert, popcount, popcountTs } from "../src/kv/types/bitmap/kernels.ts";
import { chunkBytes, combineWasm, findOtherWasm, invertWasm, popcountWasm } from "../src/wasm/bitops.ts";

const popcountByBytes = (bytes: Uint8Array) => bytes.reduce((n, b) => n + b.toString(2).replaceAll("0", "").length, 0);

/** A copy of `bytes` that starts `shift` bytes into its buffer. */
function realign(bytes: Uint8Array, shift: number): Uint8Array {
  const buffer = new Uint8Array(bytes.length + shift);
  buffer.set(bytes, shift);
  return buffer.subarray(shift);
}

/** Bytes seen through a view that starts `shift` bytes into its buffer, so every alignment comes up. */
const shifted = fc.tuple(fc.uint8Array({ maxLength: 700 }), fc.integer({ min: 0, max: 7 })).map(([data, shift]) => realign(data, shift));
/** Runs of 0x00 and 0xff with rare other bytes: what BITPOS skips over, and where it stops. */
const runs = fc
  .tuple(
    fc.oneof(
      fc.array(fc.constantFrom(0x00, 0xff, 0x00, 0xff, 0x10), { maxLength: 600 }),
      fc.array(fc.constantFrom(0x00, 0x00, 0x00, 0xff, 0x01), { maxLength: 3000 }),
    ),
    fc.integer({ min: 0, max: 7 }),
  )
  .map(([data, shift]) => realign(Uint8Array.from(data), shift));

describe("bitmap kernels", () => {
  test("popcount: wasm, TypeScript and the chosen kernel equal the per-byte count", () => {
    fc.assert(
      fc.property(shifted, (bytes) => {
        const expected = popcountByBytes(bytes);
        expect(popcountWasm(bytes)).toBe(expected);
        expect(popcountTs(bytes)).toBe(expected);
        expect(popcount(bytes)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  test("AND, OR, XOR: wasm and TypeScript equal the per-byte operation over the shorter length", () => {
    const ops = { and: (a: number, b: number) => a & b, or: (a: number, b: number) => a | b, xor: (a: number, b: number) => a ^ b };
    fc.assert(
      fc.property(fc.constantFrom("and", "or", "xor" as const), shifted, shifted, (op, dst, src) => {
        const expected = dst.map((b, i) => (i < src.length ? ops[op](b, src[i]!) : b));
        const viaWasm = dst.slice();
        combineWasm(op, viaWasm, src);
        expect(viaWasm).toEqual(expected);
        // Also with the two views aligned differently, where the word loop cannot be used.
        const misaligned = realign(dst, (src.byteOffset + 1) & 7);
        combine(op, misaligned, src);
        expect(misaligned).toEqual(expected);
        combine(op, dst, src);
        expect(dst).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  test("NOT: wasm and TypeScript invert every byte", () => {
    fc.assert(
      fc.property(shifted, (bytes) => {
        const expected = bytes.map((b) => ~b & 0xff);
        const viaWasm = bytes.slice();
        invertWasm(viaWasm);
        expect(viaWasm).toEqual(expected);
        invert(bytes);
        expect(bytes).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  test("first byte that is not 0x00 (or 0xff) in a range: wasm, TypeScript and the chosen kernel equal a byte scan", () => {
    fc.assert(
      fc.property(runs, fc.constantFrom(0x00, 0xff), fc.nat(), fc.nat(), (bytes, skip, a, b) => {
        const from = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const to = from + (b % (bytes.length - from + 1));
        const at = bytes.subarray(from, to).findIndex((x) => x !== skip);
        const expected = at === -1 ? to : from + at;
        expect(findOtherWasm(bytes, skip, from, to)).toBe(expected);
        expect(findOtherTs(bytes, skip, from, to)).toBe(expected);
        expect(findOther(bytes, skip, from, to)).toBe(expected);
      }),
      { numRuns: 1500 },
    );
  });

  test("inputs of several chunks are copied into linear memory piece by piece and still agree", () => {
    const big = Uint8Array.from({ length: 2 * chunkBytes + 12_345 }, (_, i) => (i * 131 + (i >> 7)) & 0xff);
    expect(popcountWasm(big)).toBe(popcountByBytes(big));
    expect(popcountWasm(big.subarray(3))).toBe(popcountTs(big.subarray(3)));
    const zeros = new Uint8Array(3 * chunkBytes);
    zeros[chunkBytes * 2 + 5] = 4;
    expect(findOtherWasm(zeros, 0)).toBe(chunkBytes * 2 + 5);
    expect(findOther(zeros, 0)).toBe(chunkBytes * 2 + 5);
    const a = big.slice();
    const b = big.map((x) => x ^ 0x5a);
    combineWasm("xor", a, b);
    expect(a.every((x) => x === 0x5a)).toBe(true);
    invertWasm(a);
    expect(a.every((x) => x === 0xa5)).toBe(true);
  });
});
