// Random Lua programs against a real `svc kv`: whatever a script does — the standard library, bit,
// cjson, cmsgpack and struct at random and extreme arguments, redis.call and redis.pcall with
// random commands, coroutines, errors raised and caught, metatables, loaded chunks, the
// collector's settings, RESP3, writes to the shared globals and libraries, deep tables, returns of
// every type — after each program the server still answers, a key the program could not name is
// unchanged, and a probe script sees the globals and libraries exactly as before any program ran.
//
// Programs are made from a grammar, with every loop bounded (a script that never ends is the time
// limit's business, not this file's) and strings and repetitions kept small enough that each runs
// in milliseconds. SVC_LUA_FUZZ_RUNS raises the count for a longer hunt.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { RespClient, type RespValue } from "../test/kv/support/resp-client.ts";
import { type ServerProcess, startKv } from "../test/kv/support/servers.ts";

/** Programs per run: a few hundred in the suite (a few seconds). */
const runs = Number(process.env.SVC_LUA_FUZZ_RUNS ?? 300);
/** fast-check's seed, to replay a run it reported (it prints the seed of a failure). */
const seed = process.env.SVC_LUA_FUZZ_SEED === undefined ? undefined : Number(process.env.SVC_LUA_FUZZ_SEED);
/**
 * Programs between two SCRIPT FLUSHes. Every distinct program stays compiled in the server's cache,
 * as in Redis, and a program that collects garbage fully pays for the whole cache: over a long
 * hunt runs slowed from milliseconds to a fifth of a second. A fresh Lua state now and then keeps
 * the pace (and starts a state the probe must find as pristine).
 */
const programsPerFlush = 500;
/** Time allowed: most programs take a few milliseconds; some build thousands of nested tables. */
const msPerRunAllowed = 100;
const testTimeoutMs = Math.max(60_000, runs * msPerRunAllowed);

/** The key no program can name: programs' keys all start with `fz:`. */
const sentinelKey = "sentinel";
/** A key the probe reads and no program can name, never set. */
const probeMissingKey = "probe:missing";

let kv: ServerProcess;
let client: RespClient;
let baseline: RespValue;

/**
 * What every script should see however earlier scripts behaved: the globals' and libraries' types,
 * string methods, the string metatable, no raw fields slipped into read-only tables, cjson's
 * defaults, the libraries computing as usual, RESP2 replies to its commands, the globals refusing
 * writes and unknown names.
 */
const probe = `
local names = {'string', 'table', 'math', 'coroutine', 'bit', 'cjson', 'cmsgpack', 'struct', 'redis', 'tostring', 'tonumber', 'type',
  'pairs', 'ipairs', 'next', 'select', 'unpack', 'rawget', 'rawset', 'rawequal', 'setmetatable', 'getmetatable', 'pcall', 'xpcall', 'error',
  'assert', 'loadstring', 'load', 'collectgarbage', 'gcinfo', '_G', '_VERSION', 'KEYS', 'ARGV'}
local out = {}
for _, n in ipairs(names) do out[#out + 1] = n .. '=' .. type(_G[n]) end
for _, lib in ipairs({'string', 'table', 'math', 'coroutine', 'bit', 'cjson', 'cmsgpack', 'struct', 'redis'}) do
  for _, f in ipairs({'upper', 'insert', 'floor', 'wrap', 'band', 'encode', 'pack', 'size', 'call', 'rep', 'concat', 'max', 'tohex', 'decode', 'unpack'}) do
    local v = rawget(_G[lib], f)
    if v ~= nil then out[#out + 1] = 'raw:' .. lib .. '.' .. f end
    out[#out + 1] = type(_G[lib][f])
  end
end
out[#out + 1] = string.upper('abc') .. ('x'):rep(2) .. ('AbC'):lower() .. tostring(12) .. tostring(nil) .. tostring(true)
out[#out + 1] = tostring(getmetatable('').__index == string) .. tostring(getmetatable(string)) .. type(getmetatable(_G))
out[#out + 1] = tostring(rawget(_G, 1)) .. tostring(rawget(string, 1)) .. tostring(rawget(_G, 'x')) .. tostring(rawget(redis, 'x'))
out[#out + 1] = cjson.encode({1, 'a', {b = 2}}) .. cjson.encode(1/3) .. tostring(cjson.encode_max_depth()) .. tostring(cjson.encode_keep_buffer())
out[#out + 1] = tostring(cjson.decode_max_depth()) .. tostring(cjson.encode_number_precision()) .. tostring(cjson.encode_invalid_numbers())
out[#out + 1] = cmsgpack.pack(1, 'a', {2}) .. struct.pack('>i4', 7) .. bit.tohex(255) .. tostring(bit.band(12, 10))
out[#out + 1] = tostring(select('#', unpack({1, 2, 3}))) .. table.concat({1, 2}, '-') .. string.format('%5.2f', 1.5)
out[#out + 1] = tostring(pcall(function() return undefined_global end)) .. tostring(pcall(function() x = 1 end))
out[#out + 1] = tostring(pcall(rawset, _G, 'x', 1)) .. tostring(pcall(setmetatable, string, {}))
out[#out + 1] = redis.sha1hex('') .. tostring(#KEYS) .. tostring(#ARGV) .. tostring(math.huge) .. tostring(math.pi)
out[#out + 1] = type(redis.call('get', '${probeMissingKey}')) .. type(redis.call('ping'))
local count = 0 for _ in pairs(string) do count = count + 1 end out[#out + 1] = tostring(count)
out[#out + 1] = tostring(loadstring('return 1 + 1')()) .. tostring((loadstring(string.dump(function() end))))
return table.concat(out, ',')
`;

