// HyperLogLog register work: every wasm function in wasm/hll.ts equals its plain-TypeScript
// reference in src/wasm/hll.ts on arbitrary input — patterns of arbitrary element bytes, dense
// updates on arbitrary register arrays, histograms, unions and raises — and batches split across
// several wasm calls give the same result as one.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  getDenseRegister,
  hllBatchBytesMax,
  hllDenseAdd,
  hllDenseAddReference,
  hllDenseHistogram,
  hllDenseHistogramReference,
  hllDenseMaxInto,
  hllDenseMaxIntoReference,
  hllDenseRaiseTo,
  hllDenseRaiseToReference,
  hllDenseRegisterBytes,
  hllDenseSetPatterns,
  hllDenseSetPatternsReference,
  hllInPlaceItemsMax,
  hllPatternReference,
  hllPatterns,
  hllPatternsReference,
  hllRawHistogram,
  hllRawHistogramReference,
  hllRegisterMax,
  hllRegisters,
  setDenseRegister,
} from "../src/wasm/hll.ts";

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");
const element = fc.uint8Array({ maxLength: 100 }).map(latin1);
/** Batches on both sides of hllInPlaceItemsMax: small ones raise registers in TypeScript, large ones in wasm. */
const batch = fc.oneof(fc.array(element, { maxLength: 40 }), fc.array(element, { minLength: hllInPlaceItemsMax + 1, maxLength: 3 * hllInPlaceItemsMax }));
/** Register arrays: all zero, sparse-looking, or arbitrary 6-bit values. */
const registers = fc
  .oneof(
    fc.constant(null),
    fc.array(fc.tuple(fc.integer({ min: 0, max: hllRegisters - 1 }), fc.integer({ min: 0, max: hllRegisterMax })), { maxLength: 300 }),
    fc.integer().map((seed) => seed),
  )
  .map((spec) => {
    const regs = new Uint8Array(hllDenseRegisterBytes);
    if (Array.isArray(spec)) for (const [i, v] of spec) setDenseRegister(regs, i, v);
    else if (typeof spec === "number") {
      let state = spec >>> 0;
      for (let i = 0; i < regs.length; i++) {
        state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
        regs[i] = state >>> 24;
      }
    }
    return regs;
  });
/** One byte per register, values 0..63 as a union of HLLs holds them. */
const raw = fc.oneof(
  fc.constant(new Uint8Array(hllRegisters)),
  fc.array(fc.tuple(fc.integer({ min: 0, max: hllRegisters - 1 }), fc.integer({ min: 0, max: hllRegisterMax })), { maxLength: 500 }).map((sets) => {
    const r = new Uint8Array(hllRegisters);
    for (const [i, v] of sets) r[i] = v;
    return r;
  }),
);

describe("HyperLogLog wasm against the TypeScript reference", () => {
  test("patterns: register index and run length of arbitrary element bytes", () => {
    fc.assert(
      fc.property(batch, fc.integer({ min: 0, max: 3 }), (items, from) => {
        expect(Array.from(hllPatterns(items, from))).toEqual(Array.from(hllPatternsReference(items, from)));
      }),
      { numRuns: 300 },
    );
  });

  test("patterns: the registers and run lengths redis-server's PFDEBUG DECODE shows", () => {
    // PFADD k <element> on redis-server 7.0, then PFDEBUG DECODE k: "Z:<index> v:<run>,1 Z:...".
    const fromRedis: [string, number, number][] = [
      ["a", 12711, 2],
      ["hello", 9216, 1],
      ["foobar", 1910, 4],
      ["", 5938, 2],
    ];
    for (const [item, index, run] of fromRedis) {
      expect(hllPatterns([item], 0)[0]).toBe(index | (run << 16));
      expect(hllPatternReference(item)).toBe(index | (run << 16));
    }
    const runs = hllPatterns(
      Array.from({ length: 5000 }, (_, i) => `e${i}`),
      0,
    ).map((p) => p >>> 16);
    expect(Math.min(...runs)).toBe(1);
    expect(Math.max(...runs)).toBeLessThanOrEqual(51);
  });

  test("denseAdd: hashes and raises registers in place like one-at-a-time updates", () => {
    fc.assert(
      fc.property(registers, batch, (regs, items) => {
        const ours = regs.slice();
        const reference = regs.slice();
        expect(hllDenseAdd(ours, items, 0)).toBe(hllDenseAddReference(reference, items, 0));
        expect(ours).toEqual(reference);
      }),
      { numRuns: 200 },
    );
  });

  test("denseSetPatterns: applies the patterns from an offset", () => {
    fc.assert(
      fc.property(
        registers,
        fc.array(fc.tuple(fc.integer({ min: 0, max: hllRegisters - 1 }), fc.integer({ min: 1, max: 51 })), { maxLength: 3 * hllInPlaceItemsMax }),
        fc.nat(10),
        (regs, pairs, from) => {
          const patterns = Uint32Array.from(pairs, ([i, run]) => i | (run << 16));
          const ours = regs.slice();
          const reference = regs.slice();
          expect(hllDenseSetPatterns(ours, patterns, from)).toBe(hllDenseSetPatternsReference(reference, patterns, from));
          expect(ours).toEqual(reference);
        },
      ),
      { numRuns: 200 },
    );
  });

  test("histograms of dense and raw registers", () => {
    fc.assert(
      fc.property(registers, raw, (regs, r) => {
        expect(hllDenseHistogram(regs)).toEqual(hllDenseHistogramReference(regs));
        expect(hllRawHistogram(r)).toEqual(hllRawHistogramReference(r));
      }),
      { numRuns: 100 },
    );
  });

  test("unions: max into a raw array, and raising dense registers to one", () => {
    fc.assert(
      fc.property(registers, raw, (regs, r) => {
        const oursRaw = r.slice();
        const referenceRaw = r.slice();
        hllDenseMaxInto(oursRaw, regs);
        hllDenseMaxIntoReference(referenceRaw, regs);
        expect(oursRaw).toEqual(referenceRaw);
        const ours = regs.slice();
        const reference = regs.slice();
        expect(hllDenseRaiseTo(ours, r)).toBe(hllDenseRaiseToReference(reference, r));
        expect(ours).toEqual(reference);
      }),
      { numRuns: 100 },
    );
  });

  test("the last register (bits 98298..98303) is read and written without touching anything else", () => {
    const regs = new Uint8Array(hllDenseRegisterBytes);
    hllDenseRaiseTo(
      regs,
      Uint8Array.from({ length: hllRegisters }, (_, i) => (i === hllRegisters - 1 ? 63 : 0)),
    );
    expect(getDenseRegister(regs, hllRegisters - 1)).toBe(63);
    expect(regs[regs.length - 1]).toBe(0xfc);
    expect(hllDenseHistogram(regs)[63]).toBe(1);
  });

  test("a batch larger than one wasm call's limit is split and gives the same result", () => {
    const big = "y".repeat(hllBatchBytesMax / 4);
    const items = [...Array.from({ length: 9 }, (_, i) => `${i}${big}`), "huge".repeat(hllBatchBytesMax / 2), "z"];
    expect(Array.from(hllPatterns(items, 0))).toEqual(items.map(hllPatternReference));
    const ours = new Uint8Array(hllDenseRegisterBytes);
    const reference = new Uint8Array(hllDenseRegisterBytes);
    expect(hllDenseAdd(ours, items, 1)).toBe(hllDenseAddReference(reference, items, 1));
    expect(ours).toEqual(reference);
  });
});
