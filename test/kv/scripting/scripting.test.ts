// Lua scripts (EVAL, EVALSHA, their read-only forms, SCRIPT) side by side with redis-server 7.0:
// the same replies for the same scripts, errors included — the sandbox, the redis library, the
// conversions between Lua values and replies, cjson and bit. Then what a side-by-side cannot
// show: a script's writes reach the append-only file as one transaction that survives kill -9 and
// that redis-server replays the same, a script that loops without writing is ended at its limit
// while the server goes on serving, and /cmd runs scripts over REST.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import Redis from "ioredis";
import { aofName, expectReplaysTo, newDir, withKvIn } from "../support/aof-files.ts";
import { type RespValue, show, withClient } from "../support/resp-client.ts";
import { startKv } from "../support/servers.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

/** Runs `commands` on both servers (after FLUSHALL and SCRIPT FLUSH) and expects the same replies. */
async function sameOnBoth(commands: string[][]): Promise<RespValue[]> {
  const [redis, kv] = await Promise.all([s.redisClient, s.kvClient].map((client) => client.pipeline([["FLUSHALL"], ["SCRIPT", "FLUSH"], ...commands])));
  const rows = commands.map((command, i) => ({ command: command.join(" "), kv: show(kv![i + 2]!) }));
  expect(rows).toEqual(commands.map((command, i) => ({ command: command.join(" "), kv: show(redis![i + 2]!) })));
  return kv!.slice(2);
}

const evalOf = (body: string, ...keysThenArgs: string[]) => ["EVAL", body, ...keysThenArgs];
const sha1 = (text: string) => new Bun.CryptoHasher("sha1").update(text).digest("hex");
const readOnlyBody = "#!lua flags=no-writes\nreturn redis.call('get', 'a')";

/** Generated scripts per property (SVC_SCRIPT_RUNS raises it for a longer hunt). */
const runs = Number(process.env.SVC_SCRIPT_RUNS ?? 500);

/** A byte string as a Lua literal, every byte a decimal escape. */
const luaString = (text: string) => `"${[...text].map((c) => `\\${c.charCodeAt(0)}`).join("")}"`;
const bytes = fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 12 }).map((codes) => String.fromCharCode(...codes));
/** A double as Lua source: JavaScript's shortest form parses back to the same double in Lua. */
const luaNumber = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? "-0" : String(n)));
/** A Lua expression of any type a script returns: numbers, strings, booleans, nil, ok/err tables, nested arrays with holes. */
const luaValue: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    luaNumber,
    fc.integer({ min: -1e6, max: 1e6 }).map(String),
    bytes.map(luaString),
    fc.constantFrom("true", "false", "nil", "0/0", "1/0", "-1/0"),
    bytes.map((t) => `{ok = ${luaString(t)}}`),
    bytes.map((t) => `{err = ${luaString(t)}}`),
    fc.array(tie("value"), { maxLength: 5 }).map((items) => `{${items.join(", ")}}`),
  ),
})).value;

