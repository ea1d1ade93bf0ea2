/**
 * cmsgpack.pack and cmsgpack.unpack for compiled scripts, as the native Lua's cmsgpack
 * (lua-cmsgpack 0.4, native/script/src/cmsgpack.rs) computes them. Strings are Lua's: one char
 * per byte.
 * - pack: an integral number within int64 as the smallest integer form, any other as a float32
 *   when that holds it exactly, else a float64; a table whose keys are exactly 1..n as an array,
 *   any other as a map, its pairs in lua_next order (the empty table an empty array); tables
 *   nested past 16, functions and other values it cannot write, as nil;
 * - unpack: every value of the string, each table made as lua_newtable makes it and filled in
 *   the order of the bytes (which fixes its later iteration order), nils stored as lua_rawset
 *   stores them.
 * Errors — no argument, bytes missing or of no type lua-cmsgpack reads, a nil or NaN map key —
 * and what the native decoder's stack might not hold bail; so does packing a NaN, whose bits
 * (its sign) are not known here.
 */
import { RecentStrings } from "../../text/recent-strings.ts";
import { LuaTable } from "./lua-table.ts";
import { bail, type LuaValue } from "./lua-value.ts";

/** Tables nested deeper than this are packed as nil. */
const nestingMax = 16;
/** Slots of unpackedStrings, and the longest string it keeps. */
const unpackedStringSlots = 256;
const unpackedStringBytesMax = 32;

/**
 * Stack slots the native decoder is sure to have (two per level of nesting, one per value
 * returned): past them, whether it succeeds is its to say.
 */
const stackSlotsMax = 7000;

/** 2^63: integral numbers from -2^63 below it are packed as integers. */
const int64Bound = 2 ** 63;

const scratch = new DataView(new ArrayBuffer(8));

// ---- pack ---------------------------------------------------------------------------------------

/** cmsgpack.pack(...) of its arguments (nil as undefined). */
export function cmsgpackPack(values: LuaValue[]): string {
  if (values.length === 0) return bail("cmsgpack.pack needs input");
  let out = "";
  for (let i = 0; i < values.length; i++) out += packValue(values[i], 0);
  return out;
}

function packValue(v: LuaValue, depth: number): string {
  switch (typeof v) {
    case "number":
      return packNumber(v);
    case "string":
      return stringHeader(v.length) + v;
    case "boolean":
      return v ? "\xc3" : "\xc2";
  }
  if (v instanceof LuaTable && depth < nestingMax) return packTable(v, depth);
  return "\xc0";
}

function packNumber(n: number): string {
  if (Math.trunc(n) === n && n >= -int64Bound && n < int64Bound) return packInteger(n);
  if (Number.isNaN(n)) return bail("cmsgpack.pack of a NaN, whose bits are not known here");
  if (Math.fround(n) === n) {
    scratch.setFloat32(0, n);
    return `\xca${bytesOf(4)}`;
  }
  scratch.setFloat64(0, n);
  return `\xcb${bytesOf(8)}`;
}

/** The first `count` bytes of the scratch view, one char each. */
function bytesOf(count: number): string {
  let out = "";
  for (let i = 0; i < count; i++) out += String.fromCharCode(scratch.getUint8(i));
  return out;
}

/** An integer (in int64) in its smallest form. */
function packInteger(n: number): string {
  if (n >= 0) {
    if (n <= 0x7f) return String.fromCharCode(n);
    if (n <= 0xff) return `\xcc${String.fromCharCode(n)}`;
    if (n <= 0xffff) return `\xcd${be16(n)}`;
    if (n <= 0xffffffff) return `\xce${be32(n)}`;
    return `\xcf${be32(Math.floor(n / 2 ** 32))}${be32(n % 2 ** 32)}`;
  }
  if (n >= -32) return String.fromCharCode(n & 0xff);
  if (n >= -128) return `\xd0${String.fromCharCode(n & 0xff)}`;
  if (n >= -32768) return `\xd1${be16(n & 0xffff)}`;
  if (n >= -2147483648) return `\xd2${be32(n >>> 0)}`;
  scratch.setBigInt64(0, BigInt(n));
  return `\xd3${bytesOf(8)}`;
}

function be16(n: number): string {
  return String.fromCharCode(n >>> 8, n & 0xff);
}

