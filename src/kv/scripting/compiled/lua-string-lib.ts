/**
 * Lua 5.1's string library (lstrlib.c of Lua 5.1.5) for compiled scripts: len, sub, byte, char,
 * rep, reverse, lower, upper, format, find, match, gmatch and gsub, with Lua's patterns.
 *
 * Strings are JavaScript strings of one character per byte (lua-value.ts). Every function here
 * gives what Lua 5.1.5 gives, byte for byte, or throws LuaBail so the script runs on the Lua
 * engine instead: at any Lua error, and also wherever Lua's result depends on the machine (a C
 * cast of a number out of its integer type's range, the sign of a NaN), or on a limit of Lua's
 * (its C stack, its memory) that this module does not track exactly.
 *
 * The port keeps lstrlib.c's quirks, as scripts see them:
 * - a pattern ends at its first NUL (C strings); `%f` and `%b` read the subject's NUL terminator
 *   at its end; errors in a pattern are raised only when the matcher reaches them;
 * - `find` searches plainly when the pattern (up to its first NUL) has no special character;
 * - gmatch takes `^` literally; a gsub replacement string ending in `%` adds a NUL;
 * - format's `%s` and `%c` go through C's sprintf, which stops at a NUL, unless `%s` has no
 *   precision and a string of 100 bytes or more (then Lua adds the string whole);
 * - numbers given where strings are expected are written as tostring writes them (%.14g), and
 *   strings given where numbers are expected are read as Lua reads them (both lua-number.ts);
 * - format writes numbers as glibc's printf does, rounding the exact binary value to nearest,
 *   ties to even (BigInt arithmetic where doubles cannot be sure), with glibc's quirk of %#g.
 * The server's Lua also refuses (limits.rs) a pattern of more than 200 quantified items and
 * captures, "pattern too complex": so does this module, before matching.
 *
 * Each Lua function is exported as a LuaFunction (LuaValue arguments, an array of results), and
 * the common single-result ones also as typed fast variants (strSub, strLen, …) for generated
 * code that knows its argument types.
 */
import { detachedCopy, detachedSlice, sliceSourceCharsMax } from "../../text/detached-slice.ts";
import { luaStringToNumber, luaToString } from "./lua-number.ts";
import { LuaTable } from "./lua-table.ts";
import { bail, type LuaFunction, type LuaValue, noValues } from "./lua-value.ts";

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

/** LUA_MAXCAPTURES: captures a pattern may open. */
const capturesMax = 32;
/** limits.rs PATTERN_ITEMS_MAX: quantified items and captures the server's Lua lets a pattern hold. */
const patternItemsMax = 200;
/** How deep this matcher recurses before leaving the match to Lua (never reached within patternItemsMax). */
const matchDepthMax = 250;
/** Matcher steps one call may take before leaving the match to Lua, whose matcher may well take as long. */
const matchStepsMax = 20_000_000;
/** LUAI_MAXCSTACK: stack slots a C function may fill, its arguments included (string.byte's results). */
const cStackSlotsMax = 8000;
/** Bytes of a result string past which the string is left to Lua, whose memory limit may refuse it. */
const resultBytesMax = 32 * 1024 * 1024;

/** lua_Integer (a C long) holds [-2^63, 2^63); int holds [-2^31, 2^31). */
const longMin = -(2 ** 63);
const longEnd = 2 ** 63;
const intMin = -(2 ** 31);
const intMax = 2 ** 31 - 1;
/**
 * C's cast of a negative double to an unsigned long is undefined: x86-64 code wraps it modulo
 * 2^64, as the server's Lua does there (format('%x', -1) is ffffffffffffffff); elsewhere it bails.
 */
const negativeUnsignedWraps = process.arch === "x64";

// ---------------------------------------------------------------------------------------------
// Arguments, as lauxlib checks them
// ---------------------------------------------------------------------------------------------

/** luaL_checklstring: a string, or a number written as tostring writes it. */
function checkString(v: LuaValue): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return luaToString(v);
  return bail("string expected");
}

/** luaL_checknumber: a number, or a string Lua reads as one. */
function checkNumber(v: LuaValue): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const n = luaStringToNumber(v);
    if (n !== undefined) return n;
  }
  return bail("number expected");
}

/** luaL_checkinteger: the number cut to a C long; out of its range the cast is the machine's, so bail. */
function checkInteger(v: LuaValue): number {
  return toLong(typeof v === "number" ? v : checkNumber(v));
}

function toLong(x: number): number {
  if (!(x >= longMin && x < longEnd)) bail("integer argument out of range");
  return Math.trunc(x);
}

/** luaL_optinteger: nil (or no value) gives the default. */
function optInteger(v: LuaValue, otherwise: number): number {
  return v === undefined ? otherwise : checkInteger(v);
}

/** luaL_checkint: a C long cut to a C int; bail where that cut would wrap. */
function checkInt(v: LuaValue): number {
  const n = checkInteger(v);
  if (n < intMin || n > intMax) bail("int argument out of range");
  return n;
}

const isTruthy = (v: LuaValue): boolean => v !== undefined && v !== false;

/** lstrlib's posrelat: a negative position counts back from the end; below the start is 0. */
function relativePosition(pos: number, length: number): number {
  if (pos < 0) pos += length + 1;
  return pos >= 0 ? pos : 0;
}

function checkResultLength(length: number): void {
  if (length > resultBytesMax) bail("result string too long");
}

// ---------------------------------------------------------------------------------------------
// Exact decimal digits of a double, as glibc's printf rounds them (to nearest, ties to even)
// ---------------------------------------------------------------------------------------------

const doubleView = new DataView(new ArrayBuffer(8));
/** A double's significand and binary exponent: x = significand × 2^exponent, exactly. */
let significand = 0n;
let binaryExponent = 0;

