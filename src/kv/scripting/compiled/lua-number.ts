/**
 * Lua 5.1's conversions between numbers and strings, as the native Lua (glibc underneath) makes
 * them, for compiled scripts:
 * - formatG: C's printf("%.<digits>g"), which Lua's tostring (%.14g), cjson (%.14g) and Redis's
 *   reading of a script's number arguments (%.17g) use;
 * - luaStringToNumber: luaO_str2d, by which tonumber(s) and arithmetic read a string: glibc's
 *   strtod (decimal, hexadecimal with a binary exponent, inf, infinity, nan, nan(chars)), then
 *   only whitespace; the string ends at its first NUL, as a C string does;
 * - luaToNumberBase: tonumber(s, base), strtoul's reading of s.
 *
 * A NaN's sign cannot be known in JavaScript (the engine keeps one NaN), while glibc prints
 * "nan" or "-nan" after it: writing a NaN bails.
 */
import { bail } from "./lua-value.ts";

/** Integers below this are written by %.14g (and %.17g) digit for digit, as JavaScript writes them. */
const wholeIntegerBound = 1e14;

/** Integers up to this are written by JavaScript digit for digit (past it, it writes a shortest form padded with zeros). */
const exactIntegerMax = 2 ** 53;

/** The precision string.format may ask for at most (Lua 5.1 reads two digits of it). */
const digitsMax = 99;

/** tostring(n) for a number: %.14g. */
export function luaToString(n: number): string {
  if (Number.isInteger(n) && n < wholeIntegerBound && n > -wholeIntegerBound) {
    return n === 0 && Object.is(n, -0) ? "-0" : `${n}`;
  }
  return formatG(n, 14);
}

/** `n` as C's printf("%.<digits>g", n) writes it (glibc); a precision of 0 is taken as 1. */
export function formatG(n: number, digits: number): string {
  if (Number.isNaN(n)) return bail("writing a NaN, whose sign (nan or -nan) is not known here");
  if (n === Infinity) return "inf";
  if (n === -Infinity) return "-inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const precision = digits < 1 ? 1 : digits;
  if (precision > digitsMax || !Number.isInteger(precision)) return bail("a %g precision past what Lua reads");
  const magnitude = n < 0 ? -n : n;
  // An integer of at most `precision` digits is written whole (its exponent is below the precision).
  if (Number.isInteger(magnitude) && magnitude <= exactIntegerMax && magnitude < 10 ** precision) return `${n}`;
  const [mantissa, exponent] = roundedScientific(magnitude, precision);
  const sign = n < 0 ? "-" : "";
  if (exponent < -4 || exponent >= precision) {
    const e = exponent < 0 ? -exponent : exponent;
    return `${sign}${trimFraction(mantissa)}e${exponent < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`;
  }
  return sign + trimFraction(fixedFromScientific(mantissa, exponent));
}

/**
 * `x` (positive, finite) rounded to `precision` significant digits as glibc rounds (to nearest,
 * ties to even, on the exact binary value): its mantissa "d.ddd" and decimal exponent.
 * JavaScript's toExponential rounds ties away from zero instead; a tie is possible only where
 * the exact value has precision + 1 significant digits ending in 5, checked exactly.
 */
function roundedScientific(x: number, precision: number): [string, number] {
  const longer = x.toExponential(precision);
  const e = longer.indexOf("e");
  if (longer.charCodeAt(e - 1) === 53 /* 5 */ && Number(longer) === x && exactDigits(x).length === precision + 1) {
    // A tie: the digits kept stand when the last of them is even; rounded up (as toExponential
    // rounds) when it is odd.
    // precision + 1 digits: "d.ddd5" without its point, the 5 dropped.
    const kept = longer[0]! + longer.slice(2, e - 1);
    if ((kept.charCodeAt(precision - 1) - 48) % 2 === 0) {
      const mantissa = precision === 1 ? kept : `${kept[0]}.${kept.slice(1)}`;
      return [mantissa, Number(longer.slice(e + 1))];
    }
  }
  const text = x.toExponential(precision - 1);
  const at = text.indexOf("e");
  return [text.slice(0, at), Number(text.slice(at + 1))];
}

