// Proves the suite exercises the compiled napi-rs addon, not a TypeScript stand-in.
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { nativeAddon, nativeAddonPath } from "../../src/native/addon.ts";
import { appendChunks } from "../../src/native/append.ts";
import { crc32c } from "../../src/native/crc32c.ts";

describe("native addon", () => {
  test("is the svc_native.node the bootstrap built from the current native/ sources", () => {
    expect(existsSync(nativeAddonPath)).toBe(true);
    const stamp = join(nativeAddonPath, "../.inputs-hash");
    expect(readFileSync(stamp, "utf8").trim()).toMatch(/^[0-9a-f]{16}$/);
  });

  test("exports native functions, and the public wrappers call them", () => {
    for (const fn of [nativeAddon.crc32c, nativeAddon.appendChunks]) {
      expect(Function.prototype.toString.call(fn)).toContain("[native code]");
    }
  });

  test("the public crc32c and appendChunks call into the addon", async () => {
    const calls: string[] = [];
    const original = { ...nativeAddon };
    const addon = nativeAddon as { -readonly [K in keyof typeof nativeAddon]: (typeof nativeAddon)[K] };
    addon.crc32c = (...args) => (calls.push("crc32c"), original.crc32c(...args));
    addon.appendChunks = (...args) => (calls.push("appendChunks"), original.appendChunks(...args));
    try {
      expect(crc32c(new TextEncoder().encode("123456789"))).toBe(0xe3069283);
      // A read-only descriptor: the append must reach the addon and fail there.
      const fd = openSync(nativeAddonPath, "r");
      try {
        await expect(appendChunks(fd, [new Uint8Array(1)], false)).rejects.toThrow(/segment append failed/);
      } finally {
        closeSync(fd);
      }
    } finally {
      Object.assign(addon, original);
    }
    expect(calls).toEqual(["crc32c", "appendChunks"]);
  });

  test("is the module Bun loaded for this process", () => {
    expect(Object.keys(require.cache)).toContain(nativeAddonPath);
  });
});
