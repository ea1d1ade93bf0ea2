/**
 * The globals a compiled script can reach, as Redis 7.0's sandbox gives them (native
 * sandbox.lua): Lua's base functions, `string`, `table`, `math`, `redis`, `cjson`, `cmsgpack`.
 * Each is a LuaFunction (lua-value.ts) doing exactly what Lua's does on the cases it handles, and
 * bailing on the rest: every error, and every global or library field not written here (reading
 * one bails where the script reads it, not before: math.random, setmetatable …).
 *
 * redis.call, redis.pcall and redis.log reach the server through `redisHost`, which the run in
 * progress sets (script-run.ts).
 */
import { sha1Hex } from "../../text/sha1-hex.ts";
import { cjsonDecode, cjsonEncode, cjsonNull } from "./lua-cjson.ts";
import { cmsgpackPack, cmsgpackUnpack } from "./lua-cmsgpack.ts";
import { formatG, luaStringToNumber, luaToNumberBase, luaToString } from "./lua-number.ts";
import * as stringLib from "./lua-string-lib.ts";
import { LuaTable } from "./lua-table.ts";
import { exactPower, lt, truthy } from "./lua-ops.ts";
import { luaSort } from "./lua-sort.ts";
import { bail, type LuaFunction, type LuaValue, noValues, LibraryTable } from "./lua-value.ts";

/** What redis.call, redis.pcall and redis.log reach: the run in progress (script-run.ts). */
export interface RedisHost {
  /** Runs the command `argv` and answers its reply as a Lua value; bails on an error reply. */
  command(argv: string[]): LuaValue;
  /** Logs `text` at Redis's level 0 (debug) to 3 (warning). */
  logLine(level: number, text: string): void;
}
export const redisHost: { current: RedisHost | null } = { current: null };

/** redis.log's levels: LOG_DEBUG to LOG_WARNING. */
const logLevelMin = 0;
const logLevelMax = 3;

/** Results `unpack` may give before Lua would answer "too many results to unpack" (its C stack holds 8,000). */
const unpackResultsMax = 7_900;

/** `v` as luaL_checkint reads an argument: a number or numeric string, truncated toward zero. */
function checkInt(v: LuaValue): number {
  const n = typeof v === "number" ? v : typeof v === "string" ? luaStringToNumber(v) : undefined;
  if (n === undefined || Number.isNaN(n)) return bail("an argument that is not a number");
  return Math.trunc(n) | 0;
}
/** `v` as luaL_checknumber reads it. */
function checkNumber(v: LuaValue): number {
  if (typeof v === "number") return v;
  const n = typeof v === "string" ? luaStringToNumber(v) : undefined;
  return n === undefined ? bail("an argument that is not a number") : n;
}
function checkTable(v: LuaValue): LuaTable {
  return v instanceof LuaTable ? v : bail("an argument that is not a table");
}

export function luaType(v: LuaValue): string {
  switch (typeof v) {
    case "undefined":
      return "nil";
    case "boolean":
      return "boolean";
    case "number":
      return "number";
    case "string":
      return "string";
    case "function":
      return "function";
    default:
      return v === (cjsonNull as unknown) ? "userdata" : "table";
  }
}

/** next(t, k): the pair after k in Lua's order, or nil. */
const next: LuaFunction = (t, k) => checkTable(t).next(k) ?? [undefined];
/** The iterator ipairs returns. */
const ipairsStep: LuaFunction = (t, i) => {
  const at = (i as number) + 1;
  const v = (t as LuaTable).getInt(at);
  return v === undefined ? [undefined] : [at, v];
};

