// The key hash that places records must never change once data exists: these pin it to the
// published XXH64 (seed 0) test vectors and to fixed partitions for fixed keys.
import { describe, expect, test } from "bun:test";
import { partitionForKey } from "../../src/broker/produce/partitioner.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

describe("partitionForKey", () => {
  test("is XXH64 with seed 0: the reference vectors for '' and 'a'", () => {
    expect(Bun.hash.xxHash64(new Uint8Array(0))).toBe(0xef46db3751d8e999n);
    expect(Bun.hash.xxHash64(utf8("a"))).toBe(0xd24ec4f1a98c6e5bn);
  });

  test("is the hash modulo the partition count, for every count", () => {
    for (const partitions of [1, 2, 3, 7, 10_000]) {
      expect(partitionForKey(utf8("a"), partitions)).toBe(Number(0xd24ec4f1a98c6e5bn % BigInt(partitions)));
    }
  });

  test("puts fixed keys on fixed partitions (a change here would split existing keys)", () => {
    expect(["user-1", "user-2", "order-42", ""].map((k) => partitionForKey(utf8(k), 12))).toEqual(
      ["user-1", "user-2", "order-42", ""].map((k) => Number(Bun.hash.xxHash64(utf8(k)) % 12n)),
    );
    expect(partitionForKey(utf8(""), 10)).toBe(Number(0xef46db3751d8e999n % 10n));
  });
});
