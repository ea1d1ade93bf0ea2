// Bloom filters: the wasm position table against its BigInt reference, and whole BF.MADD /
// BF.MEXISTS batches through a chain (wasm positions + bit tests in TypeScript) against the same
// batches computed with the reference. The "positions only" rows bound what moving the bit tests
// into wasm (filters resident in linear memory) could save: the difference between a chain
// batch and its positions alone is all the TypeScript side costs.
import { BloomChain } from "../src/kv/types/bloom/chain.ts";
import { BloomFilter, sizeFilter } from "../src/kv/types/bloom/filter.ts";
import { bloomPositions, bloomPositionsReference, type FilterShape } from "../src/wasm/bloom.ts";
import { compare, printTable } from "./lib/compare.ts";

const item = (i: number) => `user:${i}:${(i * 2654435761) >>> 0}`;
const batch = (size: number, offset = 0) => Array.from({ length: size }, (_, i) => item(offset + i));

const sizing = sizeFilter(100_000n, 0.005)!;
const oneFilter: FilterShape[] = [sizing];
const items1000 = batch(1000);
const probes1000 = batch(1000, 1_000_000);

/** A chain with 10k items, for the membership rows. */
const filled = BloomChain.create(100_000n, 0.01, 2, true)!;
filled.addAll(batch(10_000));

/** The same add and test a chain does, driven by reference positions (one sub-filter). */
function referenceAdd(filter: BloomFilter, items: readonly string[]): number {
  const positions = bloomPositionsReference(items, 0, items.length, [filter.sizing]);
  let added = 0;
  for (let i = 0; i < items.length; i++) {
    const at = i * filter.hashes;
    if (filter.has(positions, at)) continue;
    filter.set(positions, at);
    added++;
  }
  return added;
}

const rows = await compare([
  { name: "positions, 1 item", ours: () => bloomPositions(items1000, 0, 1, oneFilter), reference: () => bloomPositionsReference(items1000, 0, 1, oneFilter) },
  {
    name: "positions, 1000 items",
    ours: () => bloomPositions(items1000, 0, 1000, oneFilter),
    reference: () => bloomPositionsReference(items1000, 0, 1000, oneFilter),
  },
  {
    name: "MADD 1000 items into a fresh chain",
    ours: () => BloomChain.create(100_000n, 0.01, 2, true)!.addAll(items1000),
    reference: () => referenceAdd(new BloomFilter(sizing), items1000),
  },
  {
    name: "MEXISTS 1000 absent items (10k-item chain)",
    ours: () => filled.hasAll(probes1000),
    reference: () =>
      bloomPositionsReference(
        probes1000,
        0,
        1000,
        filled.filters.map((f) => f.sizing),
      ),
  },
  {
    name: "MEXISTS 1000 items vs its positions only",
    ours: () => filled.hasAll(probes1000),
    reference: () =>
      bloomPositions(
        probes1000,
        0,
        1000,
        filled.filters.map((f) => f.sizing),
      ),
  },
]);
printTable("Bloom filter: wasm positions vs TypeScript (BigInt) reference", "wasm", "reference", rows);
