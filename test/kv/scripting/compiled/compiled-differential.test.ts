// Scripts compiled to JavaScript against the same scripts on Lua, in process: two engines, one
// compiling EVAL's scripts (the default) and one running them on Lua only, given the same
// generated programs — locals, arithmetic with Lua's coercions, strings, tables and their order,
// closures, varargs, loops, the library, redis.call — must answer the same replies and leave the
// same keys. A compiled run that bails must leave no trace: its commands are not made twice.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { compiledStats } from "../../../../src/kv/scripting/compiled/compiled-script.ts";
import { compilesScripts } from "../../../../src/kv/scripting/script-cache.ts";
import { createLogger, memoryDestination } from "../../../../src/core/log.ts";
import { Engine } from "../../../../src/kv/server/engine.ts";
import { Session } from "../../../../src/kv/server/session.ts";
import { Collector, harness, type Plain } from "../../harness.ts";

/** Generated programs per property (SVC_SCRIPT_RUNS raises it for a longer hunt). */
const runs = Number(process.env.SVC_SCRIPT_RUNS ?? 400);

const compiled = harness();
const luaOnly = harness();

/** Every key of db 0 with its type and value, for comparing what two engines hold. */
function keyspace(h: ReturnType<typeof harness>): Plain[] {
  const keys = h.run("KEYS", "*");
  if (!Array.isArray(keys)) throw new Error(`KEYS answered ${JSON.stringify(keys)}: a reply before it was cut short`);
  (keys as string[]).sort();
  return (keys as string[]).map((k) => [k, h.run("TYPE", k), h.run("DUMP", k)]);
}

/** Runs `script` with `args` (keys first: `keyCount` of them) on both engines, from empty keyspaces; expects the same. */
function sameOnBoth(script: string, keyCount = 0, ...args: string[]): Plain {
  compiled.run("FLUSHALL");
  luaOnly.run("FLUSHALL");
  compilesScripts.on = false;
  luaOnly.run("SCRIPT", "FLUSH");
  const expected = luaOnly.run("EVAL", script, keyCount, ...args);
  compilesScripts.on = true;
  compilesScripts.fromRun = 1;
  compiled.run("SCRIPT", "FLUSH");
  const got = compiled.run("EVAL", script, keyCount, ...args);
  expect({ script, reply: got }).toEqual({ script, reply: expected });
  expect(keyspace(compiled)).toEqual(keyspace(luaOnly));
  return got;
}

/** Runs `body` and expects it to complete on the compiled path (no bail). */
function completesCompiled(body: string, ...args: string[]): Plain {
  const before = compiledStats.completed;
  const reply = sameOnBoth(body, 0, ...args);
  const completed = compiledStats.completed - before;
  expect({ body, completed, bail: completed === 1 ? "" : compiledStats.lastBail }).toEqual({ body, completed: 1, bail: "" });
  return reply;
}