const base: Record<string, LuaValue> = {
  type: (...args: LuaValue[]) => (args.length === 0 ? bail("type() without a value") : [luaType(args[0])]),
  tostring: (...args: LuaValue[]) => {
    const v = args[0];
    if (args.length === 0) return bail("tostring() without a value");
    if (typeof v === "string") return [v];
    if (typeof v === "number") return [luaToString(v)];
    if (v === undefined) return ["nil"];
    if (typeof v === "boolean") return [v ? "true" : "false"];
    return bail("tostring of a table or function (its address)");
  },
  tonumber: (...args: LuaValue[]) => {
    const [v, base] = args;
    // luaL_optint: a base given as a numeric string is read as a number, and base 10 is the plain conversion.
    if (base === undefined || checkInt(base) === 10) {
      if (args.length === 0) return bail("tonumber() without a value");
      if (typeof v === "number") return [v];
      return [typeof v === "string" ? luaStringToNumber(v) : undefined];
    }
    return [luaToNumberBase(typeof v === "number" ? luaToString(v) : typeof v === "string" ? v : bail("tonumber of a non-string in a base"), checkInt(base))];
  },
  select: (...args: LuaValue[]) => {
    const n = args.length;
    const which = args[0];
    if (typeof which === "string" && which.charCodeAt(0) === 0x23) return [n - 1];
    let i = checkInt(which);
    if (i < 0) i = n + i;
    else if (i > n) i = n;
    if (i < 1) return bail("select: index out of range");
    return args.slice(i);
  },
  unpack: (t, from, to) => {
    const table = checkTable(t);
    const i = from === undefined ? 1 : checkInt(from);
    const j = to === undefined ? table.length() : checkInt(to);
    if (i > j) return noValues;
    if (j - i >= unpackResultsMax) return bail("too many results to unpack");
    const out: LuaValue[] = new Array(j - i + 1);
    for (let k = i; k <= j; k++) out[k - i] = table.getInt(k);
    return out;
  },
  next,
  pairs: (t) => [next, checkTable(t), undefined],
  ipairs: (t) => [ipairsStep, checkTable(t), 0],
  rawget: (t, k) => [checkTable(t).get(k)],
  rawset: (t, k, v) => {
    checkTable(t).set(k, v);
    return [t];
  },
  rawequal: (...args: LuaValue[]) => (args.length < 2 ? bail("rawequal needs two values") : [args[0] === args[1]]),
  assert: (...args: LuaValue[]) => (args[0] === undefined || args[0] === false ? bail("assertion failed") : args),
  error: () => bail("error()"),
  pcall: (f, ...args) => {
    if (typeof f !== "function") return bail("pcall of a value that is not a function");
    // On the paths a compiled script takes, nothing is raised: an error bails the whole run.
    return [true, ...f(...args)];
  },
};

const table: Record<string, LuaValue> = {
  insert: (...args: LuaValue[]) => {
    const t = checkTable(args[0]);
    if (args.length === 2) {
      t.insert(args[1]);
      return noValues;
    }
    if (args.length !== 3) return bail("wrong number of arguments to 'insert'");
    const end = t.length() + 1;
    const at = checkInt(args[1]);
    // Lua 5.1 moves every slot between a far position and the end one by one (svc's Lua bounds
    // it, Redis's does not): only a position inside the sequence is taken here.
    if (at < 1 || at > end) return bail("table.insert at a position outside the sequence");
    for (let i = end; i > at; i--) t.setInt(i, t.getInt(i - 1));
    t.setInt(at, args[2]);
    return noValues;
  },
  remove: (t, at) => {
    const table = checkTable(t);
    const end = table.length();
    const from = at === undefined ? end : checkInt(at);
    if (!(1 <= from && from <= end)) return noValues;
    const removed = table.getInt(from);
    for (let i = from; i < end; i++) table.setInt(i, table.getInt(i + 1));
    table.setInt(end, undefined);
    return [removed];
  },
  getn: (t) => [checkTable(t).length()],
  sort: (t, order) => {
    const table = checkTable(t);
    if (order === undefined) luaSort(table, table.length(), lt);
    else if (typeof order === "function") luaSort(table, table.length(), (a, b) => truthy(order(a, b)[0]));
    else return bail("table.sort with an order that is not a function");
    return noValues;
  },
  concat: (t, sep, from, to) => {
    const table = checkTable(t);
    const separator =
      sep === undefined ? "" : typeof sep === "string" ? sep : typeof sep === "number" ? luaToString(sep) : bail("concat: a separator that is not a string");
    const i = from === undefined ? 1 : checkInt(from);
    const j = to === undefined ? table.length() : checkInt(to);
    let out = "";
    for (let k = i; k <= j; k++) {
      const v = table.getInt(k);
      const text = typeof v === "string" ? v : typeof v === "number" ? luaToString(v) : bail("concat: an item that is not a string");
      out += k === i ? text : separator + text;
    }
    return [out];
  },
};

