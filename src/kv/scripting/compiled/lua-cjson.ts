/**
 * cjson.encode and cjson.decode for compiled scripts, as the native Lua's cjson (lua-cjson 2.1.0
 * with its default settings, native/script/src/cjson.rs) computes them:
 * - encode: a table whose keys are all integers ≥ 1 is an array of 1..max (holes as null), unless
 *   excessively sparse (max > 2 × items and max > 10: an error); any other table an object, its
 *   pairs in lua_next order, number keys written as strings; the empty table `{}`; numbers as
 *   %.14g; strings with `"`, `\`, `/` and control bytes escaped, other bytes as they are; nil and
 *   cjson.null as `null`;
 * - decode: lua-cjson's tokenizer — whitespace is space, \t, \n, \r; numbers are what strtod reads
 *   from a '-', a digit, or a '+', inf or nan (hexadecimal, Infinity and NaN included); `null` is
 *   cjson.null; the text ends at its first NUL; each table made as lua_newtable makes it, filled
 *   in document order (which fixes its later iteration order).
 * Whatever Lua answers with an error — a NaN, a function, a sparse array, nesting past 1000, bad
 * JSON — bails: the script then runs on the native Lua, which raises the exact error.
 */
import { detachedSlice } from "../../text/detached-slice.ts";
import { luaToString, strtod, strtodStop } from "./lua-number.ts";
import { LuaTable } from "./lua-table.ts";
import { bail, type LuaValue } from "./lua-value.ts";

/**
 * Lua's light userdata holding NULL: cjson.null is the one instance (compared by identity). As a
 * table key Lua hashes it as a NULL pointer, to node 0: `identity` says so to LuaTable.
 */
export class LuaNullUserdata {
  readonly identity = 0;
  private constructor() {}
  static readonly instance = Object.freeze(new LuaNullUserdata());
}

/** cjson.null, as decode answers JSON's null and encode writes `null` for it. */
export const cjsonNull = LuaNullUserdata.instance as unknown as LuaValue;

/** The deepest nesting encode and decode follow (lua-cjson's encode_max_depth, decode_max_depth). */
const nestingMax = 1000;
/** An array is excessively sparse past this ratio of its largest index to its items… */
const sparseRatio = 2;
/** …and past this largest index. */
const sparseSafe = 10;

// ---- encode -------------------------------------------------------------------------------------

/** What each byte is written as inside a JSON string, where it is not written as itself. */
const escapes: (string | undefined)[] = (() => {
  const table: (string | undefined)[] = new Array(256).fill(undefined);
  for (let b = 0; b < 0x20; b++) table[b] = `\\u${b.toString(16).padStart(4, "0")}`;
  table[0x7f] = "\\u007f";
  table[0x22] = '\\"';
  table[0x5c] = "\\\\";
  table[0x2f] = "\\/";
  table[0x0a] = "\\n";
  table[0x0d] = "\\r";
  table[0x09] = "\\t";
  table[0x08] = "\\b";
  table[0x0c] = "\\f";
  return table;
})();

/** A Lua string (one char per byte) as a JSON string. */
export function encodeJsonString(s: string): string {
  let out = '"';
  let from = 0;
  const length = s.length;
  for (let i = 0; i < length; i++) {
    const escaped = escapes[s.charCodeAt(i)];
    if (escaped !== undefined) {
      out += s.slice(from, i) + escaped;
      from = i + 1;
    }
  }
  return from === 0 ? `"${s}"` : `${out + s.slice(from)}"`;
}

/** cjson.encode(v). */
export function cjsonEncode(v: LuaValue): string {
  return encodeValue(v, 0);
}

function encodeValue(v: LuaValue, depth: number): string {
  switch (typeof v) {
    case "string":
      return encodeJsonString(v);
    case "number":
      return encodeNumber(v);
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
      return "null";
  }
  if (v instanceof LuaTable) return encodeTable(v, depth + 1);
  if (v === cjsonNull) return "null";
  return bail("cjson.encode of a value of a type it does not serialise");
}

