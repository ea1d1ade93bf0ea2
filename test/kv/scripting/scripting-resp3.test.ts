// RESP3 and scripts, side by side with redis-server 7.0, for a client in RESP2 (HELLO 2) and one in
// RESP3 (HELLO 3): after redis.setresp(3) the commands a script calls reply in RESP3, which it
// reads as Redis 7.0's Lua values (maps, sets, doubles, nulls, booleans, verbatim strings); the
// RESP3 shapes a script returns ({map=…}, {set=…}, {double=…}, {big_number=…},
// {verbatim_string=…}, booleans after setresp(3)) reach each client as Redis writes them in its
// protocol. Then redis.acl_check_cmd, for users with and without the permissions asked about.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RespClient } from "../support/resp-client.ts";
import { evalOf, sameReplies } from "../support/same-replies.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const s = redisAndKv();

/** One client of each server per protocol. */
const clients: Record<"2" | "3", { redis: RespClient; kv: RespClient }> = {} as never;

beforeAll(async () => {
  for (const protocol of ["2", "3"] as const) {
    const [redis, kv] = await Promise.all([RespClient.connect(s.redis.port), RespClient.connect(s.kv.port)]);
    await Promise.all([redis.call("HELLO", protocol), kv.call("HELLO", protocol)]);
    clients[protocol] = { redis, kv };
  }
});

afterAll(() => {
  for (const { redis, kv } of Object.values(clients)) {
    redis.close();
    kv.close();
  }
});

const data = [
  ["FLUSHALL"],
  ["SCRIPT", "FLUSH"],
  ["HSET", "h", "f", "v", "g", "w"],
  ["SADD", "s", "a"],
  ["ZADD", "z", "1.5", "m"],
  ["SET", "k", "v"],
  ["RPUSH", "l", "a", "b"],
  ["XADD", "x", "1-1", "f", "v"],
];

/** Each body as a script, on both servers, for a client of each protocol. */
async function sameForBothProtocols(bodies: string[]): Promise<void> {
  for (const protocol of ["2", "3"] as const) {
    await sameReplies(
      clients[protocol].redis,
      clients[protocol].kv,
      bodies.map((body) => evalOf(body)),
      data,
    );
  }
}

describe("RESP3 inside scripts", () => {
  test("after redis.setresp(3) commands reply in RESP3, read as Redis 7.0's Lua values", async () => {
    const call = (command: string) => `redis.setresp(3) return ${command}`;
    await sameForBothProtocols([
      call("redis.call('hgetall', 'h')"),
      "redis.setresp(3) local r = redis.call('hgetall', 'h') return {type(r), type(r.map), r.map.f, r.map.g}",
      "redis.setresp(3) local r = redis.call('smembers', 's') return {type(r.set), tostring(r.set.a)}",
      call("redis.call('smembers', 's')"),
      "redis.setresp(3) local r = redis.call('zscore', 'z', 'm') return {type(r), r.double}",
      call("redis.call('zscore', 'z', 'm')"),
      call("redis.call('zrange', 'z', 0, -1, 'withscores')"),
      "redis.setresp(3) local r = redis.call('get', 'nokey') return {type(r)}",
      call("redis.call('get', 'nokey')"),
      call("{redis.call('get', 'nokey')}"),
      "local r = redis.call('get', 'nokey') return {type(r)}",
      call("redis.call('hgetall', 'nohash')"),
      call("redis.call('config', 'get', 'maxmemory')"),
      "redis.setresp(3) local r = redis.call('info', 'server') return {type(r), type(r.verbatim_string), r.verbatim_string.format}",
      call("redis.call('xrange', 'x', '-', '+')"),
      call("redis.call('lrange', 'l', 0, -1)"),
      call("redis.call('exists', 'k')"),
      call("redis.call('set', 'k', 'v')"),
      call("redis.pcall('incr', 'k')"),
      call("redis.call('lpos', 'l', 'zz')"),
      call("redis.call('zscore', 'z', 'nomember')"),
      call("redis.call('zincrby', 'z', 1, 'm')"),
      call("redis.call('zpopmin', 'z')"),
      call("redis.call('hello', 3)"),
      "redis.setresp(3) redis.setresp(2) return redis.call('hgetall', 'h')",
      "redis.setresp(3) redis.setresp(2) return true",
    ]);
  });

  test("a script's RESP3 shapes and booleans reach a RESP2 and a RESP3 client as Redis writes them", async () => {
    await sameForBothProtocols([
      "return {map={a=1}}",
      "return {set={a=true}}",
      "return {double=1.5}",
      "return {double=1/0}",
      "return {double=-1/0}",
      "return {double=0/0}",
      "return {double='x'}",
      "return {big_number='123456789012345678901234567890'}",
      "return {big_number='1\\r\\n2'}",
      "return {verbatim_string={format='txt', string='hello'}}",
      "return {verbatim_string={format='mkd', string='x\\r\\ny'}}",
      "return {verbatim_string={format='abcdef', string='x'}}",
      "return {verbatim_string={format='a', string='x'}}",
      "return {verbatim_string={string='x'}}",
      "return true",
      "return false",
      "return nil",
      "return 42",
      "return 'a string'",
      "return ''",
      "return {ok='a status'}",
      "redis.setresp(3) return true",
      "redis.setresp(3) return false",
      "redis.setresp(3) return {true, false, nil, 1}",
      "redis.setresp(3) return {map={a=true}}",
      "return {map={a={map={b={set={c=true}}}}}}",
      "return {map={[1]='x', [2]={double=2.5}}}",
      "return {map={}}",
      "return {set={}}",
      "return {err='x', map={a=1}}",
      "return {ok='y', double=1}",
      "return {double=1, map={a=1}}",
      "return {big_number=5}",
      "return {map=5, 1, 2}",
      "return {set={[1]=true, [2]=false}}",
      "return {map={a=nil, b=2}}",
      "return {1, {map={k='v'}}, {set={x=true}}, {double=0.1}}",
    ]);
  });
});

