/**
 * PFSELFTEST: checks the register code and the estimator from inside the server, as Redis's does,
 * on a smaller scale (Redis adds ten million elements; we stop at a hundred thousand, which still
 * crosses from sparse to dense and keeps the command well under a second).
 */
import { getDenseRegister, hllRegisterMax, hllRegisters, setDenseRegister } from "../../../wasm/hll.ts";
import { denseHistogram } from "./dense.ts";
import { headerBytes, isSparse } from "./header.ts";
import { addElements, count, type Hll } from "./operations.ts";
import { emptySparse, sparseToDense } from "./sparse.ts";

const registerRounds = 8;
const elementsMax = 100_000;
/** Redis's bound: six standard errors of the estimator (1.04/√m). */
const relativeErrorBound = (6 * 1.04) / Math.sqrt(hllRegisters);

/** Null when every check passes, else what failed (Redis's TESTFAILED wording). */
export function selfTest(sparseBytesMax = 3000): string | null {
  return registerCheck() ?? approximationCheck(sparseBytesMax);
}

/** Random register values read back unchanged, and without disturbing their neighbours. */
function registerCheck(): string | null {
  const hll = sparseToDense(emptySparse())!;
  const registers = hll.subarray(headerBytes);
  const expected = new Uint8Array(hllRegisters);
  for (let round = 0; round < registerRounds; round++) {
    for (let i = 0; i < hllRegisters; i++) {
      expected[i] = Math.floor(Math.random() * (hllRegisterMax + 1));
      setDenseRegister(registers, i, expected[i]!);
    }
    for (let i = 0; i < hllRegisters; i++) {
      const value = getDenseRegister(registers, i);
      if (value !== expected[i]) return `Register ${i} should be ${expected[i]} but is ${value}`;
    }
    const bins = denseHistogram(hll);
    for (let v = 0; v <= hllRegisterMax; v++) {
      const want = expected.reduce((n, e) => n + (e === v ? 1 : 0), 0);
      if (bins[v] !== want) return `Histogram bin ${v} should be ${want} but is ${bins[v]}`;
    }
  }
  return null;
}

/** An 8-byte little-endian element as a latin1 string. */
function element(n: bigint): string {
  let text = "";
  for (let i = 0n; i < 8n; i++) text += String.fromCharCode(Number((n >> (8n * i)) & 0xffn));
  return text;
}

/** Sparse and dense HLLs fed the same elements agree, and stay within the error bound. */
function approximationCheck(sparseBytesMax: number): string | null {
  let sparse: Hll = { bytes: emptySparse(), pastEnd: 0 };
  const dense: Hll = { bytes: sparseToDense(emptySparse())!, pastEnd: 0 };
  const seed = BigInt(Math.floor(Math.random() * 2 ** 32)) << 16n;
  let added = 0;
  for (let checkpoint = 1; checkpoint <= elementsMax; checkpoint *= 10) {
    const batch: string[] = [];
    for (let j = added + 1; j <= checkpoint; j++) batch.push(element(BigInt(j) ^ seed));
    added = checkpoint;
    addElements(dense, batch, 0, sparseBytesMax);
    sparse = addElements(sparse, batch, 0, sparseBytesMax);
    if (checkpoint < sparseBytesMax / 2 && !isSparse(sparse.bytes)) return "sparse encoding not used";
    const estimated = count(dense);
    if (estimated !== count(sparse)) return "dense/sparse disagree";
    const errorMax = checkpoint === 10 ? 1 : Math.ceil(relativeErrorBound * checkpoint);
    const error = Math.abs(checkpoint - Number(estimated));
    if (error > errorMax) return `Too big error. card:${checkpoint} abserr:${error}`;
  }
  return null;
}
