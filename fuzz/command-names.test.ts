// The interned command names: whatever bytes arrive, and in whatever order names collide in the
// cache, the name returned is exactly the bytes' latin1 text.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { commandName } from "../src/kv/resp/command-names.ts";
import type { Latin1Buffer } from "../src/kv/text/write-bytes.ts";

const byteName = fc.uint8Array({ minLength: 0, maxLength: 30 });
/** Few distinct lengths and edge bytes, so names often share a cache slot. */
const collidingName = fc
  .tuple(fc.constantFrom(3, 4), fc.constantFrom(0x47, 0x67, 0x00, 0xff), fc.uint8Array({ minLength: 1, maxLength: 2 }))
  .map(([length, edge, middle]) => Uint8Array.from({ length }, (_, i) => (i === 0 || i === length - 1 ? edge : middle[i % middle.length]!)));

test("commandName returns the bytes' latin1 text, also when the name is seen again or collides in the cache", () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(byteName, collidingName), { minLength: 1, maxLength: 40 }), fc.nat(8), (names, padding) => {
      for (const name of names) {
        // Read from the middle of a larger buffer, as the parser does.
        const buffer = Buffer.alloc(padding + name.length + padding, 0x2a) as Latin1Buffer;
        buffer.set(name, padding);
        const first = commandName(buffer, padding, padding + name.length);
        expect(first).toBe(buffer.latin1Slice(padding, padding + name.length));
        const again = commandName(buffer, padding, padding + name.length);
        expect(again).toBe(first);
      }
    }),
    { numRuns: 500 },
  );
});
