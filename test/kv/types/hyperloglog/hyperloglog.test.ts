// The HyperLogLog encodings, in process: Redis's bytes for a new HLL, sparse opcodes after sets at
// both ends of the register range, VAL merging, promotion to dense exactly at hll-sparse-max-bytes
// and one byte past it (and at register value 32 and 33), header checks, the cache, corrupt
// opcodes, and estimates equal to the ones redis-server 7.0 gives for the same elements.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { getDenseRegister, hllRegisters, setDenseRegister } from "../../../../src/wasm/hll.ts";
import { estimate, sigma, tau } from "../../../../src/kv/types/hyperloglog/estimator.ts";
import {
  cacheCardinality,
  cachedCardinality,
  checkHeader,
  denseBytes,
  headerBytes,
  invalidateCache,
  isSparse,
} from "../../../../src/kv/types/hyperloglog/header.ts";
import { addElements, count, type Hll } from "../../../../src/kv/types/hyperloglog/operations.ts";
import { selfTest } from "../../../../src/kv/types/hyperloglog/selftest.ts";
import {
  emptySparse,
  SetResult,
  SparseBuffer,
  sparseDecode,
  sparseHistogram,
  sparseRegisters,
  sparseSet,
  sparseToDense,
} from "../../../../src/kv/types/hyperloglog/sparse.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const hll = (bytes: Uint8Array): Hll => ({ bytes, pastEnd: 0 });
const noLimit = Number.MAX_SAFE_INTEGER;

/** A sparse HLL with the given registers set, one sparseSet at a time in the order given. */
function sparseWith(sets: [index: number, value: number][], limit = noLimit): SparseBuffer {
  const work = SparseBuffer.of(emptySparse());
  for (const [index, value] of sets) expect(sparseSet(work, index, value, limit)).not.toBe(SetResult.Invalid);
  return work;
}

describe("HyperLogLog header", () => {
  test("a new HLL is Redis's 18 bytes: magic, sparse, zero cache, one XZERO of 16384", () => {
    expect(hex(emptySparse())).toBe("48594c4c01000000" + "0000000000000000" + "7fff");
  });

  test("checkHeader refuses short values, a wrong magic, an unknown encoding and a dense value of the wrong size", () => {
    const notHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
    expect(() => checkHeader(emptySparse().subarray(0, 15))).toThrow(notHll);
    expect(() => checkHeader(Uint8Array.from([...emptySparse()].map((b, i) => (i === 0 ? 0x68 : b))))).toThrow(notHll);
    expect(() => checkHeader(Uint8Array.from([...emptySparse()].map((b, i) => (i === 4 ? 2 : b))))).toThrow(notHll);
    const dense = sparseToDense(emptySparse())!;
    expect(() => checkHeader(dense)).not.toThrow();
    expect(() => checkHeader(dense.subarray(0, denseBytes - 1))).toThrow(notHll);
    // A sparse header alone is accepted here; its (missing) opcodes fail later, as in Redis.
    expect(() => checkHeader(emptySparse().subarray(0, headerBytes))).not.toThrow();
  });

  test("the cache reads back until invalidated, which sets only the top bit of the last byte", () => {
    const bytes = emptySparse();
    expect(cachedCardinality(bytes)).toBe(0n);
    cacheCardinality(bytes, 0x0123456789abcdefn);
    expect(cachedCardinality(bytes)).toBe(0x0123456789abcdefn);
    invalidateCache(bytes);
    expect(cachedCardinality(bytes)).toBeNull();
    expect(hex(bytes.subarray(8, 16))).toBe("efcdab8967452381");
  });
});