function splitDouble(x: number): void {
  doubleView.setFloat64(0, x);
  const high = doubleView.getUint32(0);
  const low = doubleView.getUint32(4);
  const biased = (high >>> 20) & 0x7ff;
  const fraction = (high & 0xfffff) * 2 ** 32 + low;
  if (biased === 0) {
    significand = BigInt(fraction);
    binaryExponent = -1074;
  } else {
    significand = BigInt(fraction + 2 ** 52);
    binaryExponent = biased - 1075;
  }
}

const powersOfTen: bigint[] = [1n];
function powerOfTen(k: number): bigint {
  while (powersOfTen.length <= k) powersOfTen.push(powersOfTen[powersOfTen.length - 1]! * 10n);
  return powersOfTen[k]!;
}

/** round(x × 10^k) to nearest, ties to even, of the double last given to splitDouble. */
function roundScaled(k: number): bigint {
  let numerator = significand;
  let denominator = 1n;
  if (binaryExponent >= 0) numerator <<= BigInt(binaryExponent);
  else denominator <<= BigInt(-binaryExponent);
  if (k >= 0) numerator *= powerOfTen(k);
  else denominator *= powerOfTen(-k);
  if (denominator === 1n) return numerator;
  const quotient = numerator / denominator;
  const twiceRest = (numerator - quotient * denominator) * 2n;
  if (twiceRest > denominator || (twiceRest === denominator && (quotient & 1n) === 1n)) return quotient + 1n;
  return quotient;
}

/** Powers of ten a double holds exactly. */
const exactPowersOfTen = Array.from({ length: 23 }, (_, k) => 10 ** k);
/**
 * A product (or quotient) of x and an exact power of ten is off by at most 2^-53 of itself: below
 * fastScaledEnd that is under 2^-13, so where its fraction is further than fastTieMargin from
 * one half, it rounds to the integer the exact value rounds to.
 */
const fastScaledEnd = 2 ** 40;
const fastTieMargin = 2 ** -12;

/** round(x × 10^k) of x ≥ 0 (as roundScaled) by double arithmetic where that is sure; -1 where not. */
function fastRoundScaled(x: number, k: number): number {
  if (k > 22 || k < -22) return -1;
  const y = k >= 0 ? x * exactPowersOfTen[k]! : x / exactPowersOfTen[-k]!;
  if (!(y < fastScaledEnd)) return -1;
  const whole = Math.floor(y);
  const fraction = y - whole;
  if (Math.abs(fraction - 0.5) <= fastTieMargin) return -1;
  return fraction > 0.5 ? whole + 1 : whole;
}

/** The decimal exponent found by significantDigits, and whether rounding carried into it. */
let decimalExponent = 0;
let roundingCarried = false;

/** The sign of x − 10^k, exactly, for the double last given to splitDouble. */
function compareWithPowerOfTen(k: number): number {
  let left = significand;
  let right = k >= 0 ? powerOfTen(k) : 1n;
  if (binaryExponent >= 0) left <<= BigInt(binaryExponent);
  else right <<= BigInt(-binaryExponent);
  if (k < 0) left *= powerOfTen(-k);
  return left > right ? 1 : left < right ? -1 : 0;
}

/**
 * `count` significant digits of x ≥ 0, rounded, and (in decimalExponent) the power of ten of the
 * first: x ≈ d.ddd × 10^decimalExponent, as %e writes it.
 */
function significantDigits(x: number, count: number): string {
  roundingCarried = false;
  if (x === 0) {
    decimalExponent = 0;
    return "0".repeat(count);
  }
  let exponent = Math.floor(Math.log10(x));
  // Strictly inside [10^(count-1), 10^count), the digits have count digits without a carry.
  const fast = fastRoundScaled(x, count - 1 - exponent);
  if (fast > exactPowersOfTen[count - 1]! && fast < exactPowersOfTen[count]!) {
    decimalExponent = exponent;
    return String(fast);
  }
  splitDouble(x);
  // floor(log10(x)), exactly: Math.log10 may be one off near a power of ten.
  while (compareWithPowerOfTen(exponent) < 0) exponent--;
  while (compareWithPowerOfTen(exponent + 1) >= 0) exponent++;
  const digits = roundScaled(count - 1 - exponent).toString();
  if (digits.length === count) {
    decimalExponent = exponent;
    return digits;
  }
  // Rounded up to 10^count: one more power of ten.
  roundingCarried = true;
  decimalExponent = exponent + 1;
  return `1${"0".repeat(count - 1)}`;
}

/** %.<precision>f of x ≥ 0, without its sign. */
function fixedDigits(x: number, precision: number, alternate: boolean): string {
  let digits: string;
  let fast: number;
  if (Number.isSafeInteger(x)) digits = String(x) + "0".repeat(precision);
  else if ((fast = fastRoundScaled(x, precision)) >= 0) digits = String(fast);
  else {
    splitDouble(x);
    digits = roundScaled(precision).toString();
  }
  if (precision === 0) return alternate ? `${digits}.` : digits;
  if (digits.length <= precision) digits = "0".repeat(precision + 1 - digits.length) + digits;
  return `${digits.slice(0, digits.length - precision)}.${digits.slice(digits.length - precision)}`;
}

/** %.<precision>e of x ≥ 0, without its sign. */
function exponentDigits(x: number, precision: number, alternate: boolean, upper: boolean): string {
  const digits = significantDigits(x, precision + 1);
  const point = precision > 0 || alternate ? "." : "";
  return digits[0] + point + digits.slice(1) + exponentText(decimalExponent, upper);
}

/** printf's exponent: a sign and at least two digits. */
function exponentText(exponent: number, upper: boolean): string {
  const magnitude = Math.abs(exponent);
  return `${upper ? "E" : "e"}${exponent < 0 ? "-" : "+"}${magnitude < 10 ? "0" : ""}${magnitude}`;
}

