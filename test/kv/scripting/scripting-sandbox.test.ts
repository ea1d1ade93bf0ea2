// What a script may not do to the server or to other scripts, side by side with redis-server 7.0
// (Debian's 7.0.15, which carries the 2025 Lua fixes): library functions at their limits and one
// past them, writes to the globals and libraries every script shares, bytecode, chunks loaded at
// run time, a stopped garbage collector. Where redis-server itself crashes, svc answers an error
// and serves on, and only svc is asked.
import { describe, expect, test } from "bun:test";
import type { RespValue } from "../support/resp-client.ts";
import { evalOf, sameReplies } from "../support/same-replies.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

const same = (commands: string[][]) => sameReplies(s.redisClient, s.kvClient, commands);
const errorOf = (reply: RespValue | undefined) => (reply as { e: string }).e;

describe("library functions at their limits and past them", () => {
  test("unpack counts in 64 bits: the overflow that crashed svc is Redis's 'too many results', the limit is Lua's stack", async () => {
    await same([
      evalOf("return {unpack({1, 2, 3}, -2, 2147483647)}"),
      evalOf("return {unpack({}, -2^31, 2^31 - 1)}"),
      evalOf("return {unpack({}, 1, 2^31 - 1)}"),
      evalOf("return {unpack({1, 2, 3}, -2, 2)}"),
      evalOf("return {unpack({1, 2, 3}, 2^31, 2^31 + 2)}"),
      evalOf("return {unpack({1, 2, 3}, 2)}"),
      evalOf("return {unpack({1, 2, 3}, 3, 1)}"),
      evalOf("return select('#', unpack({}, 1, 7997))"),
      evalOf("return select('#', unpack({}, 1, 7998))"),
      evalOf("return {unpack({1, 2}, 2^32 + 1)}"),
      evalOf("return {unpack()}"),
      evalOf("return {unpack({}, 'x')}"),
    ]);
  });

  test("other Lua library functions at extreme arguments answer as Redis's do", async () => {
    await same([
      evalOf("return #string.rep('x', -1)"),
      evalOf("return select(-2^31, 1)"),
      evalOf("return select(2^31, 1)"),
      evalOf("return select('#', select(-1, 1, 2))"),
      evalOf("return {string.byte(string.rep('x', 1e5), 1, -1)}"),
      evalOf("return #{string.byte(string.rep('x', 7000), 1, -1)}"),
      evalOf("return string.format('%5000d', 1)"),
      evalOf("return #string.format('%099.99f', 1e308)"),
      evalOf("return string.format('%d', 0/0)"),
      evalOf("return table.concat({}, ',', -2^31, 2^31 - 1)"),
      evalOf("return table.concat({1, 2}, ',', 2^31 - 1, 2^31 - 1)"),
      evalOf("return tonumber('1', -2^31)"),
      evalOf("return tonumber('z', 36)"),
      evalOf("return string.char(256)"),
      evalOf("return string.sub('abc', -2^63, 2^63)"),
      evalOf("return string.rep('ab', 3, 'x')"),
      evalOf("local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x"),
      evalOf("return bit.tohex(1, -2^31)"),
      evalOf("return {bit.tohex(-1, 2^31), bit.tobit(2^53 + 2), bit.lshift(1, 2^53)}"),
      evalOf("return struct.pack('i' .. string.rep('9', 1000), 1)"),
      evalOf("return struct.pack('c2147483647', 'x')"),
      evalOf("return struct.unpack('c2147483647', 'x')"),
      evalOf("return struct.size(string.rep('c2147483647', 1000))"),
      evalOf("return {struct.unpack('b c0', string.char(255) .. 'x')}"),
      evalOf("return {struct.unpack('i', 'xxxx', -2^63)}"),
      evalOf("return {struct.unpack('i', 'xxxx', 0)}"),
      evalOf("return #{struct.unpack(string.rep('b', 7997), string.rep('a', 7997))}"),
      evalOf("return #{struct.unpack(string.rep('b', 7998), string.rep('a', 7998))}"),
      evalOf("return #{struct.unpack(string.rep('b', 7997), string.rep('a', 7997), 1)}"),
      evalOf("return #{struct.unpack(string.rep('s', 7990), string.rep('a\\0', 7990))}"),
      evalOf("local co = coroutine.create(function(...) return ... end) return select('#', coroutine.resume(co, unpack({}, 1, 7997)))"),
      evalOf("local co = coroutine.create(function() coroutine.yield(unpack({}, 1, 7997)) end) return select('#', coroutine.resume(co))"),
      evalOf("return select('#', coroutine.wrap(function(...) return ... end)(unpack({}, 1, 7997)))"),
    ]);
    // Coroutines nested until Lua's 200 C levels: svc's run starts one C level deeper than Redis's,
    // so its error has one "user_script:1:" fewer.
    const [coroutines] = await s.kvClient.pipeline([
      evalOf("local function f(n) if n == 0 then return 0 end return coroutine.wrap(f)(n - 1) end return f(1e5)"),
    ]);
    expect(errorOf(coroutines)).toMatch(/^ERR (user_script:1: ){190,199}C stack overflow script: [0-9a-f]{40}, on @user_script:1\.$/);
  });

  test("nesting: cjson's depth limit and one past it, cmsgpack's stack limits and one past them, a reply nested past Lua's stack", async () => {
    const nested = (open: string, depth: number, inner = "1") => `string.rep(${open}, ${depth}) .. ${inner}`;
    await same([
      evalOf(`return type(cjson.decode(${nested("'['", 1000, "'1' .. string.rep(']', 1000)")}))`),
      evalOf(`return cjson.decode(${nested("'['", 1001, "'1' .. string.rep(']', 1001)")})`),
      evalOf(`return cjson.decode(${nested("'['", 1e6)})`),
      evalOf("local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return #cjson.encode(t)"),
      evalOf("local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return cjson.encode(t)"),
      evalOf(`return #{cmsgpack.unpack(${nested("string.char(0x91)", 3999, "string.char(1)")})}`),
      evalOf(`return cmsgpack.unpack(${nested("string.char(0x91)", 4000, "string.char(1)")})`),
      evalOf(`return #{cmsgpack.unpack(${nested("string.char(0x81, 1)", 3999, "string.char(1)")})}`),
      evalOf(`return cmsgpack.unpack(${nested("string.char(0x81, 1)", 4000, "string.char(1)")})`),
      evalOf("return #{cmsgpack.unpack(string.rep(string.char(1), 7999))}"),
      evalOf("return #{cmsgpack.unpack(string.rep(string.char(1), 8000))}"),
      evalOf("return #{cmsgpack.unpack(string.rep(cmsgpack.pack('a'), 7999))}"),
      evalOf("return #{cmsgpack.unpack_limit(string.rep(string.char(1), 7998), 7998)}"),
      evalOf("return cmsgpack.unpack_limit(string.rep(string.char(1), 7999), 7999)"),
      evalOf("return cmsgpack.unpack_one(cmsgpack.pack(1), 2^63)"),
      evalOf("return cmsgpack.unpack_limit(cmsgpack.pack(1), 2^62, 2^62)"),
      evalOf("return {cmsgpack.unpack(string.char(0x81, 0xc0, 1))}"),
      evalOf("return {cmsgpack.unpack_limit(cmsgpack.pack(1))}"),
      evalOf("local t = {} local c = t for i = 1, 1e5 do c[1] = {} c = c[1] end return #cmsgpack.pack(t)"),
    ]);
    // Redis answers "reached lua stack limit" about 8,000 arrays deep; svc at 1,000 (lua_to_resp.rs).
    const [deep] = await s.kvClient.pipeline([evalOf("local t = {} for i = 1, 1e5 do t = {t} end return t")]);
    let reply: RespValue = deep!;
    let depth = 0;
    while (Array.isArray(reply)) {
      reply = reply[0]!;
      depth++;
    }
    expect({ depth, reply }).toEqual({ depth: 1000, reply: { e: "ERR reached lua stack limit" } });
  });

  test("what crashes redis-server is an error in svc, which serves on", async () => {
    const [pattern, atLimit, emptyError, tableErr, insert, deepPcall] = await s.kvClient.pipeline([
      evalOf("return string.find(string.rep('a', 300000), string.rep('a?', 300000))"),
      evalOf("return {string.find(string.rep('a', 200), string.rep('a?', 200))}"),
      evalOf("error({})"),
      evalOf("error({err = 5})"),
      evalOf("table.insert({}, -2^31, 1)"),
      evalOf("local function f(n) if n == 0 then return 0 end return select(2, pcall(f, n - 1)) end return f(1e5)"),
    ]);
    expect(errorOf(pattern)).toMatch(/^ERR user_script:1: pattern too complex script: [0-9a-f]{40}, on @user_script:1\.$/);
    expect(atLimit).toEqual([1n, 200n]);
    expect(errorOf(emptyError)).toMatch(/^ERR unknown error script: [0-9a-f]{40}, on @user_script:1\.$/);
    expect(errorOf(tableErr)).toMatch(/^ERR unknown error script: /);
    // Redis shifts two billion slots one by one, in C, where no time limit reaches.
    expect(errorOf(insert)).toMatch(/^ERR user_script:1: bad argument #2 to 'insert' \(position out of bounds\) script: /);
    expect(deepPcall).toBe("C stack overflow");
    expect(await s.kvClient.call("PING")).toEqual({ s: "PONG" });
    // A pattern at the limit works on both.
    await same([
      evalOf("return {string.find(string.rep('a', 200), string.rep('a?', 200))}"),
      evalOf("local t = {1} table.insert(t, -999999, 0) return {t[-999999], t[2]}"),
    ]);
  });
});

describe("the globals and libraries every script shares", () => {
  test("writes to them are refused as Redis refuses them, and the next script sees them untouched", async () => {
    const writes = [
      "rawset(_G, 'tostring', function() return 'pwn' end)",
      "rawset(string, 'upper', function() return 'pwn' end)",
      "rawset(_G, 'x', 1)",
      "return rawset(redis, 'call', 1)",
      "table.insert(_G, 1)",
      "table.insert(string, 1)",
      "table.insert(string, 1, 'x')",
      "table.remove(string)",
      "table.sort(string)",
      "setmetatable(_G, nil)",
      "setmetatable(string, {})",
      "getmetatable('').__index = {}",
      "getmetatable('').__index.upper = function() return 'pwn' end",
      "getmetatable('').x = 1",
      "getmetatable('').__metatable = 1",
      "getmetatable(_G).__index = nil",
      "x = 1",
      "_G.x = 1",
      "string.x = 1",
      "redis.call = nil",
      "cjson.encode = nil",
      "bit.x = 1",
      "loadstring('tostring = 1')()",
      "return {pcall(rawset, string, 'upper', 1)}",
    ];
    const probe =
      "return {('x'):upper(), string.upper('y'), tostring(1), type(redis.call), tostring(getmetatable('').__index == string), " +
      "tostring(rawget(_G, 'x')), tostring(rawget(string, 1)), tostring(getmetatable(string)), type(getmetatable(_G)), " +
      "type(getmetatable(_G).__index), tostring(getmetatable('').__metatable), type(getmetatable(getmetatable('')))}";
    const kv = await same([...writes.map((w) => evalOf(w)), evalOf(probe)]);
    expect(kv.at(-1)).toEqual(["X", "Y", "1", "function", "true", "nil", "nil", "nil", "table", "function", "nil", "nil"]);
  });

  test("bytecode is parsed as text by EVAL, FUNCTION LOAD, loadstring and load: Redis's syntax error, never run", async () => {
    const [dump] = await s.kvClient.pipeline([evalOf("return string.dump(loadstring('return 42'))")]);
    expect((dump as string).charCodeAt(0)).toBe(0x1b);
    await same([
      ["EVAL", dump as string, "0"],
      ["FUNCTION", "LOAD", `#!lua name=bytecode\n${dump as string}`],
      evalOf("return {loadstring(string.dump(function() return 1 end))}"),
      evalOf("return {select(2, loadstring(string.dump(function() return 1 end)))}"),
      evalOf("return {select(2, loadstring(string.dump(function() return 1 end), 'named'))}"),
      evalOf("return {select(2, loadstring(string.char(27)))}"),
      evalOf("return {select(2, loadstring(string.char(27) .. 'abc\\n'))}"),
      evalOf("local n = 0 return {select(2, load(function() n = n + 1 if n == 1 then return string.dump(function() end) end end))}"),
      evalOf("local n = 0 return {select(2, load(function() n = n + 1 if n == 1 then return '' elseif n == 2 then return string.char(27) end end))}"),
      evalOf("local p, i = {'return ', '4', '2'}, 0 return load(function() i = i + 1 return p[i] end)()"),
      evalOf("return {load(function() return {} end)}"),
      evalOf("return {load(5)}"),
      evalOf("return {loadstring()}"),
      evalOf("return {loadstring('return', 5)}"),
    ]);
  });

  test("a loaded chunk runs in the script's read-only globals, KEYS and ARGV there; its errors are placed as Redis places them", async () => {
    await same([
      evalOf("loadstring('x = 1')()"),
      evalOf("return {pcall(loadstring('x = 1'))}"),
      ["EVAL", "return loadstring('return KEYS[1] .. ARGV[1]')()", "1", "k", "a"],
      evalOf("return loadstring('return type(redis.call)')()"),
      evalOf("return load(function() return nil end)"),
      evalOf("local n = 0 return load(function() n = n + 1 collectgarbage() if n < 100 then return ' ' end end, string.rep('n', 10))"),
      evalOf("return string.gsub('x', 'x', error)"),
      evalOf("loadstring('error(\"inside\")')()"),
      evalOf("redis.log(99, 'x')"),
      evalOf("return redis.sha1hex()"),
    ]);
  });

  test("collectgarbage('stop') in one script does not stop collection for the scripts after it", async () => {
    const garbage = "for i = 1, 3000 do local t = {i, tostring(i)} end return collectgarbage('count')";
    for (const client of [s.redisClient, s.kvClient]) {
      const counts = await client.pipeline([evalOf("collectgarbage('stop')"), ...Array.from({ length: 120 }, () => evalOf(garbage))]);
      const kib = counts.slice(1).map(Number);
      // Stopped, the count only grows; restarted within 50 scripts, it falls back.
      expect(kib.some((count, i) => i > 0 && count < kib[i - 1]!)).toBe(true);
    }
    // A script's pause and step multiplier last until the next such step (Redis keeps them): a
    // collector told to pause forever collects again. Not asked of redis-server, whose collector
    // keeps such settings for good.
    const settings = await s.kvClient.pipeline([
      evalOf("collectgarbage('setpause', -1) collectgarbage('setstepmul', -1) return 1"),
      ...Array.from({ length: 120 }, () => evalOf(garbage)),
    ]);
    const after = settings.slice(1).map(Number);
    expect(after.some((count, i) => i > 0 && count < after[i - 1]!)).toBe(true);
  });
});
