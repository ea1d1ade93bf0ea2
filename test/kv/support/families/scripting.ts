/**
 * Scripting's generated steps (EVAL, EVALSHA, their _RO forms, SCRIPT *): scripts from a pool
 * that exercises the `redis` API and the script runner, numkeys at and past its limits, digests
 * known, unknown and malformed, SCRIPT with every mode and bad ones — on a RESP2 client (A) and a
 * RESP3 one (B). The state compared after a sequence: the keyspace, which scripts are cached, the
 * calls and failures per command and the errors by code.
 */
import fc from "fast-check";
import { by, cmd, type DuetOptions, keyspaceLines, lit, type Step } from "../duet.ts";
import { type RespClient, show } from "../resp-client.ts";

/** Script bodies: each a behaviour of the `redis` API or of the script runner Redis checks. */
export const bodies = [
  "return redis.call('set', KEYS[1], ARGV[1])",
  "return redis.call('get', KEYS[1])",
  "return redis.pcall('incr', KEYS[1] or 'k1')",
  "return redis.call('incr', KEYS[1])",
  "return redis.call('nosuchcommand', KEYS[1])",
  "return redis.call()",
  "return redis.call('get')",
  "return redis.call('get', {})",
  "return redis.call('set', KEYS[1], 1.5)",
  "return redis.call('set', KEYS[1], nil)",
  "return redis.error_reply('My Error')",
  "return redis.error_reply('-WEIRD code')",
  "return redis.status_reply('FINE')",
  "return {err = 'ERR plain'}",
  "return {err = 'no code here'}",
  "error('boom')",
  "error({err = 'TBL raised'})",
  "error()",
  "return redis.sha1hex(ARGV[1] or '')",
  "redis.setresp(2); return redis.call('hgetall', KEYS[1])",
  "return redis.call('hgetall', KEYS[1])",
  "return redis.call('ping')",
  "return redis.call('select', ARGV[1] or '1')",
  "redis.call('select', '1'); redis.call('set', KEYS[1], 'in1'); return redis.call('dbsize')",
  "return redis.call('subscribe', 'c')",
  "return redis.call('eval', 'return 1', 0)",
  "return redis.call('multi')",
  "return redis.call('exec')",
  "return redis.call('watch', KEYS[1])",
  "return redis.call('blpop', KEYS[1], 0)",
  "return redis.call('brpoplpush', KEYS[1], KEYS[1], 0)",
  "return redis.call('client', 'setname', 'x')",
  "return redis.call('script', 'flush')",
  "return redis.call('function', 'flush')",
  "return redis.call('fcall', 'f', 0)",
  "return redis.call('debug', 'sleep', '0')",
  "return redis.call('object', 'encoding', KEYS[1])",
  "return redis.call('type', KEYS[1])",
  "return redis.call('lpush', KEYS[1], ARGV[1] or 'a')",
  "return redis.call('expire', KEYS[1], 0)",
  "return redis.call('del', unpack(KEYS))",
  "return #KEYS .. ':' .. #ARGV",
  "redis.call('set', KEYS[1], 'before'); error('after a write')",
  "redis.call('set', KEYS[1], 'before'); return redis.call('incr', KEYS[1])",
  "local t = redis.pcall('incr', KEYS[1] or 'k1'); if type(t) == 'table' then return t.err end; return t",
  "return redis.pcall('nosuchcommand')",
  "return x_undeclared_global",
  "y_new_global = 1",
  "return redis.REDIS_VERSION",
  "return redis.REDIS_VERSION_NUM",
  "return redis.call('get', 'undeclared_key')",
  "return redis.call('set', 'undeclared_key', 'v')",
  "return redis.call('set', KEYS[1], 'x', 'EX', 100)",
  "return redis.call('xadd', KEYS[1], '1-1', 'f', 'v')",
  "return 1 +",
  "#!lua\nreturn 1",
  "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
  "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')",
  "#!lua flags=no-writes,allow-oom\nreturn redis.call('get', KEYS[1])",
  "#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 'x')",
  "#!lua flags=no-cluster\nreturn 2",
  "#!lua flags=allow-cross-slot-keys\nreturn redis.call('mget', KEYS[1], 'other')",
  "#!lua flags=allow-stale,no-writes\nreturn 3",
  "#!lua flags=\nreturn redis.call('set', KEYS[1], 'declared')",
  "#!lua flags=bogus\nreturn 1",
  "#!lua name=lib\nreturn 1",
  "#!luajit\nreturn 1",
  "#! lua\nreturn 1",
  "#!lua flags=no-writes\nreturn redis.call('get', 'undeclared_key')",
  "#!lua\nreturn redis.call('get', 'undeclared_key')",
  // Answered differently until 2026-11-29 (redis.pcall's own errors, the library's argument
  // errors, PUBLISH from a read-only script, RESP3 inside scripts): now as redis-server.
  "return redis.pcall()",
  "return redis.pcall('incr', nil)",
  "return redis.pcall('get', {})",
  "return redis.error_reply()",
  "return redis.status_reply(5)",
  "return redis.sha1hex()",
  "return redis.call('publish', 'c', 'from a script')",
  "redis.setresp(3); return redis.call('hgetall', KEYS[1])",
  "redis.setresp(4)",
  "redis.set_repl(12345)",
  "return {double = 3.5}",
  "return {big_number = '123456789012345678901234567890'}",
  "return {verbatim_string = {format = 'txt', string = 'hi'}}",
  "return {map = {a = 1}}",
  "return {set = {a = true}}",
];

