/**
 * A script compiled to JavaScript (docs/kv.md, "Scripts compiled to JavaScript"): made once from
 * its source, at the script's second run (script-run.ts), and run in place of Lua for as long as
 * the run takes only paths this compiler reproduces exactly. A run that meets anything else bails
 * (LuaBail), and the caller runs the script on Lua from its start (script-run.ts), its commands
 * so far answered as they were answered the first time (call-record.ts).
 *
 * Also here: a command's RESP reply as the Lua value redis.call gives a script (resp_to_lua.rs's
 * rules), and the script's result as the RESP reply the client gets (lua_to_resp.rs's).
 */
import { noFTL } from "bun:jsc";
import { type Clock, systemClock } from "../../../core/clock.ts";
import { RecentStrings } from "../../text/recent-strings.ts";
import type { Latin1Buffer } from "../../text/write-bytes.ts";
import { compileChunk, NotCompiled } from "./lua-codegen.ts";
import { globals, libraryGlobals, type RedisHost, redisHost, registering } from "./lua-library.ts";
import * as ops from "./lua-ops.ts";
import { parseLua } from "./lua-parser.ts";
import { LuaTable, stringHash } from "./lua-table.ts";
import { bail, LuaBail, type LuaFunction, type LuaValue, noValues, LibraryTable } from "./lua-value.ts";
import { RespWriter } from "../../resp/writer.ts";

/** Loop iterations and calls between two looks at the clock. */
const budgetSteps = 10_000;
/** Slots of replyStrings, and the longest reply string it keeps (a timestamp is 13, a UUID 36). */
const replyStringSlots = 1024;
const replyStringBytesMax = 40;
/** How long a function library's code may run when compileLibrary runs it (FUNCTION LOAD's own limit in Redis 7.0). */
const libraryLoadMsMax = 500;
/** Tables a reply may nest before Redis answers "reached lua stack limit" instead (lua_to_resp.rs DEPTH_MAX); deeper bails. */
const replyDepthMax = 1000;

/** The run's countdown to its next look at the clock, and its call depth: read by generated code. */
const budget = { n: budgetSteps };
const depth = { n: 0 };
/** The clock a run is timed by, and the monotonic ms past which it bails: set for each run. */
let runClock: Clock = systemClock;
let runDeadlineMs = 0;

/** What generated code calls ($o): lua-ops.ts and the run's own hooks. */
const generatedOps = {
  ...ops,
  gt: (a: LuaValue, b: LuaValue) => ops.lt(b, a),
  ge: (a: LuaValue, b: LuaValue) => ops.le(b, a),
  tick(): void {
    budget.n = budgetSteps;
    if (runClock.monotonicMs() > runDeadlineMs) bail("the run's time on the compiled path");
  },
  tooDeep: () => bail("calls nested past the compiled path's depth"),
  bailGlobal: (name: string) => bail(`the global ${name}, which the compiled library does not hold`),
  bailGlobalSet: (name: string) => bail(`a write to the global ${name}`),
  /** A numeric for's start, limit or step: a number, or a string Lua reads as one. */
  forNumber(v: LuaValue): number {
    if (typeof v === "number") return v;
    return ops.add(v, 0);
  },
  /** The trailing multiple values of a table constructor, stored from `from` on, as SETLIST stores them. */
  setList(t: LuaTable, from: number, values: LuaValue[]): void {
    t.setList(from, values, 0, values.length);
  },
};
const generatedLib = { LuaTable, none: noValues };

const knownGlobals: ReadonlySet<string> = new Set(globals.keys());
function knownField(library: string, name: string): boolean {
  const table = globals.get(library);
  return table instanceof LibraryTable && table.has(name);
}
const libraryKnownGlobals: ReadonlySet<string> = new Set(libraryGlobals.keys());
function libraryKnownField(library: string, name: string): boolean {
  const table = libraryGlobals.get(library);
  return table instanceof LibraryTable && table.has(name);
}
/** The server as a library's code sees it while compileLibrary runs it: neither a command nor a log line (Lua's run made those). */
const loadingHost: RedisHost = {
  command: () => bail("redis.call while a library loads"),
  logLine: () => bail("redis.log while a library loads"),
};

export type CompiledRun = (keys: LuaTable, argv: LuaTable) => LuaValue[];

/**
 * `source` (a script's text, its shebang line taken off) compiled; null for one this compiler
 * does not take. Lua accepted the script first (the cache loads it there), so a parser or
 * generator that refuses it — or JavaScript that does not parse, a generator's bug — leaves it
 * on Lua; it never fails the load.
 */
