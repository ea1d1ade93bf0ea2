// Proves the suite exercises the compiled AssemblyScript module, not a TypeScript stand-in.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadWasm, wasmDistDir } from "../../src/wasm/module.ts";
import { murmur64a } from "../../src/wasm/murmur64a.ts";

describe("wasm modules", () => {
  test("murmur64a.wasm is built by the bootstrap and exports the hash functions", () => {
    expect(existsSync(join(wasmDistDir, "murmur64a.wasm"))).toBe(true);
    expect(readFileSync(join(wasmDistDir, ".inputs-hash"), "utf8").trim()).toMatch(/^[0-9a-f]{16}$/);
    const exports = loadWasm("murmur64a").exports;
    expect(Object.keys(exports).sort()).toEqual(["hash", "hashBatch", "inputOffset", "memory"]);
    expect(Function.prototype.toString.call(exports.hash)).toContain("[native code]");
  });

  test("the public murmur64a computes the published MurmurHash64A of its input", () => {
    // "zhenhao" with seed 0x1234 → 0xe232aca990972561, a vector published by an unrelated library.
    expect(murmur64a(new TextEncoder().encode("zhenhao"), 0x1234n)).toBe(0xe232aca990972561n);
  });

  test("a missing module is reported with the command that builds it", () => {
    expect(() => loadWasm("no-such-module")).toThrow(/run \.\/svc once/);
  });
});
