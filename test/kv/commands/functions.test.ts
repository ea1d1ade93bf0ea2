// Redis 7's functions (FUNCTION, FCALL) side by side with redis-server 7.0: libraries loaded,
// replaced, listed, deleted and flushed with the same replies and errors; functions run with
// their keys and arguments, held to their flags; and libraries kept across a restart by the
// append-only file, rewritten into it first, and loaded the same by redis-server.
import { describe, expect, test } from "bun:test";
import { aofName, newDir, withKvIn } from "../support/aof-files.ts";
import { type RespValue, show, withClient } from "../support/resp-client.ts";
import { startRedis } from "../support/servers.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../../support/temp-dir.ts";

const s = redisAndKvWithClients();

/**
 * FUNCTION LIST with each library's functions in name order: Redis lists them in its hash
 * table's order (the command is flagged nondeterministic_output_order), svc in registration order.
 */
function sortedFunctions(reply: RespValue): RespValue {
  if (!Array.isArray(reply)) return reply;
  return reply.map((library) => {
    if (!Array.isArray(library)) return library;
    const at = library.indexOf("functions");
    if (at < 0) return library;
    const functions = [...(library[at + 1] as RespValue[][])].sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    return [...library.slice(0, at + 1), functions, ...library.slice(at + 2)];
  });
}

/** Runs `commands` on both servers (after FLUSHALL and FUNCTION FLUSH) and expects the same replies. */
async function sameOnBoth(commands: string[][]): Promise<RespValue[]> {
  const [redis, kv] = await Promise.all(
    [s.redisClient, s.kvClient].map(async (client) => {
      const replies = await client.pipeline([["FLUSHALL"], ["FUNCTION", "FLUSH"], ...commands]);
      return replies.map((reply, i) => ((commands[i - 2]?.[1] ?? "").toUpperCase() === "LIST" ? sortedFunctions(reply) : reply));
    }),
  );
  const rows = commands.map((command, i) => ({ command: command.join(" ").slice(0, 120), kv: show(kv![i + 2]!) }));
  expect(rows).toEqual(commands.map((command, i) => ({ command: command.join(" ").slice(0, 120), kv: show(redis![i + 2]!) })));
  return kv!.slice(2);
}

const library = [
  "#!lua name=mylib",
  "local function incr(keys, args) return redis.call('incrby', keys[1], args[1] or 1) end",
  "redis.register_function('incr_by', incr)",
  "redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a key'}",
  "redis.register_function{function_name='oops', callback=function() error('oops') end}",
  "redis.register_function{function_name='globals', callback=function() return KEYS end}",
  "redis.register_function{function_name='again', callback=function() return redis.register_function('x', incr) end}",
].join("\n");