export function compileScript(source: string): CompiledRun | null {
  let run: CompiledRun;
  try {
    const factorySource = compileChunk(parseLua(source), knownGlobals, knownField);
    const factory = new Function(`return ${factorySource}`)() as (o: unknown, g: unknown, l: unknown, b: unknown, d: unknown) => CompiledRun;
    run = factory(generatedOps, globals, generatedLib, budget, depth);
  } catch (error) {
    if (!(error instanceof NotCompiled)) compiledStats.notCompiled = String(error);
    return null;
  }
  // A script's main function runs once a call, so its optimizing tier's large compile (200 ms
  // for BullMQ's moveToFinished) buys little, and was seen thrown away and redone.
  noFTL(run);
  return run;
}

/**
 * A function library's code (its metadata line taken off) compiled, and run once as FUNCTION
 * LOAD runs it: the compiled form of each function it registers, by name. Null for a library
 * this compiler does not take (see lua-codegen.ts: one whose functions share a local that
 * changes, say), or whose run here bails or registers other names than `names`, those Lua's own
 * run of it registered. Lua loaded the library first and checked everything; its functions
 * share the library's Lua state as these share the code's closures.
 */
export function compileLibrary(source: string, names: readonly string[]): Map<string, CompiledRun> | null {
  const registered = new Map<string, LuaFunction>();
  const host = redisHost.current;
  try {
    const factorySource = compileChunk(parseLua(source), libraryKnownGlobals, libraryKnownField, true);
    const factory = new Function(`return ${factorySource}`)() as (o: unknown, g: unknown, l: unknown, b: unknown, d: unknown) => CompiledRun;
    const code = factory(generatedOps, libraryGlobals, generatedLib, budget, depth);
    budget.n = budgetSteps;
    depth.n = 0;
    runClock = systemClock;
    runDeadlineMs = systemClock.monotonicMs() + libraryLoadMsMax;
    registering.into = registered;
    redisHost.current = loadingHost;
    // A library's code has no KEYS or ARGV: the compiled chunk does not read its parameters.
    code(undefined as unknown as LuaTable, undefined as unknown as LuaTable);
  } catch (error) {
    if (!(error instanceof NotCompiled) && !(error instanceof LuaBail)) compiledStats.notCompiled = String(error);
    return null;
  } finally {
    registering.into = null;
    redisHost.current = host;
  }
  if (registered.size !== names.length || names.some((name) => !registered.has(name))) return null;
  // Each runs once an FCALL, as a script's main function runs once an EVAL (compileScript).
  for (const run of registered.values()) noFTL(run);
  return registered;
}

/**
 * Runs `run` with `words[from, from + keyCount)` as KEYS and the rest as ARGV, until `clock`
 * passes `deadlineMs` (looked at every budgetSteps loop iterations or calls: it bails then).
 * Returns the script's value; throws LuaBail, or what a bug in the compiled path threw (which
 * the caller treats as a bail too).
 */
export function runCompiled(run: CompiledRun, words: readonly string[], from: number, keyCount: number, clock: Clock, deadlineMs: number): LuaValue {
  budget.n = budgetSteps;
  depth.n = 0;
  ops.writeCount.n = 0;
  runClock = clock;
  runDeadlineMs = deadlineMs;
  const keys = LuaTable.fromValues(words, from, from + keyCount);
  const argv = LuaTable.fromValues(words, from + keyCount);
  return run(keys, argv)[0];
}

/**
 * Compiled runs that completed, and that bailed (the last bail's reason); the last script the
 * compiler failed on other than by refusing it (a parser's or generator's gap): for tests.
 */
export const compiledStats = { completed: 0, bailed: 0, lastBail: "", notCompiled: "" };

/**
 * Counts a bail. Anything a compiled run throws leaves the script to Lua, which runs it exactly:
 * a LuaBail, JavaScript's own limits met first (its stack, a string's length: RangeError), or a
 * bug of the compiled path, which is logged.
 */
export function noteBail(server: { log: { warn(fields: object, message: string): void } }, error: unknown): void {
  compiledStats.bailed++;
  compiledStats.lastBail = error instanceof LuaBail ? error.why : String(error);
  if (!(error instanceof LuaBail) && !(error instanceof RangeError))
    server.log.warn({ script: true, error: String(error) }, "a compiled script failed; Lua runs it");
}

/** Lua string hashes of the reply tables' field names, computed once: every reply table is looked at for them. */
const okHash = stringHash("ok");
const errHash = stringHash("err");
const resp3Fields = ["double", "big_number", "verbatim_string", "map", "set"].map((name) => [name, stringHash(name)] as const);