/** The significant digits of `x`'s exact decimal value (finite, nonzero), trailing zeros dropped. */
function exactDigits(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  const scaled = exponent >= 0 ? mantissa << BigInt(exponent) : mantissa * 5n ** BigInt(-exponent);
  return scaled.toString().replace(/0+$/, "");
}

/** "d.ddd" times 10^exponent (-4 ≤ exponent < digits) written without an exponent, every digit kept. */
function fixedFromScientific(mantissa: string, exponent: number): string {
  const digits = mantissa.length > 1 ? mantissa[0] + mantissa.slice(2) : mantissa;
  if (exponent < 0) return `0.${"0".repeat(-exponent - 1)}${digits}`;
  const point = exponent + 1;
  if (point >= digits.length) return digits + "0".repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Drops a fraction's trailing zeros, and its point if nothing is left after it (%g's rule). */
function trimFraction(text: string): string {
  if (text.indexOf(".") < 0) return text;
  let end = text.length;
  while (text.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (text.charCodeAt(end - 1) === 46 /* . */) end--;
  return text.slice(0, end);
}

// ---- reading ------------------------------------------------------------------------------------

/** C's isspace in the C locale: space, \t, \n, \v, \f, \r. */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** A hexadecimal digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** Where the text, as a C string, ends: its length, or its first NUL. */
function cEnd(s: string): number {
  const nul = s.indexOf("\0");
  return nul < 0 ? s.length : nul;
}

/** Whether only whitespace lies from `at` to `end`. */
function onlySpaceFrom(s: string, at: number, end: number): boolean {
  for (let i = at; i < end; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

/**
 * Lua 5.1's reading of a string as a number (luaO_str2d: tonumber(s), arithmetic on strings), or
 * undefined when it is not one. Plain decimal integers, the common case, are read directly.
 */
export function luaStringToNumber(s: string): number | undefined {
  const length = s.length;
  if (length > 0 && length < 16) {
    let n = 0;
    let i = 0;
    for (; i < length; i++) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      n = n * 10 + (c - 48);
    }
    if (i === length) return n;
  }
  const end = cEnd(s);
  const read = strtod(s, 0, end);
  if (read === undefined) return undefined;
  // luaO_str2d then tries strtoul at an 'x' where strtod stopped; glibc's strtod reads every
  // hexadecimal number strtoul would, so strtoul stops at that same 'x' and the string is refused.
  return onlySpaceFrom(s, strtodEnd, end) ? read : undefined;
}

/** Where the last strtod call stopped reading (its endptr). */
let strtodEnd = 0;

/** Where the last strtod that read a number stopped (C's endptr). */
export function strtodStop(): number {
  return strtodEnd;
}

/**
 * glibc's strtod of s from `at` (the text ending at `end`): the number it reads, its end left in
 * strtodEnd; undefined when it reads none. Leading whitespace, an optional sign, then INF or
 * INFINITY, NAN or NAN(chars), a hexadecimal number (0x, digits with an optional point, an
 * optional binary exponent) or a decimal one, each correctly rounded.
 */
export function strtod(s: string, at: number, end: number): number | undefined {
  let i = at;
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  let negative = false;
  const signChar = s.charCodeAt(i);
  if (i < end && (signChar === 43 || signChar === 45)) {
    negative = signChar === 45;
    i++;
  }
  const magnitude = readUnsigned(s, i, end);
  if (magnitude === undefined) return undefined;
  return negative ? -magnitude : magnitude;
}

/** strtod's reading after the sign; sets strtodEnd. */
function readUnsigned(s: string, at: number, end: number): number | undefined {
  const c = s.charCodeAt(at) | 0x20;
  if (at < end && (c === 105 /* i */ || c === 110) /* n */) return readWord(s, at, end);
  if (at + 2 < end && s.charCodeAt(at) === 48 && (s.charCodeAt(at + 1) | 0x20) === 120 /* x */) {
    const hex = readHexadecimal(s, at + 2, end);
    if (hex !== undefined) return hex;
    // "0x" with no digit after it: strtod reads the 0.
    strtodEnd = at + 1;
    return 0;
  }
  return readDecimal(s, at, end);
}

/** Whether s holds `word` (lower case) at `at`, in any case, before `end`. */
function hasWord(s: string, at: number, end: number, word: string): boolean {
  if (at + word.length > end) return false;
  for (let k = 0; k < word.length; k++) if ((s.charCodeAt(at + k) | 0x20) !== word.charCodeAt(k)) return false;
  return true;
}

/** INF, INFINITY, NAN, NAN(chars) in any case. */
function readWord(s: string, at: number, end: number): number | undefined {
  if (hasWord(s, at, end, "infinity")) {
    strtodEnd = at + 8;
    return Infinity;
  }
  if (hasWord(s, at, end, "inf")) {
    strtodEnd = at + 3;
    return Infinity;
  }
  if (!hasWord(s, at, end, "nan")) return undefined;
  strtodEnd = at + 3;
  if (s.charCodeAt(at + 3) === 40 /* ( */ && at + 3 < end) {
    let k = at + 4;
    while (k < end && isNanChar(s.charCodeAt(k))) k++;
    if (k < end && s.charCodeAt(k) === 41 /* ) */) strtodEnd = k + 1;
  }
  return NaN;
}

function isNanChar(c: number): boolean {
  const lower = c | 0x20;
  return isDigit(c) || (lower >= 97 && lower <= 122) || c === 95;
}

/** Digits with an optional point and an optional exponent; JavaScript's Number reads them as strtod does. */
function readDecimal(s: string, at: number, end: number): number | undefined {
  let i = at;
  while (i < end && isDigit(s.charCodeAt(i))) i++;
  let mantissaDigits = i - at;
  if (i < end && s.charCodeAt(i) === 46 /* . */) {
    const from = ++i;
    while (i < end && isDigit(s.charCodeAt(i))) i++;
    mantissaDigits += i - from;
  }
  if (mantissaDigits === 0) return undefined;
  if (i < end && (s.charCodeAt(i) | 0x20) === 101 /* e */) {
    let k = i + 1;
    const sign = s.charCodeAt(k);
    if (k < end && (sign === 43 || sign === 45)) k++;
    const from = k;
    while (k < end && isDigit(s.charCodeAt(k))) k++;
    if (k > from) i = k;
  }
  strtodEnd = i;
  // JavaScript's Number reads every form this takes ("5.", ".5", "1.e3") and rounds as glibc does.
  return Number(s.slice(at, i));
}

/**
 * A hexadecimal number after its "0x": digits, an optional point and digits, an optional binary
 * exponent; correctly rounded (to nearest, ties to even), as glibc rounds it. Undefined when no
 * digit comes.
 */
function readHexadecimal(s: string, at: number, end: number): number | undefined {
  let i = at;
  let digits = "";
  while (i < end && hexValue(s.charCodeAt(i)) >= 0) i++;
  digits = s.slice(at, i);
  let fractionDigits = 0;
  if (i < end && s.charCodeAt(i) === 46 /* . */) {
    const from = ++i;
    while (i < end && hexValue(s.charCodeAt(i)) >= 0) i++;
    fractionDigits = i - from;
    digits += s.slice(from, i);
  }
  if (digits.length === 0) return undefined;
  let exponent = 0;
  if (i < end && (s.charCodeAt(i) | 0x20) === 112 /* p */) {
    let k = i + 1;
    const sign = s.charCodeAt(k);
    const negative = k < end && sign === 45;
    if (k < end && (sign === 43 || sign === 45)) k++;
    const from = k;
    let value = 0;
    // Past this the number is 0 or infinite whatever its digits (saturating, as glibc does).
    for (; k < end && isDigit(s.charCodeAt(k)); k++) if (value < hexExponentSaturation) value = value * 10 + (s.charCodeAt(k) - 48);
    if (k > from) {
      exponent = negative ? -value : value;
      i = k;
    }
  }
  strtodEnd = i;
  return binaryToDouble(BigInt(`0x${digits}`), exponent - 4 * fractionDigits);
}

/** A binary exponent past which any hexadecimal mantissa gives 0 or infinity (it saturates there). */
const hexExponentSaturation = 1e15;

/** mantissa × 2^exponent as the nearest double (ties to even), infinity past the largest. */
function binaryToDouble(mantissa: bigint, exponent: number): number {
  if (mantissa === 0n) return 0;
  const bits = mantissa.toString(2).length;
  const top = bits - 1 + exponent;
  if (top > 1023) return Infinity;
  if (top < -1075) return 0;
  // The weight of the last bit kept: 53 bits for a normal number, fewer for a subnormal one.
  const lowest = Math.max(top - 52, -1074);
  const shift = lowest - exponent;
  let kept: bigint;
  if (shift <= 0) {
    kept = mantissa << BigInt(-shift);
  } else {
    const s = BigInt(shift);
    kept = mantissa >> s;
    const rest = mantissa - (kept << s);
    const half = 1n << (s - 1n);
    if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
  }
  // kept ≤ 2^53 and 2^lowest ≥ 2^-1074: the product is exact, or overflows to infinity as it should.
  return Number(kept) * 2 ** lowest;
}

/** Largest result of strtoul (unsigned long, 64 bits): what it answers on overflow. */
const unsignedLongMax = 2n ** 64n - 1n;

/**
 * tonumber(s, base): base 10 reads as luaStringToNumber; another (2 to 36, as luaL_checkint cuts
 * it) as strtoul reads s (leading whitespace, a sign — a minus negates modulo 2^64 —, "0x" before
 * base 16 digits, ULONG_MAX on overflow), then only whitespace. A base out of range bails (an
 * error in Lua).
 */
export function luaToNumberBase(s: string, base: number): number | undefined {
  const b = Math.trunc(base);
  if (!(b >= -2147483648 && b <= 2147483647)) return bail("tonumber's base is no C int");
  if (b === 10) return luaStringToNumber(s);
  if (b < 2 || b > 36) return bail("tonumber's base out of range");
  const end = cEnd(s);
  let i = 0;
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  let negative = false;
  const sign = s.charCodeAt(i);
  if (i < end && (sign === 43 || sign === 45)) {
    negative = sign === 45;
    i++;
  }
  if (b === 16 && i + 2 < end && s.charCodeAt(i) === 48 && (s.charCodeAt(i + 1) | 0x20) === 120 && digitValue(s.charCodeAt(i + 2)) < 16) i += 2;
  const from = i;
  let n = 0n;
  const bigBase = BigInt(b);
  let overflow = false;
  for (; i < end; i++) {
    const d = digitValue(s.charCodeAt(i));
    if (d >= b) break;
    if (!overflow) {
      n = n * bigBase + BigInt(d);
      if (n > unsignedLongMax) overflow = true;
    }
  }
  if (i === from) return undefined;
  if (!onlySpaceFrom(s, i, end)) return undefined;
  if (overflow) return Number(unsignedLongMax);
  return Number(negative && n !== 0n ? 2n ** 64n - n : n);
}

/** A digit's value in bases up to 36 (0-9, a-z, A-Z), or 99 for any other byte. */
function digitValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  if (lower >= 97 && lower <= 122) return lower - 87;
  return 99;
}
