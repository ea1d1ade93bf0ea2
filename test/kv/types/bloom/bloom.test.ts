// Bloom filters through the engine, in process: RedisBloom's own published results reproduced
// bit for bit (which proves the sizing, the hashing and the scaling rules), the commands' replies,
// and the false-positive rate measured at capacity, for one sub-filter and for a scaled chain.
import { beforeEach, describe, expect, test } from "bun:test";
import { BloomChain } from "../../../../src/kv/types/bloom/chain.ts";
import { formatG } from "../../../../src/kv/commands/bloom.ts";
import { sizeFilter } from "../../../../src/kv/types/bloom/filter.ts";
import { type Harness, harness, type Plain } from "../../harness.ts";

let h: Harness;
const run = (...argv: (string | number)[]): Plain => h.run(...argv);
const err = (error: string) => ({ error });
const range = (n: number, prefix = "") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

beforeEach(() => {
  h = harness();
});

describe("RedisBloom's published results (its tests/flow/test_overall.py)", () => {
  test("BF.DEBUG after 100 adds to a 0.01/10 filter: four sub-filters, one false positive", () => {
    expect(run("BF.RESERVE", "bf", "0.01", "10")).toBe("OK");
    for (const item of range(100)) run("BF.ADD", "bf", item);
    expect(run("BF.DEBUG", "bf")).toEqual([
      "size:99",
      "bytes:16 bits:128 hashes:8 hashwidth:64 capacity:10 size:10 ratio:0.005",
      "bytes:32 bits:256 hashes:9 hashwidth:64 capacity:20 size:20 ratio:0.0025",
      "bytes:72 bits:576 hashes:10 hashwidth:64 capacity:40 size:40 ratio:0.00125",
      "bytes:160 bits:1280 hashes:11 hashwidth:64 capacity:80 size:29 ratio:0.000625",
    ]);
  });

  test("BF.DEBUG after 4000 adds to a 0.001/100 filter: six sub-filters, three false positives", () => {
    run("BF.RESERVE", "bf", "0.001", "100");
    expect(run("BF.MADD", "bf", ...range(4000))).toHaveLength(4000);
    expect(run("BF.DEBUG", "bf")).toEqual([
      "size:3997",
      "bytes:200 bits:1600 hashes:11 hashwidth:64 capacity:100 size:100 ratio:0.0005",
      "bytes:432 bits:3456 hashes:12 hashwidth:64 capacity:200 size:200 ratio:0.00025",
      "bytes:936 bits:7488 hashes:13 hashwidth:64 capacity:400 size:400 ratio:0.000125",
      "bytes:2016 bits:16128 hashes:14 hashwidth:64 capacity:800 size:800 ratio:6.25e-05",
      "bytes:4320 bits:34560 hashes:15 hashwidth:64 capacity:1600 size:1600 ratio:3.125e-05",
      "bytes:9216 bits:73728 hashes:16 hashwidth:64 capacity:3200 size:897 ratio:1.5625e-05",
    ]);
  });

  test("BF.INSERT with ERROR, CAPACITY and EXPANSION sizes its filter; later options are ignored", () => {
    expect(run("BF.INSERT", "f", "ERROR", "0.001", "CAPACITY", "50000", "EXPANSION", "2", "ITEMS", "foo")).toEqual([1]);
    expect(run("BF.DEBUG", "f")).toEqual(["size:1", "bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000 size:1 ratio:0.0005"]);
    expect(run("BF.INSERT", "f", "ERROR", "0.1", "ITEMS", "foo", "bar", "baz")).toEqual([0, 1, 1]);
    expect(run("BF.DEBUG", "f")).toEqual(["size:3", "bytes:98880 bits:791040 hashes:11 hashwidth:64 capacity:50000 size:3 ratio:0.0005"]);
  });

  test("100 adds to capacity-4 filters make 23, 5 and 4 sub-filters at expansion 1, 2 and 4", () => {
    for (const [expansion, filters] of [
      [1, 23],
      [2, 5],
      [4, 4],
    ] as const) {
      run("BF.RESERVE", `exp${expansion}`, "0.01", "4", "EXPANSION", expansion);
      run("BF.MADD", `exp${expansion}`, ...range(100));
      expect(run("BF.MEXISTS", `exp${expansion}`, ...range(100))).toEqual(range(100).map(() => 1));
      expect((run("BF.INFO", `exp${expansion}`) as Plain[])[5]).toBe(filters);
    }
  });

  test("BF.INFO of a 0.001/100 filter, whole and field by field", () => {
    run("BF.RESERVE", "bf", "0.001", "100");
    expect(run("BF.INFO", "bf")).toEqual(["Capacity", 100, "Size", 296, "Number of filters", 1, "Number of items inserted", 0, "Expansion rate", 2]);
    expect(run("BF.INFO", "bf", "capacity")).toEqual([100]);
    expect(run("BF.INFO", "bf", "SIZE")).toEqual([296]);
    expect(run("BF.INFO", "bf", "Filters")).toEqual([1]);
    expect(run("BF.INFO", "bf", "items")).toEqual([0]);
    expect(run("BF.INFO", "bf", "expansion")).toEqual([2]);
  });

  test("a full NONSCALING filter refuses the rest of an insert; BF.INFO shows no expansion rate", () => {
    expect(run("BF.INSERT", "ns", "CAPACITY", "3", "NONSCALING", "ITEMS", "a", "b", "c")).toEqual([1, 1, 1]);
    expect(run("BF.INSERT", "ns", "ITEMS", "a", "b", "c", "d", "d")).toEqual([0, 0, 0, err("ERR non scaling filter is full")]);
    expect(run("BF.INFO", "ns")).toEqual(["Capacity", 3, "Size", 104, "Number of filters", 1, "Number of items inserted", 3, "Expansion rate", null]);
  });

  test("300M items at 1e-6 size as RedisBloom's 1,132,420,232 bytes, which is over our 512 MiB limit", () => {
    const sizing = sizeFilter(300_000_000n, 0.000001 * 0.5, Infinity)!;
    expect(32 + 64 + sizing.bytes).toBe(1132420232);
    expect(run("BF.RESERVE", "bf", "0.000001", "300000000")).toEqual(err("ERR could not create filter"));
    expect(run("EXISTS", "bf")).toBe(0);
  });

  test("a NONSCALING filter is smaller than a scaling one: its one sub-filter gets the whole error rate", () => {
    run("BF.RESERVE", "ns", "0.001", "1000", "NONSCALING");
    run("BF.RESERVE", "s", "0.001", "1000");
    expect((run("BF.INFO", "ns") as number[])[3]!).toBeLessThan((run("BF.INFO", "s") as number[])[3]!);
  });
});