function be32(n: number): string {
  return String.fromCharCode(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

function stringHeader(length: number): string {
  if (length < 32) return String.fromCharCode(0xa0 | length);
  if (length <= 0xff) return `\xd9${String.fromCharCode(length)}`;
  if (length <= 0xffff) return `\xda${be16(length)}`;
  return `\xdb${be32(length)}`;
}

/** An array's or map's header: `fix` | n below 16, else the 16- or 32-bit form (`wide`, `wide` + 1). */
function containerHeader(n: number, fix: number, wide: number): string {
  if (n < 16) return String.fromCharCode(fix | n);
  if (n <= 0xffff) return String.fromCharCode(wide) + be16(n);
  return String.fromCharCode(wide + 1) + be32(n);
}

function packTable(t: LuaTable, depth: number): string {
  // Whether the keys are exactly 1..count: all integers ≥ 1, the largest being their count.
  let count = 0;
  let max = 0;
  let integral = true;
  let pair = t.next(undefined);
  while (pair !== undefined) {
    const k = pair[0];
    count++;
    if (typeof k === "number") {
      if (!(k >= 1 && Math.trunc(k) === k)) integral = false;
      if (k > max) max = k;
    } else {
      // A table's or function's place follows its address in Lua, which is not known here.
      if (k instanceof LuaTable || typeof k === "function") bail("cmsgpack.pack of a table keyed by a table or function");
      integral = false;
    }
    pair = t.next(k);
  }
  const inner = depth + 1;
  if (integral && max === count) {
    let out = containerHeader(count, 0x90, 0xdc);
    for (let i = 1; i <= count; i++) out += packValue(t.getInt(i), inner);
    return out;
  }
  let out = containerHeader(count, 0x80, 0xde);
  pair = t.next(undefined);
  while (pair !== undefined) {
    out += packValue(pair[0], inner) + packValue(pair[1], inner);
    pair = t.next(pair[0]);
  }
  return out;
}

// ---- unpack -------------------------------------------------------------------------------------

/** The string being unpacked, where the decoder is, and the values it has returned so far. */
let bytes = "";
let at = 0;
let returned = 0;
/** The deepest nesting met so far (1: a value returned). */
let deepest = 0;

/** cmsgpack.unpack(s): every value s holds. */
export function cmsgpackUnpack(s: string): LuaValue[] {
  bytes = s;
  at = 0;
  returned = 0;
  deepest = 0;
  const values: LuaValue[] = [];
  while (at < s.length) {
    values.push(unpackValue(1));
    returned++;
  }
  bytes = "";
  if (stackSlotsNeeded() > stackSlotsMax) return bail("cmsgpack.unpack: past what the stack surely holds");
  return values;
}

/** The slots the native decoder's way needs for what was decoded so far, and the value being decoded. */
function stackSlotsNeeded(): number {
  return returned + 1 + 2 * deepest + 2;
}

function byteAt(i: number): number {
  if (i >= bytes.length) return bail("cmsgpack.unpack: missing bytes in input");
  return bytes.charCodeAt(i);
}

/** `width` bytes from `from`, big-endian, as an unsigned number (width ≤ 4). */
function unsignedAt(from: number, width: number): number {
  if (from + width > bytes.length) return bail("cmsgpack.unpack: missing bytes in input");
  let n = 0;
  for (let i = from; i < from + width; i++) n = n * 256 + bytes.charCodeAt(i);
  return n;
}

/** Loads `width` bytes from `from` into the scratch view. */
function loadScratch(from: number, width: number): void {
  if (from + width > bytes.length) bail("cmsgpack.unpack: missing bytes in input");
  for (let i = 0; i < width; i++) scratch.setUint8(i, bytes.charCodeAt(from + i));
}

/** The value at `at`, at nesting `level` (1 for a value returned). */
function unpackValue(level: number): LuaValue {
  if (level > deepest) {
    deepest = level;
    if (stackSlotsNeeded() > stackSlotsMax) return bail("cmsgpack.unpack: past what the stack surely holds");
  }
  const kind = byteAt(at);
  at++;
  if (kind <= 0x7f) return kind;
  if (kind >= 0xe0) return kind - 0x100;
  if (kind >= 0xa0 && kind <= 0xbf) return unpackString(kind & 0x1f);
  if (kind >= 0x90 && kind <= 0x9f) return unpackArray(kind & 0x0f, level);
  if (kind <= 0x8f) return unpackMap(kind & 0x0f, level);
  return unpackTyped(kind, level);
}

/** A value of a type byte from 0xc0 to 0xdf. */
function unpackTyped(kind: number, level: number): LuaValue {
  switch (kind) {
    case 0xc0:
      return undefined;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xcc:
    case 0xcd:
    case 0xce: {
      const width = 1 << (kind - 0xcc);
      const n = unsignedAt(at, width);
      at += width;
      return n;
    }
    case 0xd0:
    case 0xd1:
    case 0xd2: {
      const width = 1 << (kind - 0xd0);
      const n = unsignedAt(at, width);
      at += width;
      const bits = width * 8;
      return n >= 2 ** (bits - 1) ? n - 2 ** bits : n;
    }
    case 0xca:
      loadScratch(at, 4);
      at += 4;
      return scratch.getFloat32(0);
    case 0xcb:
      loadScratch(at, 8);
      at += 8;
      return scratch.getFloat64(0);
    case 0xcf:
      loadScratch(at, 8);
      at += 8;
      return Number(scratch.getBigUint64(0));
    case 0xd3:
      loadScratch(at, 8);
      at += 8;
      return Number(scratch.getBigInt64(0));
    case 0xd9:
    case 0xda:
    case 0xdb: {
      const width = 1 << (kind - 0xd9);
      const length = unsignedAt(at, width);
      at += width;
      return unpackString(length);
    }
    case 0xdc:
    case 0xdd: {
      const width = 2 << (kind - 0xdc);
      const length = unsignedAt(at, width);
      at += width;
      return unpackArray(length, level);
    }
    case 0xde:
    case 0xdf: {
      const width = 2 << (kind - 0xde);
      const length = unsignedAt(at, width);
      at += width;
      return unpackMap(length, level);
    }
  }
  return bail("cmsgpack.unpack: bad data format in input");
}

/**
 * Strings unpacked, handed out again when they recur: a queue packs the same option names into
 * every job, and a string made again is hashed again when it keys a table.
 */
const unpackedStrings = new RecentStrings(unpackedStringSlots, unpackedStringBytesMax);

function unpackString(length: number): string {
  const from = at;
  if (from + length > bytes.length) return bail("cmsgpack.unpack: missing bytes in input");
  at += length;
  return unpackedStrings.fromText(bytes, from, at);
}

function unpackArray(length: number, level: number): LuaTable {
  const table = new LuaTable();
  for (let i = 1; i <= length; i++) table.setInt(i, unpackValue(level + 1));
  return table;
}

function unpackMap(length: number, level: number): LuaTable {
  const table = new LuaTable();
  for (let i = 0; i < length; i++) {
    const key = unpackValue(level + 1);
    const value = unpackValue(level + 1);
    if (key === undefined || Number.isNaN(key)) return bail("cmsgpack.unpack: a nil or NaN map key");
    table.set(key, value);
  }
  return table;
}