beforeAll(async () => {
  kv = await startKv();
  client = await RespClient.connect(kv.port);
  baseline = await client.call("EVAL", probe, "0");
  expect(typeof baseline).toBe("string");
});

afterAll(async () => {
  client?.close();
  await kv?.stop();
});

// ---- the grammar ----------------------------------------------------------------------------

const pick = <T>(...items: T[]) => fc.constantFrom(...items);

/** A byte string as a Lua literal, each byte a decimal escape. */
const luaBytes = (text: string) => `"${[...text].map((c) => `\\${c.charCodeAt(0)}`).join("")}"`;
const bytes = (maxLength: number) => fc.array(fc.integer({ min: 0, max: 255 }), { maxLength }).map((codes) => String.fromCharCode(...codes));

const extremeNumber = pick("0/0", "1/0", "-1/0", "2^31", "-2^31", "2^31-1", "2^32", "2^53", "2^63", "-2^63", "1e308", "-0", "0.5", "-1", "0", "1", "3");
const number = fc.oneof(
  extremeNumber,
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? "-0" : `(${String(n)})`)),
);
const patternItem = fc.oneof(
  pick("a", ".", "%a", "%d", "%s", "%w", "[a-c]", "[^x]", "%%", "%b()", "%f[%w]", "(", ")", "()", "^", "$", "%1", "[", "%"),
  pick("a", ".", "%a", "[abc]").chain((c) => pick(`${c}*`, `${c}+`, `${c}-`, `${c}?`)),
);
const pattern = fc.array(patternItem, { maxLength: 8 }).map((items) => luaBytes(items.join("")));
const shortString = fc.oneof(
  bytes(12).map(luaBytes),
  pick("''", "'abc'", "'a,b,,c'", "'%d %s'", "'%5.2f'", "'%q'", "'%c'", "'%x'", "'%099.99f'", "'x\\0y'", "'{\"a\":[1,2]}'", "'[1,'", "'nan'", "'0x10'", "'-'"),
  pick("'>i4'", "'<h'", "'!4 b i'", "'s'", "'c0'", "'c3'", "'d f'", "'i40'", "'q'", "'bB hH lL'", "'x'", "'i' .. string.rep('9', 30)"),
  pattern,
);
const key = fc.oneof(
  pick("KEYS[1]", "KEYS[2]"),
  fc.string({ maxLength: 4 }).map((k) => luaBytes(`fz:${k}`)),
);
const variable = pick("v1", "v2", "v3", "v4", "KEYS", "ARGV", "ARGV[1]", "#ARGV", "_G", "string", "redis");