describe("compiled scripts answer as Lua does", () => {
  test("values, operators and coercions", () => {
    completesCompiled("return {1 + 2, '10' + 1, 7 % -3, -7 % 3, 2 ^ 10, 7 / 2, 'a' .. 1 .. 2.5, #'abc', 10 == '10', 'a' < 'b'}");
    completesCompiled("return {tostring(1/3), tostring(1e15), tostring(1e100), tostring(-0), tostring(2^52 * 2), tostring(0.1 + 0.2)}");
    completesCompiled("local a, b = 1 return {a and b, nil and 1, false or 'x', not nil, a or error('no')}");
    completesCompiled("return {tonumber('0x10'), tonumber(' 12 '), tonumber('1e2'), tonumber('z'), tonumber('10', 2), type(nil), type({})}");
    completesCompiled("return {string.format('%.17g', tonumber(0.1 + 0.2, '10')), tonumber('ff', '16'), tonumber('12', 10.9)}");
  });

  test("constants as Lua folds and keeps them: -0, and 0 and -0 sharing a function's one slot", () => {
    completesCompiled("return {tostring(-0), tostring(1/-0), tostring(0 * -1), tostring(-(0)), tostring(2 ^ 52), tostring((-0) ^ 3)}");
    // C's pow, not JavaScript's, for a power whose result is not an exact integer: left to Lua.
    sameOnBoth("local x = 2 return {string.format('%.17g', 2 ^ 0.5), string.format('%.17g', x ^ 0.5), string.format('%.17g', 1.1 ^ 3)}");
    completesCompiled("local x = 0 return {tostring(-x), tostring(- -0), tostring(-0 + 0), tostring(1/0)}");
    // Lua gives b the slot of a's 0: this compiler does not follow which sign comes first, and leaves such a script to Lua.
    sameOnBoth("local a = 0 local b = -0 return {tostring(a), tostring(b)}");
    sameOnBoth("local b = -0 local a = 0 return {tostring(a), tostring(b)}");
  });

  test("cjson.null is a value and a key as Lua has it", () => {
    completesCompiled(
      "local t = {} t[cjson.null] = 1 t[18] = 2 t.h = 3 t[true] = 4 local o = {} for k, v in pairs(t) do o[#o + 1] = type(k) end return {table.concat(o, ','), type(cjson.null), cjson.decode('[null]')[1] == cjson.null}",
    );
  });

  test("functions: closures per iteration, varargs, multiple results, recursion", () => {
    completesCompiled(`
      local fs = {}
      for i = 1, 3 do fs[i] = function() return i end end
      local function many(...) return select('#', ...), ... end
      local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
      local t = {many(1, nil, 3)}
      local doubled = {}
      for i = 1, 3 do i = i * 2 doubled[#doubled + 1] = i end
      for k, v in pairs({5}) do k = 'x' .. k doubled[#doubled + 1] = k end
      return {fs[1](), fs[3](), t[1], t[2], t[4], fib(15), select(-1, 'a', 'b'), (many(5, 6)), table.concat(doubled, ',')}`);
  });

  test("tables: constructors, length, insert and remove, pairs order, cjson and cmsgpack", () => {
    completesCompiled(`
      local t = {10, 20, 30, x = 1, y = 2}
      t[4] = 40; t.z = 3; t[6] = 60; t[5] = 50
      table.insert(t, 70); table.insert(t, 1, 0)
      local removed = table.remove(t)
      local order = {}
      for k, v in pairs(t) do order[#order + 1] = tostring(k) .. '=' .. tostring(v) end
      return {#t, removed, table.concat(order, ','), cjson.encode({a = 1, b = {1, 2}, c = 'x'})}`);
    completesCompiled(
      `
      local o = cmsgpack.unpack(ARGV[1])
      local keys = {}
      for k, v in pairs(o) do keys[#keys + 1] = k end
      return {table.concat(keys, ','), cjson.encode(o)}`,
      Buffer.from("83a161a131a162a132a163a133", "hex").toString("latin1"),
    );
  });

  test("table.sort: Lua's own quicksort, equal elements and odd orders where Lua leaves them", () => {
    const before = compiledStats.completed;
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(0.5, -1.5)), { maxLength: 40 }),
        fc.constantFrom("", ", function(a, b) return a > b end", ", function(a, b) return a % 3 < b % 3 end", ", function(a, b) return a <= b end"),
        (items, order) => {
          sameOnBoth(`local t = {${items.join(", ")}} table.sort(t${order}) local out = {} for i = 1, #t do out[i] = tostring(t[i]) end return out`);
        },
      ),
      { numRuns: runs },
    );
    // An order that is not strict may make Lua raise "invalid order function" (a bail): most do not.
    expect(compiledStats.completed - before).toBeGreaterThan(runs / 2);
    completesCompiled(
      "local t = {'b', 'a', 'c', 'B'} table.sort(t) local n = {3, 1, 2} table.sort(n, function(a, b) return a > b end) return {t[1], t[4], n[1], n[3]}",
    );
  });

  test("redis.status_reply and redis.sha1hex", () => {
    completesCompiled("return redis.status_reply('QUEUED')");
    completesCompiled("local r = redis.status_reply('a\\r\\nb') return {r.ok, redis.sha1hex('abc'), redis.sha1hex(12.5), redis.sha1hex({})}");
    // Past its limits it hands back an error table, which as a reply is an error: left to Lua.
    sameOnBoth("return redis.status_reply(5)");
  });

  test("redis.call: words as Redis writes numbers, replies as Lua values", () => {
    completesCompiled(`
      redis.call('SET', 'n', 1.5)
      redis.call('HSET', 'h', 'a', 1, 'b', 2)
      redis.call('RPUSH', 'l', 'x', 'y')
      local all = redis.call('HGETALL', 'h')
      local missing = redis.call('GET', 'nothing')
      local ok = redis.call('SET', 'k', 'v')
      return {redis.call('GET', 'n'), #all, all[1], missing == false, ok.ok, redis.call('INCR', 'c'), redis.call('LRANGE', 'l', 0, -1)}`);
  });
});

