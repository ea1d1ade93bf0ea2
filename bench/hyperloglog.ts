// HyperLogLog register work: the wasm module (wasm/hll.ts) against its plain-TypeScript reference
// (src/wasm/hll.ts), on what PFADD, PFCOUNT and PFMERGE/multi-key PFCOUNT do per command.
// The references hash with the BigInt MurmurHash64A, so the hashing cases measure that too.
import {
  hllDenseAdd,
  hllDenseAddReference,
  hllDenseHistogram,
  hllDenseHistogramReference,
  hllDenseMaxInto,
  hllDenseMaxIntoReference,
  hllDenseRegisterBytes,
  hllPatterns,
  hllPatternsReference,
  hllRegisters,
} from "../src/wasm/hll.ts";
import { compare, printTable } from "./lib/compare.ts";

const element = (i: number) => `element:${String(i).padStart(8, "0")}`; // 16 bytes
const batch = Array.from({ length: 1000 }, (_, i) => element(i));
const one = [element(7)];

/** Dense registers holding what ~50k distinct elements leave behind. */
const registers = new Uint8Array(hllDenseRegisterBytes);
hllDenseAdd(
  registers,
  Array.from({ length: 50_000 }, (_, i) => `seed:${i}`),
  0,
);
const oursRegisters = registers.slice();
const referenceRegisters = registers.slice();
const raw = new Uint8Array(hllRegisters);

const rows = await compare([
  {
    name: "PFADD 1 element, dense (hashed in wasm, raised in place)",
    ours: () => hllDenseAdd(oursRegisters, one, 0),
    reference: () => hllDenseAddReference(referenceRegisters, one, 0),
  },
  {
    name: "PFADD 1000 × 16 B, dense (one wasm call, 12 KB copied in and out)",
    ours: () => hllDenseAdd(oursRegisters, batch, 0),
    reference: () => hllDenseAddReference(referenceRegisters, batch, 0),
    bytesPerOp: 16_000,
  },
  { name: "patterns of 1000 × 16 B (sparse PFADD)", ours: () => hllPatterns(batch, 0), reference: () => hllPatternsReference(batch, 0), bytesPerOp: 16_000 },
  { name: "register histogram (PFCOUNT, dense)", ours: () => hllDenseHistogram(registers), reference: () => hllDenseHistogramReference(registers) },
  {
    name: "union into raw registers (PFMERGE, multi-key PFCOUNT)",
    ours: () => hllDenseMaxInto(raw, registers),
    reference: () => hllDenseMaxIntoReference(raw, registers),
  },
]);
printTable("HyperLogLog: wasm vs TypeScript reference", "wasm", "TS", rows);