/** %.<precision>g of x ≥ 0, without its sign. */
function generalDigits(x: number, precision: number, alternate: boolean, upper: boolean): string {
  const count = precision === 0 ? 1 : precision;
  let digits = significantDigits(x, count);
  const exponent = decimalExponent;
  if (exponent < count && exponent >= -4) {
    let whole: string;
    let fraction: string;
    if (exponent >= 0) {
      whole = digits.slice(0, exponent + 1);
      fraction = digits.slice(exponent + 1);
    } else {
      whole = "0";
      fraction = "0".repeat(-exponent - 1) + digits;
    }
    if (!alternate) fraction = withoutTrailingZeros(fraction);
    return whole + (fraction.length > 0 || alternate ? `.${fraction}` : "");
  }
  // glibc's %#g, where rounding carries x from below 10^count (fixed style, no fraction digits)
  // to 10^count (exponent style), keeps the fixed style's none: 999.5 as %#.3g is "1.e+03".
  if (alternate && roundingCarried && exponent === count) return `1.${exponentText(exponent, upper)}`;
  let fraction = digits.slice(1);
  if (!alternate) fraction = withoutTrailingZeros(fraction);
  digits = digits[0] + (fraction.length > 0 || alternate ? `.${fraction}` : "");
  return digits + exponentText(exponent, upper);
}

function withoutTrailingZeros(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 48) end--;
  return s.slice(0, end);
}

// ---------------------------------------------------------------------------------------------
// len, sub, byte, char, rep, reverse, lower, upper
// ---------------------------------------------------------------------------------------------

/** string.len of a string. */
export function strLen(s: string): number {
  return s.length;
}

/** string.sub(s, i, j) of a string and numbers (j as -1 when nil). */
export function strSub(s: string, i: number, j = -1): string {
  const length = s.length;
  let start = relativePosition(toLong(i), length);
  let end = relativePosition(toLong(j), length);
  if (start < 1) start = 1;
  if (end > length) end = length;
  return start <= end ? detachedSlice(s, start - 1, end) : "";
}

/** string.byte(s, i) in a place that takes one value: the byte, or nil. */
export function strByte(s: string, i = 1): number | undefined {
  const position = relativePosition(toLong(i), s.length);
  if (position <= 0 || position > s.length) return undefined;
  return s.charCodeAt(position - 1);
}

/** string.upper: only a–z change, as toupper in the C locale. */
export function strUpper(s: string): string {
  if (isAscii(s)) return s.toUpperCase();
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}

