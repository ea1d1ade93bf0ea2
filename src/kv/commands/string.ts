/**
 * Strings: the value is a latin1 byte string. Integers are kept as their decimal text, as Redis
 * presents them; INCR and friends parse, add with 64-bit overflow checks, and store text again.
 */
import { int64Min, isInt64, parseInt64, parseInteger, parseSmallInteger, parseStep, smallIntegerCharsMax, sumWithInteger } from "../text/args.ts";
import { parseLongLong } from "../resp/parser.ts";
import { expireAtOrDelete } from "../kit/lookup.ts";
import { deleteKey, getString, getStringRef, getStringValue, getValue, replyString, stringAt } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { arityError, KvError, notAnInteger, syntaxError } from "../text/errors.ts";
import { typeOf } from "../types/value.ts";
import { incrByFloat } from "../text/long-double.ts";
import { MutableString } from "../types/string/bytes.ts";

/** Redis's proto-max-bulk-len: the largest string SETRANGE and APPEND may build. */
export const stringBytesMax = 512 * 1024 * 1024;

const invalidExpire = (command: string) => new KvError(`ERR invalid expire time in '${command}' command`);

// ---- expiry options shared by SET and GETEX ---------------------------------------------------

type ExpiryUnit = "EX" | "PX" | "EXAT" | "PXAT";

const isExpiryUnit = (word: string): word is ExpiryUnit => word === "EX" || word === "PX" || word === "EXAT" || word === "PXAT";

/** Digits of a time in seconds whose milliseconds, plus now, stay below 2^53. */
const secondsDigitsExact = 12;

/** The absolute Unix-ms time an EX/PX/EXAT/PXAT argument names, with Redis's range checks. */
export function expiryTime(x: Exec, unit: ExpiryUnit, text: string, command: string): number {
  // The common case without BigInt: a time short enough that the result is exact in a double —
  // seconds of up to 12 digits (times 1000), milliseconds of up to 15 (plus now).
  const small = text.length <= (unit === "EX" || unit === "EXAT" ? secondsDigitsExact : smallIntegerCharsMax) ? parseSmallInteger(text) : null;
  if (small !== null && small > 0) {
    const ms = unit === "EX" || unit === "EXAT" ? small * 1000 : small;
    return unit === "EX" || unit === "PX" ? ms + x.engine.clock.nowMs() : ms;
  }
  const n = parseInt64(text);
  if (n === null) throw notAnInteger();
  if (n <= 0n) throw invalidExpire(command);
  const ms = unit === "EX" || unit === "EXAT" ? n * 1000n : n;
  const at = unit === "EX" || unit === "PX" ? ms + BigInt(x.engine.clock.nowMs()) : ms;
  if (!isInt64(ms) || !isInt64(at)) throw invalidExpire(command);
  return Number(at);
}

interface SetOptions {
  condition: "NX" | "XX" | null;
  expiry: { unit: ExpiryUnit; text: string } | null;
  keepTtl: boolean;
  get: boolean;
}

/** A plain SET's options, shared so that the common case allocates none. */
const noSetOptions: Readonly<SetOptions> = { condition: null, expiry: null, keepTtl: false, get: false };

const getsetOptions: Readonly<SetOptions> = { ...noSetOptions, get: true };

function parseSetOptions(argv: string[], from: number): Readonly<SetOptions> {
  if (from === argv.length) return noSetOptions;
  const options: SetOptions = { ...noSetOptions };
  for (let i = from; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if ((word === "NX" || word === "XX") && options.condition === null) options.condition = word;
    else if (word === "GET" && !options.get) options.get = true;
    else if (word === "KEEPTTL" && !options.keepTtl && options.expiry === null) options.keepTtl = true;
    else if (isExpiryUnit(word) && options.expiry === null && !options.keepTtl && i + 1 < argv.length) {
      options.expiry = { unit: word, text: argv[++i]! };
    } else throw syntaxError();
  }
  return options;
}