const math: Record<string, LuaValue> = {
  floor: (x) => [Math.floor(checkNumber(x))],
  ceil: (x) => [Math.ceil(checkNumber(x))],
  abs: (x) => [Math.abs(checkNumber(x))],
  sqrt: (x) => [Math.sqrt(checkNumber(x))],
  fmod: (a, b) => [checkNumber(a) % checkNumber(b)],
  pow: (a, b) => {
    const r = exactPower(checkNumber(a), checkNumber(b));
    return r === null ? bail("a power whose last bit JavaScript may round otherwise than C's pow") : [r];
  },
  max: (...args: LuaValue[]) => {
    let most = checkNumber(args[0]);
    for (let i = 1; i < args.length; i++) {
      const d = checkNumber(args[i]);
      if (d > most) most = d;
    }
    return [most];
  },
  min: (...args: LuaValue[]) => {
    let least = checkNumber(args[0]);
    for (let i = 1; i < args.length; i++) {
      const d = checkNumber(args[i]);
      if (d < least) least = d;
    }
    return [least];
  },
  huge: Number.POSITIVE_INFINITY,
  pi: Math.PI,
};

/** The reply of redis.call, the server's through redisHost. Its words: strings, and numbers as Redis 7.0 writes them (%.17g). */
const redisCall: LuaFunction = (...args: LuaValue[]) => {
  if (args.length === 0) return bail("redis.call without a command");
  // The arguments' array is this call's own: it becomes the command's words in place.
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a === "string") continue;
    if (typeof a !== "number") return bail("redis.call with a word that is not a string or number");
    args[i] = formatG(a, 17);
  }
  return [redisHost.current!.command(args as string[])];
};

const redis: Record<string, LuaValue> = {
  call: redisCall,
  // A command that fails bails (redis.call's error, pcall's error table), so redis.pcall is redis.call on the paths taken here.
  pcall: redisCall,
  sha1hex: (...args: LuaValue[]) => {
    if (args.length !== 1) return bail("sha1hex: wrong number of arguments");
    const v = args[0];
    const text = typeof v === "string" ? v : typeof v === "number" ? luaToString(v) : "";
    return [sha1Hex(text)];
  },
  log: (...args: LuaValue[]) => {
    if (args.length < 2) return bail("redis.log() requires two arguments or more.");
    const level = args[0];
    const n = typeof level === "number" ? level : typeof level === "string" ? luaStringToNumber(level) : undefined;
    if (n === undefined) return bail("redis.log's level is not a number");
    const whole = Math.trunc(n);
    if (!(whole >= logLevelMin && whole <= logLevelMax)) return bail("Invalid debug level.");
    // As Redis: each part a string or number (as tostring writes it), others left out, a space
    // before each but the one of the second argument.
    let line = "";
    for (let i = 1; i < args.length; i++) {
      const part = args[i];
      const text = typeof part === "string" ? part : typeof part === "number" ? luaToString(part) : null;
      if (text === null) continue;
      line += i === 1 ? text : ` ${text}`;
    }
    redisHost.current!.logLine(whole, line);
    return noValues;
  },
  status_reply: (...args: LuaValue[]) => {
    if (args.length !== 1 || typeof args[0] !== "string") return bail("status_reply: wrong number or type of arguments");
    const t = new LuaTable(0, 1);
    t.setStr("ok", args[0]);
    return [t];
  },
  replicate_commands: () => [true],
  breakpoint: () => [false],
  debug: () => noValues,
  LOG_DEBUG: 0,
  LOG_VERBOSE: 1,
  LOG_NOTICE: 2,
  LOG_WARNING: 3,
  REPL_NONE: 0,
  REPL_SLAVE: 1,
  REPL_REPLICA: 1,
  REPL_AOF: 2,
  REPL_ALL: 3,
};

