/**
 * Generators of Redis command sequences for the differential tests: each command family is an
 * arbitrary of argv lists over a tiny keyspace (so keys collide across types and WRONGTYPE comes
 * up), small values (so sets and hashes stay in Redis's compact encodings some of the time and
 * not at others), and arguments that are sometimes malformed (so error replies are compared too).
 *
 * Each generated command carries how its reply is compared: exactly, ignoring order (Redis's
 * own unordered replies), or only by shape where Redis itself answers at random.
 */
import fc from "fast-check";

export type Compare =
  | "exact"
  /** An array whose order Redis does not define (SMEMBERS, KEYS, SUNION, ...). */
  | "unordered"
  /** [cursor, items]: both cursors 0 and the same items in any order. */
  | "scan"
  /** Random picks: the same reply type and length. */
  | "shape"
  /** An integer that depends on the clock (TTL, PTTL, EXPIRETIME): equal within a tolerance. */
  | "clock"
  /**
   * OBJECT ENCODING: exact, except that the three string encodings are one. Redis remembers how
   * a string was made (APPEND leaves "raw", INCRBYFLOAT "embstr"); svc derives it from the value
   * (docs/kv.md). For OBJECT REFCOUNT, the shared-integer count (INT_MAX) and 1 are one too.
   */
  | "encoding";

export interface Generated {
  argv: string[];
  compare: Compare;
}