describe("RESP3 shapes over REST", () => {
  test("/cmd answers a script's booleans, big numbers, maps and doubles in JSON by the protocol asked for", async () => {
    const body = "redis.setresp(3) return {true, false, {big_number='12'}, {map={a=1}}, {double=1.5}, {set={x=true}}}";
    const answer = async (protocol: number) => {
      const response = await fetch(`http://127.0.0.1:${s.kv.httpPort}/cmd`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ command: "EVAL", args: [body, "0"], protocol }),
      });
      return response.json();
    };
    expect(await answer(3)).toEqual({ result: [true, false, "12", { a: 1 }, 1.5, ["x"]] });
    expect(await answer(2)).toEqual({ result: [1, 0, "12", ["a", 1], "1.5", ["x"]] });
  });
});

describe("redis.acl_check_cmd", () => {
  test("answers whether the script's user may run a command with those arguments, keys and channels included; an unknown command is an error", async () => {
    const checks = [
      "get', 'k1",
      "get', 'x1",
      "set', 'k1', 'v",
      "nosuch",
      "config', 'nosuch",
      "config",
      "config', 'get', 'x",
      "acl', 'whoami",
      "acl', 'setuser', 'x",
      "get",
      "GET', 'k2",
      "publish', 'ch', 'm",
      "eval', 'return 1', '1', 'k1",
      "eval', 'return 1', '1', 'x1",
      "mget', 'k1', 'x",
      "get', 'k1', 'extra",
    ].map((args) => evalOf(`return redis.acl_check_cmd('${args}')`));
    const others = [
      evalOf("return redis.acl_check_cmd()"),
      evalOf("return redis.acl_check_cmd('get', {})"),
      evalOf("return redis.acl_check_cmd('get', 5)"),
      evalOf("return {pcall(redis.acl_check_cmd, 'nosuch')}"),
    ];
    const users = [
      ["ACL", "SETUSER", "limited", "on", "nopass", "+eval", "+get", "~k*", "+acl|whoami"],
      ["ACL", "SETUSER", "everything", "on", "nopass", "+@all", "~*", "&*"],
    ];
    await sameReplies(clients["2"].redis, clients["2"].kv, users, []);
    for (const user of ["default", "limited", "everything"]) {
      const [redis, kv] = await Promise.all([RespClient.connect(s.redis.port), RespClient.connect(s.kv.port)]);
      try {
        await sameReplies(redis, kv, [...checks, ...others], user === "default" ? [] : [["AUTH", user, "x"]]);
      } finally {
        redis.close();
        kv.close();
      }
    }
  });
});