/** Library functions and how many arguments to give each (a count beyond the usual on purpose). */
const functions = [
  "tostring",
  "tonumber",
  "type",
  "select",
  "unpack",
  "rawget",
  "rawequal",
  "next",
  "getmetatable",
  "assert",
  "error",
  "pcall",
  "loadstring",
  "gcinfo",
  "string.rep",
  "string.sub",
  "string.byte",
  "string.char",
  "string.format",
  "string.find",
  "string.match",
  "string.gsub",
  "string.gmatch",
  "string.upper",
  "string.lower",
  "string.len",
  "string.reverse",
  "string.dump",
  "table.concat",
  "table.insert",
  "table.remove",
  "table.sort",
  "table.maxn",
  "table.getn",
  "math.floor",
  "math.ceil",
  "math.abs",
  "math.max",
  "math.min",
  "math.sqrt",
  "math.fmod",
  "math.modf",
  "math.random",
  "math.log",
  "math.pow",
  "math.frexp",
  "math.ldexp",
  "bit.tobit",
  "bit.tohex",
  "bit.bnot",
  "bit.band",
  "bit.bor",
  "bit.bxor",
  "bit.lshift",
  "bit.rshift",
  "bit.arshift",
  "bit.rol",
  "bit.ror",
  "bit.bswap",
  "cjson.encode",
  "cjson.decode",
  "cmsgpack.pack",
  "cmsgpack.unpack",
  "cmsgpack.unpack_one",
  "cmsgpack.unpack_limit",
  "struct.pack",
  "struct.unpack",
  "struct.size",
  "redis.sha1hex",
  "redis.error_reply",
  "redis.status_reply",
  "redis.log",
  "redis.setresp",
  "redis.set_repl",
  "redis.acl_check_cmd",
  "coroutine.create",
  "coroutine.wrap",
  "coroutine.status",
  "coroutine.running",
  "coroutine.yield",
  "coroutine.resume",
  "cjson.encode_max_depth",
  "cjson.encode_keep_buffer",
  "cjson.encode_number_precision",
  "cjson.decode_invalid_numbers",
  "cjson.encode_sparse_array",
  "cjson.new",
  "collectgarbage",
];
const commands = [
  "get",
  "set",
  "incr",
  "incrbyfloat",
  "del",
  "exists",
  "type",
  "ttl",
  "expire",
  "append",
  "strlen",
  "getrange",
  "setrange",
  "mget",
  "mset",
  "hset",
  "hget",
  "hgetall",
  "hincrby",
  "lpush",
  "rpush",
  "lrange",
  "lpop",
  "llen",
  "sadd",
  "smembers",
  "sismember",
  "zadd",
  "zrange",
  "zscore",
  "zincrby",
  "xadd",
  "xrange",
  "echo",
  "ping",
  "time",
  "dbsize",
  "config",
  "info",
  "object",
  "pfadd",
  "pfcount",
  "setbit",
  "bitcount",
  "eval",
  "multi",
  "subscribe",
  "client",
  "nosuch",
  "",
  "GET",
  "SeT",
];
/** Sandbox escapes and such, each a statement (wrapped in pcall by the program). */
const attempts = [
  "rawset(_G, 'tostring', function() return 'pwn' end)",
  "rawset(string, 'upper', function() return 'pwn' end)",
  "table.insert(_G, 1)",
  "table.insert(string, 'x')",
  "setmetatable(_G, nil)",
  "setmetatable(string, {__index = function() return 1 end})",
  "getmetatable('').__index = {}",
  "getmetatable('').__index.upper = function() return 'pwn' end",
  "getmetatable('').__metatable = 1",
  "getmetatable(_G).__index = function() return 1 end",
  "x = 1",
  "string.x = 1",
  "redis.call = print",
  "_G.redis = nil",
  "loadstring('tostring = nil')()",
  "loadstring(string.dump(function() return 1 end))()",
  "load(function() return nil end)()",
  "cjson.encode_max_depth(1)",
  "cjson.encode_keep_buffer(false)",
  "cjson.encode_number_precision(1)",
  "cjson.decode_invalid_numbers(false)",
  "cjson.encode_invalid_numbers(true)",
  "collectgarbage('stop')",
  "collectgarbage('setpause', 1e9)",
  "collectgarbage('setstepmul', -1)",
  "redis.setresp(3)",
  "table.sort(string)",
  "table.remove(_G)",
  "unpack({}, -2, 2147483647)",
  "string.find(string.rep('a', 1000), string.rep('a?', 1000))",
  "table.insert({}, -2^31, 1)",
  "cmsgpack.unpack(string.rep(string.char(0x91), 5000) .. string.char(1))",
  "cjson.decode(string.rep('[', 2000))",
  "struct.unpack('b c0', string.char(255) .. 'x')",
  "bit.tohex(1, -2^31)",
  "string.format('%5000d', 1)",
  "select(-2^31, 1)",
  "error(setmetatable({}, {__index = function() error('x') end}))",
  "error({})",
  "error(string)",
  "coroutine.wrap(error)(string)",
];