describe("redis.log from a compiled script", () => {
  test("a line logged before a bail is logged once, not again by Lua's run", () => {
    const destination = memoryDestination();
    const engine = new Engine({ databases: 1, log: createLogger({ level: "info", destination }) });
    const session = new Session(new Collector(), null);
    engine.register(session);
    engine.execute(session, ["EVAL", "redis.log(redis.LOG_NOTICE, 'before', 1) redis.call('SET', 'k', 'v') error('bail') ", "0"]);
    engine.execute(session, ["EVAL", "redis.log(redis.LOG_WARNING, 'plain', 2.5, {}, 'x') return 1", "0"]);
    const lines = destination.lines.filter((l) => l.script === true).map((l) => l.msg);
    expect(lines).toEqual(["before 1", "plain 2.5 x"]);
  });
});

describe("INFO svc", () => {
  test("counts compiled runs and bails, and is shown only when named", () => {
    const count = (name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(compiled.run("INFO", "svc") as string)?.[1]);
    const [runs, bails] = [count("compiled_script_runs"), count("compiled_script_bails")];
    compiled.run("EVAL", "return 1", 0);
    compiled.run("EVAL", "error('x')", 0);
    expect([count("compiled_script_runs") - runs, count("compiled_script_bails") - bails]).toEqual([1, 1]);
    expect(compiled.run("INFO", "all") as string).not.toContain("# Svc");
  });
});

describe("when a script is compiled", () => {
  test("by default at its second run, which runs compiled: a script run once costs no compile", () => {
    compilesScripts.fromRun = 2;
    try {
      compiled.run("SCRIPT", "FLUSH");
      const completed = [compiledStats.completed];
      for (let i = 0; i < 3; i++) {
        expect(compiled.run("EVAL", "return redis.call('INCR', 'runs')", 0)).toBe(i + 1);
        completed.push(compiledStats.completed);
      }
      expect(completed.map((n) => n - completed[0]!)).toEqual([0, 0, 1, 2]);
    } finally {
      compilesScripts.fromRun = 1;
    }
  });
});

describe("a compiled run that bails leaves the script to Lua, with no command made twice", () => {
  test("an error after writes: Lua's error, each write once", () => {
    const before = compiledStats.bailed;
    sameOnBoth("redis.call('INCR', 'c') redis.call('INCR', 'c') error('stop here')");
    expect(compiledStats.bailed).toBeGreaterThan(before);
    expect(compiled.run("GET", "c")).toBe("2");
  });

  test("a command's error, caught by pcall after a write", () => {
    sameOnBoth("redis.call('SET', 's', 'x') local ok, e = pcall(redis.call, 'INCR', 's') return {tostring(ok), e, redis.call('GET', 's')}");
  });

  test("a run past the compiled path's time: Lua finishes it, the writes before once", () => {
    sameOnBoth("redis.call('INCR', 'c') local n = 0 for i = 1, 3e7 do n = n + 1 end redis.call('INCR', 'c') return n");
    expect(compiled.run("GET", "c")).toBe("2");
  });

  test("what the compiled library lacks: math.random, setmetatable; redis.log past its limits", () => {
    sameOnBoth("redis.call('INCR', 'c') return {math.random(10) > 0, redis.call('GET', 'c')}");
    sameOnBoth("redis.call('INCR', 'c') redis.log(redis.LOG_NOTICE, 'hello', 1.5, {}, 'x') return redis.call('GET', 'c')");
    sameOnBoth("local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}) return t.x");
  });
});