/** string.lower: only A–Z change, as tolower in the C locale. */
export function strLower(s: string): string {
  if (isAscii(s)) return s.toLowerCase();
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** A byte ≥ 128 (the strings hold bytes only). */
const nonAscii = /[\u0080-\u00ff]/;
function isAscii(s: string): boolean {
  return !nonAscii.test(s);
}

/** string.reverse. */
export function strReverse(s: string): string {
  let out = "";
  for (let i = s.length - 1; i >= 0; i--) out += s[i];
  return out;
}

/** string.rep(s, n) of a string and a number. */
export function strRep(s: string, n: number): string {
  const count = toLong(n);
  if (count < intMin || count > intMax) bail("int argument out of range");
  if (count <= 0 || s.length === 0) return "";
  checkResultLength(s.length * count);
  return s.repeat(count);
}

export function luaLen(s?: LuaValue): LuaValue[] {
  return [checkString(s).length];
}

export function luaSub(s?: LuaValue, i?: LuaValue, j?: LuaValue): LuaValue[] {
  return [strSub(checkString(s), checkInteger(i), optInteger(j, -1))];
}

export function luaUpper(s?: LuaValue): LuaValue[] {
  return [strUpper(checkString(s))];
}

export function luaLower(s?: LuaValue): LuaValue[] {
  return [strLower(checkString(s))];
}

export function luaReverse(s?: LuaValue): LuaValue[] {
  return [strReverse(checkString(s))];
}

export function luaRep(s?: LuaValue, n?: LuaValue): LuaValue[] {
  const text = checkString(s);
  return [strRep(text, checkInt(n))];
}

/** string.byte(s, i, j): the bytes from i to j (j defaults to i), none when that is empty. */
export function luaByte(s?: LuaValue, i?: LuaValue, j?: LuaValue, ...more: LuaValue[]): LuaValue[] {
  const text = checkString(s);
  const length = text.length;
  let first = relativePosition(optInteger(i, 1), length);
  let last = j === undefined ? first : relativePosition(checkInteger(j), length);
  if (first <= 0) first = 1;
  if (last > length) last = length;
  if (first > last) return noValues;
  const count = last - first + 1;
  // Lua's C stack holds the arguments too: 3 and any more given (count > 1 needs j given).
  if (count + 3 + more.length > cStackSlotsMax) bail("string slice too long");
  const bytes: LuaValue[] = new Array(count);
  for (let k = 0; k < count; k++) bytes[k] = text.charCodeAt(first - 1 + k);
  return bytes;
}

/** string.char(...): each argument an integer 0–255 (after C's truncation). */
export function luaChar(...codes: LuaValue[]): LuaValue[] {
  let out = "";
  for (let k = 0; k < codes.length; k++) {
    const c = checkInt(codes[k]);
    if (c < 0 || c > 255) bail("invalid value to 'char'");
    out += String.fromCharCode(c);
  }
  return [out];
}

// ---------------------------------------------------------------------------------------------
// format
// ---------------------------------------------------------------------------------------------

/** How many of lstrlib's FLAGS ("-+ #0") a format item may carry (fewer than sizeof(FLAGS)). */
const flagsMax = 5;
/** Without a precision, %s adds a string this long or longer whole, not through sprintf. */
const unformattedStringBytesMin = 100;
const defaultFloatPrecision = 6;

/** One format item's flags, width and precision (-1: none); reused, as format calls nothing back. */
const spec = { minus: false, plus: false, space: false, alternate: false, zero: false, width: 0, precision: -1 };

const isDigitCode = (c: number): boolean => c >= 48 && c <= 57;

/** string.format with a string format: the text, or a bail wherever Lua would raise an error. */
export function strFormat(format: string, ...args: LuaValue[]): string {
  const end = format.length;
  let out = "";
  let literalFrom = 0;
  let argIndex = 0;
  let at = 0;
  while (at < end) {
    if (format.charCodeAt(at) !== 37) {
      at++;
      continue;
    }
    out += format.slice(literalFrom, at);
    at++;
    if (at < end && format.charCodeAt(at) === 37) {
      out += "%";
      literalFrom = ++at;
      continue;
    }
    if (argIndex >= args.length) bail("bad argument to 'format' (no value)");
    at = scanSpec(format, at);
    const conversion = at < end ? format.charCodeAt(at) : 0;
    at++;
    out += formatItem(conversion, args[argIndex++]);
    literalFrom = at;
    checkResultLength(out.length);
  }
  out += format.slice(literalFrom);
  checkResultLength(out.length);
  return out;
}

/** lstrlib's scanformat: reads flags, width and precision into `spec`; returns where the conversion is. */
function scanSpec(format: string, at: number): number {
  spec.minus = spec.plus = spec.space = spec.alternate = spec.zero = false;
  const start = at;
  for (; ; at++) {
    const c = format.charCodeAt(at);
    if (c === 45) spec.minus = true;
    else if (c === 43) spec.plus = true;
    else if (c === 32) spec.space = true;
    else if (c === 35) spec.alternate = true;
    else if (c === 48) spec.zero = true;
    else break;
  }
  if (at - start > flagsMax) bail("invalid format (repeated flags)");
  let width = 0;
  for (let k = 0; k < 2 && isDigitCode(format.charCodeAt(at)); k++) width = width * 10 + format.charCodeAt(at++) - 48;
  spec.width = width;
  spec.precision = -1;
  if (format.charCodeAt(at) === 46) {
    at++;
    let precision = 0;
    for (let k = 0; k < 2 && isDigitCode(format.charCodeAt(at)); k++) precision = precision * 10 + format.charCodeAt(at++) - 48;
    spec.precision = precision;
  }
  if (isDigitCode(format.charCodeAt(at))) bail("invalid format (width or precision too long)");
  return at;
}

function formatItem(conversion: number, arg: LuaValue): string {
  switch (conversion) {
    case 99: // c
      return formatChar(arg);
    case 100: // d
    case 105: // i
      return formatSigned(checkNumber(arg));
    case 111: // o
      return formatUnsigned(checkNumber(arg), 8, false);
    case 117: // u
      return formatUnsigned(checkNumber(arg), 10, false);
    case 120: // x
      return formatUnsigned(checkNumber(arg), 16, false);
    case 88: // X
      return formatUnsigned(checkNumber(arg), 16, true);
    case 101: // e
    case 69: // E
    case 102: // f
    case 103: // g
    case 71: // G
      return formatFloat(conversion, checkNumber(arg));
    case 113: // q
      return quoted(checkString(arg));
    case 115: // s
      return formatString(checkString(arg));
    default:
      return bail("invalid option to 'format'");
  }
}

/** The item padded to the spec's width: spaces before (after with '-'), or zeros after the sign and prefix. */
function padded(sign: string, prefix: string, body: string, zeroPads: boolean): string {
  const fill = spec.width - sign.length - prefix.length - body.length;
  if (fill <= 0) return sign + prefix + body;
  if (spec.minus) return sign + prefix + body + " ".repeat(fill);
  if (spec.zero && zeroPads) return sign + prefix + "0".repeat(fill) + body;
  return " ".repeat(fill) + sign + prefix + body;
}

/** sprintf's item is added up to its first NUL (strlen). */
function upToNul(item: string): string {
  const nul = item.indexOf("\0");
  return nul < 0 ? item : detachedSlice(item, 0, nul);
}

function formatChar(arg: LuaValue): string {
  const code = toLong(checkNumber(arg));
  if (code < intMin || code > intMax) bail("%c of a number out of range (of a C int)");
  return upToNul(padded("", "", String.fromCharCode(code & 0xff), false));
}

function integerDigits(magnitude: number, base: number): string {
  return magnitude <= Number.MAX_SAFE_INTEGER ? magnitude.toString(base) : BigInt(magnitude).toString(base);
}

/** An integer's digits with the spec's precision (a minimum count of digits; .0 writes 0 as nothing). */
function withPrecision(digits: string): string {
  const precision = spec.precision;
  if (precision < 0) return digits;
  if (precision === 0 && digits === "0") return "";
  return digits.length < precision ? "0".repeat(precision - digits.length) + digits : digits;
}

/** %d and %i: the number cut to a C long. */
function formatSigned(x: number): string {
  const value = toLong(x);
  const negative = value < 0;
  const digits = withPrecision(integerDigits(negative ? -value : value, 10));
  const sign = negative ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  return padded(sign, "", digits, spec.precision < 0);
}

/** %o, %u, %x and %X: the number cut to a C unsigned long. */
function formatUnsigned(x: number, base: number, upper: boolean): string {
  if (!(x >= longMin && x < 2 ** 64)) bail("unsigned conversion out of range");
  const value = Math.trunc(x);
  let digits: string;
  if (value >= 0) digits = integerDigits(value, base);
  else if (negativeUnsignedWraps) digits = ((1n << 64n) + BigInt(value)).toString(base);
  else return bail("negative number to an unsigned conversion");
  if (upper) digits = digits.toUpperCase();
  digits = withPrecision(digits);
  let prefix = "";
  if (spec.alternate) {
    if (base === 8 && digits.charCodeAt(0) !== 48) digits = `0${digits}`;
    else if (base === 16 && value !== 0) prefix = upper ? "0X" : "0x";
  }
  return padded("", prefix, digits, spec.precision < 0);
}

/** %e, %E, %f, %g and %G. */
function formatFloat(conversion: number, x: number): string {
  if (Number.isNaN(x)) bail("NaN to a float conversion (its sign is the machine's)");
  const negative = x < 0 || (x === 0 && 1 / x < 0);
  const sign = negative ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  const upper = conversion === 69 || conversion === 71;
  const magnitude = Math.abs(x);
  if (magnitude === Infinity) return padded(sign, "", upper ? "INF" : "inf", false);
  const precision = spec.precision < 0 ? defaultFloatPrecision : spec.precision;
  let body: string;
  if (conversion === 102) body = fixedDigits(magnitude, precision, spec.alternate);
  else if (conversion === 101 || conversion === 69) body = exponentDigits(magnitude, precision, spec.alternate, upper);
  else body = generalDigits(magnitude, precision, spec.alternate, upper);
  return padded(sign, "", body, true);
}

function formatString(s: string): string {
  if (spec.precision < 0 && s.length >= unformattedStringBytesMin) return s;
  let text = upToNul(s);
  if (spec.precision >= 0 && text.length > spec.precision) text = detachedSlice(text, 0, spec.precision);
  return padded("", "", text, false);
}

/** %q: the string between quotes, `"`, `\` and newline escaped by a backslash, CR as \r, NUL as \000. */
function quoted(s: string): string {
  let out = '"';
  let from = 0;
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c === 34 || c === 92 || c === 10 || c === 13 || c === 0) {
      out += s.slice(from, k);
      out += c === 13 ? "\\r" : c === 0 ? "\\000" : `\\${s[k]}`;
      from = k + 1;
    }
  }
  return `${out + s.slice(from)}"`;
}