describe("functions side by side with redis-server", () => {
  test("a library loads, its functions run with keys and arguments, and errors read as Redis's", async () => {
    const kv = await sameOnBoth([
      ["FUNCTION", "LOAD", library],
      ["FCALL", "incr_by", "1", "n", "5"],
      ["FCALL", "INCR_BY", "1", "n"],
      ["FCALL_RO", "peek", "1", "n"],
      ["FCALL_RO", "incr_by", "1", "n"],
      ["FCALL", "oops", "0"],
      ["FCALL", "globals", "0"],
      ["FCALL", "again", "0"],
      ["FCALL", "nosuch", "0"],
      ["FCALL", "incr_by", "2", "n"],
      ["FCALL", "incr_by", "-1"],
      ["FCALL", "incr_by", "x"],
      ["SET", "s", "abc"],
      ["FCALL", "incr_by", "1", "s"],
      ["FUNCTION", "LOAD", library],
      ["FUNCTION", "STATS"],
      ["FUNCTION", "LIST"],
      ["FUNCTION", "LIST", "WITHCODE"],
      ["FUNCTION", "LIST", "LIBRARYNAME", "my*"],
      ["FUNCTION", "LIST", "LIBRARYNAME", "x*"],
      ["FUNCTION", "LIST", "LIBRARYNAME"],
      ["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
      ["FUNCTION", "LIST", "foo"],
      ["FUNCTION", "KILL"],
      ["FUNCTION", "DELETE", "nolib"],
      ["FUNCTION", "DELETE", "mylib"],
      ["FCALL", "incr_by", "1", "n"],
      ["FUNCTION", "STATS"],
      ["FUNCTION", "FLUSH", "bad"],
      ["FUNCTION", "FLUSH", "SYNC"],
    ]);
    expect(kv[1]).toBe(5n);
    expect(kv[3]).toBe("6");
  });

  test("a library's code is checked as Redis checks it: metadata, registrations, names, flags, a time limit", async () => {
    const load = (...lines: string[]) => ["FUNCTION", "LOAD", lines.join("\n")];
    const ok = "redis.register_function('f', function() return 1 end)";
    await sameOnBoth([
      load("return 1"),
      load("#!lua"),
      load("#!lua name=e", "return 1"),
      load("#!lua name=e foo=bar", ok),
      load("#!js name=e", ok),
      load("#!lua name=bad-name", ok),
      load("#!lua name=e", "redis.call('ping')"),
      load("#!lua name=e", "local x = KEYS"),
      load("#!lua name=e", "redis.register_function('a b', function() end)"),
      load("#!lua name=e", "redis.register_function('a', 5)"),
      load("#!lua name=e", "redis.register_function{function_name='a', callback=function() end, flags={'bad'}}"),
      load("#!lua name=e", "redis.register_function{function_name='a', callback=function() end, flags='no-writes'}"),
      load("#!lua name=e", "redis.register_function('a', function() end) redis.register_function('a', function() end)"),
      load("#!lua name=e", "redis.register_function{function_name='a'}"),
      load("#!lua name=e", "redis.register_function{callback=function() end}"),
      load("#!lua name=e", "redis.register_function{function_name='a', callback=function() end, foo=1}"),
      load("#!lua name=e", "redis.register_function()"),
      load("#!lua name=e", "redis.register_function('a', function() end, 3)"),
      load("#!lua name=e", "x = ("),
      load("#!lua name=e", "while true do end"),
      load("#!lua name=one", ok),
      load("#!lua name=two", ok),
      ["FUNCTION", "LOAD", "REPLACE", `#!lua name=one\n${ok}`],
      ["FUNCTION", "LOAD", "REPLACE", "#!lua name=one\nredis.register_function('g', function() return 2 end)"],
      ["FCALL", "g", "0"],
      ["FCALL", "f", "0"],
      ["FUNCTION", "LOAD", "foo", `#!lua name=z\n${ok}`],
      ["FUNCTION", "LOAD", "REPLACE"],
      ["FUNCTION", "STATS"],
    ]);
  });
});

describe("a library's metadata and what its code sees", () => {
  test("the metadata line is read as Redis 7.0 reads it: the engine in any case, name= once, quotes and tabs as sdssplitargs takes them", async () => {
    const load = (first: string, name: string) => ["FUNCTION", "LOAD", `${first}\nredis.register_function('${name}', function() return '${name}' end)`];
    await sameOnBoth([
      load("#!LUA name=upper", "fu"),
      load("#!Lua name=mixed", "fm"),
      load("#!lUa NAME=shouted", "fs"),
      ["FCALL", "fu", "0"],
      ["FCALL", "fs", "0"],
      load("#!lua name=d name=e", "fd"),
      load('#!lua name="quoted"', "fq"),
      load('#!lua name="bad"x', "fx"),
      load("#!lua\tname=tab", "ft"),
      load("#!lua name=cr\r", "fcr"),
      load("#!lua name='single'", "fsq"),
      load('#!lua name="open', "fo"),
      load("#!js name=j", "fj"),
      load("#!js name=bad-name", "fjb"),
      load("#!LUAX name=x", "fx2"),
      load("#!", "fe"),
      load("#! name=space", "fsp"),
      ["FUNCTION", "DELETE", "UPPER"],
      ["FUNCTION", "DELETE", "upper"],
    ]);
  });

  test("while a library loads its code sees only redis (register_function, log, the constants); its functions see the globals", async () => {
    const load = (...lines: string[]) => ["FUNCTION", "LOAD", lines.join("\n")];
    const ok = "redis.register_function('f', function() return 1 end)";
    await sameOnBoth([
      load("#!lua name=a", "local x = string.format('%d', 1)", ok),
      load("#!lua name=a", "local t = type", ok),
      load("#!lua name=a", "redis.setresp(3)", ok),
      load("#!lua name=a", "local c = cjson", ok),
      load("#!lua name=a", "local p = pcall", ok),
      load("#!lua name=a", "x = 1", ok),
      load(
        "#!lua name=a",
        "redis.log(redis.LOG_DEBUG, 'x')",
        "redis.register_function('g', function() return {type(string), type(cjson), type(redis.call), type(redis.setresp)} end)",
      ),
      ["FCALL", "g", "0"],
      load("#!lua name=b", "redis.register_function('h', function() return loadstring('return type(redis.call)')() end)"),
      ["FCALL", "h", "0"],
      load("#!lua name=c", "redis.register_function('k', function() return KEYS end)"),
      ["FCALL", "k", "0"],
    ]);
  });
});

describe("a library's log", () => {
  test("redis.log while a library loads is written to the server's log, and the library loads", async () => {
    const code = "#!lua name=logs\nredis.log(redis.LOG_WARNING, 'loading logs')\nredis.register_function('l', function() return 1 end)";
    const [redis, kv] = await Promise.all(
      [s.redisClient, s.kvClient].map((client) =>
        client.pipeline([
          ["FUNCTION", "FLUSH"],
          ["FUNCTION", "LOAD", code],
          ["FCALL", "l", "0"],
        ]),
      ),
    );
    expect(kv).toEqual(redis!);
    expect(kv!.slice(1)).toEqual(["logs", 1n]);
    const deadline = Date.now() + 2000;
    while (!s.kv.output().includes("loading logs") && Date.now() < deadline) await Bun.sleep(20);
    expect(s.kv.output()).toContain("loading logs");
  });
});

describe("FUNCTION DUMP and RESTORE", () => {
  test("a payload is Redis's byte for byte, restores across the two servers, and RESTORE's policies and errors are Redis's", async () => {
    const one = "#!lua name=a\nredis.register_function('fa', function() return 1 end)";
    const kv = await sameOnBoth([
      ["FUNCTION", "DUMP"],
      ["FUNCTION", "LOAD", one],
      ["FUNCTION", "DUMP"],
      ["FUNCTION", "RESTORE", "garbage"],
      ["FUNCTION", "DUMP"],
      ["FUNCTION", "FLUSH"],
      ["FCALL", "fa", "0"],
    ]);
    const payload = kv[2] as string;
    const [fromRedis] = await s.redisClient
      .pipeline([
        ["FUNCTION", "FLUSH"],
        ["FUNCTION", "LOAD", one],
        ["FUNCTION", "DUMP"],
      ])
      .then((r) => [r[2] as string]);
    expect(payload).toBe(fromRedis!);
    await sameOnBoth([
      ["FUNCTION", "RESTORE", payload],
      ["FCALL", "fa", "0"],
      ["FUNCTION", "RESTORE", payload],
      ["FUNCTION", "RESTORE", payload, "APPEND"],
      ["FUNCTION", "RESTORE", payload, "replace"],
      ["FUNCTION", "RESTORE", payload, "FLUSH"],
      ["FUNCTION", "RESTORE", payload, "BAD"],
      ["FUNCTION", "RESTORE", payload, "FLUSH", "x"],
      ["FUNCTION", "DELETE", "a"],
      ["FUNCTION", "LOAD", "#!lua name=b\nredis.register_function('fa', function() return 2 end)"],
      ["FUNCTION", "RESTORE", payload],
      ["FUNCTION", "RESTORE", payload, "REPLACE"],
      ["FCALL", "fa", "0"],
      ["FUNCTION", "RESTORE", payload, "FLUSH"],
      ["FCALL", "fa", "0"],
      ["FUNCTION", "RESTORE", `${payload.slice(0, -1)}x`],
    ]);
  });
});

describe("functions and the append-only file", () => {
  test("libraries survive kill -9, are rewritten first into the new file, and redis-server loads that file the same", async () => {
    const dir = newDir();
    await withKvIn(dir, async (c, kv) => {
      expect(await c.call("FUNCTION", "LOAD", library)).toBe("mylib");
      expect(await c.call("FCALL", "incr_by", "1", "n", "7")).toBe(7n);
      kv.proc.kill("SIGKILL");
      await kv.proc.exited;
    });
    const file = readFileSync(join(dir, aofName), "latin1");
    expect(file).toContain("$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n");
    await withKvIn(dir, async (c) => {
      expect(await c.call("FCALL", "incr_by", "1", "n", "1")).toBe(8n);
      expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
      const deadline = Date.now() + 10_000;
      while (((await c.call("INFO", "persistence")) as string).includes("aof_rewrite_in_progress:1") && Date.now() < deadline) await Bun.sleep(20);
    });
    const rewritten = readFileSync(join(dir, aofName), "latin1").replace(/#+$/, "");
    expect(rewritten.startsWith("*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n")).toBe(true);
    await withKvIn(dir, async (c) => {
      expect(await c.call("FCALL_RO", "peek", "1", "n")).toBe("8");
      expect(((await c.call("FUNCTION", "LIST")) as RespValue[]).length).toBe(1);
    });
    // redis-server reads the same file to the same libraries and data.
    const redisDir = tempDir("svc-aof-redis-");
    copyFileSync(join(dir, aofName), join(redisDir, aofName));
    const redis = await startRedis(["--dir", redisDir, "--appendonly", "yes", "--appendfilename", aofName, "--aof-use-rdb-preamble", "no"]);
    try {
      await withClient(redis.port, async (c) => {
        expect(await c.call("FCALL_RO", "peek", "1", "n")).toBe("8");
      });
    } finally {
      await redis.stop();
    }
  });
});
