/**
 * Parsing command arguments the way Redis does (its string2ll and strtod checks), so the same
 * input is accepted or refused with the same error.
 */
import { KvError, notAFloat, notAnInteger } from "./errors.ts";

const int64Min = -(2n ** 63n);
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
const smallIntegerCharsMax = 15;

/**
 * An integer argument of at most 15 characters as a plain number, or null for anything else —
 * longer (use parseInt64) or not an integer. The fast path for INCR and friends.
 */
export function parseSmallInteger(text: string): number | null {
  if (text.length > smallIntegerCharsMax || !integerPattern.test(text)) return null;
  return Number(text);
}

export const isInt64 = (n: bigint) => n >= int64Min && n <= int64Max;

/**
 * An integer argument as a number (counts, indexes, timeouts). Values beyond 2^53 keep their
 * sign and magnitude closely enough for clamping, which is all such arguments are used for.
 */
export function parseInteger(text: string): number {
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
const hexFloatPattern = /^([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)(?:[pP]([+-]?\d+))?$/;
const infinityPattern = /^[+-]?inf(inity)?$/i;

/** C99 hex float text (strtod accepts "0x1p3"); null when it is not one. */
function parseHexFloat(text: string): number | null {
  const m = hexFloatPattern.exec(text);
  if (m === null || m[2]! + m[3]! === "") return null;
  const digits = m[2]! + m[3]!;
  const value = Number.parseInt(digits, 16) * 2 ** (Number(m[4] ?? 0) - 4 * m[3]!.length);
  return m[1] === "-" ? -value : value;
}

/**
 * A double argument (scores, INCRBYFLOAT's operands) as Redis's string2d accepts it: all of
 * strtod's syntax including hex floats and inf, but no spaces, no NaN, and nothing that overflows
 * or underflows to zero (strtod's ERANGE;
 * a subnormal result is accepted, as in Redis).
 */
export function parseFloatArg(text: string): number {
  if (infinityPattern.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  const n = decimalFloatPattern.test(text) ? Number(text) : parseHexFloat(text);
  if (n === null || !Number.isFinite(n)) throw notAFloat();
  if (n === 0 && /[1-9a-fA-F]/.test(text.replace(/^[+-]?0[xX]/, "").replace(/[eEpP].*$/, ""))) throw notAFloat();
  return n;
}

/** Case-insensitive keyword comparison without allocating for the common mismatch. */
export function isKeyword(arg: string, upper: string): boolean {
  return arg.length === upper.length && arg.toUpperCase() === upper;
}

/**
 * A blocking command's timeout in seconds (a double since Redis 6) as an absolute deadline in Unix
 * milliseconds; 0 means no deadline.
 */
export function parseTimeout(text: string, nowMs: number): number {
  let seconds: number;
  try {
    seconds = parseFloatArg(text);
  } catch {
    throw new KvError("ERR timeout is not a float or out of range");
  }
  if (seconds < 0) throw new KvError("ERR timeout is negative");
  if (!Number.isFinite(seconds)) throw new KvError("ERR timeout is out of range");
  return seconds === 0 ? Infinity : nowMs + seconds * 1000;
}