/** SET and its variants: one function, as in Redis's setGenericCommand. */
function setGeneric(x: Exec, key: string, value: string, options: Readonly<SetOptions>, command: string): void {
  const at = options.expiry === null ? null : expiryTime(x, options.expiry.unit, options.expiry.text, command);
  // A key past its time goes first, as Redis's lookupKeyWrite does, so that KEEPTTL does not keep
  // its time and the expiry is counted and logged: the lookups below, or the set itself, do it.
  const old = options.get ? getString(x, key) : undefined;
  const exists = options.get ? old !== undefined : options.condition !== null && x.db.has(key);
  const skipped = (options.condition === "NX" && exists) || (options.condition === "XX" && !exists);
  if (!skipped) {
    if (at === null) x.db.set(key, value, options.keepTtl);
    else {
      x.db.setExpiring(key, value, at);
      // A relative time would mean a later expiry when replayed: record the absolute one.
      x.propagate = [["SET", key, value, "PXAT", String(at)]];
    }
    x.db.notify("set", key);
    if (at !== null) x.db.notify("expire", key);
  }
  if (options.get) x.reply.bulk((old as string | undefined) ?? null);
  else if (skipped) x.reply.bulk(null);
  else x.reply.simple("OK");
}

// ---- integers ---------------------------------------------------------------------------------

/**
 * INCR and its kin: adds `by` — a number when small (parseStep), so the common case compares and
 * adds no BigInts — to the integer at `key`.
 */
function incrGeneric(x: Exec, key: string, by: number | bigint): void {
  const ref = getStringRef(x, key);
  if (ref !== -1 && typeof by === "number" && incrementInPlace(x, ref, key, by)) return;
  const result = sumWithInteger(ref === -1 ? undefined : stringAt(x, ref), by, notAnInteger);
  if (ref === -1) x.db.set(key, String(result), true);
  else x.db.overwrite(ref, key, String(result));
  x.db.notify("incrby", key);
  x.reply.integer(result);
}

/**
 * INCR's common case without making a string: a short integer stored inline is read from the
 * table's bytes, and the sum written back into them when it fits the entry. False, changing
 * nothing, when the value is not such an integer or the sum does not fit.
 */
function incrementInPlace(x: Exec, ref: number, key: string, by: number): boolean {
  const table = x.db.table;
  const length = table.valueLength(ref);
  if (length < 1 || length > smallIntegerCharsMax) return false;
  const at = table.valueAt(ref);
  const current = parseLongLong(table.bytesOf(ref), at, at + length);
  if (Number.isNaN(current)) return false;
  const result = current + by;
  if (!table.setIntegerInPlace(ref, result)) return false;
  x.db.modified(key);
  x.db.notify("incrby", key);
  x.reply.integer(result);
  return true;
}

// ---- ranges -----------------------------------------------------------------------------------

/** GETRANGE's slice of a string, with Redis's handling of negative and out-of-range ends. */
export function substring(value: string, startArg: number, endArg: number): string {
  const length = value.length;
  if (startArg < 0 && endArg < 0 && startArg > endArg) return "";
  let start = startArg < 0 ? length + startArg : startArg;
  let end = endArg < 0 ? length + endArg : endArg;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= length) end = length - 1;
  if (start > end || length === 0) return "";
  return value.slice(start, end + 1);
}

function getrange(x: Exec, argv: string[]): void {
  const start = parseInteger(argv[2]!);
  const end = parseInteger(argv[3]!);
  x.reply.bulk(substring(getString(x, argv[1]!) ?? "", start, end));
}