const cjson: Record<string, LuaValue> = {
  encode: (...args: LuaValue[]) => (args.length !== 1 ? bail("cjson.encode: wrong number of arguments") : [cjsonEncode(args[0])]),
  decode: (...args: LuaValue[]) => (args.length !== 1 || typeof args[0] !== "string" ? bail("cjson.decode of a non-string") : [cjsonDecode(args[0])]),
  null: cjsonNull as unknown as LuaValue,
};

const cmsgpack: Record<string, LuaValue> = {
  pack: (...args: LuaValue[]) => (args.length === 0 ? bail("cmsgpack.pack without a value") : [cmsgpackPack(args)]),
  unpack: (s) => (typeof s !== "string" ? bail("cmsgpack.unpack of a non-string") : cmsgpackUnpack(s)),
};

/** The string library (also strings' methods: s:sub(…)), from lua-string-lib.ts. */
export const stringLibrary = new LibraryTable("string", {
  len: stringLib.len,
  sub: stringLib.sub,
  byte: stringLib.byte,
  char: stringLib.char,
  rep: stringLib.rep,
  reverse: stringLib.reverse,
  lower: stringLib.lower,
  upper: stringLib.upper,
  format: stringLib.format,
  find: stringLib.find,
  match: stringLib.match,
  gmatch: stringLib.gmatch,
  gsub: stringLib.gsub,
});

/** Every global a compiled script can read, by name; any other global read bails. KEYS and ARGV are the run's own. */
export const globals: ReadonlyMap<string, LuaValue> = new Map<string, LuaValue>([
  ...Object.entries(base),
  ["string", stringLibrary],
  ["table", new LibraryTable("table", table)],
  ["math", new LibraryTable("math", math)],
  ["redis", new LibraryTable("redis", redis)],
  ["cjson", new LibraryTable("cjson", cjson)],
  ["cmsgpack", new LibraryTable("cmsgpack", cmsgpack)],
]);

/**
 * Where redis.register_function puts what a function library registers, name → callback, while
 * compileLibrary runs the library's code once; null at any other time, when it bails (Redis
 * allows it only while FUNCTION LOAD runs the code).
 */
export const registering: { into: Map<string, LuaFunction> | null } = { into: null };

/**
 * redis.register_function(name, callback) or redis.register_function{function_name=…,
 * callback=…, …}. Lua's run of the same code has already checked every argument and loaded the
 * library; anything but the plain forms bails, and the library stays on Lua.
 */
const registerFunction: LuaFunction = (...args: LuaValue[]) => {
  const into = registering.into;
  if (into === null) return bail("redis.register_function outside FUNCTION LOAD");
  const named = args.length === 1 && args[0] instanceof LuaTable;
  const name = named ? (args[0] as LuaTable).getStr("function_name") : args.length === 2 ? args[0] : undefined;
  const callback = named ? (args[0] as LuaTable).getStr("callback") : args[1];
  if (typeof name !== "string" || typeof callback !== "function") return bail("redis.register_function's arguments");
  into.set(name, callback);
  return noValues;
};

/** The globals of a function library's code: a script's, and redis.register_function. */
export const libraryGlobals: ReadonlyMap<string, LuaValue> = new Map<string, LuaValue>([
  ...globals,
  ["redis", new LibraryTable("redis", { ...redis, register_function: registerFunction })],
]);
