/**
 * PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST with Redis 7.0's semantics and replies.
 *
 * An HLL is a string value (header.ts has the layout). Commands that change one keep it as a
 * MutableString and change its bytes in place, so a PFADD on a dense HLL touches a few registers
 * instead of rebuilding a 12 KB string. A plain string (an HLL restored with SET) is converted
 * only when a command actually changes it, so a PFADD that changes nothing does not count as a
 * write (WATCH), as in Redis.
 */
import { getStringValue } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { KvError, wrongType } from "../text/errors.ts";
import { typeOf } from "../types/value.ts";
import { getDenseRegister, hllRawHistogram, hllRegisters } from "../../wasm/hll.ts";
import { bytesOf, MutableString } from "../types/string/bytes.ts";
import { estimate } from "../types/hyperloglog/estimator.ts";
import { cacheCardinality, cachedCardinality, checkHeader, corruptedHll, headerBytes, invalidateCache, isSparse } from "../types/hyperloglog/header.ts";
import { addElements, count, type Hll, mergeInto, raiseTo } from "../types/hyperloglog/operations.ts";
import { selfTest } from "../types/hyperloglog/selftest.ts";
import { emptySparse, sparseDecode, sparseToDense } from "../types/hyperloglog/sparse.ts";

/** hll-sparse-max-bytes when CONFIG has not set it. */
export const sparseBytesMaxDefault = 3000;

const sparseBytesMax = (x: Exec) => Number(x.engine.config.get("hll-sparse-max-bytes") ?? sparseBytesMaxDefault);

type Found = string | MutableString | undefined;

/**
 * The non-zero bytes Redis keeps after the end of values our sparse writes produced (see
 * SparseBuffer), by value and length: a value grown since (SETRANGE past its end) has lost it, in
 * Redis too, where growing zero-fills from the old end. Only corrupt values ever get an entry.
 */
const bytesPastEnd = new WeakMap<MutableString, { length: number; byte: number }>();

function pastEndOf(found: Found, length: number): number {
  if (!(found instanceof MutableString)) return 0;
  const entry = bytesPastEnd.get(found);
  return entry !== undefined && entry.length === length ? entry.byte : 0;
}

/** An existing HLL value (a MutableString's own bytes, a copy of a plain string's), header checked. */
function hllOf(found: string | MutableString): Hll {
  const bytes = bytesOf(found);
  checkHeader(bytes);
  return { bytes, pastEnd: pastEndOf(found, bytes.length) };
}

/**
 * Makes `hll` the value of `key`. `inPlace`: hll.bytes are the found MutableString's own bytes,
 * changed where they are, so only its cached text is dropped. `signal` says whether the change
 * counts as a write (WATCH).
 */
function store(x: Exec, key: string, found: Found, hll: Hll, signal: boolean, inPlace = false): void {
  let value: MutableString;
  if (found instanceof MutableString) {
    value = found;
    if (inPlace) value.changed();
    else value.assign(hll.bytes);
    if (signal) x.db.modified(key);
  } else {
    value = MutableString.ofLength(hll.bytes.length);
    value.assign(hll.bytes);
    x.db.set(key, value, found !== undefined);
  }
  if (hll.pastEnd !== 0) bytesPastEnd.set(value, { length: hll.bytes.length, byte: hll.pastEnd });
  else bytesPastEnd.delete(value);
}

/** Redis replies a cardinality as a signed 64-bit integer. */
const replyCardinality = (x: Exec, card: bigint) => x.reply.integer(card < 2n ** 53n ? Number(card) : BigInt.asIntN(64, card));

// ---- PFADD ------------------------------------------------------------------------------------

function pfadd(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const found = getStringValue(x, key);
  let hll = found === undefined ? { bytes: emptySparse(), pastEnd: 0 } : hllOf(found);
  const original = hll.bytes;
  let changed = found === undefined;
  if (argv.length > 2) {
    // A plain string's bytes are a copy, a MutableString's its own: dense ones change in place.
    const added = addElements(hll, argv, 2, sparseBytesMax(x));
    if (added.corrupt) {
      // Redis has already changed the value in place by then, and keeps it so.
      if (added.changed) store(x, key, found, added, false, added.bytes === original);
      throw corruptedHll();
    }
    hll = added;
    changed ||= added.changed;
  }
  if (changed) {
    invalidateCache(hll.bytes);
    store(x, key, found, hll, true, hll.bytes === original);
    x.db.notify("pfadd", key);
  }
  x.reply.integer(changed ? 1 : 0);
}

// ---- PFCOUNT ----------------------------------------------------------------------------------

function pfcount(x: Exec, argv: string[]): void {
  if (argv.length > 2) {
    // The union's estimate; no key changes, not even its cache.
    const raw = new Uint8Array(hllRegisters);
    for (let i = 1; i < argv.length; i++) {
      const found = getStringValue(x, argv[i]!);
      if (found !== undefined) mergeInto(raw, hllOf(found));
    }
    replyCardinality(x, estimate(hllRawHistogram(raw)));
    return;
  }
  const key = argv[1]!;
  const found = getStringValue(x, key);
  if (found === undefined) {
    x.reply.integer(0);
    return;
  }
  const hll = hllOf(found);
  let card = cachedCardinality(hll.bytes);
  if (card === null) {
    card = count(hll);
    // The cache is part of the value: Redis counts writing it as a change of the key.
    cacheCardinality(hll.bytes, card);
    store(x, key, found, hll, true, true);
  }
  replyCardinality(x, card);
}