function checkSize(bytes: number): void {
  if (bytes > stringBytesMax) throw new KvError("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
}

function setrange(x: Exec, argv: string[]): void {
  const [, key, offsetText, piece] = argv as [string, string, string, string];
  const offset = parseInteger(offsetText);
  if (offset < 0) throw new KvError("ERR offset is out of range");
  const current = getStringValue(x, key);
  if (piece.length === 0) {
    x.reply.integer(current?.length ?? 0);
    return;
  }
  checkSize(offset + piece.length);
  // A bitmap (or any string already changed in place) takes the write in place too.
  if (current instanceof MutableString) return writeInPlace(x, key, current, offset, piece, "setrange");
  const base = current ?? "";
  const padded = base.length < offset ? base + "\0".repeat(offset - base.length) : base;
  const result = padded.slice(0, offset) + piece + padded.slice(offset + piece.length);
  x.db.set(key, result, true);
  x.db.notify("setrange", key);
  x.reply.integer(result.length);
}

function writeInPlace(x: Exec, key: string, value: MutableString, offset: number, piece: string, event: "setrange" | "append"): void {
  value.write(offset, piece);
  x.db.modified(key);
  x.db.notify(event, key);
  x.reply.integer(value.length);
}

// ---- LCS --------------------------------------------------------------------------------------

interface LcsMatch {
  a: [number, number];
  b: [number, number];
  length: number;
}

/** The longest common subsequence and its matching ranges, by the classic dynamic programme. */
function longestCommonSubsequence(a: string, b: string): { text: string; matches: LcsMatch[] } {
  const width = b.length + 1;
  const table = new Uint32Array((a.length + 1) * width);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      table[i * width + j] = a[i - 1] === b[j - 1] ? table[(i - 1) * width + j - 1]! + 1 : Math.max(table[(i - 1) * width + j]!, table[i * width + j - 1]!);
    }
  }
  // Walk back from the end, collecting the subsequence and grouping adjacent matches into ranges,
  // newest range first — the order Redis reports them in.
  let text = "";
  const matches: LcsMatch[] = [];
  let i = a.length;
  let j = b.length;
  let current: LcsMatch | null = null;
  while (i > 0 && j > 0) {
    if (a[i - 1] === b[j - 1]) {
      text = a[i - 1] + text;
      if (current !== null && current.a[0] === i && current.b[0] === j) {
        current.a[0] = i - 1;
        current.b[0] = j - 1;
        current.length++;
      } else {
        if (current !== null) matches.push(current);
        current = { a: [i - 1, i - 1], b: [j - 1, j - 1], length: 1 };
      }
      i--;
      j--;
    } else if (table[(i - 1) * width + j]! > table[i * width + j - 1]!) i--;
    else j--;
  }
  if (current !== null) matches.push(current);
  return { text, matches };
}

function lcs(x: Exec, argv: string[]): void {
  // Redis checks the keys' types before it reads the options.
  const a = getValue(x, argv[1]!);
  const b = getValue(x, argv[2]!);
  if ((a !== undefined && typeOf(a) !== "string") || (b !== undefined && typeOf(b) !== "string")) {
    throw new KvError("ERR The specified keys must contain string values");
  }
  let wantLen = false;
  let wantIdx = false;
  let withMatchLen = false;
  let minMatchLen = 0;
  for (let i = 3; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "LEN") wantLen = true;
    else if (word === "IDX") wantIdx = true;
    else if (word === "WITHMATCHLEN") withMatchLen = true;
    else if (word === "MINMATCHLEN" && i + 1 < argv.length) minMatchLen = Math.max(0, parseInteger(argv[++i]!));
    else throw syntaxError();
  }
  if (wantLen && wantIdx) {
    throw new KvError("ERR If you want both the length and indexes, please just use IDX.");
  }
  const result = longestCommonSubsequence(a?.toString() ?? "", b?.toString() ?? "");
  if (wantLen) return x.reply.integer(result.text.length);
  if (!wantIdx) return x.reply.bulk(result.text);
  const shown = result.matches.filter((m) => m.length >= minMatchLen);
  const r = x.reply;
  r.map(2);
  r.bulk("matches");
  r.array(shown.length);
  for (const m of shown) {
    r.array(withMatchLen ? 3 : 2);
    r.array(2);
    r.integer(m.a[0]);
    r.integer(m.a[1]);
    r.array(2);
    r.integer(m.b[0]);
    r.integer(m.b[1]);
    if (withMatchLen) r.integer(m.length);
  }
  r.bulk("len");
  r.integer(result.text.length);
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const write = ["write", "denyoom"] as const;
const read = ["readonly", "fast"] as const;