describe("sizing limits", () => {
  test("capacity 1 still gets a whole 64-bit word; an error rate next to 1 gets one hash", () => {
    expect(sizeFilter(1n, 0.01)).toMatchObject({ bytes: 8, bitCount: 64, hashes: 7 });
    expect(sizeFilter(100n, 0.9999999999999999)).toMatchObject({ bytes: 8, bitCount: 64, hashes: 1 });
  });

  test("no capacity, a rate of 0 or 1, or more than 512 MiB of bits cannot be sized", () => {
    expect(sizeFilter(0n, 0.01)).toBeNull();
    expect(sizeFilter(10n, 0)).toBeNull();
    expect(sizeFilter(10n, 1)).toBeNull();
    expect(sizeFilter(10n ** 12n, 0.01)).toBeNull();
  });

  test("a rate halved to 0 (the smallest subnormal) cannot create a scaling filter", () => {
    expect(run("BF.RESERVE", "sub", "5e-324", "1")).toEqual(err("ERR could not create filter"));
    expect(run("BF.RESERVE", "sub", "5e-324", "1", "NONSCALING")).toBe("OK");
    expect(run("EXISTS", "sub")).toBe(1);
  });

  test("a chain that cannot add a sub-filter answers an error and keeps what it has", () => {
    // Capacity 2^28 at 0.01 is 321 MB of bits; twice that passes the 512 MiB limit.
    const chain = BloomChain.create(2n, 0.01, 2 ** 28, true)!;
    expect(chain.addAll(["a", "b", "c"])).toEqual([1, 1, 3]);
    expect(chain.filters).toHaveLength(1);
    expect(chain.size).toBe(2);
  });

  test("%g formatting of error rates matches C", () => {
    expect([0.005, 6.25e-5, 1.5625e-5, 0.5, 0.0001, 1e-300, 0.123456789].map(formatG)).toEqual([
      "0.005",
      "6.25e-05",
      "1.5625e-05",
      "0.5",
      "0.0001",
      "1e-300",
      "0.123457",
    ]);
  });
});

