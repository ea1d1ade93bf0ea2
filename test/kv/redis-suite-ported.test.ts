// Cases from Redis 7.0.15's own unit tests (tests/unit/scripting.tcl, functions.tcl, multi.tcl,
// pubsub.tcl, type/set.tcl) that the generated sequences do not reach — rewritten here as steps played on
// redis-server and on svc kv side by side, so each is checked against what Redis answers rather
// than against a copy of its expectation. Script timeouts and BUSY are in busy-script.test.ts.
import { describe, test } from "bun:test";
import { type DuetOptions, expectSameDuet, keyspaceLines, type Step } from "./support/duet.ts";
import { options as functionOptions } from "./support/families/functions.ts";
import { options as multiOptions } from "./support/families/multi.ts";
import { options as pubsubOptions } from "./support/families/pubsub.ts";
import { countsLines, options as scriptingOptions } from "./support/families/scripting.ts";
import { redisAndKv } from "./support/side-by-side.ts";

const servers = redisAndKv();

const a = (...argv: string[]): Step => ({ client: "A", argv });
const b = (...argv: string[]): Step => ({ client: "B", argv });
const evalOf = (body: string, ...rest: string[]) => a("EVAL", body, ...(rest.length === 0 ? ["0"] : rest));
/** A library named `name` registering `fn` with `body` (its code as functions.tcl builds it). */
const library = (name: string, fn: string, body: string) => `#!lua name=${name}\nredis.register_function('${fn}', function(KEYS, ARGV)\n ${body} \nend)`;
const load = (...args: string[]) => a("FUNCTION", "LOAD", ...args);