export const stringCommands: readonly CommandSpec[] = [
  {
    name: "get",
    arity: 2,
    flags: read,
    group: "string",
    summary: "Returns the string value of a key.",
    keys: one,
    run: (x, argv) => replyString(x, argv[1]!),
  },
  {
    name: "set",
    arity: -3,
    flags: write,
    group: "string",
    summary: "Sets the string value of a key, with expiry and conditions.",
    keys: one,
    run: (x, argv) => setGeneric(x, argv[1]!, argv[2]!, parseSetOptions(argv, 3), "set"),
  },
  {
    name: "setnx",
    arity: 3,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Sets a key only if it does not exist.",
    keys: one,
    run: (x, argv) => {
      if (x.db.has(argv[1]!)) return x.reply.integer(0);
      x.db.set(argv[1]!, argv[2]!);
      x.db.notify("set", argv[1]!);
      x.reply.integer(1);
    },
  },
  {
    name: "setex",
    arity: 4,
    flags: write,
    group: "string",
    summary: "Sets a key with a time to live in seconds.",
    keys: one,
    run: (x, argv) => setGeneric(x, argv[1]!, argv[3]!, { condition: null, expiry: { unit: "EX", text: argv[2]! }, keepTtl: false, get: false }, "setex"),
  },
  {
    name: "psetex",
    arity: 4,
    flags: write,
    group: "string",
    summary: "Sets a key with a time to live in milliseconds.",
    keys: one,
    run: (x, argv) => setGeneric(x, argv[1]!, argv[3]!, { condition: null, expiry: { unit: "PX", text: argv[2]! }, keepTtl: false, get: false }, "psetex"),
  },
  {
    name: "getset",
    arity: 3,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Sets a key and returns its old value.",
    keys: one,
    run: (x, argv) => setGeneric(x, argv[1]!, argv[2]!, getsetOptions, "getset"),
  },
  {
    name: "getdel",
    arity: 2,
    flags: ["write", "fast"],
    group: "string",
    summary: "Returns a key's value and deletes it.",
    keys: one,
    run: (x, argv) => {
      const value = getString(x, argv[1]!);
      if (value !== undefined) deleteKey(x.db, argv[1]!);
      x.reply.bulk(value ?? null);
    },
  },
  {
    name: "getex",
    arity: -2,
    flags: ["write", "fast"],
    group: "string",
    summary: "Returns a key's value and changes its expiry.",
    keys: one,
    run: getex,
  },
  {
    name: "mget",
    arity: -2,
    flags: read,
    group: "string",
    summary: "Returns the values of several keys.",
    keys: [1, -1, 1],
    run: (x, argv) => {
      x.reply.array(argv.length - 1);
      for (let i = 1; i < argv.length; i++) replyString(x, argv[i]!, true);
    },
  },
  {
    name: "mset",
    arity: -3,
    flags: write,
    group: "string",
    summary: "Sets several keys.",
    keys: [1, -1, 2],
    run: (x, argv) => {
      if (argv.length % 2 === 0) throw arityError("mset");
      setPairs(x, argv);
      x.reply.simple("OK");
    },
  },
  {
    name: "msetnx",
    arity: -3,
    flags: write,
    group: "string",
    summary: "Sets several keys only if none exists.",
    keys: [1, -1, 2],
    run: (x, argv) => {
      if (argv.length % 2 === 0) throw arityError("msetnx");
      for (let i = 1; i < argv.length; i += 2) if (x.db.has(argv[i]!)) return x.reply.integer(0);
      setPairs(x, argv);
      x.reply.integer(1);
    },
  },
  {
    name: "append",
    arity: 3,
    flags: [...write, "fast"],
    group: "string",
    summary: "Appends to a key's string value.",
    keys: one,
    run: (x, argv) => {
      const value = getStringValue(x, argv[1]!);
      checkSize((value?.length ?? 0) + argv[2]!.length);
      if (value instanceof MutableString) return writeInPlace(x, argv[1]!, value, value.length, argv[2]!, "append");
      const current = value ?? "";
      const result = current + argv[2]!;
      x.db.set(argv[1]!, result, true);
      x.db.notify("append", argv[1]!);
      x.reply.integer(result.length);
    },
  },
  {
    name: "strlen",
    arity: 2,
    flags: read,
    group: "string",
    summary: "Returns the length of a key's value.",
    keys: one,
    run: (x, argv) => x.reply.integer(getString(x, argv[1]!)?.length ?? 0),
  },
  {
    name: "incr",
    arity: 2,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Adds 1 to an integer value.",
    keys: one,
    run: (x, argv) => incrGeneric(x, argv[1]!, 1),
  },
  {
    name: "decr",
    arity: 2,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Subtracts 1 from an integer value.",
    keys: one,
    run: (x, argv) => incrGeneric(x, argv[1]!, -1),
  },
  {
    name: "incrby",
    arity: 3,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Adds an integer to an integer value.",
    keys: one,
    run: (x, argv) => incrGeneric(x, argv[1]!, parseStep(argv[2]!)),
  },
  {
    name: "decrby",
    arity: 3,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Subtracts an integer from an integer value.",
    keys: one,
    run: (x, argv) => {
      const by = parseStep(argv[2]!);
      if (by === int64Min) throw new KvError("ERR decrement would overflow");
      // 0 - by: a small step's negation, without the -0 that -0 would give.
      incrGeneric(x, argv[1]!, typeof by === "number" ? 0 - by : -by);
    },
  },
  {
    name: "incrbyfloat",
    arity: 3,
    flags: ["write", "denyoom", "fast"],
    group: "string",
    summary: "Adds a float to a numeric value.",
    keys: one,
    run: (x, argv) => {
      const result = incrByFloat(getString(x, argv[1]!) ?? "0", argv[2]!);
      x.db.set(argv[1]!, result, true);
      x.db.notify("incrbyfloat", argv[1]!);
      // The sum is rounded to what was stored; replaying the increment could round differently.
      x.propagate = [["SET", argv[1]!, result, "KEEPTTL"]];
      x.reply.bulk(result);
    },
  },
  { name: "getrange", arity: 4, flags: ["readonly"], group: "string", summary: "Returns a substring of a key's value.", keys: one, run: getrange },
  { name: "substr", arity: 4, flags: ["readonly"], group: "string", summary: "Returns a substring of a key's value (GETRANGE).", keys: one, run: getrange },
  { name: "setrange", arity: 4, flags: write, group: "string", summary: "Overwrites part of a key's value from an offset.", keys: one, run: setrange },
  { name: "lcs", arity: -3, flags: ["readonly"], group: "string", summary: "Finds the longest common subsequence of two strings.", keys: [1, 2, 1], run: lcs },
];