// ---- PFMERGE ----------------------------------------------------------------------------------

function pfmerge(x: Exec, argv: string[]): void {
  const raw = new Uint8Array(hllRegisters);
  // A dense input (the destination included) makes the destination dense at once, as in Redis 7.0.
  let anyDense = false;
  for (let i = 1; i < argv.length; i++) {
    const found = getStringValue(x, argv[i]!);
    if (found === undefined) continue;
    const hll = hllOf(found);
    if (!isSparse(hll.bytes)) anyDense = true;
    mergeInto(raw, hll);
  }
  const key = argv[1]!;
  // Read again without counting a hit: the loop above validated it as argv[1].
  const found = x.db.get(key) as Found;
  let hll: Hll = found === undefined ? { bytes: emptySparse(), pastEnd: 0 } : { bytes: bytesOf(found), pastEnd: pastEndOf(found, found.length) };
  const original = hll.bytes;
  if (anyDense && isSparse(hll.bytes)) hll = { bytes: sparseToDense(hll.bytes, hll.pastEnd)!, pastEnd: 0 };
  hll = raiseTo(hll, raw, sparseBytesMax(x));
  invalidateCache(hll.bytes);
  store(x, key, found, hll, true, hll.bytes === original);
  // Redis names a merge's change as it names an add's.
  x.db.notify("pfadd", key);
  x.reply.simple("OK");
}

// ---- PFDEBUG, PFSELFTEST ----------------------------------------------------------------------

/** The dense form of a sparse HLL, stored back as PFDEBUG GETREG/TODENSE do (not counted as a write). */
function toDense(x: Exec, key: string, found: Found, hll: Hll): Uint8Array {
  const dense = sparseToDense(hll.bytes, hll.pastEnd);
  if (dense === null) throw corruptedHll();
  store(x, key, found, { bytes: dense, pastEnd: 0 }, false);
  return dense;
}

function pfdebug(x: Exec, argv: string[]): void {
  const key = argv[2]!;
  const found = x.db.get(key);
  if (found === undefined) throw new KvError("ERR The specified key does not exist");
  if (typeOf(found) !== "string") throw wrongType();
  const value = found as string | MutableString;
  const hll = hllOf(value);
  // Redis reads the subcommand as a C string: it ends at the first NUL byte.
  const name = argv[1]!.split("\0", 1)[0]!;
  const sub = name.toLowerCase();
  if (sub === "getreg") {
    const dense = isSparse(hll.bytes) ? toDense(x, key, value, hll) : hll.bytes;
    const registers = dense.subarray(headerBytes);
    x.reply.array(hllRegisters);
    for (let i = 0; i < hllRegisters; i++) x.reply.integer(getDenseRegister(registers, i));
  } else if (sub === "decode") {
    if (!isSparse(hll.bytes)) throw new KvError("ERR HLL encoding is not sparse");
    x.reply.bulk(sparseDecode(hll.bytes, hll.pastEnd));
  } else if (sub === "encoding") {
    x.reply.simple(isSparse(hll.bytes) ? "sparse" : "dense");
  } else if (sub === "todense") {
    const sparse = isSparse(hll.bytes);
    if (sparse) toDense(x, key, value, hll);
    x.reply.integer(sparse ? 1 : 0);
  } else throw new KvError(`ERR Unknown PFDEBUG subcommand '${name}'`);
}

function pfselftest(x: Exec): void {
  const failure = selfTest(sparseBytesMax(x));
  if (failure === null) x.reply.simple("OK");
  else x.reply.error(`TESTFAILED ${failure}`);
}

export const hyperloglogCommands: readonly CommandSpec[] = [
  {
    name: "pfadd",
    arity: -2,
    flags: ["write", "denyoom", "fast"],
    group: "hyperloglog",
    keys: [1, 1, 1],
    summary: "Adds the specified elements to the specified HyperLogLog.",
    run: pfadd,
  },
  {
    name: "pfcount",
    arity: -2,
    flags: ["readonly"],
    group: "hyperloglog",
    keys: [1, -1, 1],
    summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
    run: pfcount,
  },
  {
    name: "pfmerge",
    arity: -2,
    flags: ["write", "denyoom"],
    group: "hyperloglog",
    keys: [1, -1, 1],
    summary: "Merge N different HyperLogLogs into a single one.",
    run: pfmerge,
  },
  {
    name: "pfdebug",
    arity: 3,
    flags: ["write", "denyoom", "admin"],
    group: "hyperloglog",
    keys: [2, 2, 1],
    summary: "Internal commands for debugging HyperLogLog values",
    run: pfdebug,
  },
  {
    name: "pfselftest",
    arity: 1,
    flags: ["admin"],
    group: "hyperloglog",
    summary: "An internal command for testing HyperLogLog values",
    run: pfselftest,
  },
];