describe("commands", () => {
  test("BF.ADD and BF.MADD create a key with the defaults: 0.01, capacity 100, expansion 2", () => {
    expect(run("BF.ADD", "a", "x")).toBe(1);
    expect(run("BF.ADD", "a", "x")).toBe(0);
    expect(run("BF.MADD", "m", "x", "y", "x")).toEqual([1, 1, 0]);
    for (const key of ["a", "m"]) {
      expect(run("BF.DEBUG", key)).toEqual([expect.stringMatching(/^size:/), expect.stringContaining("hashes:8 hashwidth:64 capacity:100 size:")]);
      expect(run("BF.INFO", key, "EXPANSION")).toEqual([2]);
    }
    expect(run("BF.INFO", "a")).toEqual(["Capacity", 100, "Size", 240, "Number of filters", 1, "Number of items inserted", 1, "Expansion rate", 2]);
  });

  test("BF.EXISTS, BF.MEXISTS and BF.CARD; a missing key is empty", () => {
    run("BF.MADD", "b", "alpha", "beta");
    expect(run("BF.EXISTS", "b", "alpha")).toBe(1);
    expect(run("BF.EXISTS", "b", "nope")).toBe(0);
    expect(run("BF.MEXISTS", "b", "alpha", "beta", "nope")).toEqual([1, 1, 0]);
    expect(run("BF.EXISTS", "missing", "alpha")).toBe(0);
    expect(run("BF.MEXISTS", "missing", "a", "b")).toEqual([0, 0]);
    expect(run("BF.CARD", "b")).toBe(2);
    expect(run("BF.CARD", "missing")).toBe(0);
  });

  test("BF.MADD on a full NONSCALING filter answers up to the first refusal and stops", () => {
    run("BF.RESERVE", "full", "0.01", "2", "NONSCALING");
    expect(run("BF.MADD", "full", "p", "p", "q", "r", "s")).toEqual([1, 0, 1, err("ERR non scaling filter is full")]);
    expect(run("BF.MADD", "full", "z")).toEqual([err("ERR non scaling filter is full")]);
    expect(run("BF.ADD", "full", "z")).toEqual(err("ERR non scaling filter is full"));
    expect(run("BF.ADD", "full", "p")).toBe(0);
    expect(run("BF.CARD", "full")).toBe(2);
  });

  test("TYPE, OBJECT ENCODING, SCAN TYPE, COPY, RENAME, DEL", () => {
    run("BF.ADD", "b", "x");
    expect(run("TYPE", "b")).toBe("MBbloom--");
    expect(run("OBJECT", "ENCODING", "b")).toBe("raw");
    run("SET", "s", "v");
    expect(run("SCAN", "0", "TYPE", "MBbloom--")).toEqual(["0", ["b"]]);
    expect(run("SCAN", "0", "TYPE", "mbbloom--")).toEqual(["0", ["b"]]);
    expect(run("COPY", "b", "c")).toBe(1);
    run("BF.ADD", "c", "only-in-copy");
    expect(run("BF.MEXISTS", "c", "x", "only-in-copy")).toEqual([1, 1]);
    expect(run("BF.EXISTS", "b", "only-in-copy")).toBe(0);
    expect(run("BF.CARD", "b")).toBe(1);
    expect(run("RENAME", "c", "d")).toBe("OK");
    expect(run("BF.EXISTS", "d", "x")).toBe(1);
    expect(run("DEL", "b", "d")).toBe(2);
    expect(run("BF.INFO", "b")).toEqual(err("ERR not found"));
  });

  test("other types: WRONGTYPE from the write commands, BF.CARD and BF.INFO; BF.EXISTS answers 0", () => {
    run("SET", "s", "v");
    const wrongType = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    for (const argv of [
      ["BF.ADD", "s", "v"],
      ["BF.MADD", "s", "v"],
      ["BF.INSERT", "s", "ITEMS", "v"],
      ["BF.RESERVE", "s", "0.1", "10"],
      ["BF.CARD", "s"],
      ["BF.INFO", "s"],
    ]) {
      expect(run(...argv)).toEqual(wrongType);
    }
    expect(run("BF.EXISTS", "s", "v")).toBe(0);
    expect(run("BF.MEXISTS", "s", "v", "w")).toEqual([0, 0]);
    run("BF.ADD", "b", "x");
    expect(run("GET", "b")).toEqual(wrongType);
    expect(run("SADD", "b", "x")).toEqual(wrongType);
  });

  test("a wrong argument count is an error at run time, so MULTI queues it and EXEC reports it", () => {
    expect(run("BF.ADD", "k")).toEqual(err("ERR wrong number of arguments for 'bf.add' command"));
    expect(run("MULTI")).toBe("OK");
    expect(run("BF.ADD", "k")).toBe("QUEUED");
    expect(run("BF.ADD", "k", "v")).toBe("QUEUED");
    expect(run("EXEC")).toEqual([err("ERR wrong number of arguments for 'bf.add' command"), 1]);
  });

  test("a write command touches WATCHed keys even when it changes nothing", () => {
    run("BF.ADD", "w", "x");
    const other = h.session();
    expect(other.run("WATCH", "w")).toBe("OK");
    run("BF.ADD", "w", "x");
    other.run("MULTI");
    other.run("BF.CARD", "w");
    expect(other.run("EXEC")).toBeNull();
  });
});

