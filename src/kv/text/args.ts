/**
 * Parsing command arguments the way Redis does (its string2ll and strtod checks), so the same
 * input is accepted or refused with the same error.
 */
import { KvError, notAFloat, notAnInteger, overflow, syntaxError } from "./errors.ts";

export const int64Min = -(2n ** 63n);
/** C's LONG_MAX on 64-bit Linux: the upper bound of most of Redis's count arguments. */
export const int64Max = 2n ** 63n - 1n;
/** Digits of a decimal integer as Redis's string2ll accepts it: no sign "+", no leading zeros. */
const integerPattern = /^(0|-?[1-9][0-9]*)$/;

/** An int64 argument as a BigInt, or null when Redis would refuse it. */
export function parseInt64(text: string): bigint | null {
  if (text.length > 20 || !integerPattern.test(text)) return null;
  const n = BigInt(text);
  return n < int64Min || n > int64Max ? null : n;
}

/** Longest integer text that parseSmallInteger reads: below 10^15, so exact in a double. */
export const smallIntegerCharsMax = 15;

/** Steps that keep a sum with a parseSmallInteger value below 2^53 (constants: BigInt negation allocates). */
const smallStepMax = 10n ** 15n;
const smallStepMin = -smallStepMax;

/**
 * An integer step (INCRBY's, DECRBY's, HINCRBY's): a number while it has at most
 * smallIntegerCharsMax chars, so the common case adds no BigInts, else an int64; Redis's error
 * for anything else.
 */
export function parseStep(text: string): number | bigint {
  const n = parseSmallInteger(text) ?? parseInt64(text);
  if (n === null) throw notAnInteger();
  return n;
}

/**
 * The integer `current` holds (0 when undefined) plus `by`, as INCRBY and HINCRBY add: in plain
 * numbers while both are small (a short value and a step below 10^15 cannot leave 2^53), else in
 * int64 — `notInteger()` for a value that is not one, Redis's overflow error past int64.
 */
export function sumWithInteger(current: string | undefined, by: number | bigint, notInteger: () => KvError): number | bigint {
  const small = current === undefined ? 0 : parseSmallInteger(current);
  const smallBy = typeof by === "number" ? by : by >= smallStepMin && by <= smallStepMax ? Number(by) : null;
  if (small !== null && smallBy !== null) return small + smallBy;
  const base = current === undefined ? 0n : parseInt64(current);
  if (base === null) throw notInteger();
  const result = base + BigInt(by);
  if (!isInt64(result)) throw overflow();
  return result;
}

/**
 * An integer argument of at most 15 characters as a plain number, or null for anything else —
 * longer (use parseInt64) or not an integer. The fast path for INCR and friends, so it reads the
 * digits itself rather than run integerPattern (which it agrees with) and convert.
 */
export function parseSmallInteger(text: string): number | null {
  const length = text.length;
  if (length === 0 || length > smallIntegerCharsMax) return null;
  const negative = text.charCodeAt(0) === 45; // "-"
  const i = negative ? 1 : 0;
  // No leading zeros, and no "-0": zero is "0" alone.
  if (i === length || (text.charCodeAt(i) === 48 && length > 1)) return null;
  const n = digitsFrom(text, i);
  return n === null ? null : negative ? -n : n;
}

/** The number the characters of `text` from `from` to its end spell, all decimal digits; else null. */
export function digitsFrom(text: string, from: number): number | null {
  let n = 0;
  for (let i = from; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    n = n * 10 + digit;
  }
  return n;
}

export const isInt64 = (n: bigint) => n >= int64Min && n <= int64Max;

/**
 * An integer argument as a number (counts, indexes, timeouts). Values beyond 2^53 keep their
 * sign and magnitude closely enough for clamping, which is all such arguments are used for.
 */
export function parseInteger(text: string): number {
  const small = parseSmallInteger(text);
  if (small !== null) return small;
  const n = parseInt64(text);
  if (n === null) throw notAnInteger();
  return Number(n);
}

/**
 * An integer in [min, max], with the caller's error for anything else — not an integer either —
 * as Redis's getRangeLongFromObjectOrReply answers when given a message.
 */
export function parseIntegerIn(text: string, min: number | bigint, max: number | bigint, error: () => Error): number {
  const n = parseInt64(text);
  if (n === null || n < BigInt(min) || n > BigInt(max)) throw error();
  return Number(n);
}