export function luaFormat(format?: LuaValue, ...args: LuaValue[]): LuaValue[] {
  return [strFormat(checkString(format), ...args)];
}

// ---------------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------------

/** A capture's length while open, and for a position capture `()`. */
const captureUnfinished = -1;
const capturePosition = -2;

/** Bits of classTable: the C locale's ctype classes of each byte (only ASCII counts). */
const classAlpha = 1;
const classDigit = 2;
const classLower = 4;
const classUpper = 8;
const classSpace = 16;
const classControl = 32;
const classPunct = 64;
const classHex = 128;

const classTable = buildClassTable();

function buildClassTable(): Uint8Array {
  const table = new Uint8Array(256);
  for (let c = 0; c < 128; c++) {
    let bits = 0;
    if (c >= 97 && c <= 122) bits |= classAlpha | classLower;
    if (c >= 65 && c <= 90) bits |= classAlpha | classUpper;
    if (c >= 48 && c <= 57) bits |= classDigit | classHex;
    if ((c >= 97 && c <= 102) || (c >= 65 && c <= 70)) bits |= classHex;
    if ((c >= 9 && c <= 13) || c === 32) bits |= classSpace;
    if (c < 32 || c === 127) bits |= classControl;
    if (c > 32 && c < 127 && !(bits & (classAlpha | classDigit))) bits |= classPunct;
    table[c] = bits;
  }
  return table;
}

/** One match's state (lstrlib's MatchState), with this port's depth and step counts. */
class MatchState {
  src = "";
  /** The pattern up to its first NUL: charCodeAt past its end reads as the NUL. */
  pattern = "";
  level = 0;
  depth = 0;
  steps = 0;
  readonly captureStart = new Int32Array(capturesMax);
  readonly captureLength = new Int32Array(capturesMax);
}

/** States not in use. A gsub's function may match again while its own state is in use. */
const freeStates: MatchState[] = [];

function takeState(src: string, pattern: string): MatchState {
  const ms = freeStates.pop() ?? new MatchState();
  ms.src = src;
  ms.pattern = pattern;
  ms.level = 0;
  ms.depth = 0;
  ms.steps = 0;
  return ms;
}

function giveBack(ms: MatchState): void {
  ms.src = "";
  freeStates.push(ms);
}

/** A byte of the pattern (p) or subject (s) as C reads it: 0 past the end, the NUL terminator. */
const at0 = (text: string, i: number): number => text.charCodeAt(i) | 0;

function countSteps(ms: MatchState, steps: number): void {
  ms.steps += steps;
  if (ms.steps > matchStepsMax) bail("pattern match takes too long");
}

/** The pattern up to its first NUL: Lua 5.1's matcher stops there. */
function patternText(p: string): string {
  const nul = p.indexOf("\0");
  return nul < 0 ? p : p.slice(0, nul);
}

/**
 * The server's guard (limits.rs pattern_guard): a pattern longer than patternItemsMax bytes with
 * more than patternItemsMax quantified items and captures is "pattern too complex".
 */
function guardPattern(p: string): void {
  if (p.length > patternItemsMax && patternItems(patternText(p)) > patternItemsMax) bail("pattern too complex");
}

/** limits.rs pattern_items: the items the matcher recurses on (captures and quantified items). */
function patternItems(p: string): number {
  let at = 0;
  let items = 0;
  while (at < p.length) {
    const c = p.charCodeAt(at);
    if (c === 40 || c === 41) {
      items++;
      at++;
      continue;
    }
    if (c === 37) {
      const next = p.charCodeAt(at + 1);
      if (next === 98) {
        at += 4;
        continue;
      }
      if (next === 102) {
        at = guardSetEnd(p, at + 2);
        continue;
      }
      if (isDigitCode(next)) {
        at += 2;
        continue;
      }
      at += 2;
    } else if (c === 91) at = guardSetEnd(p, at);
    else at++;
    const quantifier = p.charCodeAt(at);
    if (quantifier === 63 || quantifier === 42 || quantifier === 43 || quantifier === 45) {
      items++;
      at++;
    }
  }
  return items;
}

/** limits.rs set_end: just past the `]` of a set starting at `at`, or the pattern's end. */
function guardSetEnd(p: string, at: number): number {
  if (p.charCodeAt(at) !== 91) return at + 1;
  at++;
  if (p.charCodeAt(at) === 94) at++;
  for (;;) {
    if (at >= p.length) return p.length;
    at += p.charCodeAt(at) === 37 ? 2 : 1;
    if (p.charCodeAt(at) === 93) return at + 1;
    if (at >= p.length) return p.length;
  }
}