export const sha1 = (text: string) => new Bun.CryptoHasher("sha1").update(text).digest("hex");
const body = fc.constantFrom(...bodies);
const key = fc.constantFrom("k1", "k2", "h", "z");
const value = fc.constantFrom("1", "10", "v", "", "9223372036854775807", "1.5");
/** numkeys: the number of keys that follow, and counts at and past its bounds. */
const numkeys = fc.constantFrom("0", "1", "2", "-1", "3", "abc", "1.5", "");

const evalLike = fc
  .tuple(
    fc.constantFrom("EVAL", "EVAL", "EVAL", "EVAL_RO", "eval"),
    body,
    fc.nat(9),
    fc.array(key, { maxLength: 2 }),
    fc.array(value, { maxLength: 2 }),
    numkeys,
  )
  .map(([name, text, shape, keys, args, odd]) => [name, text, shape === 0 ? odd : String(keys.length), ...keys, ...args]);
const digest = fc.oneof(
  { weight: 6, arbitrary: body.map(sha1) },
  { weight: 1, arbitrary: body.map((b) => sha1(b).toUpperCase()) },
  { weight: 1, arbitrary: fc.constantFrom("0".repeat(40), "abc", "", sha1("never loaded"), `${sha1("x")}0`) },
);
const evalsha = fc
  .tuple(fc.constantFrom("EVALSHA", "EVALSHA", "EVALSHA_RO"), digest, fc.nat(9), fc.array(key, { maxLength: 2 }), fc.array(value, { maxLength: 1 }), numkeys)
  .map(([name, sha, shape, keys, args, odd]) => [name, sha, shape === 0 ? odd : String(keys.length), ...keys, ...args]);
const script = fc.oneof(
  { weight: 4, arbitrary: cmd(lit("SCRIPT"), lit("LOAD"), body) },
  { weight: 3, arbitrary: cmd(lit("SCRIPT"), lit("EXISTS"), fc.array(digest, { minLength: 0, maxLength: 3 })) },
  {
    weight: 1,
    arbitrary: cmd(
      lit("SCRIPT"),
      fc.constantFrom<string[]>(["FLUSH"], ["FLUSH", "ASYNC"], ["FLUSH", "SYNC"], ["flush", "async"], ["FLUSH", "LAZY"], ["FLUSH", "ASYNC", "SYNC"]),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<string[]>(
      ["SCRIPT", "KILL"],
      ["SCRIPT", "KILL", "x"],
      ["SCRIPT"],
      ["SCRIPT", "NOSUCH"],
      ["SCRIPT", "LOAD"],
      ["SCRIPT", "LOAD", "a", "b"],
      ["EVAL"],
      ["EVAL", "return 1"],
      ["EVALSHA", "x"],
      ["EVAL_RO", "return 1"],
      ["SCRIPT", "EXISTS"],
    ),
  },
);
const data = fc.oneof(
  cmd(lit("SET"), key, value),
  cmd(lit("HSET"), fc.constantFrom("h", "k1"), fc.constantFrom("a", "b"), value),
  cmd(lit("ZADD"), fc.constantFrom("z", "k2"), fc.constantFrom("1", "1.5", "-2"), fc.constantFrom("m", "n")),
  cmd(lit("SADD"), fc.constantFrom("s", "k2"), fc.constantFrom("m", "n")),
  cmd(lit("RPUSH"), key, value),
  cmd(lit("DEL"), key),
);

const client = fc.constantFrom("A", "A", "B");
export const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    { weight: 8, arbitrary: by(client, evalLike) },
    { weight: 4, arbitrary: by(client, evalsha) },
    { weight: 4, arbitrary: by(client, script) },
    { weight: 3, arbitrary: by(client, data) },
  ),
  { minLength: 1, maxLength: 20 },
);

/** INFO fields that count what ran: calls and failures per command (not times), errors by code, cached scripts. */
export async function countsLines(c: RespClient): Promise<string[]> {
  const section = async (name: string) => ((await c.call("INFO", name)) as string).split("\r\n");
  const commandstats = (await section("commandstats")).filter((l) => l.startsWith("cmdstat_")).map((l) => l.replace(/usec=\d+,usec_per_call=[\d.]+,/, ""));
  const errorstats = (await section("errorstats")).filter((l) => l.startsWith("errorstat_"));
  const cached = (await section("memory")).filter((l) => l.startsWith("number_of_cached_scripts"));
  return [...commandstats.sort(), ...errorstats.sort(), ...cached];
}

export const options: DuetOptions = {
  // A is RESP2 and B RESP3: scripts' replies are converted for each.
  clients: [
    { name: "A", protocol: 2 },
    { name: "B", protocol: 3 },
  ],
  // Counts start from nothing, so that the sequence's own calls and errors are compared.
  reset: [["CONFIG", "RESETSTAT"]],
  snapshot: async (c) => [...(await keyspaceLines(c)), `cached: ${show(await c.call("SCRIPT", "EXISTS", ...bodies.map(sha1)))}`, ...(await countsLines(c))],
  normalise: (argv, reply) => {
    // SCRIPT HELP is prose; svc's is in its own words (docs/kv.md). The rest is compared exactly.
    if (argv[0]!.toUpperCase() === "SCRIPT" && argv[1]?.toUpperCase() === "HELP") return Array.isArray(reply) ? "<help text>" : reply;
    return reply;
  },
};
