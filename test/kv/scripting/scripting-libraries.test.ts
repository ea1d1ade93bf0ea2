// The libraries Redis gives scripts, side by side with redis-server 7.0: how their functions fail
// (a script's pcall gets Redis's message; an uncaught error reads as Redis's), cjson's settings,
// and the functions of the `redis` library other than call — error_reply, status_reply,
// sha1hex, log, set_repl — with the arguments Redis takes and refuses.
import { describe, expect, test } from "bun:test";
import { evalOf, sameReplies } from "../support/same-replies.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

const same = (commands: string[][]) => sameReplies(s.redisClient, s.kvClient, commands);

describe("how library functions fail", () => {
  test("a script's pcall gets the message Redis gives, positioned or not as Lua's C libraries position it", async () => {
    await same([
      evalOf("local ok, e = pcall(cjson.decode, '[') return {tostring(ok), e}"),
      evalOf("return {pcall(cjson.encode, function() end)}"),
      evalOf("return {pcall(struct.pack, 'q')}"),
      evalOf("return {pcall(cmsgpack.unpack, '\\193')}"),
      evalOf("return {pcall(bit.tohex, nil)}"),
      evalOf("return {pcall(cmsgpack.pack)}"),
      evalOf("return {pcall(redis.sha1hex)}"),
      evalOf("return {pcall(redis.log, 99, 'x')}"),
      evalOf("return cjson.decode('[1,')"),
      evalOf("return struct.pack('q')"),
      evalOf("return bit.tohex({})"),
      evalOf("return cmsgpack.pack()"),
      evalOf("return {cmsgpack.unpack(string.char(0x81, 0xc0, 1))}"),
      evalOf("local p = struct.pack return p('q')"),
      evalOf("return {bit.band()}"),
      evalOf("return {bit.band(1, 'x', {})}"),
      evalOf("return {bit.bor(1, '2', 4)}"),
      evalOf("return {bit.tobit(2^53 + 2), bit.tobit(2^60), bit.tohex(-1, 2^31), bit.tobit('0x10'), bit.tohex(255, nil)}"),
    ]);
  });
});