/** lstrlib's classEnd: just past the single-character class at p. */
function classEnd(ms: MatchState, p: number): number {
  const pattern = ms.pattern;
  const c = at0(pattern, p++);
  if (c === 37) {
    if (at0(pattern, p) === 0) bail("malformed pattern (ends with '%')");
    return p + 1;
  }
  if (c === 91) {
    const start = p;
    if (at0(pattern, p) === 94) p++;
    do {
      if (at0(pattern, p) === 0) bail("malformed pattern (missing ']')");
      if (at0(pattern, p++) === 37 && at0(pattern, p) !== 0) p++;
    } while (at0(pattern, p) !== 93);
    countSteps(ms, p - start);
    return p + 1;
  }
  return p;
}

/** lstrlib's match_class: c in the class named by letter `cl` (upper case: its complement). */
function matchClass(c: number, cl: number): boolean {
  let bits: number;
  switch (cl | 0x20) {
    case 97: // a
      bits = classAlpha;
      break;
    case 99: // c
      bits = classControl;
      break;
    case 100: // d
      bits = classDigit;
      break;
    case 108: // l
      bits = classLower;
      break;
    case 112: // p
      bits = classPunct;
      break;
    case 115: // s
      bits = classSpace;
      break;
    case 117: // u
      bits = classUpper;
      break;
    case 119: // w
      bits = classAlpha | classDigit;
      break;
    case 120: // x
      bits = classHex;
      break;
    case 122: // z
      return cl >= 97 ? c === 0 : c !== 0;
    default:
      return cl === c;
  }
  // Only A–Z and a–z reach here (`| 0x20` maps no other byte onto a class letter).
  const inClass = (classTable[c]! & bits) !== 0;
  return cl >= 97 ? inClass : !inClass;
}

/** lstrlib's matchbracketclass: c in the set from `[` at p to `]` at end. */
function matchBracketClass(ms: MatchState, c: number, p: number, end: number): boolean {
  const pattern = ms.pattern;
  let inSet = true;
  if (at0(pattern, p + 1) === 94) {
    inSet = false;
    p++;
  }
  countSteps(ms, end - p);
  while (++p < end) {
    const d = pattern.charCodeAt(p);
    if (d === 37) {
      p++;
      if (matchClass(c, at0(pattern, p))) return inSet;
    } else if (at0(pattern, p + 1) === 45 && p + 2 < end) {
      p += 2;
      if (d <= c && c <= pattern.charCodeAt(p)) return inSet;
    } else if (d === c) return inSet;
  }
  return !inSet;
}

/** lstrlib's singlematch: byte c against the class from p to ep. */
function singleMatch(ms: MatchState, c: number, p: number, ep: number): boolean {
  const d = ms.pattern.charCodeAt(p);
  if (d === 46) return true;
  if (d === 37) return matchClass(c, at0(ms.pattern, p + 1));
  if (d === 91) return matchBracketClass(ms, c, p, ep - 1);
  return d === c;
}

/** lstrlib's match: where the pattern from p matches the subject from s to, or -1. */
function doMatch(ms: MatchState, s: number, p: number): number {
  if (++ms.depth > matchDepthMax) bail("pattern too complex");
  const result = matchHere(ms, s, p);
  ms.depth--;
  return result;
}

function matchHere(ms: MatchState, s: number, p: number): number {
  const pattern = ms.pattern;
  const src = ms.src;
  for (;;) {
    if (++ms.steps > matchStepsMax) bail("pattern match takes too long");
    const c = at0(pattern, p);
    if (c === 0) return s;
    if (c === 40) {
      if (at0(pattern, p + 1) === 41) return startCapture(ms, s, p + 2, capturePosition);
      return startCapture(ms, s, p + 1, captureUnfinished);
    }
    if (c === 41) return endCapture(ms, s, p + 1);
    if (c === 37) {
      const next = at0(pattern, p + 1);
      if (next === 98) {
        s = matchBalance(ms, s, p + 2);
        if (s < 0) return -1;
        p += 4;
        continue;
      }
      if (next === 102) {
        p += 2;
        if (at0(pattern, p) !== 91) bail("missing '[' after '%f' in pattern");
        const ep = classEnd(ms, p);
        const previous = s === 0 ? 0 : src.charCodeAt(s - 1);
        if (matchBracketClass(ms, previous, p, ep - 1) || !matchBracketClass(ms, at0(src, s), p, ep - 1)) return -1;
        p = ep;
        continue;
      }
      if (isDigitCode(next)) {
        s = matchCapture(ms, s, next);
        if (s < 0) return -1;
        p += 2;
        continue;
      }
    } else if (c === 36 && p + 1 === pattern.length) {
      return s === src.length ? s : -1;
    }
    const ep = classEnd(ms, p);
    const matches = s < src.length && singleMatch(ms, src.charCodeAt(s), p, ep);
    const quantifier = at0(pattern, ep);
    if (quantifier === 63) {
      if (matches) {
        const result = doMatch(ms, s + 1, ep + 1);
        if (result >= 0) return result;
      }
      p = ep + 1;
      continue;
    }
    if (quantifier === 42) return maxExpand(ms, s, p, ep);
    if (quantifier === 43) return matches ? maxExpand(ms, s + 1, p, ep) : -1;
    if (quantifier === 45) return minExpand(ms, s, p, ep);
    if (!matches) return -1;
    s++;
    p = ep;
  }
}

function maxExpand(ms: MatchState, s: number, p: number, ep: number): number {
  const src = ms.src;
  let i = 0;
  while (s + i < src.length && singleMatch(ms, src.charCodeAt(s + i), p, ep)) {
    i++;
    if (++ms.steps > matchStepsMax) bail("pattern match takes too long");
  }
  for (; i >= 0; i--) {
    const result = doMatch(ms, s + i, ep + 1);
    if (result >= 0) return result;
  }
  return -1;
}

function minExpand(ms: MatchState, s: number, p: number, ep: number): number {
  const src = ms.src;
  for (;;) {
    const result = doMatch(ms, s, ep + 1);
    if (result >= 0) return result;
    if (s < src.length && singleMatch(ms, src.charCodeAt(s), p, ep)) s++;
    else return -1;
  }
}