describe("scripts side by side with redis-server", () => {
  test("Lua values become replies: numbers truncated, nil and false null, tables arrays up to the first nil, ok and err tables", async () => {
    const kv = await sameOnBoth([
      evalOf("return 1", "0"),
      evalOf("return 3.99", "0"),
      evalOf("return -3.99", "0"),
      evalOf("return 1e300", "0"),
      evalOf("return 0/0", "0"),
      evalOf("return 'a' .. 'b'", "0"),
      evalOf("return true", "0"),
      evalOf("return false", "0"),
      evalOf("return nil", "0"),
      evalOf("return {1, 2, {3, 'x'}, nil, 5}", "0"),
      evalOf("return {}", "0"),
      evalOf("return {a = 1}", "0"),
      evalOf("return {ok = 'fine'}", "0"),
      evalOf("return {ok = 'a\\r\\nb'}", "0"),
      evalOf("return {err = 'bad thing'}", "0"),
      evalOf("return {err = 'x\\ny'}", "0"),
      evalOf("return {ok = 'a', err = 'b'}", "0"),
      evalOf("return {err = 5}", "0"),
      evalOf("return {1, {err = 'x'}, {ok = 'y'}, 2.5, true, false}", "0"),
      evalOf("return redis.error_reply('bad')", "0"),
      evalOf("return redis.error_reply('-E1 z')", "0"),
      evalOf("return redis.error_reply('bad one')", "0"),
      evalOf("return redis.error_reply('')", "0"),
      evalOf("return redis.status_reply('S')", "0"),
      evalOf("return tostring(10/2)", "0"),
      evalOf("return print", "0"),
      evalOf("return redis.sha1hex('')", "0"),
      evalOf("return redis.REDIS_VERSION ~= nil", "0"),
    ]);
    expect(kv[1]).toBe(3n);
    expect(kv[24]).toBe("5");
  });

  test("generated Lua values become the same replies (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(luaValue, { minLength: 1, maxLength: 8 }), async (values) => {
        await sameOnBoth(values.map((value) => evalOf(`return ${value}`, "0")));
      }),
      { numRuns: runs },
    );
  });

  test("generated Lua values pack alike through cjson and cmsgpack, and unpack alike (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(luaValue, { minLength: 1, maxLength: 4 }), async (values) => {
        await sameOnBoth(
          values.flatMap((value) => [
            evalOf(`return cjson.encode(${value})`, "0"),
            evalOf(`return cmsgpack.pack(${value})`, "0"),
            evalOf(`return {cmsgpack.unpack(cmsgpack.pack(${value}, ${value}))}`, "0"),
          ]),
        );
      }),
      { numRuns: runs },
    );
  });

  test("generated arguments reach commands as Redis passes them: strings whole, numbers as %.17g (fast-check)", async () => {
    const argument = fc.oneof(luaNumber, bytes.map(luaString), fc.constantFrom("1/0", "-1/0", "2^53", "2^63", "-2^63", "0.1", "1e-7"));
    await fc.assert(
      fc.asyncProperty(fc.array(argument, { minLength: 1, maxLength: 8 }), async (args) => {
        await sameOnBoth(args.map((arg) => evalOf(`redis.call('set', 'k', ${arg}) return {redis.call('get', 'k'), redis.call('echo', ${arg})}`, "0")));
      }),
      { numRuns: runs },
    );
  });

  test("words a script's commands repeat, build or name once reach them exactly, past the native side's word cache and its 63-byte words (fast-check)", async () => {
    // Words that recur, lengths either side of the longest word the cache keeps, and thousands
    // of distinct words in between, which pass through every one of its 1,024 slots.
    const word = fc.oneof(
      fc.constantFrom("f", "F", "field", "\u00ff\u0000", ""),
      fc.integer({ min: 61, max: 65 }).map((n) => "w".repeat(n)),
      bytes,
    );
    await fc.assert(
      fc.asyncProperty(fc.array(word, { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 3000 }), async (words, distinct) => {
        const pushes = words.map((w) => `redis.call('rpush', KEYS[1], ${luaString(w)})`).join(" ");
        const body = `${pushes} for i = 1, ${distinct} do redis.call('hset', KEYS[2], 'k' .. i, 'v' .. i) end ${pushes}
          return {redis.call('lrange', KEYS[1], 0, -1), redis.call('hlen', KEYS[2]), redis.call('hget', KEYS[2], 'k' .. ${distinct})}`;
        const [reply] = await sameOnBoth([evalOf(body, "2", "list", "hash")]);
        expect((reply as RespValue[])[0]).toEqual([...words, ...words]);
      }),
      { numRuns: 25 },
    );
  });

  test("KEYS, ARGV and numkeys, at their limits and past them", async () => {
    await sameOnBoth([
      evalOf("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "a", "b", "c", "d"),
      evalOf("return #KEYS", "4", "a", "b", "c", "d"),
      evalOf("return 'x'", "5", "a", "b", "c", "d"),
      evalOf("return 'x'", "-1"),
      evalOf("return 'x'", "abc"),
      evalOf("return ARGV[1]", "0"),
      evalOf("return KEYS", "0"),
      ["EVAL", "return 1"],
      evalOf("return ARGV[1]", "0", "\u00e9\u0000\r\n"),
    ]);
  });

  test("redis.call and redis.pcall: replies as Lua values, errors raised or returned, arguments strings or numbers", async () => {
    const kv = await sameOnBoth([
      ["SET", "s", "abc"],
      ["RPUSH", "l", "a", "b"],
      evalOf("return redis.call('get', KEYS[1])", "1", "s"),
      evalOf("return type(redis.call('get', 'nokey'))", "0"),
      evalOf("return redis.call('set', 'k', 'v')['ok']", "0"),
      evalOf("return redis.call('lrange', 'l', 0, -1)", "0"),
      evalOf("return redis.call('hgetall', 'nohash')", "0"),
      evalOf("return redis.call('incr', KEYS[1])", "1", "s"),
      evalOf("\nlocal x = redis.call('incr', 's')", "0"),
      evalOf("return redis.pcall('incr', KEYS[1])", "1", "s"),
      evalOf("return redis.pcall('incr', 's')['err']", "0"),
      evalOf("local ok, e = pcall(redis.call, 'incr', 's') return {tostring(ok), e}", "0"),
      evalOf("local ok, e = pcall(function() error({err = 'x'}) end) return e", "0"),
      evalOf("redis.call('set', 'k', 1/3) return redis.call('get', 'k')", "0"),
      evalOf("redis.call('set', 'k', 1e20) return redis.call('get', 'k')", "0"),
      evalOf("return redis.call('echo', 100)", "0"),
      evalOf("return redis.call('set', 'k', {})", "0"),
      evalOf("return redis.call()", "0"),
      evalOf("return redis.call('nosuch')", "0"),
      evalOf("return redis.pcall('nosuch')", "0"),
      evalOf("return redis.call('get')", "0"),
      evalOf("return redis.pcall('get')", "0"),
      evalOf("return redis.pcall('config', 'nosuch')", "0"),
      evalOf("return redis.pcall('set', 'k', 'v', 'nx', 'xx')", "0"),
      evalOf("return redis.call('wrongtype-check') ", "0"),
      evalOf("redis.call('rpush', 'l2', 'x') return redis.pcall('get', 'l2')", "0"),
    ]);
    expect(kv[2]).toBe("abc");
    expect(kv[13]).toBe("0.33333333333333331");
  });

  test("arguments and replies past the 256 KiB the native side shares with the server cross whole", async () => {
    const big = `${"x".repeat(300_000)}\u00ff\r\n`;
    const kv = await sameOnBoth([
      evalOf("redis.call('set', KEYS[1], ARGV[1]) return redis.call('strlen', KEYS[1])", "1", "big", big),
      evalOf("return redis.call('get', KEYS[1])", "1", "big"),
      evalOf("for i = 1, 30000 do redis.call('rpush', KEYS[1], 'item' .. i) end return #redis.call('lrange', KEYS[1], 0, -1)", "1", "list"),
      evalOf("return redis.call('lrange', KEYS[1], 0, -1)", "1", "list"),
      evalOf("return redis.call('echo', string.rep('y', 262140))", "0"),
    ]);
    expect(kv[0]).toBe(300_003n);
    expect(kv[1]).toBe(big);
    expect((kv[3] as string[]).length).toBe(30_000);
  });

  test("a shebang declares a script's flags: read and refused as Redis 7.0 does, and held to", async () => {
    await sameOnBoth([
      evalOf("#!lua\nreturn 1", "0"),
      evalOf("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"),
      evalOf("#!lua flags=no-writes,allow-oom\nreturn 2", "0"),
      evalOf("#!lua flags=bad\nreturn 1", "0"),
      evalOf("#!lua foo=bar\nreturn 1", "0"),
      evalOf("#!js\nreturn 1", "0"),
      ["EVAL_RO", "#!lua\nreturn 1", "0"],
      ["EVAL_RO", "#!lua flags=no-writes\nreturn 3", "0"],
      evalOf("#!lua\nerror('x')", "0"),
      evalOf("#!lua flags=\nreturn 4", "0"),
      evalOf("#!lua name=x\nreturn 1", "0"),
      evalOf("#!lua   flags=no-writes  \nreturn 5", "0"),
      evalOf("#!luax\nreturn 1", "0"),
      evalOf("#!\nreturn 1", "0"),
      evalOf("#!lua", "0"),
      evalOf("#!lua flags=no-writes,no-writes\nreturn 6", "0"),
      evalOf("#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\nreturn 7", "0"),
      evalOf("#!lua\nreturn (", "0"),
      ["SCRIPT", "LOAD", "#!lua flags=nope\nreturn 1"],
      ["SCRIPT", "LOAD", readOnlyBody],
      ["EVALSHA_RO", sha1(readOnlyBody), "0"],
      evalOf("#!lua\nreturn redis.call('set', KEYS[1], 'v')", "1", "k"),
      ["GET", "k"],
    ]);
  });

  test("past maxmemory: a declared script runs only with allow-oom or no-writes; an undeclared one until a command would grow the data", async () => {
    try {
      await sameOnBoth([
        ["CONFIG", "SET", "maxmemory", "1"],
        evalOf("#!lua\nreturn 1", "0"),
        evalOf("#!lua flags=no-writes\nreturn 2", "0"),
        evalOf("#!lua flags=allow-oom\nreturn redis.call('set', 'x', '1')", "0"),
        evalOf("return redis.call('set', 'y', '1')", "0"),
        evalOf("return redis.call('get', 'x')", "0"),
        evalOf("return redis.pcall('incr', 'x')", "0"),
        ["CONFIG", "SET", "maxmemory", "0"],
      ]);
    } finally {
      await Promise.all([s.redisClient, s.kvClient].map((client) => client.call("CONFIG", "SET", "maxmemory", "0")));
    }
  });

  test("what a script may not run, and what a read-only script may not write", async () => {
    await sameOnBoth([
      evalOf("return redis.call('multi')", "0"),
      evalOf("return redis.call('eval', 'return 1', 0)", "0"),
      evalOf("return redis.call('blpop', 'nolist', 1)", "0"),
      evalOf("return redis.call('subscribe', 'c')", "0"),
      evalOf("return redis.pcall('client', 'id')", "0"),
      evalOf("return redis.call('script', 'load', 'return 1')", "0"),
      ["EVAL_RO", "return redis.call('set', 'a', 'b')", "0"],
      ["EVAL_RO", "return redis.call('get', 'a')", "0"],
      ["EVAL_RO", "return redis.pcall('del', 'a')", "0"],
    ]);
  });

  test("the sandbox: no globals made or read by mistake, read-only libraries, no files or debug library", async () => {
    const names = ["os", "io", "debug", "dofile", "loadfile", "require", "setfenv", "getfenv", "newproxy", "module"];
    await sameOnBoth([
      evalOf("return x", "0"),
      evalOf("x = 1", "0"),
      evalOf("_G.x = 1", "0"),
      evalOf("redis.call = nil", "0"),
      evalOf("string.x = 1", "0"),
      evalOf("local t = {} t.x = 1 return t.x", "0"),
      evalOf("return (", "0"),
      evalOf("error('boom')", "0"),
      evalOf("error({err = 'X y'})", "0"),
      evalOf("error(redis.error_reply('bad'))", "0"),
      evalOf("local function f() error({err = 'deep'}) end\nreturn f()", "0"),
      ...names.map((name) => evalOf(`return type(${name})`, "0")),
      evalOf("return {type(loadstring), type(unpack), type(coroutine), type(cjson), type(bit), type(cmsgpack), type(struct)}", "0"),
    ]);
  });

  test("cjson and bit compute as Redis's do", async () => {
    await sameOnBoth([
      evalOf("return cjson.encode({1, 2, 'a/b', true, false})", "0"),
      evalOf("return cjson.encode({})", "0"),
      evalOf("return cjson.encode({a = {b = {1.5, 0.1}}})", "0"),
      evalOf("return cjson.encode({1, nil, 3})", "0"),
      evalOf("return cjson.encode('\\n\\1\"\\\\')", "0"),
      evalOf("return cjson.encode(1/3)", "0"),
      evalOf("return cjson.encode(1e20)", "0"),
      evalOf("return cjson.encode({[20] = 1})", "0"),
      evalOf("return cjson.encode(0/0)", "0"),
      evalOf("return cjson.encode(cjson.null)", "0"),
      evalOf(
        "local t = cjson.decode(ARGV[1]) return {t.a[1], t.a[3].b, tostring(t.c == cjson.null), t.d}",
        "0",
        '{"a":[1,2,{"b":"x\\u00e9"}],"c":null,"d":"\\ud83d\\ude00"}',
      ),
      evalOf("return cjson.decode('[1,')", "0"),
      evalOf("return cjson.decode('{\"a\" 1}')", "0"),
      evalOf("return cjson.decode('nope')", "0"),
      evalOf("return {bit.band(7, 3), bit.bor(1, 2, 4), bit.bxor(5, 1), bit.bnot(0), bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-16, 2)}", "0"),
      evalOf("return {bit.tohex(255), bit.tohex(-1, -4), bit.tobit(4294967297), bit.rol(1, 33), bit.bswap(1)}", "0"),
    ]);
  });

  test("cmsgpack packs and unpacks as Redis's does", async () => {
    await sameOnBoth([
      evalOf("return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65536, 2^32, -32, -33, -129, -32769, -2^31-1, 2^53, -2^63, 2^64)", "0"),
      evalOf("return cmsgpack.pack(0.5, 0.1, 1e300, 1/0, 0/0)", "0"),
      evalOf("return cmsgpack.pack('a', string.rep('x', 40), string.rep('y', 300), string.rep('z', 70000))", "0"),
      evalOf("return cmsgpack.pack({1, 2, 3}, {}, {a = 1}, {[1] = 1, [3] = 3}, true, false, nil, redis.call)", "0"),
      evalOf("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)", "0"),
      evalOf("local t = {} for i = 1, 70000 do t[i] = i % 3 end return #cmsgpack.pack(t)", "0"),
      evalOf("return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, {x = 2}}, 0.1, 2^64, -5, true))}", "0"),
      evalOf("return cmsgpack.unpack(ARGV[1])", "0", "Á"),
      evalOf("return cmsgpack.unpack(ARGV[1])", "0", "Í"),
      evalOf("return cmsgpack.unpack(ARGV[1])", "0", "Ç"),
      evalOf("return cmsgpack.unpack('')", "0"),
      evalOf("return {cmsgpack.unpack_one(cmsgpack.pack(7))}", "0"),
      evalOf("return {cmsgpack.unpack_one(cmsgpack.pack(7, 8), 1)}", "0"),
      evalOf("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 0)}", "0"),
      evalOf("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 2)}", "0"),
      evalOf("return {cmsgpack.unpack_one(cmsgpack.pack(7), 5)}", "0"),
      evalOf("return cmsgpack.unpack_one()", "0"),
      evalOf("return cmsgpack.unpack(5)", "0"),
      evalOf("return cmsgpack.pack()", "0"),
    ]);
  });

  test("struct packs, unpacks and sizes as Redis's does", async () => {
    const packs = [
      "'>I2', 1",
      "'<i4', -2",
      "'!4 b i', 1, 2",
      "'z', 1",
      "'i', 'x'",
      "'i', '12'",
      "'i'",
      "'s', 'ab'",
      "'c3', 'ab'",
      "'c0', 'abc'",
      "'d', 1.5",
      "'>f', 1.5",
      "'!3 i', 1",
      "'i40', 1",
      "'i9', -1",
      "'l L T h H B', 1, 2, 3, 4, 5, 6",
      "'x', 1",
      "'>i8', -2^40",
      "'I2', 70000",
      "'!i2 b i', 1, 2, 3",
      "'  <  h', 7",
    ];
    const unpacks = [
      "'>I2', '\\0\\1'",
      "'<i2', '\\254\\255'",
      "'s', 'ab\\0cd'",
      "'s', 'ab'",
      "'I2', 'a'",
      "'b c0', '\\2xyz'",
      "'c0', 'xyz'",
      "'b', 'xyz', 2",
      "'b', 'xyz', 0",
      "'b', 'xyz', 4",
      "'b', 'xyz', 5",
      "'d', struct.pack('d', 0.1)",
      "'!4 b i', struct.pack('!4 b i', 1, 2)",
      "'>f h', struct.pack('>f h', -0.25, -3)",
      "'i3', struct.pack('i3', -5)",
      "'z', 'a'",
    ];
    await sameOnBoth([
      ...packs.map((args) => evalOf(`return struct.pack(${args})`, "0")),
      ...unpacks.map((args) => evalOf(`return {struct.unpack(${args})}`, "0")),
      ...["'i4 d'", "'s'", "'c0'", "'!8 b d'", "'!2 b i'", "'q'", "'c10 >h'"].map((fmt) => evalOf(`return struct.size(${fmt})`, "0")),
    ]);
  });

  test("EVALSHA, SCRIPT LOAD, EXISTS, FLUSH and KILL", async () => {
    const sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    await sameOnBoth([
      ["EVALSHA", sha, "0"],
      ["SCRIPT", "LOAD", "return 1"],
      ["EVALSHA", sha, "0"],
      ["EVALSHA", sha.toUpperCase(), "0"],
      ["EVALSHA_RO", sha, "0"],
      ["EVALSHA", "abc", "0"],
      ["EVALSHA", sha, "-1"],
      ["SCRIPT", "EXISTS", sha, sha.toUpperCase(), "ffff"],
      ["SCRIPT", "LOAD", "return ("],
      ["EVAL", "return 2", "0"],
      ["SCRIPT", "EXISTS", "7f923f79fe76194c868d7e1d0820de36700eb649"],
      ["SCRIPT", "FLUSH", "ASYNC"],
      ["SCRIPT", "EXISTS", sha],
      ["SCRIPT", "FLUSH", "nope"],
      ["SCRIPT", "KILL"],
      ["SCRIPT"],
      ["SCRIPT", "nosuch"],
      ["SCRIPT", "EXISTS"],
    ]);
  });

  test("errors count in INFO as Redis counts them: a command's once, where it failed; the script's own at EVAL; EVAL fails with either", async () => {
    const stats = async (client: typeof s.kvClient) => {
      const text = `${(await client.call("INFO", "errorstats")) as string}${(await client.call("INFO", "commandstats")) as string}${(await client.call("INFO", "stats")) as string}`;
      return text
        .split("\r\n")
        .filter((l) => /^(errorstat_|total_error_replies)/.test(l) || /^cmdstat_(incr|eval|get):/.test(l))
        .map((l) => l.replace(/usec=\d+,usec_per_call=[\d.]+,/, ""))
        .sort();
    };
    for (const script of [
      "return redis.pcall('incr', 's')",
      "return redis.call('incr', 's')",
      "return {err = 'MY x'}",
      "redis.pcall('incr', 's') redis.pcall('incr', 's') return 1",
      "return redis.error_reply('OWN y')",
      "error('boom')",
      "return redis.call('get', 's')",
    ]) {
      const [redis, kv] = await Promise.all(
        [s.redisClient, s.kvClient].map(async (client) => {
          await client.pipeline([["FLUSHALL"], ["CONFIG", "RESETSTAT"], ["SET", "s", "abc"]]);
          const reply = await client.call("EVAL", script, "0");
          return { reply, stats: await stats(client) };
        }),
      );
      expect({ script, ...kv }).toEqual({ script, ...redis });
    }
  });

  test("a script is one step of a transaction, and a SELECT inside it holds for the script only", async () => {
    const kv = await sameOnBoth([
      ["MULTI"],
      evalOf("return redis.call('incr', KEYS[1])", "1", "n"),
      ["INCR", "n"],
      ["EXEC"],
      evalOf("redis.call('select', 3) redis.call('set', 'in3', 'v') return redis.call('dbsize')", "0"),
      ["DBSIZE"],
      ["SELECT", "3"],
      ["GET", "in3"],
      ["SELECT", "0"],
    ]);
    expect(kv[3]).toEqual([1n, 2n]);
    expect(kv[5]).toBe(1n);
  });
});

