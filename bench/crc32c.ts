// CRC32C: the native addon (SSE4.2, one call per buffer) against the TypeScript table reference.
import { crc32c, crc32cReference } from "../src/native/crc32c.ts";
import { compare, printTable } from "./lib/compare.ts";

const sizes = [64, 1024, 64 * 1024, 1024 * 1024];
const cases = sizes.map((size) => {
  const data = crypto.getRandomValues(new Uint8Array(size));
  return { name: `${size} B`, ours: () => crc32c(data), reference: () => crc32cReference(data), bytesPerOp: size };
});
printTable("crc32c: native vs TypeScript", "native", "TS", await compare(cases));