function startCapture(ms: MatchState, s: number, p: number, what: number): number {
  const level = ms.level;
  if (level >= capturesMax) bail("too many captures");
  ms.captureStart[level] = s;
  ms.captureLength[level] = what;
  ms.level = level + 1;
  const result = doMatch(ms, s, p);
  if (result < 0) ms.level--;
  return result;
}

function endCapture(ms: MatchState, s: number, p: number): number {
  const l = captureToClose(ms);
  ms.captureLength[l] = s - ms.captureStart[l]!;
  const result = doMatch(ms, s, p);
  if (result < 0) ms.captureLength[l] = captureUnfinished;
  return result;
}

function captureToClose(ms: MatchState): number {
  for (let level = ms.level - 1; level >= 0; level--) if (ms.captureLength[level] === captureUnfinished) return level;
  return bail("invalid pattern capture");
}

/** `%b xy` at p: past the balanced run from s, or -1. */
function matchBalance(ms: MatchState, s: number, p: number): number {
  const pattern = ms.pattern;
  const open = at0(pattern, p);
  const close = at0(pattern, p + 1);
  if (open === 0 || close === 0) bail("unbalanced pattern");
  const src = ms.src;
  if (at0(src, s) !== open) return -1;
  const start = s;
  let depth = 1;
  while (++s < src.length) {
    const c = src.charCodeAt(s);
    if (c === close) {
      if (--depth === 0) {
        countSteps(ms, s - start);
        return s + 1;
      }
    } else if (c === open) depth++;
  }
  countSteps(ms, s - start);
  return -1;
}

/** A back-reference `%1`–`%9` at s: past the capture's copy, or -1. */
function matchCapture(ms: MatchState, s: number, digit: number): number {
  const l = digit - 49;
  if (l < 0 || l >= ms.level || ms.captureLength[l] === captureUnfinished) bail("invalid capture index");
  const length = ms.captureLength[l]!;
  // A position capture's length is -2, which C reads as a huge size_t: never matches.
  if (length < 0 || ms.src.length - s < length) return -1;
  const src = ms.src;
  const from = ms.captureStart[l]!;
  countSteps(ms, length);
  for (let k = 0; k < length; k++) if (src.charCodeAt(from + k) !== src.charCodeAt(s + k)) return -1;
  return s + length;
}

/** Capture i (0: the whole match from s to e when there are none) as a Lua value. */
function captureValue(ms: MatchState, i: number, s: number, e: number): LuaValue {
  if (i >= ms.level) {
    if (i === 0) return detachedSlice(ms.src, s, e);
    return bail("invalid capture index");
  }
  const length = ms.captureLength[i]!;
  if (length === captureUnfinished) bail("unfinished capture");
  const start = ms.captureStart[i]!;
  if (length === capturePosition) return start + 1;
  return detachedSlice(ms.src, start, start + length);
}

/** lstrlib's push_captures: every capture, or the whole match (when s ≥ 0) if there are none. */
function captureValues(ms: MatchState, s: number, e: number): LuaValue[] {
  const count = ms.level === 0 && s >= 0 ? 1 : ms.level;
  const values: LuaValue[] = new Array(count);
  for (let i = 0; i < count; i++) values[i] = captureValue(ms, i, s, e);
  return values;
}