// ---- Generated programs ----------------------------------------------------------------------

const names = ["a", "b", "c"] as const;
const number = fc.oneof(fc.integer({ min: -20, max: 20 }).map(String), fc.constantFrom("0.5", "-2.25", "1e3", "3.14159"));
const shortString = fc.constantFrom("'x'", "'10'", "' 5 '", "'0x1A'", "''", "'ab'", "'1e2'", "'k'");
const atom = fc.oneof(number, shortString, fc.constantFrom(...names), fc.constantFrom("#t", "#s", "t[1]", "t.x", "nil", "true", "false"));

const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    atom,
    fc.tuple(tie("e"), fc.constantFrom("+", "-", "*", "/", "%", "..", "==", "~=", "<", "<=", "and", "or"), tie("e")).map(([a, op, b]) => `(${a} ${op} ${b})`),
    tie("e").map((a) => `(not ${a})`),
    tie("e").map((a) => `show(${a})`),
    tie("e").map((a) => `tonumber(${a})`),
    tie("e").map((a) => `type(${a})`),
    fc.tuple(tie("e"), tie("e")).map(([a, b]) => `f(${a}, ${b})`),
    tie("e").map((a) => `redis.call('GET', 'k' .. show(${a}))`),
    tie("e").map((a) => `string.sub(show(${a}), 2, 4)`),
    tie("e").map((a) => `show(${a}):upper()`),
    tie("e").map((a) => `string.format('%s|%5.2s|%q', show(${a}), show(${a}), show(${a}))`),
    tie("e").map((a) => `select('#', string.find(show(${a}), '(%d+)'))`),
    tie("e").map((a) => `(string.gsub(show(${a}), '[aeiou1]', '<%0>'))`),
    tie("e").map((a) => `string.match(show(${a}), '^(%a*)')`),
    tie("e").map((a) => `string.rep(show(${a}), 2, ',')`),
    tie("e").map((a) => `math.floor(tonumber(${a}) or 0)`),
    fc.tuple(tie("e"), tie("e")).map(([a, b]) => `math.max(tonumber(${a}) or 1, tonumber(${b}) or 2)`),
    tie("e").map((a) => `tonumber(show(${a}), 16)`),
    fc.constant("select(2, unpack(t))"),
    fc.constant("select('#', v(1, nil, 3))"),
    fc.constant("inc()"),
    fc.constant("cjson.encode(t)"),
    fc.constant("#cmsgpack.pack(t, s, a)"),
  ),
})).e;

/** Statements that leave `t` alone: a loop over `t` runs them (one that grew `t` might never end). */
const plainStatement: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom(...names), expr).map(([n, e]) => `${n} = ${e}`),
  expr.map((e) => `s = s .. show(${e})`),
  fc.tuple(fc.integer({ min: 0, max: 9 }), expr).map(([k, e]) => `redis.call('SET', 'k${k}', show(${e}))`),
  fc.tuple(fc.integer({ min: 0, max: 9 }), expr).map(([k, e]) => `redis.call('HSET', 'h', 'f${k}', show(${e}))`),
  fc.constant("c = redis.call('HGETALL', 'h')"),
  fc.constant("c = redis.call('INCR', 'n')"),
  expr.map((e) => `redis.call('RPUSH', 'l', show(${e}))`),
);