describe("false positives and negatives", () => {
  /**
   * Allowed false-positive rate for `probes` independent probes against a filter built for rate
   * p: each probe is a Bernoulli(p) trial, so the count is binomial with standard deviation
   * σ = √(n·p·(1−p)); p + 4σ/n is exceeded by chance with probability about 3·10⁻⁵. The items
   * are fixed, so the test is deterministic; the margin only says how much luck it relies on.
   */
  const allowedRate = (p: number, probes: number) => p + (4 * Math.sqrt(probes * p * (1 - p))) / probes;

  function measure(key: string, added: number, probes: number): { falseNegatives: number; rate: number } {
    const members = range(added, "member:");
    run("BF.MADD", key, ...members);
    const found = run("BF.MEXISTS", key, ...members) as number[];
    const hits = run("BF.MEXISTS", key, ...range(probes, "absent:")) as number[];
    return { falseNegatives: found.filter((f) => f === 0).length, rate: hits.reduce((a, b) => a + b, 0) / probes };
  }

  test("a NONSCALING 0.01 / 10,000 filter at capacity: no false negatives, rate within p + 4σ", () => {
    run("BF.RESERVE", "one", "0.01", "10000", "NONSCALING");
    const { falseNegatives, rate } = measure("one", 10_000, 100_000);
    console.log(`NONSCALING 0.01/10000 at capacity: false-positive rate ${rate}`);
    expect(falseNegatives).toBe(0);
    expect(rate).toBeLessThanOrEqual(allowedRate(0.01, 100_000));
    expect(run("BF.INFO", "one", "FILTERS")).toEqual([1]);
  });

  test("a scaling 0.01 / 10,000 filter at capacity stays in one sub-filter at p/2", () => {
    run("BF.RESERVE", "one", "0.01", "10000");
    const { falseNegatives, rate } = measure("one", 10_000, 100_000);
    console.log(`scaling 0.01/10000 at capacity: false-positive rate ${rate}`);
    expect(falseNegatives).toBe(0);
    expect(rate).toBeLessThanOrEqual(allowedRate(0.005, 100_000));
    expect(run("BF.INFO", "one", "FILTERS")).toEqual([1]);
  });

  test("a chain scaled to five sub-filters (0.01 / 1,000 given 31,000 items) stays within 0.01", () => {
    run("BF.RESERVE", "chain", "0.01", "1000");
    const { falseNegatives, rate } = measure("chain", 31_000, 100_000);
    console.log(`scaled chain 0.01/1000 with 31000 items: false-positive rate ${rate}`);
    expect(falseNegatives).toBe(0);
    expect(run("BF.INFO", "chain", "FILTERS")).toEqual([5]);
    // Five full sub-filters at p/2, p/4, ..., p/32 sum to at most p: the chain's bound.
    expect(rate).toBeLessThanOrEqual(allowedRate(0.01, 100_000));
  });
});