/** lstrlib's SPECIALS: a pattern without them is searched for plainly by find. */
const specials = /[\^$*+?.([%-]/;
/** Bytes that make a pattern more than its text to the matcher (`)` too, which SPECIALS leaves out). */
const notLiteral = /[\^$*+?.()[%-]/;

/** lstrlib's str_find_aux: string.find (find) and string.match. */
function findOrMatch(sv: LuaValue, pv: LuaValue, initv: LuaValue, plainv: LuaValue, find: boolean): LuaValue[] {
  const src = checkString(sv);
  const p = checkString(pv);
  guardPattern(p);
  let init = relativePosition(optInteger(initv, 1), src.length) - 1;
  if (init < 0) init = 0;
  else if (init > src.length) init = src.length;
  const pattern = patternText(p);
  if (find && (isTruthy(plainv) || !specials.test(pattern))) {
    // A plain search looks for the whole pattern, NULs and what follows them included.
    const found = src.indexOf(p, init);
    return found < 0 ? [undefined] : [found + 1, found + p.length];
  }
  const anchored = pattern.charCodeAt(0) === 94;
  const ms = takeState(src, pattern);
  const p0 = anchored ? 1 : 0;
  let s1 = init;
  do {
    ms.level = 0;
    ms.depth = 0;
    const e = doMatch(ms, s1, p0);
    if (e >= 0) {
      const results = find ? findResults(ms, s1, e) : captureValues(ms, s1, e);
      giveBack(ms);
      return results;
    }
  } while (s1++ < src.length && !anchored);
  giveBack(ms);
  return [undefined];
}

function findResults(ms: MatchState, s: number, e: number): LuaValue[] {
  const results: LuaValue[] = new Array(2 + ms.level);
  results[0] = s + 1;
  results[1] = e;
  for (let i = 0; i < ms.level; i++) results[2 + i] = captureValue(ms, i, -1, -1);
  return results;
}

/** string.find(s, pattern, init, plain): start, end and the captures, or nil. */
export function luaFind(s?: LuaValue, pattern?: LuaValue, init?: LuaValue, plain?: LuaValue): LuaValue[] {
  return findOrMatch(s, pattern, init, plain, true);
}

/** string.match(s, pattern, init): the captures (or the whole match), or nil. */
export function luaMatch(s?: LuaValue, pattern?: LuaValue, init?: LuaValue): LuaValue[] {
  return findOrMatch(s, pattern, init, undefined, false);
}

/** string.gmatch(s, pattern): an iterator giving each match's captures in turn, nothing at the end. */
export function luaGmatch(sv?: LuaValue, pv?: LuaValue): LuaValue[] {
  const src = checkString(sv);
  const p = checkString(pv);
  guardPattern(p);
  const pattern = patternText(p);
  let next = 0;
  const iterator: LuaFunction = () => {
    const ms = takeState(src, pattern);
    for (let s = next; s <= src.length; s++) {
      ms.level = 0;
      ms.depth = 0;
      const e = doMatch(ms, s, 0);
      if (e >= 0) {
        next = e === s ? e + 1 : e;
        const values = captureValues(ms, s, e);
        giveBack(ms);
        return values;
      }
    }
    giveBack(ms);
    return noValues;
  };
  return [iterator];
}

/** string.gsub(s, pattern, repl, n): the new string and the number of matches replaced. */
export function luaGsub(sv?: LuaValue, pv?: LuaValue, repl?: LuaValue, nv?: LuaValue): LuaValue[] {
  const src = checkString(sv);
  const p = checkString(pv);
  guardPattern(p);
  const maxReplacements = nv === undefined ? src.length + 1 : checkInt(nv);
  const kind = typeof repl;
  // Other objects (the library tables, cjson.null's userdata) are left to Lua.
  if (kind !== "string" && kind !== "number" && kind !== "function" && !(repl instanceof LuaTable)) bail("bad argument #3 to 'gsub'");
  const replText = kind === "number" ? luaToString(repl as number) : kind === "string" ? (repl as string) : undefined;
  const pattern = patternText(p);
  const ms = takeState(src, pattern);
  const result =
    pattern.length > 0 && !notLiteral.test(pattern) ? gsubLiteral(ms, repl, replText, maxReplacements) : gsubPattern(ms, repl, replText, maxReplacements);
  giveBack(ms);
  // The new string is made of slices of the old: a short one out of a large source is copied, so
  // as not to keep the source alive (text/detached-slice.ts).
  const out = result[0] as string;
  if (src.length > sliceSourceCharsMax && out.length * 2 < src.length) result[0] = detachedCopy(out);
  return result;
}

/** gsub's loop (lstrlib's str_gsub): at each position a match is replaced, or one byte kept. */
function gsubPattern(ms: MatchState, repl: LuaValue, replText: string | undefined, maxReplacements: number): LuaValue[] {
  const src = ms.src;
  const anchored = ms.pattern.charCodeAt(0) === 94;
  const p0 = anchored ? 1 : 0;
  let out = "";
  let copiedTo = 0;
  let s = 0;
  let n = 0;
  while (n < maxReplacements) {
    ms.level = 0;
    ms.depth = 0;
    const e = doMatch(ms, s, p0);
    if (e >= 0) {
      n++;
      out += src.slice(copiedTo, s) + replacement(ms, repl, replText, s, e);
      copiedTo = s;
      checkResultLength(out.length);
      if (e > s) {
        copiedTo = e;
        s = e;
      } else if (s < src.length) s++;
      else break;
    } else if (s < src.length) s++;
    else break;
    if (anchored) break;
  }
  out += src.slice(copiedTo);
  checkResultLength(out.length);
  return [out, n];
}

/**
 * gsub of a pattern without special characters (and not empty): it matches where its text is,
 * without captures, so the same loop runs on indexOf.
 */
function gsubLiteral(ms: MatchState, repl: LuaValue, replText: string | undefined, maxReplacements: number): LuaValue[] {
  const src = ms.src;
  const length = ms.pattern.length;
  let out = "";
  let copiedTo = 0;
  let n = 0;
  while (n < maxReplacements) {
    const at = src.indexOf(ms.pattern, copiedTo);
    if (at < 0) break;
    n++;
    ms.level = 0;
    out += src.slice(copiedTo, at) + replacement(ms, repl, replText, at, at + length);
    copiedTo = at + length;
    checkResultLength(out.length);
  }
  out += src.slice(copiedTo);
  checkResultLength(out.length);
  return [out, n];
}

/** lstrlib's add_value: what replaces the match from s to e. */
function replacement(ms: MatchState, repl: LuaValue, replText: string | undefined, s: number, e: number): string {
  if (replText === undefined) return replacementValue(ms, repl, s, e);
  return replText.indexOf("%") >= 0 ? expandReplacement(ms, replText, s, e) : replText;
}

/** lstrlib's add_s: the replacement string with %0–%9 as the captures and %x as x. */
function expandReplacement(ms: MatchState, repl: string, s: number, e: number): string {
  let out = "";
  const length = repl.length;
  for (let i = 0; i < length; i++) {
    const c = repl.charCodeAt(i);
    if (c !== 37) {
      out += repl[i];
      continue;
    }
    i++;
    // A `%` at the end reads the string's NUL terminator, and adds it.
    const d = at0(repl, i);
    if (!isDigitCode(d)) out += String.fromCharCode(d);
    else {
      if (d === 48) out += ms.src.slice(s, e);
      else {
        const value = captureValue(ms, d - 49, s, e);
        out += typeof value === "number" ? String(value) : (value as string);
      }
      // Many copies of a long match could make one replacement past the limit by themselves.
      checkResultLength(out.length);
    }
  }
  return out;
}

/** lstrlib's add_value for a table or function: its value, or the match itself when nil or false. */
function replacementValue(ms: MatchState, repl: LuaValue, s: number, e: number): string {
  let value: LuaValue;
  if (typeof repl === "function") {
    const args = captureValues(ms, s, e);
    value = repl(...args)[0];
  } else value = (repl as LuaTable).get(captureValue(ms, 0, s, e));
  if (value === undefined || value === false) return ms.src.slice(s, e);
  if (typeof value === "string") return value;
  if (typeof value === "number") return luaToString(value);
  return bail("invalid replacement value");
}

/** The library's functions by their Lua names (lua-library.ts makes the `string` table of them). */
export {
  luaByte as byte,
  luaChar as char,
  luaFind as find,
  luaFormat as format,
  luaGmatch as gmatch,
  luaGsub as gsub,
  luaLen as len,
  luaLower as lower,
  luaMatch as match,
  luaRep as rep,
  luaReverse as reverse,
  luaSub as sub,
  luaUpper as upper,
};