/**
 * Strings of commands' replies, handed out again when they recur: a queue's scripts read the same
 * field names and states run after run (a job's HGETALL is ten names and ten values), and a
 * string made again is also hashed again when the script keys a table by it.
 */
const replyStrings = new RecentStrings(replyStringSlots, replyStringBytesMax);

/** Where the reply being read is (replyValue), kept here rather than in an object made per reply. */
let readAt = 0;

/** A command's RESP2 reply `bytes[0, end)` as redis.call gives it to the script; an error reply bails. */
export function replyValue(bytes: Latin1Buffer, end: number): LuaValue {
  readAt = 0;
  const value = valueAt(bytes);
  if (readAt !== end) return bail("a reply with bytes after its end");
  return value;
}

/** The signed decimal from readAt up to CR; readAt moves past its CRLF. Replies' counts and integers. */
function lineNumber(bytes: Latin1Buffer): number {
  let i = readAt;
  const negative = bytes[i] === 0x2d;
  if (negative) i++;
  let n = 0;
  let digits = 0;
  for (let c = bytes[i]!; c !== 0x0d; c = bytes[++i]!) {
    n = n * 10 + (c - 0x30);
    digits++;
  }
  // Past 15 digits a double's sum may round where parsing the text would not: parse it then.
  if (digits > 15) n = Math.abs(Number(bytes.latin1Slice(negative ? readAt + 1 : readAt, i)));
  readAt = i + 2;
  return negative ? -n : n;
}

function valueAt(bytes: Latin1Buffer): LuaValue {
  const kind = bytes[readAt++]!;
  switch (kind) {
    case 0x3a: // :
      return lineNumber(bytes);
    case 0x24: {
      // $
      const length = lineNumber(bytes);
      if (length < 0) return false;
      const text = replyStrings.fromBytes(bytes, readAt, readAt + length);
      readAt += length + 2;
      return text;
    }
    case 0x2a: {
      // *
      const count = lineNumber(bytes);
      if (count < 0) return false;
      const t = new LuaTable(count, 0);
      for (let i = 1; i <= count; i++) t.setInt(i, valueAt(bytes));
      return t;
    }
    case 0x2b: {
      // +
      let end = readAt;
      while (bytes[end] !== 0x0d) end++;
      const t = new LuaTable(0, 2);
      t.setStrHashed("ok", okHash, replyStrings.fromBytes(bytes, readAt, end));
      readAt = end + 2;
      return t;
    }
    default:
      // An error (redis.call raises it, redis.pcall hands the script a table Lua marks), or RESP3.
      return bail("a command's error reply");
  }
}

const replyOut = new RespWriter();

/** The script's value as the reply the client gets, plain RESP2, into `into` (its buffer reused by the next run). */
export function writeScriptReply(value: LuaValue, into: { bytes: Buffer; end: number }): void {
  replyOut.start = 0;
  replyOut.length = 0;
  writeValue(value, 0);
  into.bytes = replyOut.buffer;
  into.end = replyOut.length;
}

/** Integers past this magnitude are written from a BigInt (a double's integer part, exactly). */
const safeIntegerMax = 2 ** 53;
const int64Bound = 2 ** 63;

function writeValue(v: LuaValue, level: number): void {
  if (typeof v === "number") {
    if (Number.isNaN(v) || v >= int64Bound || v < -int64Bound) replyOut.integer(-(2n ** 63n));
    else {
      const n = Math.trunc(v);
      replyOut.integer(Math.abs(n) < safeIntegerMax ? n + 0 : BigInt(n));
    }
    return;
  }
  if (typeof v === "string") return replyOut.bulk(v);
  if (v === true) return replyOut.integer(1);
  if (v instanceof LuaTable) return writeTable(v, level);
  // nil, false, functions, cjson.null: Redis's reply for a type it has none for.
  replyOut.bulk(null);
}

function writeTable(t: LuaTable, level: number): void {
  if (level >= replyDepthMax) bail("a reply nested past Redis's limit");
  // Redis's order of the fields that make a table something else than an array.
  const err = t.getStrHashed("err", errHash);
  if (typeof err === "string") bail("an error reply");
  const ok = t.getStrHashed("ok", okHash);
  if (typeof ok === "string") {
    const cut = ok.indexOf("\0");
    replyOut.simple((cut < 0 ? ok : ok.slice(0, cut)).replace(/[\r\n]/g, " "));
    return;
  }
  for (const [name, hash] of resp3Fields) if (t.getStrHashed(name, hash) !== undefined) bail("a RESP3 reply table");
  let count = 0;
  while (t.getInt(count + 1) !== undefined) count++;
  replyOut.array(count);
  for (let i = 1; i <= count; i++) writeValue(t.getInt(i), level + 1);
}
