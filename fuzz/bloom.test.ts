// Bloom filter positions and chains: the wasm position table equals its BigInt definition for
// arbitrary items and sub-filter shapes (bit counts up to 2^32, so the carried remainders and the
// 2^64 wrap are exercised), one batch equals item-by-item work, and a chain never forgets an
// item — however its batches are cut or its sub-filters added halfway through a command.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { BloomChain } from "../src/kv/types/bloom/chain.ts";
import { bloomPositions, bloomPositionsReference, type FilterShape } from "../src/wasm/bloom.ts";

/** Latin1 byte strings, the engine's representation of Redis strings. */
const byteString = (maxLength: number) => fc.uint8Array({ maxLength }).map((bytes) => Buffer.from(bytes).toString("latin1"));

const shape = fc.record({
  bitCount: fc.oneof(fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 2 ** 32 }), fc.constantFrom(2 ** 32, 2 ** 32 - 1, 64, 1)),
  hashes: fc.integer({ min: 1, max: 40 }),
});

describe("bloomPositions", () => {
  test("wasm equals the BigInt reference for arbitrary items and sub-filters", () => {
    fc.assert(
      fc.property(fc.array(byteString(100), { minLength: 1, maxLength: 30 }), fc.array(shape, { minLength: 1, maxLength: 4 }), (items, filters) => {
        const ours = Array.from(bloomPositions(items, 0, items.length, filters));
        expect(ours).toEqual(Array.from(bloomPositionsReference(items, 0, items.length, filters)));
      }),
      { numRuns: 300 },
    );
  });

  test("a sub-range of a batch equals that range on its own", () => {
    fc.assert(
      fc.property(fc.array(byteString(40), { minLength: 2, maxLength: 50 }), shape, (items, filter) => {
        const from = Math.floor(items.length / 3);
        const ours = Array.from(bloomPositions(items, from, items.length, [filter]));
        expect(ours).toEqual(Array.from(bloomPositions(items.slice(from), 0, items.length - from, [filter])));
      }),
      { numRuns: 200 },
    );
  });

  test("a long item, beyond the initial linear memory, hashes as the reference does", () => {
    const big = Buffer.alloc(300_000, 7).toString("latin1");
    const filters: FilterShape[] = [{ bitCount: 958_528, hashes: 7 }];
    expect(Array.from(bloomPositions([big, "x"], 0, 2, filters))).toEqual(Array.from(bloomPositionsReference([big, "x"], 0, 2, filters)));
  });
});

describe("BloomChain", () => {
  const chainParams = fc.record({
    capacity: fc.integer({ min: 1, max: 50 }).map(BigInt),
    errorRate: fc.constantFrom(0.5, 0.1, 0.01, 1e-6),
    expansion: fc.integer({ min: 1, max: 4 }),
    scaling: fc.boolean(),
  });
  const create = (p: { capacity: bigint; errorRate: number; expansion: number; scaling: boolean }) =>
    BloomChain.create(p.capacity, p.errorRate, p.expansion, p.scaling)!;

  test("one batch gives the same outcomes, counts and bits as one item at a time", () => {
    fc.assert(
      fc.property(chainParams, fc.array(byteString(12), { maxLength: 150 }), (params, items) => {
        const batched = create(params);
        const single = create(params);
        const outcomes = batched.addAll(items);
        const oneByOne: number[] = [];
        for (const item of items) {
          const [outcome] = single.addAll([item]);
          oneByOne.push(outcome!);
          if (outcome === 2) break;
        }
        expect(outcomes).toEqual(oneByOne as typeof outcomes);
        expect(batched.size).toBe(single.size);
        expect(batched.filters.map((f) => Buffer.from(f.bits).toString("hex"))).toEqual(single.filters.map((f) => Buffer.from(f.bits).toString("hex")));
      }),
      { numRuns: 200 },
    );
  });

  test("every item added is found afterwards (no false negatives)", () => {
    fc.assert(
      fc.property(chainParams, fc.array(byteString(12), { maxLength: 200 }), (params, items) => {
        const chain = create(params);
        const outcomes = chain.addAll(items);
        const handled = items.slice(0, outcomes.length).filter((_, i) => outcomes[i] !== 2);
        expect(Array.from(chain.hasAll(handled))).toEqual(handled.map(() => 1));
        expect(chain.size).toBe(outcomes.filter((o) => o === 1).length);
      }),
      { numRuns: 200 },
    );
  });

  test("batches cut by the position limit (about a thousand hashes per item) lose nothing", () => {
    // An error rate of 1e-300 (5e-301 for the first sub-filter) needs 998 hashes per item, and a
    // call computes at most 2^20 positions, so 2,000 items span two wasm calls.
    const chain = BloomChain.create(3000n, 1e-300, 2, true)!;
    const items = Array.from({ length: 2000 }, (_, i) => `item-${i}`);
    expect(chain.filters[0]!.hashes).toBe(998);
    expect(chain.addAll(items).every((o) => o === 1)).toBe(true);
    expect(Array.from(chain.hasAll(items)).every((f) => f === 1)).toBe(true);
    expect(Array.from(chain.hasAll(items.map((i) => `absent-${i}`))).every((f) => f === 0)).toBe(true);
  });
});
