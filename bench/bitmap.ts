// Bitmap kernels: the wasm module (copying into linear memory included) against the TypeScript
// word loops, per size. The size thresholds in src/kv/types/bitmap/kernels.ts come from these rows;
// the last table checks the thresholds from both sides.
import { combine, findOther, findOtherTs, invert, popcount, popcountTs } from "../src/kv/types/bitmap/kernels.ts";
import { combineWasm, findOtherWasm, invertWasm, popcountWasm } from "../src/wasm/bitops.ts";
import { type Case, compare, printTable } from "./lib/compare.ts";

const random = (bytes: number) => {
  const data = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += 65536) crypto.getRandomValues(data.subarray(at, at + 65536));
  return data;
};
const label = (bytes: number) => (bytes >= 1 << 20 ? `${bytes >> 20} MiB` : bytes >= 1024 ? `${bytes >> 10} KiB` : `${bytes} B`);

const sizes = [64, 512, 4096, 64 * 1024, 1 << 20, 16 << 20];
const popcountCases: Case[] = sizes.map((bytes) => {
  const data = random(bytes);
  return { name: `popcount ${label(bytes)}`, ours: () => popcountWasm(data), reference: () => popcountTs(data), bytesPerOp: bytes };
});

const combineCases: Case[] = [512, 4096, 64 * 1024, 1 << 20].map((bytes) => {
  const dst = random(bytes);
  const src = random(bytes);
  return { name: `xor ${label(bytes)}`, ours: () => combineWasm("xor", dst, src), reference: () => combine("xor", dst, src), bytesPerOp: bytes };
});
const invertCases: Case[] = [512, 4096, 1 << 20].map((bytes) => {
  const dst = random(bytes);
  return { name: `not ${label(bytes)}`, ours: () => invertWasm(dst), reference: () => invert(dst), bytesPerOp: bytes };
});

// BITPOS over zeros: the worst case, where the first set bit is the last one.
const findCases: Case[] = [4096, 64 * 1024, 1 << 20].map((bytes) => {
  const data = new Uint8Array(bytes);
  data[bytes - 1] = 1;
  return { name: `find first set byte, ${label(bytes)}`, ours: () => findOtherWasm(data, 0), reference: () => findOtherTs(data, 0), bytesPerOp: bytes };
});

printTable("bitmap kernels: wasm vs TypeScript", "wasm", "TS", await compare([...popcountCases, ...combineCases, ...invertCases, ...findCases]));

const dispatchCases: Case[] = [64, 128, 256].map((bytes) => {
  const data = random(bytes);
  return { name: `popcount ${label(bytes)}`, ours: () => popcount(data), reference: () => popcountTs(data), bytesPerOp: bytes };
});
// BITPOS as it runs: in TypeScript, or from 16 KiB its first 4 KiB in TypeScript and the rest in wasm.
for (const bytes of [256, 4096, 16 * 1024, 64 * 1024, 1 << 20]) {
  const data = new Uint8Array(bytes);
  data[bytes - 1] = 1;
  dispatchCases.push({ name: `find ${label(bytes)}`, ours: () => findOther(data, 0), reference: () => findOtherTs(data, 0), bytesPerOp: bytes });
}
printTable("popcount (wasm from 128 B) and find (wasm from 16 KiB) as the commands call them vs TypeScript only", "chosen", "TS", await compare(dispatchCases));