describe("sparse encoding", () => {
  test("setting the first and the last register splits the XZERO at either end", () => {
    expect(sparseDecode(sparseWith([[0, 3]]).copy())).toBe("v:3,1 Z:16383");
    expect(sparseDecode(sparseWith([[16383, 32]]).copy())).toBe("Z:16383 v:32,1");
    const both = sparseWith([
      [0, 1],
      [16383, 1],
      [64, 2],
      [65, 2],
    ]);
    expect(sparseDecode(both.copy())).toBe("v:1,1 z:63 v:2,2 Z:16317 v:1,1");
    const registers = sparseRegisters(both.copy())!;
    expect([registers[0], registers[63], registers[64], registers[65], registers[66], registers[16383]]).toEqual([1, 0, 2, 2, 0, 1]);
  });

  test("equal neighbouring values merge into VALs of at most four registers", () => {
    const work = sparseWith([10, 11, 12, 13, 14, 15].map((i) => [i, 5]));
    expect(sparseDecode(work.copy())).toBe("z:10 v:5,4 v:5,2 Z:16368");
    // Raising one register in the middle of a run splits the VAL.
    expect(sparseSet(work, 12, 7, noLimit)).toBe(SetResult.Changed);
    expect(sparseDecode(work.copy())).toBe("z:10 v:5,2 v:7,1 v:5,3 Z:16368");
    expect(sparseSet(work, 12, 7, noLimit)).toBe(SetResult.Unchanged);
    expect(sparseSet(work, 12, 6, noLimit)).toBe(SetResult.Unchanged);
  });

  test("a split growing the value to exactly hll-sparse-max-bytes stays sparse; one byte more promotes", () => {
    // XZERO(16384) → XZERO VAL XZERO: 18 bytes become 21.
    expect(sparseSet(SparseBuffer.of(emptySparse()), 100, 1, 21)).toBe(SetResult.Changed);
    expect(sparseSet(SparseBuffer.of(emptySparse()), 100, 1, 20)).toBe(SetResult.Promote);
    // "a" hashes to register 12711 with run length 2 (redis-server agrees): PFADD's path.
    const atLimit = addElements(hll(emptySparse()), ["a"], 0, 21);
    expect(isSparse(atLimit.bytes)).toBe(true);
    expect(atLimit.bytes.length).toBe(21);
    const pastLimit = addElements(hll(emptySparse()), ["a"], 0, 20);
    expect(isSparse(pastLimit.bytes)).toBe(false);
    expect(pastLimit.bytes.length).toBe(denseBytes);
    expect(getDenseRegister(pastLimit.bytes.subarray(headerBytes), 12711)).toBe(2);
    expect(pastLimit.changed).toBe(true);
  });

  test("a register value of 32 fits a VAL, 33 promotes", () => {
    expect(sparseSet(SparseBuffer.of(emptySparse()), 7, 32, noLimit)).toBe(SetResult.Changed);
    expect(sparseSet(SparseBuffer.of(emptySparse()), 7, 33, noLimit)).toBe(SetResult.Promote);
  });

  test("changes that do not grow the value are made even when it is at the limit", () => {
    // A one-register opcode is rewritten in place.
    const work = sparseWith([
      [20, 4],
      [22, 4],
    ]);
    expect(sparseDecode(work.copy())).toBe("z:20 v:4,1 z:1 v:4,1 Z:16361");
    expect(sparseSet(work, 20, 6, work.length)).toBe(SetResult.Changed);
    expect(sparseSet(work, 21, 6, work.length)).toBe(SetResult.Changed);
    expect(sparseDecode(work.copy())).toBe("z:20 v:6,2 v:4,1 Z:16361");
    // An XZERO of 65 split at its first register becomes VAL + ZERO of 64: two bytes for two.
    const xzero = sparseWith([[65, 1]]);
    expect(sparseDecode(xzero.copy())).toBe("Z:65 v:1,1 Z:16318");
    expect(sparseSet(xzero, 0, 2, xzero.length)).toBe(SetResult.Changed);
    expect(sparseDecode(xzero.copy())).toBe("v:2,1 z:64 v:1,1 Z:16318");
    // One register further in needs ZERO + VAL + ZERO: a byte more, so it promotes at the limit.
    expect(sparseSet(sparseWith([[65, 1]]), 1, 2, xzero.length)).toBe(SetResult.Promote);
  });

  test("sparse and dense forms of random register sets hold the same registers and estimate the same", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: hllRegisters - 1 }), fc.integer({ min: 1, max: 32 })), { maxLength: 400 }), (sets) => {
        const work = sparseWith(sets);
        const expected = new Uint8Array(hllRegisters);
        for (const [i, v] of sets) expected[i] = Math.max(expected[i]!, v);
        expect(sparseRegisters(work.copy())).toEqual(expected);
        const dense = sparseToDense(work.copy())!;
        expect(count(hll(dense))).toBe(count(hll(work.copy())));
      }),
      { numRuns: 100 },
    );
  });

  test("corrupt opcodes: a register past the end is Invalid, and counting or converting refuses them", () => {
    const short = Uint8Array.from([...emptySparse().subarray(0, headerBytes), 0x40 | 0x3e, 0xff]); // XZERO of 16128
    expect(sparseSet(SparseBuffer.of(short), 16200, 1, noLimit)).toBe(SetResult.Invalid);
    expect(sparseSet(SparseBuffer.of(short), 5, 1, noLimit)).toBe(SetResult.Changed);
    expect(sparseToDense(short)).toBeNull();
    expect(sparseHistogram(short)).toBeNull();
    expect(() => count(hll(short))).toThrow("INVALIDOBJ Corrupted HLL object detected");
    // A VAL running past register 16383 is corrupt even when the total would be right without it.
    const overrun = Uint8Array.from([...emptySparse(), 0x83]);
    expect(sparseToDense(overrun)).toBeNull();
    // Half an XZERO at the end reads the byte after the end as its second byte.
    const cut = Uint8Array.from([...emptySparse().subarray(0, headerBytes), 0x7f]);
    expect(sparseDecode(cut)).toBe("Z:16129");
    expect(sparseDecode(cut, 0xff)).toBe("Z:16384");
    expect(sparseToDense(cut, 0xff)).not.toBeNull();
  });
});

