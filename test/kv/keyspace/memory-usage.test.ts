// MEMORY USAGE (src/kv/keyspace/memory-usage.ts) against what building a value really costs: the growth of
// the JavaScript heap after a full collection, in this process. The estimate is made from each
// form's layout (memory-sizes.ts), so it must track the heap — within [0.7, 1.4] for one large
// value of each type and form, and in sum over many small ones — and respond to SAMPLES. Its
// argument handling against redis-server is in the differential tests (support/commands.ts).
import { describe, expect, test } from "bun:test";
import { heapSize } from "bun:jsc";
import { harness } from "../harness.ts";

/** A flat one-byte string, as the RESP parser makes them (a template literal makes a rope). */
const flat = (s: string) => Buffer.from(s, "latin1").toString("latin1");
const heapAfterCollection = () => {
  Bun.gc(true);
  Bun.gc(true);
  return heapSize();
};
const range = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => flat(f(i)));
/** 200 commands of 1,000 items: a large collection. */
const batches = (each: (batch: number) => string[]) => Array.from({ length: 200 }, (_, b) => each(b));

const h = harness();

function heapGrowth(build: () => void): number {
  const before = heapAfterCollection();
  build();
  return heapAfterCollection() - before;
}

describe("MEMORY USAGE tracks the heap", () => {
  const large: [string, () => string[][]][] = [
    ["a 1 MB string", () => [["SET", "k", flat("x".repeat(1_000_000))]]],
    ["a 1 MB bitmap", () => [["SETBIT", "k", "8000000", "1"]]],
    ["a list of 200k (a deque)", () => batches((b) => ["RPUSH", "k", ...range(1000, (i) => `item:${b * 1000 + i}`)])],
    ["a set of 200k (a table)", () => batches((b) => ["SADD", "k", ...range(1000, (i) => `member:${b * 1000 + i}`)])],
    ["a hash of 200k (a table)", () => batches((b) => ["HSET", "k", ...range(2000, (i) => (i % 2 === 0 ? `f:${b * 1000 + i}` : `value:${i}`))])],
    [
      "a hash of 200k with 100-byte values (held beside the table)",
      () => batches((b) => ["HSET", "k", ...range(2000, (i) => (i % 2 === 0 ? `f:${b * 1000 + i}` : "v".repeat(100) + i))]),
    ],
    [
      "a sorted set of 200k (a tree and an index)",
      () => batches((b) => ["ZADD", "k", ...range(2000, (i) => (i % 2 === 0 ? String((b * 1000 + i) / 7) : `member:${b * 1000 + i}`))]),
    ],
    ["a Bloom filter for 1M items", () => [["BF.RESERVE", "k", "0.001", "1000000"]]],
  ];
  /**
   * Measurements per value, judged by their median: JSC scans the stack conservatively, so a value
   * freed before a measurement can now and then outlive the first collection and be reclaimed
   * inside the next one, which takes up to its size off one measurement's growth.
   */
  const trials = 3;
  for (const [name, commands] of large) {
    test(name, () => {
      const ratios: number[] = [];
      for (let trial = 0; trial < trials; trial++) {
        h.run("FLUSHALL");
        // The arguments are made inside: the value holds some of their strings.
        const grown = heapGrowth(() => {
          for (const argv of commands()) h.run(...argv);
        });
        const estimate = h.run("MEMORY", "USAGE", "k", "SAMPLES", "0") as number;
        ratios.push(estimate / grown);
      }
      const median = ratios.sort((a, b) => a - b)[Math.floor(trials / 2)]!;
      expect(median).toBeGreaterThan(0.7);
      expect(median).toBeLessThan(1.4);
    });
  }

  const small: [string, (i: number) => string[]][] = [
    ["hashes of ten fields (packed)", (i) => ["HSET", `h:${i}`, ...range(20, (j) => `f${j >> 1}`)]],
    ["lists of ten items (packed)", (i) => ["RPUSH", `l:${i}`, ...range(10, (j) => `item${j}`)]],
    ["sorted sets of ten (packed)", (i) => ["ZADD", `z:${i}`, ...range(20, (j) => (j % 2 === 0 ? String(j) : `m${j}`))]],
    ["sets of ten (packed)", (i) => ["SADD", `s:${i}`, ...range(10, (j) => `m${j}`)]],
    ["100-byte strings", (i) => ["SET", `t:${i}`, flat("z".repeat(100) + i)]],
  ];
  for (const [name, command] of small) {
    test(`in sum over 50k ${name}`, () => {
      h.run("FLUSHALL");
      const grown = heapGrowth(() => {
        for (let i = 0; i < 50_000; i++) h.run(...command(i));
      });
      let estimate = 0;
      for (let i = 0; i < 50_000; i++) estimate += h.run("MEMORY", "USAGE", command(i)[1]!) as number;
      expect(estimate / grown).toBeGreaterThan(0.7);
      expect(estimate / grown).toBeLessThan(1.4);
    });
  }
});