function encodeNumber(n: number): string {
  if (n - n !== 0) return bail("cjson.encode of NaN or Inf");
  return luaToString(n);
}

function encodeTable(t: LuaTable, depth: number): string {
  if (depth > nestingMax) return bail("cjson.encode: excessive nesting");
  const length = arrayLength(t);
  return length > 0 ? encodeArray(t, length, depth) : encodeObject(t, depth);
}

/**
 * The table's length as a JSON array: its largest key when every key is an integer ≥ 1; 0 when
 * it is an object (some other key, or none). Bails on an excessively sparse array (an error).
 */
function arrayLength(t: LuaTable): number {
  let max = 0;
  let items = 0;
  let pair = t.next(undefined);
  while (pair !== undefined) {
    const k = pair[0];
    if (typeof k !== "number" || Math.floor(k) !== k || k < 1) return 0;
    if (k > max) max = k;
    items++;
    pair = t.next(k);
  }
  if (max > items * sparseRatio && max > sparseSafe) return bail("cjson.encode: excessively sparse array");
  return max;
}

function encodeArray(t: LuaTable, length: number, depth: number): string {
  let out = "[";
  for (let i = 1; i <= length; i++) {
    if (i > 1) out += ",";
    out += encodeValue(t.getInt(i), depth);
  }
  return `${out}]`;
}

function encodeObject(t: LuaTable, depth: number): string {
  let out = "{";
  let pair = t.next(undefined);
  while (pair !== undefined) {
    const k = pair[0];
    if (out.length > 1) out += ",";
    if (typeof k === "string") out += encodeJsonString(k);
    else if (typeof k === "number") out += `"${encodeNumber(k)}"`;
    else return bail("cjson.encode: table key must be a number or string");
    out += `:${encodeValue(pair[1], depth)}`;
    pair = t.next(k);
  }
  return `${out}}`;
}

// ---- decode -------------------------------------------------------------------------------------

/** The text being decoded, where its C string ends (its first NUL), and where the decoder is. */
let text = "";
let end = 0;
let at = 0;

/** cjson.decode(s) of a string argument. */
export function cjsonDecode(s: string): LuaValue {
  if (s.length >= 2 && (s.charCodeAt(0) === 0 || s.charCodeAt(1) === 0)) return bail("cjson.decode: UTF-16 or UTF-32");
  const nul = s.indexOf("\0");
  text = s;
  end = nul < 0 ? s.length : nul;
  at = 0;
  const value = decodeValue(0);
  skipSpace();
  if (at !== end) return bail("cjson.decode: expected the end");
  text = "";
  return value;
}

function skipSpace(): void {
  while (at < end) {
    const c = text.charCodeAt(at);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return;
    at++;
  }
}

/** Whether the text at `at` starts with `word`. */
function startsWith(word: string): boolean {
  return at + word.length <= end && text.startsWith(word, at);
}

/** The value whose first token starts after whitespace at `at`, in a table nested `depth` deep. */
function decodeValue(depth: number): LuaValue {
  skipSpace();
  if (at >= end) return bail("cjson.decode: expected a value");
  const c = text.charCodeAt(at);
  switch (c) {
    case 0x22 /* " */:
      return decodeString();
    case 0x7b /* { */:
      return decodeObject(depth + 1);
    case 0x5b /* [ */:
      return decodeArray(depth + 1);
  }
  if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return decodeNumber();
  if (startsWith("true")) {
    at += 4;
    return true;
  }
  if (startsWith("false")) {
    at += 5;
    return false;
  }
  if (startsWith("null")) {
    at += 4;
    return cjsonNull;
  }
  if (c === 0x2b /* + */ || isInfOrNan()) return decodeNumber();
  return bail("cjson.decode: invalid token");
}