const k = fc.constantFrom("k0", "k1", "k2", "k3");
const keys = fc.array(k, { minLength: 1, maxLength: 4 });
const member = fc.constantFrom("a", "b", "c", "d", "e", "1", "2", "10", "-3", "");
const value = fc.oneof(
  { weight: 4, arbitrary: member },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "3.5",
      "1e3",
      "0x10",
      " 1",
      "9223372036854775807",
      "-9223372036854775808",
      "x\u0000y",
      "\u00ff\u00fe",
      "abcdefghijklmnopqrstuvwxyz",
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 6 }) },
);
const int = fc.oneof(
  { weight: 5, arbitrary: fc.integer({ min: -6, max: 12 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("abc", "", "1.5", "+1", "01", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "100") },
);
/** Scores ZADD takes. */
const validFloat = fc.constantFrom("1.5", "-0.5", "0.1", "3", "0", "-0", "-2", "1e308", "-inf", "+inf", "1e-5", "10.0");
const float = fc.constantFrom("1.5", "-0.5", "0.1", "3", "0", "-2", "1e308", "-1e308", "inf", "-inf", "+inf", "nan", "abc", "1e-5", "0x1p4", "10.0");
const smallFloat = float.filter((f) => !f.includes("e308"));
const scoreBound = fc.constantFrom("-inf", "+inf", "(1", "1", "2.5", "(2", "0", "-1", "abc", "(", "3");
const lexBound = fc.constantFrom("-", "+", "[a", "(a", "[c", "(b", "[", "a", "[e", "(");
const seconds = fc.constantFrom("1000", "2000", "-1", "0", "abc", "9223372036854775807");
/**
 * EXPIRE's times differ from every other command's: EXPIRE k 2000 GT right after SETEX k 2000 ties
 * or not depending on whether a millisecond passed between them, on each server independently.
 */
const expireSeconds = fc.constantFrom("1500", "2500", "-1", "0", "abc", "9223372036854775807");
const end = fc.constantFrom("LEFT", "RIGHT", "left", "middle");

const c = (compare: Compare, arb: fc.Arbitrary<string[]>): fc.Arbitrary<Generated> => arb.map((argv) => ({ argv, compare }));
const tuple = (...parts: fc.Arbitrary<string | string[]>[]) => fc.tuple(...parts).map((p) => p.flat());
const lit = (s: string) => fc.constant(s);
const maybe = (...parts: fc.Arbitrary<string | string[]>[]) => fc.option(tuple(...parts), { nil: [] as string[] });

export const keyCommands = [
  c("exact", tuple(fc.constantFrom("DEL", "UNLINK", "EXISTS", "TOUCH"), keys)),
  c("exact", tuple(lit("TYPE"), k)),
  c("unordered", tuple(lit("KEYS"), fc.constantFrom("*", "k[01]", "k?", "x*", "*2"))),
  c(
    "scan",
    tuple(
      lit("SCAN"),
      lit("0"),
      maybe(lit("MATCH"), fc.constantFrom("*", "k1", "k[2-3]")),
      lit("COUNT"),
      lit("1000"),
      maybe(lit("TYPE"), fc.constantFrom("string", "list", "hash", "set", "zset")),
    ),
  ),
  c("exact", tuple(fc.constantFrom("RENAME", "RENAMENX"), k, k)),
  c("exact", tuple(lit("COPY"), k, k, maybe(lit("REPLACE")), maybe(lit("DB"), fc.constantFrom("0", "1", "16", "x")))),
  c("exact", tuple(lit("MOVE"), k, fc.constantFrom("0", "1", "2", "-1", "99"))),
  c("exact", tuple(fc.constantFrom("EXPIRE", "PEXPIRE"), k, expireSeconds, fc.subarray(["NX", "XX", "GT", "LT"], { maxLength: 2 }))),
  c(
    "exact",
    tuple(
      fc.constantFrom("EXPIREAT", "PEXPIREAT"),
      k,
      fc.constantFrom("1", "100", "4102444800", "4102444800000", "abc"),
      fc.subarray(["NX", "XX", "GT", "LT"], { maxLength: 2 }),
    ),
  ),
  c("clock", tuple(fc.constantFrom("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"), k)),
  c("exact", tuple(lit("PERSIST"), k)),
  c("encoding", tuple(lit("OBJECT"), fc.constantFrom("ENCODING", "REFCOUNT", "nope"), k)),
  // The byte counts differ by design (docs/kv.md); nil for a missing key and the errors do not.
  c(
    "shape",
    tuple(
      lit("MEMORY"),
      lit("USAGE"),
      k,
      maybe(fc.constantFrom("SAMPLES", "samples", "nope"), maybe(fc.constantFrom("0", "5", "-1", "abc", "9223372036854775808"))),
    ),
  ),
  c("exact", tuple(lit("SELECT"), fc.constantFrom("0", "1", "0", "16", "x"))),
  c("exact", tuple(lit("SWAPDB"), fc.constantFrom("0", "1"), fc.constantFrom("0", "1", "2", "x"))),
  c("exact", fc.constantFrom(["DBSIZE"], ["PING"], ["PING", "hi"], ["ECHO", "x"], ["NOSUCHCOMMAND", "a"], ["GET"], ["FLUSHDB"])),
];

export const stringCommands = [
  c("exact", tuple(lit("GET"), k)),
  c(
    "exact",
    tuple(lit("SET"), k, value, fc.subarray(["NX", "XX", "GET", "KEEPTTL"], { maxLength: 2 }), maybe(fc.constantFrom("EX", "PX", "EXAT", "PXAT"), seconds)),
  ),
  c("exact", tuple(fc.constantFrom("SETNX", "GETSET", "APPEND"), k, value)),
  c("exact", tuple(fc.constantFrom("SETEX", "PSETEX"), k, seconds, value)),
  c("exact", tuple(fc.constantFrom("GETDEL", "STRLEN", "INCR", "DECR"), k)),
  c("exact", tuple(lit("GETEX"), k, maybe(fc.constantFrom("EX", "PX", "PERSIST", "EXAT")), maybe(seconds))),
  c("exact", tuple(lit("MGET"), keys)),
  c(
    "exact",
    tuple(
      fc.constantFrom("MSET", "MSETNX"),
      fc.array(fc.tuple(k, value), { minLength: 1, maxLength: 3 }).map((p) => p.flat()),
      maybe(k),
    ),
  ),
  c("exact", tuple(fc.constantFrom("INCRBY", "DECRBY"), k, int)),
  c("exact", tuple(lit("INCRBYFLOAT"), k, fc.oneof(float, int))),
  c("exact", tuple(fc.constantFrom("GETRANGE", "SUBSTR"), k, int, int)),
  c("exact", tuple(lit("SETRANGE"), k, fc.oneof(int, fc.constant("3")), value)),
  c("exact", tuple(lit("LCS"), k, k, fc.subarray(["LEN", "IDX", "WITHMATCHLEN"], { maxLength: 2 }), maybe(lit("MINMATCHLEN"), int))),
];

export const listCommands = [
  c("exact", tuple(fc.constantFrom("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), k, fc.array(member, { minLength: 1, maxLength: 4 }))),
  c("exact", tuple(fc.constantFrom("LPOP", "RPOP"), k, maybe(int))),
  c("exact", tuple(lit("LLEN"), k)),
  c("exact", tuple(lit("LRANGE"), k, int, int)),
  c("exact", tuple(lit("LINDEX"), k, int)),
  c("exact", tuple(lit("LSET"), k, int, member)),
  c("exact", tuple(lit("LINSERT"), k, fc.constantFrom("BEFORE", "AFTER", "after", "nope"), member, member)),
  c("exact", tuple(lit("LREM"), k, int, member)),
  c("exact", tuple(lit("LTRIM"), k, int, int)),
  c(
    "exact",
    tuple(
      lit("LPOS"),
      k,
      member,
      fc
        .subarray(
          [
            ["RANK", "-1"],
            ["RANK", "2"],
            ["COUNT", "0"],
            ["COUNT", "2"],
            ["MAXLEN", "3"],
            ["RANK", "0"],
            ["COUNT", "-1"],
          ],
          { maxLength: 2 },
        )
        .map((o) => o.flat()),
    ),
  ),
  c("exact", tuple(lit("LMOVE"), k, k, end, end)),
  c("exact", tuple(lit("RPOPLPUSH"), k, k)),
  c("exact", tuple(lit("LMPOP"), fc.constantFrom("1", "2", "0", "5"), k, k, end, maybe(lit("COUNT"), int))),
];

/** Blocking commands go only inside MULTI, where neither server blocks. */
function inMulti(command: fc.Arbitrary<string[]>): fc.Arbitrary<Generated[]> {
  return fc
    .array(command, { minLength: 1, maxLength: 3 })
    .map((commands) => [["MULTI"], ...commands, ["EXEC"]].map((argv) => ({ argv, compare: "exact" as Compare })));
}

export const blockingListCommands = inMulti(
  fc.oneof(
    tuple(fc.constantFrom("BLPOP", "BRPOP"), keys, fc.constantFrom("0", "0.01", "-1", "abc")),
    tuple(lit("BLMOVE"), k, k, end, end, fc.constantFrom("0", "0.01")),
    tuple(lit("BRPOPLPUSH"), k, k, lit("0")),
    tuple(lit("BLMPOP"), lit("0"), fc.constantFrom("1", "2"), k, k, end, maybe(lit("COUNT"), int)),
  ),
);

export const blockingZsetCommands = inMulti(
  fc.oneof(
    tuple(fc.constantFrom("BZPOPMIN", "BZPOPMAX"), keys, lit("0")),
    tuple(lit("BZMPOP"), lit("0"), fc.constantFrom("1", "2"), k, k, fc.constantFrom("MIN", "MAX", "mid"), maybe(lit("COUNT"), int)),
  ),
);

export const hashCommands = [
  c(
    "exact",
    tuple(
      fc.constantFrom("HSET", "HMSET"),
      k,
      fc.array(fc.tuple(member, value), { minLength: 1, maxLength: 3 }).map((p) => p.flat()),
      maybe(member),
    ),
  ),
  c("exact", tuple(lit("HSETNX"), k, member, value)),
  c("exact", tuple(fc.constantFrom("HGET", "HEXISTS", "HSTRLEN"), k, member)),
  c("exact", tuple(lit("HMGET"), k, fc.array(member, { minLength: 1, maxLength: 3 }))),
  c("exact", tuple(fc.constantFrom("HGETALL", "HKEYS", "HVALS", "HLEN"), k)),
  c("exact", tuple(lit("HDEL"), k, fc.array(member, { minLength: 1, maxLength: 3 }))),
  c("exact", tuple(lit("HINCRBY"), k, member, int)),
  // Increments stay small here: a 309-digit value turns a hash into a hashtable, whose order
  // (HGETALL, HSCAN) Redis does not define. INCRBYFLOAT covers the huge values.
  c("exact", tuple(lit("HINCRBYFLOAT"), k, member, fc.oneof(smallFloat, int))),
  c("shape", tuple(lit("HRANDFIELD"), k, maybe(fc.constantFrom("-3", "0", "abc"), maybe(lit("WITHVALUES"))))),
  c("unordered", tuple(lit("HRANDFIELD"), k, lit("100"))),
  c("exact", tuple(lit("HSCAN"), k, lit("0"), maybe(lit("MATCH"), fc.constantFrom("*", "a", "[ab]")), maybe(lit("COUNT"), fc.constantFrom("1", "0", "x")))),
];

export const setCommands = [
  c("exact", tuple(fc.constantFrom("SADD", "SREM"), k, fc.array(member, { minLength: 1, maxLength: 4 }))),
  c("unordered", tuple(lit("SMEMBERS"), k)),
  c("exact", tuple(lit("SISMEMBER"), k, member)),
  c("exact", tuple(lit("SMISMEMBER"), k, fc.array(member, { minLength: 1, maxLength: 3 }))),
  c("exact", tuple(lit("SCARD"), k)),
  c("unordered", tuple(lit("SPOP"), k, fc.constantFrom("100", "0", "-1", "abc"))),
  c("unordered", tuple(lit("SRANDMEMBER"), k, fc.constantFrom("100", "0", "abc"))),
  c("shape", tuple(lit("SRANDMEMBER"), k, maybe(fc.constantFrom("-3", "-1")))),
  c("exact", tuple(lit("SMOVE"), k, k, member)),
  c("unordered", tuple(fc.constantFrom("SINTER", "SUNION", "SDIFF"), keys)),
  c("exact", tuple(fc.constantFrom("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), k, keys)),
  c("exact", tuple(lit("SINTERCARD"), fc.constantFrom("1", "2", "0", "9"), keys, maybe(lit("LIMIT"), fc.constantFrom("0", "1", "-1")))),
  c("scan", tuple(lit("SSCAN"), k, lit("0"), maybe(lit("MATCH"), fc.constantFrom("*", "a", "1*")), lit("COUNT"), lit("1000"))),
];

export const zsetCommands = [
  c(
    "exact",
    tuple(
      lit("ZADD"),
      k,
      fc.subarray(["NX", "XX", "GT", "LT", "CH", "INCR"], { maxLength: 2 }),
      fc.array(fc.tuple(float, member), { minLength: 1, maxLength: 3 }).map((p) => p.flat()),
    ),
  ),
  // Many pairs at once (valid scores, or one bad score would refuse nearly all of them): a small
  // set then takes them in one repacking (zset/commands.ts).
  c(
    "exact",
    tuple(
      lit("ZADD"),
      k,
      fc.subarray(["NX", "CH", "XX"], { maxLength: 2 }),
      fc.array(fc.tuple(validFloat, member), { minLength: 36, maxLength: 48 }).map((p) => p.flat()),
    ),
  ),
  c("exact", tuple(lit("ZINCRBY"), k, float, member)),
  c("exact", tuple(lit("ZREM"), k, fc.array(member, { minLength: 1, maxLength: 3 }))),
  c("exact", tuple(lit("ZCARD"), k)),
  c("exact", tuple(lit("ZCOUNT"), k, scoreBound, scoreBound)),
  c("exact", tuple(fc.constantFrom("ZSCORE", "ZRANK", "ZREVRANK"), k, member)),
  c("exact", tuple(lit("ZMSCORE"), k, fc.array(member, { minLength: 1, maxLength: 3 }))),
  c("exact", tuple(lit("ZRANGE"), k, int, int, fc.subarray(["REV", "WITHSCORES"]))),
  c("exact", tuple(lit("ZRANGE"), k, scoreBound, scoreBound, lit("BYSCORE"), fc.subarray(["REV", "WITHSCORES"]), maybe(lit("LIMIT"), int, int))),
  c("exact", tuple(lit("ZRANGE"), k, lexBound, lexBound, lit("BYLEX"), fc.subarray(["REV", "WITHSCORES"]), maybe(lit("LIMIT"), int, int))),
  c("exact", tuple(fc.constantFrom("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), k, scoreBound, scoreBound, maybe(lit("WITHSCORES")), maybe(lit("LIMIT"), int, int))),
  c("exact", tuple(fc.constantFrom("ZRANGEBYLEX", "ZREVRANGEBYLEX"), k, lexBound, lexBound, maybe(lit("LIMIT"), int, int))),
  c("exact", tuple(lit("ZLEXCOUNT"), k, lexBound, lexBound)),
  c("exact", tuple(lit("ZRANGESTORE"), k, k, int, int, fc.subarray(["REV"]))),
  c("exact", tuple(fc.constantFrom("ZPOPMIN", "ZPOPMAX"), k, maybe(int))),
  c("exact", tuple(lit("ZMPOP"), fc.constantFrom("1", "2", "0"), k, k, fc.constantFrom("MIN", "MAX", "mid"), maybe(lit("COUNT"), int))),
  c("shape", tuple(lit("ZRANDMEMBER"), k, maybe(fc.constantFrom("-3", "0", "abc"), maybe(lit("WITHSCORES"))))),
  c("exact", tuple(lit("ZREMRANGEBYRANK"), k, int, int)),
  c("exact", tuple(lit("ZREMRANGEBYSCORE"), k, scoreBound, scoreBound)),
  c("exact", tuple(lit("ZREMRANGEBYLEX"), k, lexBound, lexBound)),
  c(
    "exact",
    tuple(
      fc.constantFrom("ZUNION", "ZINTER", "ZDIFF"),
      fc.constantFrom("1", "2", "0"),
      k,
      k,
      maybe(lit("WEIGHTS"), float, float),
      maybe(lit("AGGREGATE"), fc.constantFrom("SUM", "MIN", "MAX", "AVG")),
      maybe(lit("WITHSCORES")),
    ),
  ),
  c(
    "exact",
    tuple(
      fc.constantFrom("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"),
      k,
      fc.constantFrom("1", "2", "0"),
      k,
      k,
      maybe(lit("WEIGHTS"), float, float),
      maybe(lit("AGGREGATE"), fc.constantFrom("SUM", "MIN", "MAX")),
    ),
  ),
  c("exact", tuple(lit("ZINTERCARD"), fc.constantFrom("1", "2", "0"), k, k, maybe(lit("LIMIT"), fc.constantFrom("0", "1", "-1")))),
  c("exact", tuple(lit("ZSCAN"), k, lit("0"), maybe(lit("MATCH"), fc.constantFrom("*", "a", "[ab]")))),
];

export const transactionCommands = [
  c("exact", fc.constantFrom(["MULTI"], ["EXEC"], ["DISCARD"], ["UNWATCH"], ["MULTI"], ["EXEC"])),
  c("exact", tuple(lit("WATCH"), keys)),
];

/** A sequence of commands from the given families, with blocks (MULTI ... EXEC) mixed in. */
export function sequence(families: fc.Arbitrary<Generated>[], blocks: fc.Arbitrary<Generated[]>[] = [], maxLength = 30): fc.Arbitrary<Generated[]> {
  const single = fc.oneof(...families).map((g) => [g]);
  const parts = blocks.length === 0 ? single : fc.oneof({ weight: 12, arbitrary: single }, ...blocks.map((arbitrary) => ({ weight: 1, arbitrary })));
  return fc.array(parts, { minLength: 1, maxLength }).map((p) => p.flat());
}