describe("MEMORY USAGE's answers", () => {
  test("a missing key is nil; a key whose time passed but is still there is counted, not deleted (as Redis 7.0)", () => {
    h.run("FLUSHALL");
    expect(h.run("MEMORY", "USAGE", "nope")).toBeNull();
    h.run("SET", "old", "v", "PX", "10");
    h.clock.advance(20);
    expect(h.run("MEMORY", "USAGE", "old")).toBeGreaterThan(0);
    expect(h.run("DBSIZE")).toBe(1);
  });

  test("more bytes in the value, more bytes reported; a time to live adds nothing (it is in the key's entry; Redis does not count it either)", () => {
    h.run("FLUSHALL");
    h.run("SET", "short", "v");
    h.run("SET", "long", "v".repeat(1000));
    expect(h.run("MEMORY", "USAGE", "long") as number).toBeGreaterThan((h.run("MEMORY", "USAGE", "short") as number) + 900);
    const before = h.run("MEMORY", "USAGE", "short") as number;
    h.run("EXPIRE", "short", "100");
    expect(h.run("MEMORY", "USAGE", "short") as number).toBe(before);
  });

  test("SAMPLES sizes a large collection's elements from that many of them; 0 reads them all", () => {
    h.run("FLUSHALL");
    // The first members are short and the rest long: five samples see only short ones.
    h.run("RPUSH", "l", ...range(5, (i) => `s${i}`), ...range(1000, (i) => "long".repeat(50) + i));
    const sampled = h.run("MEMORY", "USAGE", "l") as number;
    const all = h.run("MEMORY", "USAGE", "l", "SAMPLES", "0") as number;
    expect(all).toBeGreaterThan(sampled * 3);
    expect(h.run("MEMORY", "USAGE", "l", "SAMPLES", "1005")).toBe(all);
  });

  test("SAMPLES must be a long long (else not an integer), at least 0 (else a syntax error); any other word is a syntax error", () => {
    h.run("SET", "k", "v");
    expect(h.run("MEMORY", "USAGE", "k", "SAMPLES", "abc")).toEqual({ error: "ERR value is not an integer or out of range" });
    expect(h.run("MEMORY", "USAGE", "k", "SAMPLES", "9223372036854775808")).toEqual({ error: "ERR value is not an integer or out of range" });
    expect(h.run("MEMORY", "USAGE", "k", "SAMPLES", "-1")).toEqual({ error: "ERR syntax error" });
    expect(h.run("MEMORY", "USAGE", "k", "SAMPLES")).toEqual({ error: "ERR syntax error" });
    expect(h.run("MEMORY", "USAGE", "k", "nope")).toEqual({ error: "ERR syntax error" });
    expect(h.run("MEMORY", "USAGE", "missing", "SAMPLES", "abc")).toEqual({ error: "ERR value is not an integer or out of range" });
    expect(h.run("MEMORY", "USAGE", "k", "SAMPLES", "9223372036854775807")).toBeGreaterThan(0);
  });
});