/** Whether inf or nan (any case) starts at `at`: the words lua-cjson reads as numbers. */
function isInfOrNan(): boolean {
  if (at + 3 > end) return false;
  const word = text.slice(at, at + 3).toLowerCase();
  return word === "inf" || word === "nan";
}

function decodeNumber(): number {
  const sign = text.charCodeAt(at);
  const digitsAt = sign === 0x2b || sign === 0x2d ? at + 1 : at;
  if (digitsAt + 2 < end && text.charCodeAt(digitsAt) === 0x30 && (text.charCodeAt(digitsAt + 1) | 0x20) === 0x78 /* x */) {
    const n = hexadecimalNumber(digitsAt + 2);
    return sign === 0x2d ? -n : n;
  }
  const n = strtod(text, at, end);
  if (n === undefined) return bail("cjson.decode: invalid number");
  at = strtodStop();
  return n;
}

/**
 * A hexadecimal number after its "0x" at `from`, read as the native cjson reads it (not as
 * glibc's strtod does): each digit accumulated into a double (value × 16 + digit, rounding as
 * it goes), then multiplied by 2^exponent computed as compiler-rt's __powidf2 computes it (0
 * from 2^-1024 down). "0x" without a digit reads as 0, the 'x' left.
 */
function hexadecimalNumber(from: number): number {
  let i = from;
  let value = 0;
  let exponent = 0;
  let any = false;
  for (let d = hexDigit(i); d >= 0; d = hexDigit(++i)) {
    value = value * 16 + d;
    any = true;
  }
  if (i < end && text.charCodeAt(i) === 0x2e /* . */) {
    for (let d = hexDigit(++i); d >= 0; d = hexDigit(++i)) {
      value = value * 16 + d;
      exponent -= 4;
      any = true;
    }
  }
  if (!any) {
    at = from - 1;
    return 0;
  }
  if (i < end && (text.charCodeAt(i) | 0x20) === 0x70 /* p */) {
    const sign = text.charCodeAt(i + 1);
    const digitsAt = i + 1 < end && (sign === 0x2b || sign === 0x2d) ? i + 2 : i + 1;
    let k = digitsAt;
    while (k < end && text.charCodeAt(k) >= 0x30 && text.charCodeAt(k) <= 0x39) k++;
    if (k > digitsAt) {
      // Parsed as an i32, i32::MAX when it does not fit; added saturating.
      const parsed = Number(text.slice(digitsAt, k));
      const magnitude = parsed > int32Max ? int32Max : parsed;
      exponent = saturatingInt32(exponent + (sign === 0x2d ? -magnitude : magnitude));
      i = k;
    }
  }
  at = i;
  return value * powi(2, exponent);
}

const int32Max = 2147483647;

function saturatingInt32(n: number): number {
  return n > int32Max ? int32Max : n < -int32Max - 1 ? -int32Max - 1 : n;
}

/** compiler-rt's __powidf2(a, b): Rust's f64::powi, by squaring, the reciprocal for b < 0. */
function powi(a: number, b: number): number {
  const reciprocal = b < 0;
  let r = 1;
  let base = a;
  let e = b;
  for (;;) {
    if (e & 1) r *= base;
    e = Math.trunc(e / 2);
    if (e === 0) break;
    base *= base;
  }
  return reciprocal ? 1 / r : r;
}

