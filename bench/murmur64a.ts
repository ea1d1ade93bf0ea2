// MurmurHash64A: the AssemblyScript module against the BigInt reference, per item and per batch.
import { hllHashSeed, murmur64a, murmur64aMany, murmur64aReference } from "../src/wasm/murmur64a.ts";
import { compare, printTable } from "./lib/compare.ts";

const item = (bytes: number) => crypto.getRandomValues(new Uint8Array(bytes));
const short = item(16);
const long = item(1024);
const batch = Array.from({ length: 1000 }, () => item(16));

const rows = await compare([
  { name: "one 16 B item", ours: () => murmur64a(short, hllHashSeed), reference: () => murmur64aReference(short, hllHashSeed) },
  { name: "one 1 KiB item", ours: () => murmur64a(long, hllHashSeed), reference: () => murmur64aReference(long, hllHashSeed), bytesPerOp: 1024 },
  {
    name: "batch of 1000 × 16 B",
    ours: () => murmur64aMany(batch, hllHashSeed),
    reference: () => batch.map((b) => murmur64aReference(b, hllHashSeed)),
  },
]);
printTable("murmur64a: wasm vs TypeScript (BigInt)", "wasm", "TS", rows);
