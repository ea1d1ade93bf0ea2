// Strings a compiled script cuts out of a large one must not keep it alive (text/detached-slice.ts):
// a script that stores a few bytes of a large argument — string.sub, a capture, a gsub, %.5s, a
// field of cjson.decode or cmsgpack.unpack — would otherwise hold the whole argument in memory
// for as long as the stored value lives. Measured by JavaScriptCore's own count of the memory
// its strings hold (heapStats().extraMemorySize), after collection, not by the process's size.
import { heapStats } from "bun:jsc";
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { cjsonDecode } from "../../../../src/kv/scripting/compiled/lua-cjson.ts";
import { cmsgpackUnpack } from "../../../../src/kv/scripting/compiled/lua-cmsgpack.ts";
import { luaFormat, luaGsub, luaMatch, strSub } from "../../../../src/kv/scripting/compiled/lua-string-lib.ts";
import type { LuaTable } from "../../../../src/kv/scripting/compiled/lua-table.ts";
import { detachedCopy, detachedSlice, sliceSourceCharsMax } from "../../../../src/kv/text/detached-slice.ts";
import type { Latin1Buffer } from "../../../../src/kv/text/write-bytes.ts";

const sourceBytes = 4 * 1024 * 1024;
const sources = 8;

/** A flat byte string of `bytes` chars: `head`, then "a"s. */
function largeString(head: string, bytes = sourceBytes): string {
  const buffer = Buffer.alloc(bytes, 0x61) as Latin1Buffer;
  buffer.write(head, 0, "latin1");
  return buffer.latin1Slice(0, bytes);
}

/**
 * The memory JavaScriptCore's strings hold after `sources` large strings were each made by
 * `source(i)` and cut by `cut`, the cuts kept and the sources dropped.
 */
function retainedBytes(source: (i: number) => string, cut: (s: string) => unknown): number {
  Bun.gc(true);
  const before = heapStats().extraMemorySize;
  const kept: unknown[] = [];
  for (let i = 0; i < sources; i++) kept.push(cut(source(i)));
  Bun.gc(true);
  Bun.gc(true);
  const grown = heapStats().extraMemorySize - before;
  expect(kept.length).toBe(sources);
  return grown;
}

/**
 * Below this, the sources were not kept: all of them held would be sources × sourceBytes. The
 * collector scans the stack conservatively and may keep the last source or two alive.
 */
const retainedBytesMax = 3 * sourceBytes;

describe("detachedSlice and detachedCopy", () => {
  test("are the slice, for any source and range, small or large", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 3000 }), fc.nat(), fc.nat(), (s, a, b) => {
        const from = a % (s.length + 1);
        const to = from + (b % (s.length - from + 1));
        expect(detachedSlice(s, from, to)).toBe(s.slice(from, to));
        expect(detachedCopy(s.slice(from, to))).toBe(s.slice(from, to));
      }),
      { numRuns: 300 },
    );
    // Past the scratch buffer's size, a copy goes another way.
    const large = largeString("xyz", 64 * 1024);
    expect(detachedSlice(large, 1, 10_001)).toBe(large.slice(1, 10_001));
  });

  test("a short slice of a large source keeps the source alive; a detached one does not", () => {
    // The reason for all this, shown: if JavaScriptCore's slices stop sharing their source, the
    // first expectation fails and this module can go.
    expect(
      retainedBytes(
        (i) => largeString(`s${i}`),
        (s) => s.slice(1, 21),
      ),
    ).toBeGreaterThan(sources * sourceBytes * 0.75);
    expect(
      retainedBytes(
        (i) => largeString(`s${i}`),
        (s) => detachedSlice(s, 1, 21),
      ),
    ).toBeLessThan(retainedBytesMax);
  });

  test("a source at the limit (sliced) and one past it (copied) both give the slice", () => {
    const atLimit = largeString("abc", sliceSourceCharsMax);
    const pastLimit = largeString("abc", sliceSourceCharsMax + 1);
    expect(detachedSlice(atLimit, 0, 3)).toBe("abc");
    expect(detachedSlice(pastLimit, 0, 3)).toBe("abc");
  });
});

describe("compiled scripts' strings cut from a large one keep nothing else alive", () => {
  // Each cut is 8 bytes or more: JavaScriptCore copies slices of a char or two anyway.
  const key = (i: number) => `jobkey${String(i).padStart(4, "0")}`;
  const cases: [string, (i: number) => string, (s: string) => unknown][] = [
    ["string.sub", (i) => largeString(key(i)), (s) => strSub(s, 1, 10)],
    ["a capture of string.match", (i) => largeString(`${key(i)}:`), (s) => luaMatch(s, "^(%w+):")[0]],
    ["string.match's whole match", (i) => largeString(`${key(i)}:`), (s) => luaMatch(s, "^%w+")[0]],
    ["string.gsub keeping a little", (i) => largeString(`${key(i)}:`), (s) => luaGsub(s, "^(%w+):.*$", "%1")[0]],
    ["string.format %.10s", (i) => largeString(key(i)), (s) => luaFormat("%.10s", s)[0]],
    ["a field of cjson.decode", (i) => `["${key(i)}","${largeString("")}"]`, (s) => (cjsonDecode(s) as LuaTable).getInt(1)],
    ["an escaped field of cjson.decode", (i) => `["${key(i)}\\n","${largeString("")}"]`, (s) => (cjsonDecode(s) as LuaTable).getInt(1)],
    ["a 40-byte string of cmsgpack.unpack", (i) => packedPair(key(i).repeat(4)), (s) => (cmsgpackUnpack(s)[0] as LuaTable).getInt(1)],
  ];
  for (const [name, source, cut] of cases) {
    test(name, () => {
      // The cut is what Lua's would be: a few bytes.
      const piece = String(cut(source(3)));
      expect(piece.length).toBeGreaterThanOrEqual(8);
      expect(piece.length).toBeLessThan(64);
      expect(retainedBytes(source, cut)).toBeLessThan(retainedBytesMax);
    });
  }
});

/** cmsgpack of an array: `small` (str 8), then a large string (str 32). */
function packedPair(small: string): string {
  const large = largeString("");
  const header = String.fromCharCode(0x92, 0xd9, small.length);
  const largeHeader = String.fromCharCode(0xdb, (large.length >>> 24) & 0xff, (large.length >>> 16) & 0xff, (large.length >>> 8) & 0xff, large.length & 0xff);
  return header + small + largeHeader + large;
}