/** The hexadecimal digit at `i` before the end, or -1. */
function hexDigit(i: number): number {
  if (i >= end) return -1;
  const c = text.charCodeAt(i);
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

function decodeString(): string {
  const start = ++at;
  while (at < end) {
    const c = text.charCodeAt(at);
    if (c === 0x22) return detachedSlice(text, start, at++);
    if (c === 0x5c) return decodeEscapedString(start);
    at++;
  }
  return bail("cjson.decode: unexpected end of string");
}

/** The rest of a string from its first escape (at `at`); `start` is where its text began. */
function decodeEscapedString(start: number): string {
  let out = detachedSlice(text, start, at);
  while (at < end) {
    const c = text.charCodeAt(at);
    if (c === 0x22) {
      at++;
      return out;
    }
    if (c !== 0x5c) {
      out += text[at++];
      continue;
    }
    const escaped = text.charCodeAt(at + 1);
    if (escaped === 0x75 /* u */) {
      out += unicodeEscape();
      continue;
    }
    const simple = simpleEscape(escaped);
    if (simple === undefined || at + 1 >= end) return bail("cjson.decode: invalid escape code");
    out += simple;
    at += 2;
  }
  return bail("cjson.decode: unexpected end of string");
}

function simpleEscape(c: number): string | undefined {
  switch (c) {
    case 0x22:
      return '"';
    case 0x5c:
      return "\\";
    case 0x2f:
      return "/";
    case 0x62:
      return "\b";
    case 0x66:
      return "\f";
    case 0x6e:
      return "\n";
    case 0x72:
      return "\r";
    case 0x74:
      return "\t";
  }
  return undefined;
}

/** Four hex digits at `from`, or -1. */
function hex4(from: number): number {
  if (from + 4 > end) return -1;
  let n = 0;
  for (let i = from; i < from + 4; i++) {
    const d = hexDigit(i);
    if (d < 0) return -1;
    n = (n << 4) | d;
  }
  return n;
}

/** `\uXXXX` at `at` (a surrogate pair as one character) as UTF-8 bytes; bails on an invalid one. */
function unicodeEscape(): string {
  let code = hex4(at + 2);
  if (code < 0) return bail("cjson.decode: invalid unicode escape code");
  let length = 6;
  if ((code & 0xf800) === 0xd800) {
    // A high surrogate, then `\u` and a low one.
    if ((code & 0x400) !== 0 || text.charCodeAt(at + 6) !== 0x5c || text.charCodeAt(at + 7) !== 0x75 || at + 8 > end) {
      return bail("cjson.decode: invalid unicode escape code");
    }
    const low = hex4(at + 8);
    if (low < 0 || (low & 0xfc00) !== 0xdc00) return bail("cjson.decode: invalid unicode escape code");
    code = (((code & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
    length = 12;
  }
  at += length;
  return utf8Bytes(code);
}

/** A code point's UTF-8 bytes, one char per byte. */
function utf8Bytes(code: number): string {
  if (code < 0x80) return String.fromCharCode(code);
  if (code < 0x800) return String.fromCharCode(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
  if (code < 0x10000) return String.fromCharCode(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  return String.fromCharCode(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
}

/** The next token's first byte after whitespace (-1 at the end), left unread. */
function peekToken(): number {
  skipSpace();
  return at < end ? text.charCodeAt(at) : -1;
}

function decodeObject(depth: number): LuaTable {
  if (depth > nestingMax) return bail("cjson.decode: too many nested data structures");
  at++;
  const table = new LuaTable();
  if (peekToken() === 0x7d /* } */) {
    at++;
    return table;
  }
  for (;;) {
    if (peekToken() !== 0x22) return bail("cjson.decode: expected object key string");
    const key = decodeString();
    if (peekToken() !== 0x3a /* : */) return bail("cjson.decode: expected colon");
    at++;
    table.setStr(key, decodeValue(depth));
    const next = peekToken();
    at++;
    if (next === 0x7d) return table;
    if (next !== 0x2c /* , */) return bail("cjson.decode: expected comma or object end");
  }
}

function decodeArray(depth: number): LuaTable {
  if (depth > nestingMax) return bail("cjson.decode: too many nested data structures");
  at++;
  const table = new LuaTable();
  if (peekToken() === 0x5d /* ] */) {
    at++;
    return table;
  }
  for (let index = 1; ; index++) {
    table.setInt(index, decodeValue(depth));
    const next = peekToken();
    at++;
    if (next === 0x5d) return table;
    if (next !== 0x2c) return bail("cjson.decode: expected comma or array end");
  }
}