/** An expression at most `depth` deep. */
function expression(depth: number): fc.Arbitrary<string> {
  const leaf = fc.oneof(number, shortString, variable, key, pick("true", "false", "nil", "{}", "redis.call", "cjson.null", "string"));
  if (depth <= 0) return leaf;
  const e = expression(depth - 1);
  const args = fc.array(fc.oneof(e, number, shortString), { maxLength: 4 }).map((items) => items.join(", "));
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    {
      weight: 2,
      arbitrary: fc
        .tuple(e, pick("+", "-", "*", "/", "%", "^", "..", "==", "~=", "<", "<=", ">", ">=", "and", "or"), e)
        .map(([a, op, b]) => `(${a} ${op} ${b})`),
    },
    { weight: 1, arbitrary: fc.tuple(pick("-", "not ", "#"), e).map(([op, a]) => `(${op}(${a}))`) },
    { weight: 4, arbitrary: fc.tuple(pick(...functions), args).map(([f, a]) => `${f}(${a})`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(pick("redis.pcall", "redis.pcall", "redis.call"), pick(...commands), fc.array(fc.oneof(key, e), { maxLength: 3 }))
        .map(([f, c, a]) => `${f}(${[`'${c}'`, ...a].join(", ")})`),
    },
    {
      weight: 2,
      arbitrary: fc
        .array(
          fc.oneof(
            e,
            fc.tuple(pick("a", "b", "err", "ok", "map", "set", "double", "big_number"), e).map(([k, v]) => `${k} = ${v}`),
          ),
          { maxLength: 4 },
        )
        .map((items) => `{${items.join(", ")}}`),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(pick("map", "set"), fc.array(fc.tuple(e, e), { maxLength: 3 }))
        .map(([k, pairs]) => `{${k} = {${pairs.map(([a, b]) => `[${a}] = ${b}`).join(", ")}}}`),
    },
    { weight: 1, arbitrary: fc.tuple(e, e).map(([f, t]) => `{verbatim_string = {format = ${f}, string = ${t}}}`) },
    { weight: 1, arbitrary: fc.tuple(e, e).map(([a, b]) => `(${a})[${b}]`) },
    { weight: 1, arbitrary: e.map((b) => `(function(a, b) return ${b} end)`) },
    { weight: 1, arbitrary: e.map((b) => `select(2, pcall(function() return ${b} end))`) },
    { weight: 1, arbitrary: fc.tuple(e, e).map(([a, b]) => `coroutine.wrap(function(x) coroutine.yield(${a}) return ${b} end)(1)`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(e, e)
        .map(
          ([a, b]) =>
            `setmetatable({}, {__index = function(t, k) return ${a} end, __tostring = function() return ${b} end, __concat = function() return ${a} end})`,
        ),
    },
    { weight: 1, arbitrary: e.map((b) => `(loadstring(${luaBytes(`return ${b}`)}) or function() end)()`) },
    { weight: 1, arbitrary: fc.nat(3000).map((n) => `(function() local t = {} for i = 1, ${n} do t = {t} end return t end)()`) },
  );
}

/** A statement at most `depth` deep (loops nest at most twice, each bounded). */
function statement(depth: number): fc.Arbitrary<string> {
  const e = expression(2);
  const simple = fc.oneof(
    fc.tuple(pick("v1", "v2", "v3", "v4"), e).map(([v, x]) => `${v} = ${x}`),
    e.map((x) => `local _ = ${x}`),
    pick(...attempts),
    fc.tuple(pick("'collect'", "'step'", "'count'", "'restart'"), fc.nat(100)).map(([o, n]) => `collectgarbage(${o}, ${n})`),
    pick("redis.setresp(3)", "redis.setresp(2)"),
  );
  if (depth <= 0) return simple;
  const block = fc.array(statement(depth - 1), { minLength: 1, maxLength: 3 }).map((body) => body.join("\n"));
  return fc.oneof(
    { weight: 4, arbitrary: simple },
    { weight: 1, arbitrary: fc.tuple(e, block, block).map(([c, a, b]) => `if ${c} then\n${a}\nelse\n${b}\nend`) },
    { weight: 1, arbitrary: fc.tuple(fc.nat(20), block).map(([n, b]) => `for i${depth} = 1, ${n} do\n${b}\nend`) },
    { weight: 1, arbitrary: fc.tuple(e, block).map(([t, b]) => `for k${depth}, v${depth} in pairs(type(${t}) == 'table' and ${t} or {}) do\n${b}\nend`) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.nat(10), block).map(([n, b]) => `do local n${depth} = 0 while n${depth} < ${n} do n${depth} = n${depth} + 1\n${b}\nend end`),
    },
    { weight: 2, arbitrary: block.map((b) => `pcall(function()\n${b}\nend)`) },
    { weight: 1, arbitrary: fc.tuple(block, e).map(([b, h]) => `xpcall(function()\n${b}\nend, function(err) return ${h} end)`) },
  );
}

