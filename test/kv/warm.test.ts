// Warming a pipelined batch (src/kv/warm.ts) only reads: whatever the batch holds — commands
// with no arguments, keys that are missing, strings, lists, small and large sets and hashes,
// arguments that are not members — the data and every reply stay as they were.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { warmBatch } from "../../src/kv/warm.ts";
import { harness, type Harness } from "./harness.ts";

/** Keys of every kind, large collections past the 128 members a small one holds. */
function filled(): Harness {
  const h = harness(1);
  h.run("SET", "str", "v");
  h.run("SET", "long", "x".repeat(100));
  h.run("RPUSH", "list", "a", "b");
  h.run("SADD", "small-set", "m1", "m2");
  h.run("HSET", "small-hash", "f1", "1");
  for (let i = 0; i < 300; i++) {
    h.run("SADD", "big-set", `m${i}`);
    h.run("HSET", "big-hash", `f${i}`, String(i));
  }
  return h;
}

const word = fc.oneof(
  fc.constantFrom("str", "long", "list", "small-set", "small-hash", "big-set", "big-hash", "missing"),
  fc.integer({ min: 0, max: 400 }).map((i) => `m${i}`),
  fc.integer({ min: 0, max: 400 }).map((i) => `f${i}`),
  fc.string({ maxLength: 3 }),
);
const batch = fc.array(fc.array(word, { maxLength: 4 }), { maxLength: 300 });

/** What a client can see of the data. */
const contents = (h: Harness) => [
  h.run("DBSIZE"), h.run("GET", "str"), h.run("GET", "long"), h.run("LRANGE", "list", 0, -1),
  (h.run("SMEMBERS", "small-set") as string[]).sort(), (h.run("SMEMBERS", "big-set") as string[]).sort(),
  h.run("HGETALL", "small-hash"), (h.run("HGETALL", "big-hash") as string[]).join(","),
  h.run("OBJECT", "ENCODING", "big-set"), h.run("OBJECT", "ENCODING", "big-hash"),
];

test("warming any batch changes nothing a client can see", () => {
  const h = filled();
  const before = contents(h);
  fc.assert(
    fc.property(batch, (commands) => {
      warmBatch(h.engine.dbs[0]!, commands);
      expect(contents(h)).toEqual(before);
    }),
    { numRuns: 100 },
  );
});