/** MSET's and MSETNX's writes: each pair set, and a "set" event for each. */
function setPairs(x: Exec, argv: string[]): void {
  for (let i = 1; i < argv.length; i += 2) {
    x.db.set(argv[i]!, argv[i + 1]!);
    x.db.notify("set", argv[i]!);
  }
}

function getex(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  let expiry: { unit: ExpiryUnit; text: string } | null = null;
  let persist = false;
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (isExpiryUnit(word) && expiry === null && !persist && i + 1 < argv.length) {
      expiry = { unit: word, text: argv[++i]! };
    } else if (word === "PERSIST" && expiry === null && !persist) persist = true;
    else throw syntaxError();
  }
  // Redis looks the key up before it validates the time: a missing key answers nil regardless.
  const value = getString(x, key);
  if (value === undefined) return x.reply.bulk(null);
  const at = expiry === null ? null : expiryTime(x, expiry.unit, expiry.text, "getex");
  // An EXAT or PXAT already past deletes the key (EX and PX must be positive).
  if (at !== null) expireAtOrDelete(x, key, at, x.engine.clock.nowMs());
  else if (persist && x.db.persist(key)) {
    x.propagate = [["PERSIST", key]];
    x.db.notify("persist", key);
  }
  x.reply.bulk(value);
}
