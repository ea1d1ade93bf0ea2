// RecentStrings (src/kv/text/recent-strings.ts), under the command names of every request, the
// strings of every reply a compiled script reads and the strings cmsgpack.unpack reads: whatever
// it hands out must be the string latin1Slice (or slice) makes of the same bytes, however the
// slots collide, whichever source fills a slot.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { RecentStrings } from "../../../src/kv/text/recent-strings.ts";
import type { Latin1Buffer } from "../../../src/kv/text/write-bytes.ts";

const lengthMax = 8;
/** Few slots, so that different strings keep replacing each other. */
const slotCount = 4;

describe("RecentStrings", () => {
  test("hands out exactly the bytes' string, however strings collide in the slots", () => {
    // A few strings, read again and again and with one byte changed: the near misses a slot must
    // tell apart (same length, same slot, one byte different anywhere). Long ones bypass the
    // slots. Each read comes from a buffer or from a string, through one table.
    const alphabet = [0, 1, 97, 98, 255];
    const content = fc.array(fc.constantFrom(...alphabet), { maxLength: lengthMax + 2 });
    const read = fc.record({
      which: fc.nat(),
      change: fc.option(fc.tuple(fc.nat(), fc.constantFrom(...alphabet))),
      padding: fc.nat(3),
      fromText: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(content, { minLength: 1, maxLength: 4 }), fc.array(read, { maxLength: 60 }), (pool, reads) => {
        const recent = new RecentStrings(slotCount, lengthMax);
        for (const { which, change, padding, fromText } of reads) {
          const bytes = [...pool[which % pool.length]!];
          if (change !== null && bytes.length > 0) bytes[change[0] % bytes.length] = change[1];
          // The bytes sit at an offset inside a larger buffer or string, as in a read buffer.
          const buffer = Buffer.concat([Buffer.alloc(padding, 7), Buffer.from(bytes), Buffer.alloc(2, 9)]) as Latin1Buffer;
          const end = padding + bytes.length;
          const expected = buffer.latin1Slice(padding, end);
          const got = fromText ? recent.fromText(buffer.latin1Slice(0, buffer.length), padding, end) : recent.fromBytes(buffer, padding, end);
          expect(got).toBe(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  test("fromText of chars past one byte: the slice itself, not a truncated copy", () => {
    const recent = new RecentStrings(slotCount, lengthMax);
    const text = "x\u0101\u20acy";
    for (let i = 0; i < 2; i++) expect(recent.fromText(text, 0, text.length)).toBe(text);
    expect(recent.fromText(text, 1, 3)).toBe("\u0101\u20ac");
  });

  test("at the length limit, one past it, and empty: each the bytes' string, read again and again", () => {
    const recent = new RecentStrings(slotCount, lengthMax);
    const at = (text: string) => Buffer.from(`xx${text}yy`, "latin1") as Latin1Buffer;
    for (const text of ["", "a".repeat(lengthMax), "b".repeat(lengthMax + 1), "\xff".repeat(lengthMax), `${"a".repeat(lengthMax - 1)}b`]) {
      for (let i = 0; i < 3; i++) {
        expect(recent.fromBytes(at(text), 2, 2 + text.length)).toBe(text);
        expect(recent.fromText(`xx${text}yy`, 2, 2 + text.length)).toBe(text);
      }
    }
  });
});