/** Code run in a pcall, unless `bare` (then an error in it ends the program). */
const caught = (bare: boolean, code: string) => (bare ? code : `pcall(function()\n${code}\nend)`);

/**
 * A whole program: four locals, statements, a return of anything; each part is caught (mostly),
 * so that most programs run past their first error.
 */
const program = fc
  .tuple(
    fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
        expression(1),
      ),
      { minLength: 4, maxLength: 4 },
    ),
    fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
        statement(2),
      ),
      { maxLength: 6 },
    ),
    fc.tuple(
      fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      expression(3),
    ),
  )
  .map(([locals, body, [bareResult, result]]) =>
    [
      "local v1, v2, v3, v4",
      ...locals.map(([bare, e], i) => caught(bare, `v${i + 1} = ${e}`)),
      ...body.map(([bare, s]) => caught(bare, s)),
      bareResult ? `return ${result}` : `local ok, r = pcall(function() return ${result} end)\nif ok then return r end\nreturn v1`,
    ].join("\n"),
  );

const keys = fc.array(
  fc.string({ maxLength: 6 }).map((k) => `fz:${k}`),
  { maxLength: 3 },
);
const argv = fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer().map(String), bytes(8)), { maxLength: 3 });

test(
  "no script crashes the server, touches a key it cannot name, or changes what the next script sees (fast-check)",
  async () => {
    let programs = 0;
    await fc.assert(
      fc.asyncProperty(program, keys, argv, fc.string({ maxLength: 16 }), async (body, k, a, sentinel) => {
        if (++programs % programsPerFlush === 0) expect(await client.call("SCRIPT", "FLUSH")).toEqual({ s: "OK" });
        await client.call("SET", sentinelKey, sentinel);
        const reply = await client.call("EVAL", body, String(k.length), ...k, ...a);
        expect(reply).toBeDefined();
        expect(await client.call("PING")).toEqual({ s: "PONG" });
        expect(await client.call("GET", sentinelKey)).toBe(sentinel);
        expect(await client.call("EVAL", probe, "0")).toEqual(baseline);
      }),
      { numRuns: runs, seed },
    );
  },
  testTimeoutMs,
);