const statement: fc.Arbitrary<string> = fc.letrec<{ s: string }>((tie) => ({
  s: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    plainStatement,
    fc.tuple(fc.constantFrom("1", "2", "3", "'x'", "'y'", "a"), expr).map(([k, e]) => `t[${k}] = ${e}`),
    expr.map((e) => `table.insert(t, ${e})`),
    fc.constant("table.remove(t)"),
    fc
      .tuple(expr, fc.array(tie("s"), { maxLength: 3 }), fc.array(tie("s"), { maxLength: 2 }))
      .map(([c, a, b]) => `if ${c} then ${a.join(" ")} else ${b.join(" ")} end`),
    fc
      .tuple(fc.integer({ min: -3, max: 5 }), fc.integer({ min: -3, max: 5 }), fc.constantFrom("1", "2", "-1"), fc.array(tie("s"), { maxLength: 3 }))
      .map(([x, y, st, body]) => `for i = ${x}, ${y}, ${st} do a = i ${body.join(" ")} end`),
    fc.array(plainStatement, { maxLength: 3 }).map((body) => `for k, v in pairs(t) do s = s .. show(k) ${body.join(" ")} end`),
    fc.array(plainStatement, { maxLength: 2 }).map((body) => `for i, v in ipairs(t) do b = v ${body.join(" ")} end`),
    fc.constant("t = cjson.decode(cjson.encode(t))"),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom(...names)).map(([x, y]) => `${x}, ${y} = ${y}, ${x}`),
    fc.constant("a, b = v(a, nil, b)"),
    fc.array(plainStatement, { maxLength: 2 }).map((body) => `local w = 0 while w < 3 do w = w + 1 ${body.join(" ")} end`),
    fc.array(plainStatement, { maxLength: 2 }).map((body) => `local r = 0 repeat r = r + 1 ${body.join(" ")} until r >= 2`),
    fc.array(plainStatement, { maxLength: 2 }).map((body) => `for x = 0, 1, 0.25 do a = x ${body.join(" ")} end`),
    fc.integer({ min: 4, max: 9 }).map((k) => `t[${k}] = ${k}`),
    fc.constant("t[#t] = nil"),
    fc.constant("t = cmsgpack.unpack(cmsgpack.pack(t))"),
  ),
})).s;

const program = fc.array(statement, { minLength: 1, maxLength: 8 }).map(
  (body) => `local a, b, c = 1, 'x', nil
local t, s = {1, 2, x = 'y'}, ''
local function f(p, q) return p, q end
local function v(...) return select('#', ...), ... end
local cnt = 0
local function inc() cnt = cnt + 1 return cnt end
local function show(v) if type(v) == 'table' then return 'table' end return tostring(v) end
${body.join("\n")}
local order = {}
for k, v in pairs(t) do order[#order + 1] = type(k) .. ':' .. show(k) .. '=' .. type(v) end
return {type(a), show(a), type(b), show(b), type(c), s, #t, table.concat(order, ' ')}`,
);

describe("generated programs (fast-check)", () => {
  test("the same replies and keys from compiled scripts as from Lua, most of them run compiled", () => {
    const completedBefore = compiledStats.completed;
    fc.assert(
      fc.property(program, (script) => {
        sameOnBoth(script);
      }),
      { numRuns: runs },
    );
    // Most generated programs end without an error: the compiled path must have run them, or
    // this test compared Lua with Lua.
    expect(compiledStats.completed - completedBefore).toBeGreaterThan(runs / 4);
    // And every one compiled: a generated program the parser or generator could not take, or
    // JavaScript that did not parse, is named here.
    expect(compiledStats.notCompiled).toBe("");
  });
});

// ---- Function libraries ----------------------------------------------------------------------

/** Loads library `code` on both engines, compiled and on Lua only, after emptying both. */
function loadOnBoth(code: string): void {
  for (const h of [compiled, luaOnly]) {
    h.run("FLUSHALL");
    h.run("FUNCTION", "FLUSH");
  }
  compilesScripts.on = false;
  const expected = luaOnly.run("FUNCTION", "LOAD", code);
  compilesScripts.on = true;
  expect(compiled.run("FUNCTION", "LOAD", code)).toEqual(expected);
}