describe("cjson", () => {
  test("decode reads JSON token by token as lua-cjson does: its messages, NUL as the end, NaN, Infinity and hex by default", async () => {
    await same([
      evalOf("return cjson.decode('[1] x')"),
      evalOf("return cjson.decode('-')"),
      evalOf("return cjson.decode('\"a\\\\qb\"')"),
      evalOf("return cjson.decode('[1]' .. string.char(0) .. 'x')[1]"),
      evalOf("return cjson.decode('\"\\\\ud800\"')"),
      evalOf("return cjson.decode('\"\\\\udc00\"')"),
      evalOf("return cjson.decode('\"\\\\u12\"')"),
      evalOf("return cjson.decode('{\"a\":1,}')"),
      evalOf("return cjson.decode('[1,]')"),
      evalOf("return cjson.decode(' ')"),
      evalOf("return cjson.decode('')"),
      evalOf("return cjson.decode('tru')"),
      evalOf("return cjson.decode('{1:2}')"),
      evalOf("return cjson.decode('{\"a\" 2}')"),
      evalOf("return cjson.decode('1e5')"),
      evalOf("return cjson.decode('1e')"),
      evalOf("return cjson.decode('0x')"),
      evalOf("return cjson.decode(string.char(0) .. '1')"),
      evalOf("return cjson.decode()"),
      evalOf("return cjson.decode({})"),
      evalOf("return cjson.decode(123)"),
      evalOf(
        "local t = cjson.decode('[nan, inf, -inf, 0x10, Infinity, NaN, +5, 010, -0x1p4]') local o = {} for i = 1, 9 do o[i] = tostring(t[i]) end return o",
      ),
    ]);
  });

  test("encode fails and writes as lua-cjson does", async () => {
    await same([
      evalOf("return cjson.encode({[true] = 1})"),
      evalOf("return cjson.encode()"),
      evalOf("return cjson.encode(1, 2)"),
      evalOf("local ok, e = pcall(cjson.encode, {[{}] = 1}) return e"),
      evalOf("return cjson.encode({1, 2, nil, 4})"),
      evalOf("return cjson.encode({[1.5] = 1})"),
      evalOf("return cjson.encode({[1] = 1, [2] = 2, x = 3})"),
      evalOf("return cjson.encode({a = {b = {}}})"),
      evalOf("return cjson.encode(string.char(127, 128, 255, 0))"),
      evalOf("return {cjson._NAME, cjson._VERSION, type(cjson.new), type(cjson.null)}"),
    ]);
  });

  test("the settings read, set and refuse their arguments as lua-cjson's do (each on an instance of its own: cjson.new)", async () => {
    const fresh = (body: string) => evalOf(`local c = cjson.new() ${body}`);
    await same([
      fresh("return {c.encode_keep_buffer()}"),
      fresh("return {c.encode_keep_buffer(false), c.encode_keep_buffer()}"),
      fresh("return {c.encode_keep_buffer('on')}"),
      fresh("return {c.encode_keep_buffer('x')}"),
      fresh("return {c.encode_keep_buffer(1, 2)}"),
      fresh("return {c.encode_keep_buffer(1)}"),
      fresh("return {c.encode_keep_buffer({})}"),
      fresh("return {c.encode_max_depth(), c.decode_max_depth(), c.encode_number_precision()}"),
      fresh("return {c.encode_max_depth(0)}"),
      fresh("return {c.encode_max_depth('x')}"),
      fresh("return {c.encode_number_precision(15)}"),
      fresh("return {c.encode_number_precision(3), c.encode(1/3)}"),
      fresh("return {tostring(c.encode_sparse_array())}"),
      fresh("return {tostring(c.encode_sparse_array(true, 3, 5))}"),
      fresh("return {c.encode_sparse_array(nil, -1)}"),
      fresh("return {c.encode_invalid_numbers('null'), c.encode({1/0, 0/0})}"),
      fresh("return {tostring(c.encode_invalid_numbers(true)), c.encode({1/0, -1/0, 0/0})}"),
      fresh("return {c.encode_invalid_numbers()}"),
      fresh("return {c.decode_invalid_numbers(false), pcall(c.decode, '[nan]')}"),
      fresh("c.decode_invalid_numbers(false) return {pcall(c.decode, '[010]')}"),
      fresh("c.decode_invalid_numbers(false) return {pcall(c.decode, '[+1]')}"),
      fresh("c.encode_max_depth(2) return {pcall(c.encode, {{{1}}})}"),
      fresh("c.decode_max_depth(2) return {pcall(c.decode, '[[[1]]]')}"),
      fresh("return {pcall(c.encode, {[20] = 1})}"),
      fresh("c.encode_sparse_array(true) return c.encode({[20] = 1})"),
      fresh("c.encode_sparse_array(false, 0) return c.encode({[20] = 1})"),
      fresh("c.encode_max_depth(2) return cjson.encode({{{1}}})"),
    ]);
  });

  test("the shared cjson's settings are the script's own: the next script starts from the defaults (in Redis they stay)", async () => {
    const [set, read] = await s.kvClient.pipeline([
      evalOf("cjson.encode_keep_buffer(false) cjson.encode_max_depth(2) cjson.encode_number_precision(3) return {pcall(cjson.encode, {{{1/3}}})}"),
      evalOf("return {tostring(cjson.encode_keep_buffer()), cjson.encode_max_depth(), cjson.encode({{{1/3}}})}"),
    ]);
    expect(set).toEqual([null, "Cannot serialise, excessive nesting (3)"]);
    expect(read).toEqual(["true", 1000n, "[[[0.33333333333333]]]"]);
  });
});

describe("the redis library", () => {
  test("error_reply, status_reply, sha1hex, log and set_repl take and refuse arguments as Redis's C functions do", async () => {
    await same([
      evalOf("return redis.error_reply(5)"),
      evalOf("return redis.error_reply()"),
      evalOf("return redis.error_reply('a', 'b')"),
      evalOf("return redis.error_reply('bad')"),
      evalOf("return redis.error_reply('-E1 z')"),
      evalOf("return redis.error_reply('- x')"),
      evalOf("return redis.error_reply('-x\\r\\n')"),
      evalOf("return redis.error_reply('bad one')"),
      evalOf("return redis.error_reply('')"),
      evalOf("return redis.error_reply('-')"),
      evalOf("return redis.error_reply('x\\0y')"),
      evalOf("return redis.error_reply('bad').err"),
      evalOf("return redis.status_reply(5)"),
      evalOf("return redis.status_reply('x\\0y').ok"),
      evalOf("return redis.status_reply()"),
      evalOf("return redis.sha1hex()"),
      evalOf("return redis.sha1hex(1, 2)"),
      evalOf("return redis.sha1hex(5)"),
      evalOf("return redis.sha1hex({})"),
      evalOf("return redis.sha1hex(nil)"),
      evalOf("return redis.log(redis.LOG_WARNING)"),
      evalOf("return redis.log('x', 'y')"),
      evalOf("return redis.log('3', 'y', {}, 5)"),
      evalOf("return redis.log(3.5, 'y')"),
      evalOf("return redis.log(-1, 'y')"),
      evalOf("return redis.log(4, 'y')"),
      evalOf("return redis.set_repl()"),
      evalOf("return redis.set_repl(4)"),
      evalOf("return redis.set_repl(redis.REPL_ALL)"),
      evalOf("return redis.set_repl('x')"),
      evalOf("return redis.setresp()"),
      evalOf("return redis.setresp(4)"),
      evalOf("return redis.setresp('3')"),
    ]);
  });
});