describe("scripting.tcl", () => {
  test("return values: _G, tables whose metatable raises or calls Redis (which does not run)", async () => {
    await expectSameDuet(
      servers,
      [
        evalOf("return _G"),
        evalOf("local a = {}; setmetatable(a, {__index=function() foo() end}) return a"),
        evalOf("local a = {}; setmetatable(a, {__index=function() redis.call('set', 'x', '1') end}) return a"),
        a("GET", "x"),
      ],
      scriptingOptions,
    );
  });
  test("Redis replies as Lua values: integer, bulk, multi bulk, status, error, nil", async () => {
    await expectSameDuet(
      servers,
      [
        a("SET", "x", "0"),
        evalOf("local foo = redis.pcall('incr', KEYS[1]); return {type(foo), foo}", "1", "x"),
        evalOf("local foo = redis.pcall('get', KEYS[1]); return {type(foo), foo}", "1", "x"),
        a("DEL", "mylist"),
        a("RPUSH", "mylist", "a", "b", "c"),
        evalOf("local foo = redis.pcall('lrange', KEYS[1], 0, -1); return {type(foo), foo[1], foo[2], foo[3], #foo}", "1", "mylist"),
        evalOf("local foo = redis.pcall('set', KEYS[1], 'myval'); return {type(foo), foo['ok']}", "1", "x"),
        evalOf("local foo = redis.pcall('incr', KEYS[1]); return {type(foo), foo['err']}", "1", "x"),
        a("DEL", "x"),
        evalOf("local foo = redis.pcall('get', KEYS[1]); return {type(foo), foo == false}", "1", "x"),
      ],
      scriptingOptions,
    );
  });
  test("the script's database is the caller's, and its SELECT does not change the caller's", async () => {
    await expectSameDuet(
      servers,
      [
        a("SELECT", "1"),
        a("SET", "mykey", "this is DB 1"),
        a("SELECT", "0"),
        a("SET", "mykey", "this is DB 0"),
        a("SELECT", "1"),
        evalOf("return redis.pcall('get', KEYS[1])", "1", "mykey"),
        a("SELECT", "0"),
        evalOf("redis.call('select', '1'); return redis.call('get', KEYS[1])", "1", "mykey"),
        a("GET", "mykey"),
      ],
      scriptingOptions,
    );
  });
  test("blocking commands in a script answer at once or are refused", async () => {
    await expectSameDuet(
      servers,
      [
        a("DEL", "empty_list", "empty_zset"),
        a("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
        evalOf("return redis.pcall('blpop', 'empty_list', 0)"),
        evalOf("return redis.pcall('brpop', 'empty_list', 0)"),
        evalOf("return redis.pcall('brpoplpush', 'empty_list1', 'empty_list2', 0)"),
        evalOf("return redis.pcall('blmove', 'empty_list1', 'empty_list2', 'LEFT', 'LEFT', 0)"),
        evalOf("return redis.pcall('bzpopmin', 'empty_zset', 0)"),
        evalOf("return redis.pcall('bzpopmax', 'empty_zset', 0)"),
        evalOf("return redis.pcall('xread', 'STREAMS', 's', '$')"),
        evalOf("return redis.pcall('xread', 'BLOCK', 0, 'STREAMS', 's', '$')"),
        evalOf("return redis.pcall('xreadgroup', 'group', 'g', 'c', 'BLOCK', 0, 'STREAMS', 's', '>')"),
      ],
      scriptingOptions,
    );
  });
  test("errors from Redis commands raise, with the command's error, and the connection goes on", async () => {
    await expectSameDuet(
      servers,
      [
        evalOf("return redis.call('nosuchcommand')"),
        evalOf("return redis.call('get', 'a', 'b', 'c')"),
        a("SET", "foo", "bar"),
        evalOf("return redis.call('lpush', KEYS[1], 'val')", "1", "foo"),
        evalOf("return redis.call('set', 'invalid')"),
        evalOf("local x = {}; return redis.call('ping', x)"),
        evalOf("return redis.call('ping', 'asdf')"),
        evalOf("return 1", "-12"),
        evalOf("return redis.call('incr', 'foo')"),
      ],
      scriptingOptions,
    );
  });
  test("commands that rewrite their arguments (SPOP, EXPIRE, INCRBYFLOAT), many arguments, reused arguments, number precision", async () => {
    const many = Array.from({ length: 300 }, (_, i) => `'k${i}', '${i}'`).join(", ");
    await expectSameDuet(
      servers,
      [
        a("SADD", "myset", "a"),
        evalOf("return redis.call('spop', 'myset')"),
        evalOf("return redis.call('spop', 'myset')"),
        a("EXISTS", "myset"),
        a("SET", "expirekey", "a"),
        evalOf("return redis.call('expire', 'expirekey', '-1')"),
        a("EXISTS", "expirekey"),
        a("SET", "foo", "0.5"),
        evalOf("return redis.call('incrbyfloat', 'foo', '1.25')"),
        a("GET", "foo"),
        evalOf(`return redis.call('mset', ${many})`),
        a("GET", "k299"),
        evalOf(
          "local i; local x = {}; redis.call('del', 'mylist'); for i = 1, 100 do table.insert(x, i) end; redis.call('rpush', 'mylist', unpack(x)); return redis.call('lrange', 'mylist', 0, -1)",
        ),
        evalOf("local value = 9007199254740991; redis.call('set', 'foo', value); return redis.call('get', 'foo')"),
        evalOf("redis.call('set', 'key', '12039611435714932082'); return redis.call('get', 'key')"),
      ],
      scriptingOptions,
    );
  });
  test("a command of as many words as Lua's stack holds (unpack of 7,999 items), by EVAL and FCALL; one past what unpack can give", async () => {
    const unpacking = (items: number, command: string) =>
      `local a = {} for i = 1, ${items} do a[i] = 1 end return redis.call('${command}', KEYS[1], unpack(a))`;
    await expectSameDuet(
      servers,
      [
        evalOf(unpacking(7999, "lpush"), "1", "l"),
        evalOf(unpacking(7999, "lpush"), "1", "l"),
        evalOf(unpacking(7999, "sadd"), "1", "s"),
        load(library("massive", "massive", unpacking(7999, "rpush"))),
        a("FCALL", "massive", "1", "l2"),
        a("LLEN", "l2"),
        // Past what Lua lets a C function take (LUAI_MAXCSTACK, 8,000): unpack itself refuses.
        evalOf(unpacking(8000, "lpush"), "1", "l3"),
        evalOf(unpacking(100000, "lpush"), "1", "l3"),
        a("EXISTS", "l3"),
        a("FUNCTION", "FLUSH"),
      ],
      scriptingOptions,
    );
  });
  test("SORT BY a constant of a set, from a script: sorted by bytes, as the file must replay it (a list keeps its order)", async () => {
    await expectSameDuet(
      servers,
      [
        a("SADD", "myset", ..."a b c d e f g h i l m n o p q r s t u v z aa aaa azz".split(" ")),
        evalOf("return redis.call('sort', KEYS[1], 'by', '_')", "1", "myset"),
        evalOf("return redis.call('sort', KEYS[1], 'by', '_', 'desc')", "1", "myset"),
        evalOf("return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", "1", "myset"),
        a("RPUSH", "mylist", "c", "a", "b"),
        evalOf("return redis.call('sort', KEYS[1], 'by', '_')", "1", "mylist"),
      ],
      scriptingOptions,
    );
  });
  test("the DECR_IF_GT example script", async () => {
    const body =
      "local current; current = redis.call('get', KEYS[1]); if not current then return nil end; if current > ARGV[1] then return redis.call('decr', KEYS[1]) else return redis.call('get', KEYS[1]) end";
    await expectSameDuet(servers, [a("SET", "foo", "5"), ...["2", "2", "2", "2", "2"].map((n) => evalOf(body, "1", "foo", n))], scriptingOptions);
  });
  test("EVAL_RO reads and refuses writes; EVALSHA in upper case, of a bad or unknown digest", async () => {
    const sha = new Bun.CryptoHasher("sha1").update("return redis.call('get', KEYS[1])").digest("hex");
    await expectSameDuet(
      servers,
      [
        a("SET", "foo", "bar"),
        a("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "foo"),
        a("EVAL_RO", "redis.call('del', KEYS[1]);", "1", "foo"),
        a("GET", "foo"),
        a("SCRIPT", "LOAD", "return redis.call('get', KEYS[1])"),
        a("EVALSHA", sha, "1", "foo"),
        a("EVALSHA", sha.toUpperCase(), "1", "foo"),
        a("EVALSHA", "NotValidShaSUM", "0"),
        a("EVALSHA", "ffd632c7d33e571e9f24556ebed26c3479a87130", "0"),
      ],
      scriptingOptions,
    );
  });
  test("SCRIPT FLUSH, SYNC and ASYNC, empty a cache of many scripts; SCRIPT EXISTS and LOAD", async () => {
    const loads = Array.from({ length: 100 }, (_, i) => a("SCRIPT", "LOAD", `return ${i}`));
    const sha = (n: number) => new Bun.CryptoHasher("sha1").update(`return ${n}`).digest("hex");
    await expectSameDuet(
      servers,
      [
        ...loads,
        a("SCRIPT", "EXISTS", sha(0), sha(99), sha(100)),
        a("SCRIPT", "FLUSH", "ASYNC"),
        a("SCRIPT", "EXISTS", sha(0), sha(99)),
        ...loads.slice(0, 3),
        a("SCRIPT", "FLUSH", "SYNC"),
        a("SCRIPT", "EXISTS", sha(1)),
        a("EVAL", "return 1", "0"),
        a("SCRIPT", "FLUSH"),
        a("SCRIPT", "EXISTS", sha(1)),
      ],
      scriptingOptions,
    );
  });
  test("redis.set_repl and replicate_commands: accepted anywhere, bad values refused", async () => {
    await expectSameDuet(
      servers,
      [
        evalOf("redis.replicate_commands(); return redis.call('set', 'x', '1')"),
        evalOf("redis.set_repl(redis.REPL_ALL); return 1"),
        evalOf("redis.set_repl(12345); return 1"),
        evalOf("redis.set_repl(redis.REPL_NONE); redis.call('set', 'y', '2'); return redis.call('get', 'y')"),
      ],
      scriptingOptions,
    );
  });
  test("shebangs: an unknown engine, option or flag, and a good one", async () => {
    await expectSameDuet(
      servers,
      [evalOf("#!not-lua\nreturn 1"), evalOf("#!lua\nreturn 1"), evalOf("#!lua badger=data\nreturn 1"), evalOf("#!lua flags=allow-oom,what?\nreturn 1")],
      scriptingOptions,
    );
  });
  test("past maxmemory: declared scripts are refused (over and over, without leaking), allow-oom and no-writes run", async () => {
    const declared = Array.from({ length: 50 }, () => evalOf("#!lua\nreturn 1"));
    await expectSameDuet(
      servers,
      [
        a("SET", "x", "123"),
        a("CONFIG", "SET", "maxmemory", "1"),
        ...declared,
        evalOf("#!lua flags=allow-oom\nredis.call('set', 'x', 1); return 1"),
        evalOf("#!lua flags=no-writes\nreturn redis.call('get', 'x')"),
        evalOf("#!lua flags=allow-oom,no-writes\nreturn redis.call('get', 'x')"),
        evalOf("return redis.call('get', 'x')"),
        evalOf("return redis.call('set', 'x', 'y')", "1", "x"),
        a("CONFIG", "SET", "maxmemory", "0"),
        evalOf("#!lua\nreturn 1"),
        // Replies and keys only: Redis counts a declared script it refuses for OOM as a rejected
        // call, svc as a failed one (a known difference: docs/kv.md).
      ],
      {
        ...scriptingOptions,
        reset: [
          ["CONFIG", "RESETSTAT"],
          ["CONFIG", "SET", "maxmemory", "0"],
        ],
        snapshot: keyspaceLines,
      },
    );
  });
  test("consistent error reporting: what EVAL answers, and how errors and calls are counted", async () => {
    const steps: Step[] = [
      a("CONFIG", "SET", "maxmemory", "1"),
      evalOf("return redis.call('set','x','y')", "1", "x"),
      evalOf(
        "local t = redis.pcall('set','x','y'); if t['err'] == \"OOM command not allowed when used memory > 'maxmemory'.\" then return 1 else return 0 end",
        "1",
        "x",
      ),
      evalOf("return redis.pcall('set','x','y')", "1", "x"),
      a("CONFIG", "SET", "maxmemory", "0"),
      evalOf("return redis.call('select',99)"),
      evalOf("local t = redis.pcall('select',99); if t['err'] == 'ERR DB index is out of range' then return 1 else return 0 end"),
      a("EVAL_RO", "return redis.call('set','x','y')", "1", "x"),
      a(
        "EVAL_RO",
        "local t = redis.pcall('set','x','y'); if t['err'] == 'ERR Write commands are not allowed from read-only scripts.' then return 1 else return 0 end",
        "1",
        "x",
      ),
      a("SET", "Sicily", "1"),
      evalOf("return redis.call('GEOADD', 'Sicily', '13.361389', '38.115556', 'Palermo', '15.087269', '37.502669', 'Catania')", "1", "x"),
      evalOf("return redis.error_reply('MY_ERR_CODE custom msg')"),
      evalOf("return redis.error_reply('')"),
      evalOf("return redis.status_reply('MY_OK_CODE custom msg')"),
      evalOf("local status, res = pcall(function() return 1 end); return 'status: ' .. tostring(status) .. ' result: ' .. res"),
      evalOf("local status, res = pcall(function() return foo end); return 'status: ' .. tostring(status) .. ' result: ' .. res"),
    ];
    // countsLines compares errorstats and the calls and failures of every command (Redis's rejected
    // calls of commands refused inside a script are a known difference: docs/kv.md).
    const options: DuetOptions = {
      ...scriptingOptions,
      reset: [
        ["CONFIG", "RESETSTAT"],
        ["CONFIG", "SET", "maxmemory", "0"],
      ],
      snapshot: countsLines,
    };
    await expectSameDuet(servers, steps, options);
  });
  test("a key whose time has passed is deleted when a script meets it", async () => {
    await expectSameDuet(
      servers,
      [
        a("DEBUG", "SET-ACTIVE-EXPIRE", "0"),
        a("SET", "key", "value", "PXAT", "1"),
        a("DBSIZE"),
        evalOf("return redis.call('EXISTS', 'key')"),
        a("DBSIZE"),
        a("DEBUG", "SET-ACTIVE-EXPIRE", "1"),
      ],
      scriptingOptions,
    );
  });
});

describe("scripting.tcl: not enough good replicas", () => {
  test("min-replicas-to-write with no replica: NOREPLICAS for writes, a may-write script, a script's write, EXEC of a write; reads and no-writes scripts run", async () => {
    await expectSameDuet(
      servers,
      [
        a("SET", "x", "some value"),
        a("CONFIG", "SET", "min-replicas-to-write", "1"),
        evalOf("return string.match(redis.call('info', 'replication'), 'connected_slaves:%d+\r\nmin_slaves_good_slaves:%d+')"),
        evalOf("#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"),
        evalOf("return redis.call('get','x')", "1", "x"),
        evalOf("#!lua\nreturn redis.call('get','x')", "1", "x"),
        evalOf("return redis.call('set','x', 1)", "1", "x"),
        evalOf("return redis.pcall('set','x', 1)", "1", "x"),
        a("SET", "x", "2"),
        a("GET", "x"),
        a("MULTI"),
        a("GET", "x"),
        a("INCR", "x"),
        a("EXEC"),
        // A lag of 0 judges no replica: writes run again; the old names set the same parameters.
        a("CONFIG", "SET", "min-slaves-max-lag", "0"),
        a("CONFIG", "GET", "min-replicas-max-lag"),
        a("CONFIG", "GET", "min-slaves-to-write"),
        a("SET", "x", "3"),
        a("CONFIG", "SET", "min-replicas-max-lag", "10"),
        a("SET", "x", "4"),
        a("CONFIG", "SET", "min-slaves-to-write", "0"),
        evalOf("return string.match(redis.call('info', 'replication'), 'min_slaves_good_slaves')"),
        a("SET", "x", "5"),
        a("GET", "x"),
        a("CONFIG", "SET", "min-replicas-to-write", "-1"),
        a("CONFIG", "SET", "min-replicas-to-write", "2147483648"),
      ],
      scriptingOptions,
    );
  });
});

describe("set.tcl", () => {
  test("a set that held a member other than an integer stays a hash table once only integers are left: its encoding and order", async () => {
    await expectSameDuet(
      servers,
      [
        a("SADD", "set1", "3", "1", "2"),
        a("SADD", "set2", "3", "1", "2", "a"),
        a("SREM", "set2", "a"),
        a("OBJECT", "ENCODING", "set1"),
        a("OBJECT", "ENCODING", "set2"),
        a("SMEMBERS", "set1"),
        a("SINTER", "set1", "set2"),
        // A copy keeps its encoding; a set made from members takes theirs.
        a("COPY", "set2", "set3"),
        a("OBJECT", "ENCODING", "set3"),
        a("SINTERSTORE", "set4", "set2", "set1"),
        a("OBJECT", "ENCODING", "set4"),
        // Past 512 members an intset becomes a hash table, and stays one when members go.
        evalOf("for i = 1, 513 do redis.call('sadd', KEYS[1], i) end return redis.call('object', 'encoding', KEYS[1])", "1", "big"),
        evalOf("for i = 1, 10 do redis.call('srem', KEYS[1], i) end return redis.call('object', 'encoding', KEYS[1])", "1", "big"),
        evalOf("for i = 1, 512 do redis.call('sadd', KEYS[1], i) end return redis.call('object', 'encoding', KEYS[1])", "1", "full"),
        a("SADD", "full", "512"),
        a("OBJECT", "ENCODING", "full"),
      ],
      { clients: [{ name: "A", protocol: 2 }] },
    );
  });
});

describe("functions.tcl", () => {
  test("FUNCTION LOAD: unknown argument, existing library (in any case), bad names and engines, an uncompiled script, REPLACE that fails keeps the old", async () => {
    await expectSameDuet(
      servers,
      [
        load(library("test", "test", "return 'hello'")),
        a("FCALL", "test", "0"),
        load("foo", "bar", library("test", "test", "return 'hello'")),
        load(library("test", "test", "return 'hello1'")),
        load(library("TEST", "test", "return 'hello1'")),
        load("#!bad_engine name=test\nredis.register_function('test', function() return 1 end)"),
        load("REPLACE", library("test", "test", "bad script")),
        load("REPLACE", library("test", "test", "return 'hello1'")),
        a("FCALL", "TEST", "0"),
        a("FCALL", "test", "0"),
      ],
      functionOptions,
    );
  });
  test("FCALL's bad arguments, DELETE of what is not there, KILL when nothing runs, a wrong subcommand, FLUSHALL keeps libraries", async () => {
    await expectSameDuet(
      servers,
      [
        load(library("test", "test", "return redis.call('set', 'x', '1')")),
        a("FCALL", "test", "bad_arg"),
        a("FCALL", "test", "10", "key1"),
        a("FCALL", "test", "-1"),
        a("FUNCTION", "DELETE", "test1"),
        a("FUNCTION", "KILL"),
        a("FUNCTION", "bad_subcommand"),
        a("FLUSHALL"),
        a("FLUSHDB"),
        a("FCALL", "test", "0"),
        a("GET", "x"),
        a("COMMAND", "GETKEYS", "fcall", "test", "1", "x"),
        a("COMMAND", "GETKEYS", "fcall_ro", "test", "1", "x"),
        a("FUNCTION", "DELETE", "test"),
        a("FCALL", "test", "0"),
      ],
      functionOptions,
    );
  });
  test("FUNCTION DUMP and RESTORE: FLUSH, APPEND and REPLACE policies, a bad payload keeps what is there, wrong arity, a function name that collides", async () => {
    await expectSameDuet(
      servers,
      [
        load(library("test", "test", "return 'hello'")),
        a("FUNCTION", "DUMP"),
        a("FUNCTION", "RESTORE", "<saved>"),
        a("FUNCTION", "FLUSH"),
        a("FUNCTION", "RESTORE", "<saved>"),
        a("FCALL", "test", "0"),
        load("REPLACE", library("test1", "test1", "return 'hello1'")),
        a("FUNCTION", "RESTORE", "<saved>", "FLUSH"),
        a("FCALL", "test1", "0"),
        load(library("test2", "test2", "return 'hello2'")),
        a("FUNCTION", "RESTORE", "<saved>", "APPEND"),
        a("FCALL", "test2", "0"),
        a("FUNCTION", "DELETE", "test"),
        load(library("test", "test", "return 'hello1'")),
        a("FUNCTION", "RESTORE", "<saved>", "REPLACE"),
        a("FCALL", "test", "0"),
        a("FUNCTION", "RESTORE", "bad payload"),
        a("FUNCTION", "RESTORE"),
        a("FUNCTION", "RESTORE", "<saved>", "FLUSH", "extra"),
        // The subcommand named as the client typed it.
        a("FUNCTION", "restore", "arg1", "args2", "arg3"),
        a("FUNCTION", "FLUSH"),
        load(library("test1", "test", "return 'collides'")),
        a("FUNCTION", "RESTORE", "<saved>"),
        a("FCALL", "test", "0"),
      ],
      functionOptions,
    );
  });
  test("FCALL_RO and no-writes functions refuse writes; functions get their keys and arguments", async () => {
    const noWrites = (body: string) =>
      `#!lua name=test\nredis.register_function{function_name='test', callback=function(KEYS, ARGV)\n ${body} \nend, flags={'no-writes'}}`;
    await expectSameDuet(
      servers,
      [
        load("REPLACE", noWrites("return redis.call('set', 'x', '1')")),
        a("FCALL_RO", "test", "1", "x"),
        a("FCALL", "test", "1", "x"),
        load("REPLACE", noWrites("return redis.call('get', 'x')")),
        a("SET", "x", "1"),
        a("FCALL_RO", "test", "1", "x"),
        load("REPLACE", library("test", "test", "return redis.call('set', KEYS[1], ARGV[1])")),
        a("FCALL", "test", "1", "x", "foo"),
        a("GET", "x"),
        a("FCALL_RO", "test", "1", "x", "bar"),
      ],
      functionOptions,
    );
  });
  test("libraries: shared code and default globals, a failed registration undoes the load, collisions, registration's argument errors", async () => {
    const register = (...args: string[]) => load(`#!lua name=lib1\n${args.join("\n")}`);
    await expectSameDuet(
      servers,
      [
        load(
          "#!lua name=lib1\nlocal function ping() return string.format('%s', redis.call('ping')) end\nredis.register_function('f1', function(keys, args) return ping() end)",
        ),
        a("FCALL", "f1", "0"),
        register("redis.register_function('f2', function() return 1 end)", "redis.register_function('f3', 5)"),
        a("FCALL", "f2", "0"),
        register("redis.register_function('f1', function() return 2 end)"),
        load("#!lua name=lib2\nredis.register_function('f1', function() return 2 end)"),
        load("#!lua name=lib2\nredis.register_function('f2', function() return 1 end)\nredis.register_function('f2', function() return 2 end)"),
        register("redis.register_function()"),
        register("redis.register_function('f1')"),
        register("redis.register_function('f1', function() return 1 end, {}, 'description', 'extra')"),
        register("redis.register_function(nil, function() return 1 end)"),
        register("redis.register_function('test\\0test', function() return 1 end)"),
        register("redis.register_function('', function() return 1 end)"),
      ],
      functionOptions,
    );
  });
  test("libraries while loading: redis.call, set_repl, globals, a library with no functions, registering from a function", async () => {
    await expectSameDuet(
      servers,
      [
        load("#!lua name=lib1\nlocal r = math.random()\nredis.register_function('f1', function() return 1 end)"),
        load("#!lua name=lib1\nredis.setresp(3)\nredis.register_function('f1', function() return 1 end)"),
        load("#!lua name=lib1\nredis.call('ping')\nredis.register_function('f1', function() return 1 end)"),
        load("REPLACE", "#!lua name=lib1\nredis.set_repl(redis.REPL_NONE)\nredis.register_function('f1', function() return 1 end)"),
        load("REPLACE", "#!lua name=lib1\na = 1\nredis.register_function('f1', function() return 1 end)"),
        load("REPLACE", "#!lua name=lib1\nlocal a = 1"),
        load("REPLACE", "#!lua name=lib1\nredis.register_function('f1', function() redis.register_function('f2', function() return 1 end) end)"),
        a("FCALL", "f1", "0"),
        load("REPLACE", "#!lua name=lib1\nredis.register_function('f1', function() return redis.REDIS_VERSION end)"),
        a("FCALL", "f1", "0"),
        // The load's `redis` kept in an upvalue and used from a function later (functions.tcl's
        // "malicious access test"): still read-only, and registering is refused.
        load(
          "REPLACE",
          "#!lua name=lib1\nlocal lib = redis\nlib.register_function('f1', function() lib.redis = redis lib.math = math return {ok='OK'} end)\n" +
            "lib.register_function('f2', function() lib.register_function('f1', function() return 1 end) end)",
        ),
        a("FCALL", "f1", "0"),
        a("FCALL", "f2", "0"),
        load("#!lua name=lib2\nredis.math.random()"),
        load("#!lua name=lib2\nredis.redis.call('ping')"),
      ],
      functionOptions,
    );
  });
  test("named arguments: good ones, a bad name, callback, description or flags, an unknown argument, a missing name or callback", async () => {
    const named = (fields: string) => load("REPLACE", `#!lua name=lib1\nredis.register_function{${fields}}`);
    await expectSameDuet(
      servers,
      [
        named("function_name='f1', callback=function() return 'hello' end, description='some desc'"),
        a("FUNCTION", "LIST"),
        named("function_name='f1', callback='bad'"),
        named("function_name='f1', callback=function() return 'hello' end, description=function() return 1 end"),
        named("function_name='f1', callback=function() return 'hello' end, some_unknown='unknown'"),
        named("callback=function() return 'hello' end"),
        named("function_name='f1'"),
        named("function_name='f1', callback=function() return 'hello' end, flags='bad flags type'"),
        named("function_name='f1', callback=function() return 'hello' end, flags={function() return 1 end}"),
        named("function_name='f1', callback=function() return 'hello' end, flags={'unknown'}"),
      ],
      functionOptions,
    );
  });
  test("FUNCTION LIST: WITHCODE, a pattern, wrong and repeated arguments; FUNCTION STATS as libraries come and go", async () => {
    await expectSameDuet(
      servers,
      [
        load(library("library1", "f1", "return 1")),
        load(library("library2", "f2", "return 2")),
        a("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "library1"),
        a("FUNCTION", "LIST", "LIBRARYNAME", "library*"),
        a("FUNCTION", "LIST", "bad_argument"),
        a("FUNCTION", "LIST", "libraryname"),
        a("FUNCTION", "LIST", "withcode", "withcode"),
        a("FUNCTION", "LIST", "libraryname", "foo", "libraryname", "foo"),
        a("FUNCTION", "STATS"),
        a("FUNCTION", "DELETE", "library1"),
        a("FUNCTION", "STATS"),
        a("FUNCTION", "FLUSH"),
        a("FUNCTION", "STATS"),
      ],
      functionOptions,
    );
  });
});

describe("multi.tcl", () => {
  test("basics: queued replies, DISCARD, nested MULTI, WATCH inside MULTI, errors while queueing, argv-altering commands", async () => {
    await expectSameDuet(
      servers,
      [
        a("DEL", "mylist"),
        a("MULTI"),
        a("RPUSH", "mylist", "a"),
        a("RPUSH", "mylist", "b"),
        a("RPUSH", "mylist", "c"),
        a("LRANGE", "mylist", "0", "-1"),
        a("EXEC"),
        a("MULTI"),
        a("SET", "x", "bar"),
        a("DISCARD"),
        a("GET", "x"),
        a("MULTI"),
        a("MULTI"),
        a("EXEC"),
        a("SET", "xx", "1"),
        a("MULTI"),
        a("INCR", "xx"),
        a("WATCH", "x"),
        a("EXEC"),
        a("MULTI"),
        a("SET", "foo1", "bar1"),
        a("NON-EXISTING-COMMAND"),
        a("SET", "foo2", "bar2"),
        a("EXEC"),
        a("EXISTS", "foo1", "foo2"),
        a("MULTI"),
        a("SET", "foo1", "bar1"),
        b("SET", "foo2", "bar2"),
        a("ZADD", "myzset", "1"),
        a("EXEC"),
        a("PING"),
        a("SADD", "myset", "a"),
        a("MULTI"),
        a("TTL", "foo"),
        a("SPOP", "myset"),
        a("EXEC"),
      ],
      multiOptions,
    );
  });
  test("WATCH: keys modified, by SORT STORE with an empty result, after EXEC or UNWATCH no more, DISCARD clears the dirty flag", async () => {
    await expectSameDuet(
      servers,
      [
        a("SET", "x", "30"),
        a("WATCH", "x"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("WATCH", "x"),
        b("SET", "x", "40"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("MSET", "a", "1", "b", "2", "c", "3"),
        a("WATCH", "a", "b", "x", "k", "z"),
        b("SET", "x", "50"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("FLUSHDB"),
        a("LPUSH", "foo", "bar"),
        a("WATCH", "foo"),
        b("SORT", "emptylist", "STORE", "foo"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SET", "x", "30"),
        a("WATCH", "x"),
        a("SET", "x", "40"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SET", "x", "50"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("WATCH", "x"),
        b("SET", "x", "60"),
        a("UNWATCH"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("UNWATCH"),
        a("WATCH", "x"),
        b("SET", "x", "10"),
        a("MULTI"),
        a("DISCARD"),
        a("MULTI"),
        a("INCR", "x"),
        a("EXEC"),
        a("WATCH", "x"),
        b("SET", "x", "10"),
        a("MULTI"),
        a("DISCARD"),
        b("SET", "x", "10"),
        a("MULTI"),
        a("INCR", "x"),
        a("EXEC"),
      ],
      multiOptions,
    );
  });
  test("WATCH and keys whose time has passed: met lazily, deleted, flushed, and SWAPDB's cases", async () => {
    await expectSameDuet(
      servers,
      [
        // Lazy expiry of a live watched key fails EXEC.
        a("SET", "x", "foo", "PX", "100000"),
        a("WATCH", "x"),
        b("PEXPIREAT", "x", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        // Watching, deleting or flushing a stale key does not.
        a("SET", "x", "foo", "PXAT", "1"),
        a("WATCH", "x"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SET", "x", "foo", "PXAT", "1"),
        a("WATCH", "x"),
        b("DEL", "x"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SET", "x", "foo", "PXAT", "1"),
        a("WATCH", "x"),
        b("FLUSHDB"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        // SWAPDB: a stale key replaced with none, none replaced with a stale key, a stale key with another.
        a("FLUSHALL"),
        a("SELECT", "1"),
        a("SET", "x", "foo", "PXAT", "1"),
        a("WATCH", "x"),
        b("SWAPDB", "0", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("FLUSHALL"),
        a("SELECT", "0"),
        a("SET", "x", "foo", "PXAT", "1"),
        a("SELECT", "1"),
        a("WATCH", "x"),
        b("SWAPDB", "0", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("FLUSHALL"),
        a("SELECT", "1"),
        a("SET", "x", "foo", "PXAT", "1"),
        a("SELECT", "0"),
        a("SET", "x", "bar", "PXAT", "1"),
        a("SELECT", "1"),
        a("WATCH", "x"),
        b("SWAPDB", "0", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        // SWAPDB touching watched keys that exist and that do not; WATCH remembers the database.
        a("FLUSHALL"),
        a("SELECT", "0"),
        a("SET", "x", "30"),
        a("WATCH", "x"),
        b("SWAPDB", "0", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("FLUSHALL"),
        a("SELECT", "1"),
        a("SET", "x", "30"),
        a("SELECT", "0"),
        a("WATCH", "x"),
        b("SWAPDB", "0", "1"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SELECT", "0"),
        a("WATCH", "x"),
        a("SELECT", "1"),
        b("SELECT", "1"),
        b("SET", "x", "10"),
        a("SELECT", "0"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        // EXPIRE of a watched key, and a watched key that expired on its own.
        a("SET", "x", "foo"),
        a("WATCH", "x"),
        b("EXPIRE", "x", "10"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("FLUSHALL"),
        a("MSET", "a", "a", "b", "b"),
        a("WATCH", "b", "a"),
        b("FLUSHALL"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
      ],
      multiOptions,
    );
  });
  test("FLUSHALL and FLUSHDB touch the watched keys they hold, and only those", async () => {
    await expectSameDuet(
      servers,
      [
        a("SET", "x", "30"),
        a("WATCH", "x"),
        b("FLUSHALL"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("WATCH", "x"),
        b("FLUSHALL"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SET", "x", "30"),
        a("WATCH", "x"),
        b("FLUSHDB"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
        a("SELECT", "1"),
        a("SET", "x", "30"),
        a("WATCH", "x"),
        b("FLUSHDB"),
        a("MULTI"),
        a("PING"),
        a("EXEC"),
      ],
      multiOptions,
    );
  });
  test("out of memory: DISCARD still works; EXEC of reads runs, of a write is aborted", async () => {
    await expectSameDuet(
      servers,
      [
        b("CONFIG", "SET", "maxmemory", "1"),
        a("MULTI"),
        a("SET", "x", "1"),
        a("DISCARD"),
        b("CONFIG", "SET", "maxmemory", "0"),
        a("PING"),
        a("SET", "x", "value"),
        a("MULTI"),
        a("GET", "x"),
        a("PING"),
        b("CONFIG", "SET", "maxmemory", "1"),
        a("EXEC"),
        b("CONFIG", "SET", "maxmemory", "0"),
        a("MULTI"),
        a("SET", "x", "1"),
        a("GET", "x"),
        b("CONFIG", "SET", "maxmemory", "1"),
        a("EXEC"),
        b("CONFIG", "SET", "maxmemory", "0"),
      ],
      { ...multiOptions, reset: [...(multiOptions.reset ?? []), ["CONFIG", "SET", "maxmemory", "0"]] },
    );
  });
  test("blocking commands in MULTI ignore their timeout; a bad CONFIG SET fails in EXEC only", async () => {
    await expectSameDuet(
      servers,
      [
        a("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"),
        a("MULTI"),
        a("BLPOP", "empty_list", "0"),
        a("BRPOP", "empty_list", "0"),
        a("BRPOPLPUSH", "empty_list1", "empty_list2", "0"),
        a("BLMOVE", "empty_list1", "empty_list2", "LEFT", "LEFT", "0"),
        a("BZPOPMIN", "empty_zset", "0"),
        a("BZPOPMAX", "empty_zset", "0"),
        a("XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
        a("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"),
        a("EXEC"),
        a("MULTI"),
        a("SET", "foo", "bar"),
        a("CONFIG", "SET", "maxmemory", "bla"),
        a("EXEC"),
        a("GET", "foo"),
      ],
      { ...multiOptions, snapshot: keyspaceLines },
    );
  });
});

describe("pubsub.tcl", () => {
  test("PING in subscribed mode, publishing to self, UNSUBSCRIBE from channels not subscribed, pattern and channel both matching, NUMPAT", async () => {
    await expectSameDuet(
      servers,
      [
        a("SUBSCRIBE", "somechannel"),
        a("PING"),
        a("PING", "foo"),
        a("UNSUBSCRIBE", "somechannel"),
        a("PING"),
        a("SUBSCRIBE", "chan1", "chan2"),
        b("PUBLISH", "chan1", "hello"),
        a("UNSUBSCRIBE", "chan3", "chan1"),
        b("PUBLISH", "chan1", "again"),
        b("PUBLISH", "chan2", "there"),
        a("PSUBSCRIBE", "foo.*", "bar.*"),
        b("PUBSUB", "NUMPAT"),
        b("PUBLISH", "foo.1", "x"),
        a("PUNSUBSCRIBE", "foo.*", "baz.*"),
        b("PUBLISH", "foo.1", "y"),
        a("SUBSCRIBE", "foo.1"),
        a("PSUBSCRIBE", "foo.*"),
        b("PUBLISH", "foo.1", "both"),
        a("UNSUBSCRIBE"),
        a("PUNSUBSCRIBE"),
        b("PUBSUB", "NUMPAT"),
        { client: "C", argv: ["SUBSCRIBE", "chan1"] },
        { client: "C", argv: ["PUBLISH", "chan1", "to myself"] },
        { client: "C", argv: ["GET", "k"] },
        { client: "C", argv: ["PSUBSCRIBE", "*"] },
        { client: "C", argv: ["PUBLISH", "chan1", "twice"] },
        // PUBSUB NUMSUB of channels never subscribed, and of none; unsubscribing with nothing subscribed.
        b("PUBSUB", "NUMSUB", "abc", "def"),
        b("PUBSUB", "NUMSUB"),
        b("UNSUBSCRIBE"),
        b("PUNSUBSCRIBE"),
        b("SUNSUBSCRIBE"),
      ],
      pubsubOptions,
    );
  });
});
