/**
 * Lua 5.1's operators on compiled scripts' values (lua-value.ts): arithmetic with Lua's coercion
 * of numeric strings, concatenation, length, comparison, indexing. Each takes the common case
 * first (numbers, strings, a LuaTable) and bails on what would raise an error in Lua or call a
 * metamethod — no compiled value has a metatable but strings, whose only metamethod is
 * `__index = string`.
 */
import { luaStringToNumber, luaToString } from "./lua-number.ts";
import { LuaTable } from "./lua-table.ts";
import { bail, type LuaFunction, type LuaValue, LibraryTable } from "./lua-value.ts";
import { stringLibrary } from "./lua-library.ts";

/** Longest string a concatenation or string.rep may make before the script is left to Lua, which bounds its memory (bytes). */
export const stringBytesMax = 64 * 1024 * 1024;

/** `v` as an operand of arithmetic: a number, or a string Lua reads as one; bails otherwise. */
function arithOperand(v: LuaValue): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    const n = luaStringToNumber(v);
    if (n !== undefined) return n;
  }
  return bail("arithmetic on a value that is not a number");
}

export function add(a: LuaValue, b: LuaValue): number {
  if (typeof a === "number" && typeof b === "number") return a + b;
  return arithOperand(a) + arithOperand(b);
}
export function sub(a: LuaValue, b: LuaValue): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return arithOperand(a) - arithOperand(b);
}
export function mul(a: LuaValue, b: LuaValue): number {
  if (typeof a === "number" && typeof b === "number") return a * b;
  return arithOperand(a) * arithOperand(b);
}
export function div(a: LuaValue, b: LuaValue): number {
  if (typeof a === "number" && typeof b === "number") return a / b;
  return arithOperand(a) / arithOperand(b);
}
/** Lua 5.1's `%`: a - floor(a/b)*b (the sign of the divisor, unlike JavaScript's). */
export function mod(a: LuaValue, b: LuaValue): number {
  const x = arithOperand(a);
  const y = arithOperand(b);
  return x - Math.floor(x / y) * y;
}
/** `a ^ b`: C's pow, which JavaScript's does not always match to the last bit. */
export function pow(a: LuaValue, b: LuaValue): number {
  const r = exactPower(arithOperand(a), arithOperand(b));
  return r === null ? bail("a power whose last bit JavaScript may round otherwise than C's pow") : r;
}

/** Integers below this magnitude are doubles exactly. */
const exactIntegerBound = 2 ** 53;

/**
 * x^y when both are integers, y ≥ 0, and the result an integer below 2^53 — exact, so any pow
 * gives it (squaring as it goes, each step exact); null otherwise.
 */
export function exactPower(x: number, y: number): number | null {
  if (!Number.isInteger(x) || !Number.isInteger(y) || y < 0) return null;
  let result = 1;
  let base = x;
  for (let e = y; e > 0; e = Math.floor(e / 2)) {
    if (e % 2 === 1) {
      result *= base;
      if (Math.abs(result) >= exactIntegerBound) return null;
    }
    if (e > 1) {
      base *= base;
      if (Math.abs(base) >= exactIntegerBound) return null;
    }
  }
  // pow(-0, odd) is -0, as C's pow has it; any other zero base gives 0, and x^0 is 1.
  return x === 0 && y > 0 ? (Object.is(x, -0) && y % 2 === 1 ? -0 : 0) : result;
}
export function unm(a: LuaValue): number {
  if (typeof a === "number") return -a;
  return -arithOperand(a);
}

/** `a .. b`: strings and numbers (as tostring writes them). */
export function concat(a: LuaValue, b: LuaValue): string {
  const left = typeof a === "string" ? a : typeof a === "number" ? luaToString(a) : bail("concatenating a value that is not a string");
  const right = typeof b === "string" ? b : typeof b === "number" ? luaToString(b) : bail("concatenating a value that is not a string");
  if (left.length + right.length > stringBytesMax) bail("a string past the compiled path's bound");
  return left + right;
}

/** `#v`: a string's bytes, a table's border. */
export function len(v: LuaValue): number {
  if (typeof v === "string") return v.length;
  if (v instanceof LuaTable) return v.length();
  return bail("length of a value that is neither a string nor a table");
}

/** Lua's truth: everything but nil and false. */
export function truthy(v: LuaValue): boolean {
  return v !== undefined && v !== false;
}

/** `a < b`: two numbers or two strings (bytewise, as strcoll in the C locale). */
export function lt(a: LuaValue, b: LuaValue): boolean {
  if (typeof a === "number" && typeof b === "number") return a < b;
  if (typeof a === "string" && typeof b === "string") return a < b;
  return bail("comparing values that are not two numbers or two strings");
}
export function le(a: LuaValue, b: LuaValue): boolean {
  if (typeof a === "number" && typeof b === "number") return a <= b;
  if (typeof a === "string" && typeof b === "string") return a <= b;
  return bail("comparing values that are not two numbers or two strings");
}

/** `o[k]`. A string's fields are the string library's (s:sub(…)). */
export function index(o: LuaValue, k: LuaValue): LuaValue {
  if (o instanceof LuaTable) return o.get(k);
  if (o instanceof LibraryTable) return o.get(k);
  if (typeof o === "string") return typeof k === "string" ? stringLibrary.get(k) : undefined;
  return bail("indexing a value that is not a table");
}
/** `o.name`, the key a constant string. */
export function field(o: LuaValue, name: string): LuaValue {
  if (o instanceof LuaTable) return o.getStr(name);
  if (o instanceof LibraryTable) return o.get(name);
  if (typeof o === "string") return stringLibrary.get(name);
  return bail("indexing a value that is not a table");
}

/** `o.name` where `hash` is the name's Lua string hash, computed once by the code generator. */
export function fieldHashed(o: LuaValue, name: string, hash: number): LuaValue {
  if (o instanceof LuaTable) return o.getStrHashed(name, hash);
  return field(o, name);
}

/** Table writes since the run began: a run that writes past writesMax is left to Lua, which bounds its memory. */
export const writeCount = { n: 0 };
/** Table writes a compiled run may make (each at most a slot of a table). */
export const writesMax = 4_000_000;

/** `o[k] = v`. */
export function setIndex(o: LuaValue, k: LuaValue, v: LuaValue): void {
  if (!(o instanceof LuaTable)) bail("assigning into a value that is not a writable table");
  if (++writeCount.n > writesMax) bail("table writes past the compiled path's bound");
  o.set(k, v);
}
/** `o.name = v` where `hash` is the name's Lua string hash. */
export function setFieldHashed(o: LuaValue, name: string, hash: number, v: LuaValue): void {
  if (!(o instanceof LuaTable)) bail("assigning into a value that is not a writable table");
  if (++writeCount.n > writesMax) bail("table writes past the compiled path's bound");
  o.setStrHashed(name, hash, v);
}

/** `v` to call: a function, or a bail (Lua would raise "attempt to call"). */
export function callee(v: LuaValue): LuaFunction {
  if (typeof v === "function") return v;
  return bail("calling a value that is not a function");
}