describe("dense registers", () => {
  test("each 6-bit register reads back what was written without disturbing its neighbours", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: hllRegisters - 1 }), fc.integer({ min: 0, max: 63 }), (index, value) => {
        const registers = new Uint8Array(denseBytes - headerBytes).fill(0xff);
        setDenseRegister(registers, index, value);
        expect(getDenseRegister(registers, index)).toBe(value);
        if (index > 0) expect(getDenseRegister(registers, index - 1)).toBe(63);
        if (index < hllRegisters - 1) expect(getDenseRegister(registers, index + 1)).toBe(63);
      }),
      { numRuns: 500 },
    );
  });
});

describe("estimator", () => {
  test("σ and τ at their end points", () => {
    expect(sigma(1)).toBe(Infinity);
    expect(sigma(0)).toBe(0);
    expect(tau(0)).toBe(0);
    expect(tau(1)).toBe(0);
  });

  test("an empty HLL counts 0; registers no real set produces give Redis's -2^63 as an unsigned 2^63", () => {
    const bins = new Float64Array(64);
    bins[0] = hllRegisters;
    expect(estimate(bins)).toBe(0n);
    bins[0] = 0;
    bins[50] = hllRegisters;
    expect(estimate(bins)).toBe(1n << 63n);
  });

  test("PFADD of e0..e(n-1) estimates what redis-server 7.0 answers", () => {
    // redis-cli PFADD k e0 ... e(n-1); PFCOUNT k; PFDEBUG ENCODING k (on redis-server 7.0.15).
    const fromRedis: [number, number, boolean][] = [
      [1, 1, true],
      [10, 10, true],
      [100, 100, true],
      [1000, 1008, true],
      [10000, 9973, false],
      [100000, 100853, false],
    ];
    for (const [n, expected, sparse] of fromRedis) {
      const added = addElements(
        hll(emptySparse()),
        Array.from({ length: n }, (_, i) => `e${i}`),
        0,
        3000,
      );
      expect(isSparse(added.bytes)).toBe(sparse);
      expect(count(added)).toBe(BigInt(expected));
    }
  });

  test("PFSELFTEST's checks pass", () => {
    expect(selfTest()).toBeNull();
  });
});