const decimalFloatPattern = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** C99 hex float syntax (sign, integer digits, fraction digits, binary exponent), as strtod and strtold read it. */
export const hexFloatPattern = /^([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)(?:[pP]([+-]?\d+))?$/;
/** "inf" and "infinity" in any case, signed or not, as strtod and strtold read them. */
export const infinityPattern = /^[+-]?inf(inity)?$/i;

/** C99 hex float text (strtod accepts "0x1p3"); null when it is not one. */
function parseHexFloat(text: string): number | null {
  const m = hexFloatPattern.exec(text);
  if (m === null || m[2]! + m[3]! === "") return null;
  const digits = m[2]! + m[3]!;
  const value = Number.parseInt(digits, 16) * 2 ** (Number(m[4] ?? 0) - 4 * m[3]!.length);
  return m[1] === "-" ? -value : value;
}

const parseInfinity = (text: string) => (infinityPattern.test(text) ? (text.startsWith("-") ? -Infinity : Infinity) : null);

/** Decimal or hex float text as a double, overflowing to ±inf and underflowing to 0; else null. */
const parseFiniteSyntax = (text: string) => (decimalFloatPattern.test(text) ? Number(text) : parseHexFloat(text));

/**
 * Text that C's strtod reads whole — decimal, hex floats, inf and infinity; no spaces, no NaN —
 * as the double it returns, with no range checks: overflow is ±inf and underflow 0, as when a
 * caller ignores ERANGE (Redis's score range ends). Null for anything else.
 */
export function strtod(text: string): number | null {
  return parseInfinity(text) ?? parseFiniteSyntax(text);
}

/** Text with the leading white space C's strtod skips (isspace) skipped. */
export const skipLeadingSpace = (text: string) => text.replace(/^[ \t\n\v\f\r]+/, "");

/**
 * Whether a number's text has a non-zero digit before its exponent (past any hex prefix): one that
 * strtod read as 0 underflowed.
 */
export const hasNonZeroMantissa = (text: string) => /[1-9a-fA-F]/.test(text.replace(/^[+-]?0[xX]/, "").replace(/[eEpP].*$/, ""));

/**
 * A double argument (scores, INCRBYFLOAT's operands) as Redis's string2d accepts it: strtod's
 * syntax, but nothing that overflows or underflows to zero (strtod's ERANGE; a subnormal result
 * is accepted, as in Redis).
 */
export function parseFloatArg(text: string): number {
  // Digits alone are the common case (an integer score, "000000012345" from redis-benchmark
  // too); the digit loop is several times cheaper than the patterns.
  return parseDigits(text) ?? parseFloatArgByPattern(text);
}

/** parseFloatArg by the patterns alone: the reference its fast path is tested against. */
export function parseFloatArgByPattern(text: string): number {
  const infinity = parseInfinity(text);
  if (infinity !== null) return infinity;
  const n = parseFiniteSyntax(text);
  if (n === null || !Number.isFinite(n)) throw notAFloat();
  if (n === 0 && hasNonZeroMantissa(text)) throw notAFloat();
  return n;
}

/**
 * A sign (or none) and 1 to smallIntegerCharsMax decimal digits, leading zeros allowed, as the
 * number they spell (exact: fewer than 16 digits); null for any other text. "-0" is -0, as
 * strtod reads it.
 */
function parseDigits(text: string): number | null {
  const length = text.length;
  const signed = length > 0 && (text.charCodeAt(0) === 45 || text.charCodeAt(0) === 43); // "-" or "+"
  const from = signed ? 1 : 0;
  if (from === length || length - from > smallIntegerCharsMax) return null;
  const n = digitsFrom(text, from);
  return n === null ? null : text.charCodeAt(0) === 45 ? -n : n;
}

/**
 * Whether `arg` is the keyword `upper` (ASCII capitals) in any case, as Redis's strcasecmp
 * compares: char by char, with a–z folded, making no string (toUpperCase made one for every
 * option of every XADD and SET). No other latin1 char folds to an ASCII letter of the same
 * length, so the answers are toUpperCase's.
 */
export function isKeyword(arg: string, upper: string): boolean {
  const length = upper.length;
  if (arg.length !== length) return false;
  for (let i = 0; i < length; i++) {
    const c = arg.charCodeAt(i);
    const u = upper.charCodeAt(i);
    if (c !== u && !(c >= LOWER_A && c <= LOWER_Z && c - caseBit === u)) return false;
  }
  return true;
}

const LOWER_A = 0x61;
const LOWER_Z = 0x7a;
/** What separates an ASCII lower-case letter from its capital. */
const caseBit = 0x20;

/**
 * Normalises a start/stop pair of 0-based indexes or ranks as LRANGE, LTRIM, ZRANGE and
 * ZREMRANGEBYRANK do (negative counts from the end, ends clamped); null when it selects nothing.
 * Returns 0-based inclusive [start, end].
 */
export function clampRankRange(start: number, end: number, length: number): [number, number] | null {
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (start > end || start >= length) return null;
  if (end >= length) end = length - 1;
  return [start, end];
}

/** LMPOP's and ZMPOP's arguments: the keys, which end to pop from, and how many. */
export interface MultiPop {
  keys: string[];
  /** Index in `ends` of the end named: 0 for LEFT or MIN, 1 for RIGHT or MAX. */
  end: 0 | 1;
  count: number;
}

/**
 * "numkeys key [key ...] <end> [COUNT count]" from argv[at], where <end> is one of the two
 * `ends` words, checked in the order Redis checks LMPOP's and ZMPOP's arguments.
 */
export function parseMultiPop(argv: readonly string[], at: number, ends: readonly [string, string]): MultiPop {
  const numKeys = parseIntegerIn(argv[at]!, 1, int64Max, () => new KvError("ERR numkeys should be greater than 0"));
  if (numKeys > argv.length - at - 2) throw syntaxError();
  const endAt = at + 1 + numKeys;
  const end = isKeyword(argv[endAt]!, ends[0]) ? 0 : isKeyword(argv[endAt]!, ends[1]) ? 1 : null;
  if (end === null) throw syntaxError();
  let count: number | null = null;
  for (let i = endAt + 1; i < argv.length; i++) {
    if (count === null && isKeyword(argv[i]!, "COUNT") && i + 1 < argv.length) {
      count = parseIntegerIn(argv[++i]!, 1, int64Max, () => new KvError("ERR count should be greater than 0"));
    } else throw syntaxError();
  }
  return { keys: argv.slice(at + 1, endAt), end, count: count ?? 1 };
}