describe("scripts and the append-only file", () => {
  test("a script's writes go to the file as one transaction, survive kill -9, and replay the same in redis-server", async () => {
    const dir = newDir();
    await withKvIn(dir, async (c, kv) => {
      const script =
        "redis.call('set', KEYS[1], ARGV[1]) redis.call('rpush', KEYS[2], ARGV[1], ARGV[2]) redis.call('incrby', KEYS[3], 5) return redis.call('llen', KEYS[2])";
      expect(await c.call("EVAL", script, "3", "s", "l", "n", "a", "b")).toBe(2n);
      // A script that writes nothing leaves nothing in the file.
      expect(await c.call("EVAL", "return redis.call('get', 'missing')", "0")).toBeNull();
      kv.proc.kill("SIGKILL");
      await kv.proc.exited;
    });
    const file = readFileSync(join(dir, aofName), "latin1").replace(/#+$/, "");
    expect(file).not.toContain("EVAL");
    expect(file).toContain("*1\r\n$5\r\nMULTI\r\n");
    expect(file.indexOf("MULTI")).toBeLessThan(file.indexOf("rpush"));
    expect(file.indexOf("incrby")).toBeLessThan(file.indexOf("EXEC"));
    await expectReplaysTo(dir, {
      "0:l": { type: "list", value: ["a", "b"], expires: false },
      "0:n": { type: "string", value: "5", expires: false },
      "0:s": { type: "string", value: "a", expires: false },
    });
  });
});

describe("a script that logs", () => {
  test("redis.log writes to the server's log at Redis's levels; a bad call is an error", async () => {
    const kv = await startKv();
    try {
      await withClient(kv.port, async (c) => {
        expect(await c.call("EVAL", "redis.log(redis.LOG_WARNING, 'from a script', 42) return 1", "0")).toBe(1n);
        expect(((await c.call("EVAL", "redis.log(redis.LOG_WARNING)", "0")) as { e: string }).e).toContain("redis.log() requires two arguments or more.");
        expect(((await c.call("EVAL", "redis.log(9, 'x')", "0")) as { e: string }).e).toContain("Invalid debug level.");
      });
      const deadline = Date.now() + 2000;
      while (!kv.output().includes("from a script 42") && Date.now() < deadline) await Bun.sleep(20);
      const line = kv
        .output()
        .split("\n")
        .find((l) => l.includes("from a script 42"));
      expect(JSON.parse(line!)).toMatchObject({ level: "warn", script: true, msg: "from a script 42" });
    } finally {
      await kv.stop();
    }
  });
});

describe("scripts from a real client", () => {
  test("ioredis's defineCommand runs by EVALSHA, loading the script by EVAL on NOSCRIPT, before and after SCRIPT FLUSH", async () => {
    const kv = await startKv();
    const client = new Redis({ port: kv.port, lazyConnect: true });
    try {
      await client.connect();
      client.defineCommand("swapValues", {
        numberOfKeys: 2,
        lua: "local a = redis.call('get', KEYS[1]) local b = redis.call('get', KEYS[2]) redis.call('set', KEYS[1], b) redis.call('set', KEYS[2], a) return {a, b}",
      });
      await client.mset("x", "1", "y", "2");
      const swap = (client as unknown as { swapValues(a: string, b: string): Promise<string[]> }).swapValues.bind(client);
      expect(await swap("x", "y")).toEqual(["1", "2"]);
      expect(await client.mget("x", "y")).toEqual(["2", "1"]);
      expect(await client.script("FLUSH")).toBe("OK");
      expect(await swap("x", "y")).toEqual(["2", "1"]);
      expect(await client.mget("x", "y")).toEqual(["1", "2"]);
      await expect(client.eval("return redis.call('incr', KEYS[1])", 1, "x")).resolves.toBe(2);
      await expect(client.eval("return redis.call('lpush', KEYS[1], 'a')", 1, "x")).rejects.toThrow(/WRONGTYPE/);
    } finally {
      client.disconnect();
      await kv.stop();
    }
  });
});

describe("scripts over REST", () => {
  test("/cmd runs EVAL and EVALSHA and answers in JSON, errors with 400", async () => {
    const kv = await startKv();
    try {
      const cmd = ([command, ...args]: string[]) =>
        fetch(`http://127.0.0.1:${kv.httpPort}/cmd`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ command, args }),
        });
      const ok = await cmd(["EVAL", "redis.call('set', KEYS[1], ARGV[1]) return {redis.call('get', KEYS[1]), 2, {ok = 'x'}}", "1", "k", "v"]);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ result: ["v", 2, "x"] });
      const failed = await cmd(["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]);
      expect(failed.status).toBe(400);
      expect(await failed.json()).toEqual({ error: "NOSCRIPT No matching script. Please use EVAL." });
      await withClient(kv.port, async (c) => expect(await c.call("GET", "k")).toBe("v"));
    } finally {
      await kv.stop();
    }
  });
});