/** FCALL on both engines; expects the same reply and keys. */
function fcallOnBoth(name: string, keyCount: number, ...args: string[]): Plain {
  const expected = luaOnly.run("FCALL", name, keyCount, ...args);
  const got = compiled.run("FCALL", name, keyCount, ...args);
  expect({ name, args, reply: got }).toEqual({ name, args, reply: expected });
  expect(keyspace(compiled)).toEqual(keyspace(luaOnly));
  return got;
}

describe("function libraries compiled", () => {
  test("a library's functions run compiled, sharing its fixed locals: constants and helpers", () => {
    loadOnBoth(`#!lua name=jobs
      local prefix, limit = 'job:', 3
      local function key(id) return string.format('%s%s', prefix, id) end
      local bump = function(k) return redis.call('INCR', k) end
      redis.register_function('add', function(keys, args)
        redis.call('HSET', key(args[1]), 'state', 'waiting')
        return {bump(keys[1]), redis.call('HGET', key(args[1]), 'state')}
      end)
      redis.register_function{function_name = 'count', callback = function(keys) return math.min(tonumber(redis.call('GET', keys[1]) or 0), limit) end, flags = {'no-writes'}}`);
    const before = compiledStats.completed;
    expect(fcallOnBoth("add", 1, "jobs:n", "7")).toEqual([1, "waiting"]);
    fcallOnBoth("add", 1, "jobs:n", "8");
    expect(fcallOnBoth("count", 1, "jobs:n")).toBe(2);
    expect(compiledStats.completed - before).toBe(3);
    // FCALL_RO, and the name in any case, as Redis finds it.
    expect(luaOnly.run("FCALL_RO", "COUNT", 1, "jobs:n")).toBe(compiled.run("FCALL_RO", "COUNT", 1, "jobs:n"));
    expect(compiledStats.completed - before).toBe(4);
  });

  test("a library whose functions share a local that changes stays on Lua: a bailed run would part the two copies", () => {
    // A compiled run would count in JavaScript's copy, and the run that bails (math.random) in
    // Lua's, which missed the first: 1, then 1 again instead of 2.
    for (const shared of ["local count = 0", "local seen = {}"]) {
      const change = shared === "local count = 0" ? "count = count + 1 local n = count" : "seen[#seen + 1] = 1 local n = #seen";
      loadOnBoth(`#!lua name=counter
        ${shared}
        redis.register_function('next', function(keys, args) ${change} if args[1] == 'random' then math.random() end return n end)`);
      const before = compiledStats.completed;
      expect([fcallOnBoth("next", 0, "x"), fcallOnBoth("next", 0, "random"), fcallOnBoth("next", 0, "x")]).toEqual([1, 2, 3]);
      expect(compiledStats.completed).toBe(before);
    }
  });

  test("what a function may not do is Lua's error on both: KEYS and ARGV globals, registering at run time", () => {
    loadOnBoth(`#!lua name=bad
      redis.register_function('keys', function() return KEYS[1] end)
      redis.register_function('again', function() redis.register_function('x', function() end) end)
      redis.register_function('global', function() undefined_thing = 1 end)`);
    for (const name of ["keys", "again", "global"]) expect(fcallOnBoth(name, 1, "k")).toEqual({ error: expect.stringMatching(/^ERR /) });
  });

  test("generated programs as a library's function answer as on Lua, most of them compiled", () => {
    const completedBefore = compiledStats.completed;
    const libraryRuns = Math.ceil(runs / 4);
    fc.assert(
      fc.property(program, (script) => {
        loadOnBoth(`#!lua name=generated\nredis.register_function('f', function(KEYS, ARGV)\n${script}\nend)`);
        fcallOnBoth("f", 0);
      }),
      { numRuns: libraryRuns },
    );
    expect(compiledStats.completed - completedBefore).toBeGreaterThan(libraryRuns / 4);
    expect(compiledStats.notCompiled).toBe("");
  });
});
