// Sorted set commands through the engine, with Redis 7.0's exact replies and errors (checked
// against redis-server 7.0.15).
// The data structures are tested on their own in zset.test.ts and btree.test.ts.
import { beforeEach, describe, expect, test } from "bun:test";
import { Session } from "../../../../src/kv/server/session.ts";
import { MemberSet } from "../../../../src/kv/types/set/member-set.ts";
import { Collector, type Harness, harness, type Plain } from "../../harness.ts";

let h: Harness;
const run = (...argv: (string | number)[]): Plain => h.run(...argv);
const err = (error: string) => ({ error });
const wrongType = err("WRONGTYPE Operation against a key holding the wrong kind of value");
const syntax = err("ERR syntax error");
const notInteger = err("ERR value is not an integer or out of range");

beforeEach(() => {
  h = harness();
});

/** A client that may block (it has a transport), driven through the engine like a connection. */
function blockingClient() {
  const collector = new Collector();
  const session = new Session(collector, { peer: "127.0.0.1:1", local: "127.0.0.1:2", flush() {}, close() {} });
  h.engine.register(session);
  return {
    session,
    replies: collector.values,
    send: (...argv: string[]) => h.engine.execute(session, argv),
  };
}

describe("ZADD", () => {
  test("adds, updates, and counts only new members", () => {
    expect(run("ZADD", "z", "1", "a", "2", "b")).toBe(2);
    expect(run("ZADD", "z", "3", "a", "4", "c")).toBe(1);
    expect(run("ZRANGE", "z", "0", "-1", "WITHSCORES")).toEqual(["b", "2", "a", "3", "c", "4"]);
    expect(run("ZADD", "z", "1", "x", "2", "x")).toBe(1);
    expect(run("ZSCORE", "z", "x")).toBe("2");
  });

  test("NX, XX, GT, LT and CH", () => {
    run("ZADD", "z", "5", "a");
    expect(run("ZADD", "z", "NX", "1", "a", "1", "b")).toBe(1);
    expect(run("ZSCORE", "z", "a")).toBe("5");
    expect(run("ZADD", "z", "XX", "CH", "6", "a", "1", "new")).toBe(1);
    expect(run("ZSCORE", "z", "new")).toBeNull();
    expect(run("ZADD", "z", "GT", "CH", "3", "a", "9", "b", "7", "c")).toBe(2); // b raised, c added
    expect(run("ZADD", "z", "LT", "CH", "10", "a", "0", "b")).toBe(1);
    expect(run("ZRANGE", "z", "0", "-1", "WITHSCORES")).toEqual(["b", "0", "a", "6", "c", "7"]);
    expect(run("ZADD", "z", "ch", "ch", "7", "c")).toBe(0);
    expect(run("ZADD", "z", "CH", "1", "q", "1", "q", "2", "q")).toBe(2); // added, then updated
  });

  test("INCR replies the new score, or nil when a condition stops it", () => {
    expect(run("ZADD", "z", "INCR", "1.5", "a")).toBe("1.5");
    expect(run("ZADD", "z", "INCR", "1", "a")).toBe("2.5");
    expect(run("ZADD", "z", "INCR", "GT", "-1", "a")).toBeNull();
    expect(run("ZADD", "z", "INCR", "GT", "0", "a")).toBeNull();
    expect(run("ZADD", "z", "INCR", "NX", "5", "a")).toBeNull();
    expect(run("ZADD", "z", "INCR", "XX", "5", "nope")).toBeNull();
    expect(run("ZADD", "nokey", "XX", "INCR", "1", "a")).toBeNull();
    expect(run("ZADD", "z", "INCR", "inf", "a")).toBe("inf");
    expect(run("ZADD", "z", "INCR", "-inf", "a")).toEqual(err("ERR resulting score is not a number (NaN)"));
    expect(run("ZSCORE", "z", "a")).toBe("inf");
  });

  test("option conflicts and argument errors, in Redis's order", () => {
    expect(run("ZADD", "z", "NX", "XX", "1", "a")).toEqual(err("ERR XX and NX options at the same time are not compatible"));
    expect(run("ZADD", "z", "NX", "XX", "abc", "a")).toEqual(err("ERR XX and NX options at the same time are not compatible"));
    for (const pair of [
      ["NX", "GT"],
      ["NX", "LT"],
      ["GT", "LT"],
    ]) {
      expect(run("ZADD", "z", ...pair, "1", "a")).toEqual(err("ERR GT, LT, and/or NX options at the same time are not compatible"));
    }
    expect(run("ZADD", "z", "INCR", "1", "a", "2", "b")).toEqual(err("ERR INCR option supports a single increment-element pair"));
    expect(run("ZADD", "z", "1", "a", "2")).toEqual(syntax);
    expect(run("ZADD", "z", "FOO", "1", "a")).toEqual(syntax);
    expect(run("ZADD", "z", "1")).toEqual(err("ERR wrong number of arguments for 'zadd' command"));
    expect(run("ZADD", "z", "1", "a", "abc", "b")).toEqual(err("ERR value is not a valid float"));
    expect(run("ZADD", "z", "nan", "a")).toEqual(err("ERR value is not a valid float"));
    expect(run("EXISTS", "z")).toBe(0);
    run("SET", "s", "x");
    expect(run("ZADD", "s", "1", "a")).toEqual(wrongType);
  });

  test("creating a key: a member named twice keeps its last score, or its first under NX, and CH counts the change (as redis-server 7.0.15)", () => {
    expect(run("ZADD", "a", "1", "m", "2", "m", "3", "n")).toBe(2);
    expect(run("ZRANGE", "a", "0", "-1", "WITHSCORES")).toEqual(["m", "2", "n", "3"]);
    expect(run("ZADD", "b", "NX", "1", "m", "2", "m")).toBe(1);
    expect(run("ZRANGE", "b", "0", "-1", "WITHSCORES")).toEqual(["m", "1"]);
    expect(run("ZADD", "c", "CH", "1", "m", "2", "m", "2", "m", "5", "n")).toBe(3);
    expect(run("ZADD", "d", "CH", "NX", "1", "m", "2", "m")).toBe(1);
    expect(run("ZADD", "e", "-0", "m")).toBe(1);
    expect(run("ZSCORE", "e", "m")).toBe("0");
    // Past what is packed, the same answers from the one-by-one path.
    const many = Array.from({ length: 130 }, (_, i) => [String(i % 7), `m${i}`]).flat();
    expect(run("ZADD", "f", ...many, "9", "m0")).toBe(130);
    expect(run("ZSCORE", "f", "m0")).toBe("9");
    expect(run("OBJECT", "ENCODING", "f")).toBe("skiplist");
    expect(run("OBJECT", "ENCODING", "a")).toBe("listpack");
  });

  test("creating a key from many pairs at once (packed in one go) or from the same pairs one ZADD each (inserted) gives the same set", () => {
    // Forty pairs naming twelve members, in one ZADD that makes the key (packed in one go), and one ZADD each.
    const pairs = Array.from({ length: 40 }, (_, i) => [String(i % 5), `m${i % 12}`, "-0", `z${i % 3}`]).flat();
    // CH counts the 15 members added and each of the 28 later pairs that changed a score (redis-server 7.0.15: 43).
    expect(run("ZADD", "whole", "CH", ...pairs)).toBe(43);
    for (let i = 0; i < pairs.length; i += 2) run("ZADD", "each", pairs[i]!, pairs[i + 1]!);
    expect(run("ZRANGE", "whole", "0", "-1", "WITHSCORES")).toEqual(run("ZRANGE", "each", "0", "-1", "WITHSCORES"));
    expect(run("ZSCORE", "whole", "z0")).toBe("0");
    expect(run("OBJECT", "ENCODING", "whole")).toBe("listpack");
    expect(run("OBJECT", "ENCODING", "each")).toBe("listpack");
  });

  test("many pairs into a small set, packed in one go: Redis's counts and scores, NX and CH included (as redis-server 7.0.15)", () => {
    // Forty pairs naming twelve members, each named three or four times with different scores.
    const pairs = Array.from({ length: 40 }, (_, i) => [String(i % 5), `m${i % 12}`]).flat();
    run("ZADD", "g", "1", "a", "2", "b", "3", "c");
    expect(run("ZADD", "g", "CH", ...pairs, "9", "a")).toBe(41);
    expect(run("ZRANGE", "g", "0", "-1", "WITHSCORES")).toEqual([
      "m11",
      "0",
      "m6",
      "0",
      "m0",
      "1",
      "m7",
      "1",
      "b",
      "2",
      "m1",
      "2",
      "m8",
      "2",
      "c",
      "3",
      "m2",
      "3",
      "m4",
      "3",
      "m9",
      "3",
      "m10",
      "4",
      "m3",
      "4",
      "m5",
      "4",
      "a",
      "9",
    ]);
    expect(run("OBJECT", "ENCODING", "g")).toBe("listpack");
    run("ZADD", "h", "1", "a", "2", "b");
    expect(run("ZADD", "h", "NX", "CH", ...pairs, "7", "a", "8", "m1")).toBe(12);
    expect(run("ZRANGE", "h", "0", "-1", "WITHSCORES")).toEqual([
      "m0",
      "0",
      "m10",
      "0",
      "m5",
      "0",
      "a",
      "1",
      "m1",
      "1",
      "m11",
      "1",
      "m6",
      "1",
      "b",
      "2",
      "m2",
      "2",
      "m7",
      "2",
      "m3",
      "3",
      "m8",
      "3",
      "m4",
      "4",
      "m9",
      "4",
    ]);
    // A member too long for a listpack: the set leaves it, and every pair still lands.
    run("ZADD", "l", "1", "a");
    expect(run("ZADD", "l", ...pairs, "5", "x".repeat(65))).toBe(13);
    expect(run("OBJECT", "ENCODING", "l")).toBe("skiplist");
    expect(run("ZCARD", "l")).toBe(14);
    expect(run("ZSCORE", "l", "m0")).toBe("1");
  });

  test("XX on a missing key creates nothing", () => {
    expect(run("ZADD", "nokey", "XX", "1", "a")).toBe(0);
    expect(run("EXISTS", "nokey")).toBe(0);
  });

  test("scores: float syntax, infinities and %.17g replies", () => {
    expect(run("ZADD", "z", "0x10", "hex", "1e3", "e", "+inf", "p", "-inf", "m", "1.1", "f")).toBe(5);
    expect(run("ZRANGE", "z", "0", "-1", "WITHSCORES")).toEqual(["m", "-inf", "f", "1.1000000000000001", "hex", "16", "e", "1000", "p", "inf"]);
    expect(run("ZADD", "z", "1e400", "big")).toEqual(err("ERR value is not a valid float"));
    expect(run("ZADD", "z", " 1", "sp")).toEqual(err("ERR value is not a valid float"));
  });
});

describe("ZINCRBY", () => {
  test("increments, creating key and member", () => {
    expect(run("ZINCRBY", "z", "1.1", "q")).toBe("1.1000000000000001");
    expect(run("ZINCRBY", "z", "1.1", "q")).toBe("2.2000000000000002");
    expect(run("ZINCRBY", "z", "1e308", "c")).toBe("1e+308");
    expect(run("ZINCRBY", "z", "1e308", "c")).toBe("inf");
  });

  test("errors", () => {
    run("ZADD", "z", "inf", "a");
    expect(run("ZINCRBY", "z", "-inf", "a")).toEqual(err("ERR resulting score is not a number (NaN)"));
    expect(run("ZINCRBY", "z", "abc", "a")).toEqual(err("ERR value is not a valid float"));
    expect(run("ZINCRBY", "z", "1")).toEqual(err("ERR wrong number of arguments for 'zincrby' command"));
  });
});

describe("reads", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    run("SET", "s", "x");
  });

  test("ZCARD, ZSCORE, ZMSCORE", () => {
    expect(run("ZCARD", "z")).toBe(3);
    expect(run("ZCARD", "nokey")).toBe(0);
    expect(run("ZCARD", "s")).toEqual(wrongType);
    expect(run("ZSCORE", "z", "b")).toBe("2");
    expect(run("ZSCORE", "z", "nope")).toBeNull();
    expect(run("ZSCORE", "nokey", "a")).toBeNull();
    expect(run("ZSCORE", "s", "a")).toEqual(wrongType);
    expect(run("ZMSCORE", "z", "a", "nope", "c")).toEqual(["1", null, "3"]);
    expect(run("ZMSCORE", "nokey", "a", "b")).toEqual([null, null]);
    expect(run("ZMSCORE", "s", "a")).toEqual(wrongType);
  });

  test("ZRANK and ZREVRANK", () => {
    expect(run("ZRANK", "z", "a")).toBe(0);
    expect(run("ZRANK", "z", "c")).toBe(2);
    expect(run("ZREVRANK", "z", "a")).toBe(2);
    expect(run("ZRANK", "z", "nope")).toBeNull();
    expect(run("ZRANK", "nokey", "a")).toBeNull();
    expect(run("ZRANK", "s", "a")).toEqual(wrongType);
    expect(run("ZRANK", "z", "a", "WITHSCORE")).toEqual(err("ERR wrong number of arguments for 'zrank' command"));
  });

  test("ZCOUNT with Redis's score range syntax", () => {
    expect(run("ZCOUNT", "z", "-inf", "+inf")).toBe(3);
    expect(run("ZCOUNT", "z", "(1", "3")).toBe(2);
    expect(run("ZCOUNT", "z", "(1", "(3")).toBe(1);
    expect(run("ZCOUNT", "z", "3", "1")).toBe(0);
    expect(run("ZCOUNT", "z", "2", "(2")).toBe(0);
    // strtod's laxness: empty is 0, leading spaces and overflow are fine.
    expect(run("ZCOUNT", "z", "", "+inf")).toBe(3);
    expect(run("ZCOUNT", "z", " 2", "+inf")).toBe(2);
    expect(run("ZCOUNT", "z", "1e400", "+inf")).toBe(0);
    expect(run("ZCOUNT", "z", "0x1p1", "+inf")).toBe(2);
    for (const bad of ["nan", "abc", "1 ", "(x"]) expect(run("ZCOUNT", "z", bad, "+inf")).toEqual(err("ERR min or max is not a float"));
    // The range is checked before the key.
    expect(run("ZCOUNT", "s", "a", "b")).toEqual(err("ERR min or max is not a float"));
    expect(run("ZCOUNT", "s", "1", "2")).toEqual(wrongType);
    expect(run("ZCOUNT", "nokey", "1", "2")).toBe(0);
  });

  test("ZLEXCOUNT", () => {
    run("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d");
    expect(run("ZLEXCOUNT", "l", "-", "+")).toBe(4);
    expect(run("ZLEXCOUNT", "l", "[b", "(d")).toBe(2);
    expect(run("ZLEXCOUNT", "l", "+", "-")).toBe(0);
    expect(run("ZLEXCOUNT", "l", "-", "x")).toEqual(err("ERR min or max not valid string range item"));
    expect(run("ZLEXCOUNT", "nokey", "a", "b")).toEqual(err("ERR min or max not valid string range item"));
    expect(run("ZLEXCOUNT", "nokey", "-", "+")).toBe(0);
    expect(run("ZLEXCOUNT", "s", "-", "+")).toEqual(wrongType);
  });
});

describe("ZRANGE and friends", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e");
    run("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e");
    run("SET", "s", "x");
  });

  test("by rank", () => {
    expect(run("ZRANGE", "z", "0", "-1")).toEqual(["a", "b", "c", "d", "e"]);
    expect(run("ZRANGE", "z", "-2", "-1", "WITHSCORES")).toEqual(["d", "4", "e", "5"]);
    expect(run("ZRANGE", "z", "-100", "1")).toEqual(["a", "b"]);
    expect(run("ZRANGE", "z", "2", "1")).toEqual([]);
    expect(run("ZRANGE", "z", "5", "10")).toEqual([]);
    expect(run("ZRANGE", "z", "0", "1", "REV", "WITHSCORES")).toEqual(["e", "5", "d", "4"]);
    expect(run("ZREVRANGE", "z", "0", "1")).toEqual(["e", "d"]);
    expect(run("ZRANGE", "nokey", "0", "-1")).toEqual([]);
    expect(run("ZRANGE", "s", "0", "-1")).toEqual(wrongType);
    expect(run("ZRANGE", "z", "a", "b")).toEqual(notInteger);
  });

  test("by score, with LIMIT", () => {
    expect(run("ZRANGE", "z", "(1", "3", "BYSCORE", "WITHSCORES")).toEqual(["b", "2", "c", "3"]);
    expect(run("ZRANGE", "z", "3", "(1", "BYSCORE", "REV")).toEqual(["c", "b"]);
    expect(run("ZRANGE", "z", "(1", "3", "BYSCORE", "REV")).toEqual([]);
    expect(run("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2")).toEqual(["b", "c"]);
    expect(run("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2")).toEqual(["d", "c"]);
    expect(run("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2")).toEqual([]);
    expect(run("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "3", "-5")).toEqual(["d", "e"]);
    expect(run("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", "4", "0")).toEqual([]);
    expect(run("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "1", "1")).toEqual(["b", "2"]);
    expect(run("ZRANGEBYSCORE", "z", "+inf", "-inf")).toEqual([]);
    expect(run("ZREVRANGEBYSCORE", "z", "4", "(2")).toEqual(["d", "c"]);
    expect(run("ZREVRANGEBYSCORE", "z", "-inf", "+inf")).toEqual([]);
  });

  test("by lex", () => {
    expect(run("ZRANGEBYLEX", "l", "[b", "(d")).toEqual(["b", "c"]);
    expect(run("ZRANGEBYLEX", "l", "+", "-")).toEqual([]);
    expect(run("ZRANGEBYLEX", "l", "(b", "(b")).toEqual([]);
    expect(run("ZRANGEBYLEX", "l", "[b", "[b")).toEqual(["b"]);
    expect(run("ZRANGEBYLEX", "l", "-", "+", "LIMIT", "1", "2")).toEqual(["b", "c"]);
    expect(run("ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "1", "2")).toEqual(["d", "c"]);
    expect(run("ZRANGE", "l", "+", "-", "BYLEX", "REV", "LIMIT", "1", "2")).toEqual(["d", "c"]);
    for (const bad of ["b", "", "--", "++"]) expect(run("ZRANGEBYLEX", "l", bad, "+")).toEqual(err("ERR min or max not valid string range item"));
  });

  test("option errors", () => {
    expect(run("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1")).toEqual(
      err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"),
    );
    expect(run("ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1")).toEqual(["a", "b", "c", "d", "e"]); // Redis checks the value
    expect(run("ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES")).toEqual(err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    expect(run("ZRANGEBYLEX", "l", "-", "+", "WITHSCORES")).toEqual(err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    expect(run("ZRANGE", "z", "0", "-1", "REV", "REV")).toEqual(syntax);
    expect(run("ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX")).toEqual(syntax);
    expect(run("ZRANGE", "z", "0", "-1", "LIMIT", "1")).toEqual(syntax);
    expect(run("ZRANGE", "z", "0", "-1", "LIMIT", "a", "b", "REV")).toEqual(notInteger);
    expect(run("ZRANGE", "z", "a", "b", "BYSCORE")).toEqual(err("ERR min or max is not a float"));
    expect(run("ZRANGEBYSCORE", "z", "0", "1", "REV")).toEqual(syntax);
    expect(run("ZREVRANGE", "z", "0", "1", "REV")).toEqual(syntax);
    expect(run("ZREVRANGEBYSCORE", "z", "4", "2", "BYLEX")).toEqual(syntax);
    expect(run("ZRANGE", "s", "0", "-1", "FOO")).toEqual(syntax);
  });
});

describe("ZRANGESTORE", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d");
  });

  test("stores the range and replies its size", () => {
    expect(run("ZRANGESTORE", "d", "z", "1", "2")).toBe(2);
    expect(run("ZRANGE", "d", "0", "-1", "WITHSCORES")).toEqual(["b", "2", "c", "3"]);
    expect(run("ZRANGESTORE", "d", "z", "(1", "+inf", "BYSCORE", "LIMIT", "1", "5")).toBe(2);
    expect(run("ZRANGE", "d", "0", "-1")).toEqual(["c", "d"]);
    expect(run("ZRANGESTORE", "d", "z", "0", "0", "REV")).toBe(1);
    expect(run("ZRANGE", "d", "0", "-1")).toEqual(["d"]);
    expect(run("ZRANGESTORE", "z", "z", "1", "2")).toBe(2);
    expect(run("ZRANGE", "z", "0", "-1")).toEqual(["b", "c"]);
  });

  test("an empty result deletes the destination; the destination's type does not matter", () => {
    run("SET", "d", "x");
    expect(run("ZRANGESTORE", "d", "z", "0", "0")).toBe(1);
    expect(run("TYPE", "d")).toBe("zset");
    expect(run("ZRANGESTORE", "d", "z", "5", "10")).toBe(0);
    expect(run("EXISTS", "d")).toBe(0);
    run("ZADD", "d", "1", "a");
    expect(run("ZRANGESTORE", "d", "nokey", "0", "-1")).toBe(0);
    expect(run("EXISTS", "d")).toBe(0);
  });

  test("errors", () => {
    run("SET", "s", "x");
    expect(run("ZRANGESTORE", "d", "s", "0", "-1")).toEqual(wrongType);
    expect(run("ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES")).toEqual(syntax);
  });
});

describe("removing ranges and members", () => {
  beforeEach(() => {
    run("SET", "s", "x");
  });

  test("ZREM removes and deletes an emptied key", () => {
    run("ZADD", "z", "1", "a", "2", "b");
    expect(run("ZREM", "z", "a", "nope", "a")).toBe(1);
    expect(run("ZREM", "z", "b")).toBe(1);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZREM", "nokey", "a")).toBe(0);
    expect(run("ZREM", "s", "a")).toEqual(wrongType);
  });

  test("ZREMRANGEBYRANK", () => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e");
    expect(run("ZREMRANGEBYRANK", "z", "1", "2")).toBe(2);
    expect(run("ZRANGE", "z", "0", "-1")).toEqual(["a", "d", "e"]);
    expect(run("ZREMRANGEBYRANK", "z", "5", "10")).toBe(0);
    expect(run("ZREMRANGEBYRANK", "z", "-1", "-1")).toBe(1);
    expect(run("ZREMRANGEBYRANK", "z", "a", "1")).toEqual(notInteger);
    expect(run("ZREMRANGEBYRANK", "z", "0", "-1")).toBe(2);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZREMRANGEBYRANK", "s", "0", "-1")).toEqual(wrongType);
  });

  test("ZREMRANGEBYSCORE", () => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d");
    expect(run("ZREMRANGEBYSCORE", "z", "(1", "3")).toBe(2);
    expect(run("ZRANGE", "z", "0", "-1", "WITHSCORES")).toEqual(["a", "1", "d", "4"]);
    expect(run("ZREMRANGEBYSCORE", "z", "-inf", "+inf")).toBe(2);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZREMRANGEBYSCORE", "nokey", "a", "b")).toEqual(err("ERR min or max is not a float"));
    expect(run("ZREMRANGEBYSCORE", "nokey", "1", "2")).toBe(0);
    expect(run("ZREMRANGEBYSCORE", "s", "1", "2")).toEqual(wrongType);
  });

  test("ZREMRANGEBYLEX", () => {
    run("ZADD", "z", "0", "a", "0", "b", "0", "c", "0", "d");
    expect(run("ZREMRANGEBYLEX", "z", "(a", "[c")).toBe(2);
    expect(run("ZRANGE", "z", "0", "-1")).toEqual(["a", "d"]);
    expect(run("ZREMRANGEBYLEX", "z", "-", "+")).toBe(2);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZREMRANGEBYLEX", "nokey", "a", "b")).toEqual(err("ERR min or max not valid string range item"));
    expect(run("ZREMRANGEBYLEX", "s", "-", "+")).toEqual(wrongType);
  });
});

describe("popping", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e");
    run("SET", "s", "x");
  });

  test("ZPOPMIN and ZPOPMAX", () => {
    expect(run("ZPOPMIN", "z")).toEqual(["a", "1"]);
    expect(run("ZPOPMAX", "z")).toEqual(["e", "5"]);
    expect(run("ZPOPMIN", "z", "2")).toEqual(["b", "2", "c", "3"]);
    expect(run("ZPOPMAX", "z", "0")).toEqual([]);
    expect(run("ZPOPMAX", "z", "10")).toEqual(["d", "4"]);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZPOPMIN", "nokey")).toEqual([]);
    expect(run("ZPOPMIN", "nokey", "2")).toEqual([]);
  });

  test("ZPOPMIN errors", () => {
    expect(run("ZPOPMIN", "z", "-1")).toEqual(err("ERR value is out of range, must be positive"));
    expect(run("ZPOPMIN", "z", "abc")).toEqual(err("ERR value is out of range, must be positive"));
    expect(run("ZPOPMIN", "z", "1", "2")).toEqual(syntax);
    expect(run("ZPOPMIN", "s")).toEqual(wrongType);
    expect(run("ZPOPMIN", "s", "0")).toEqual(wrongType);
  });

  test("ZMPOP", () => {
    expect(run("ZMPOP", "2", "nokey", "z", "MIN", "COUNT", "2")).toEqual([
      "z",
      [
        ["a", "1"],
        ["b", "2"],
      ],
    ]);
    expect(run("ZMPOP", "1", "z", "max")).toEqual(["z", [["e", "5"]]]);
    expect(run("ZMPOP", "1", "z", "MIN", "COUNT", "10")).toEqual([
      "z",
      [
        ["c", "3"],
        ["d", "4"],
      ],
    ]);
    expect(run("EXISTS", "z")).toBe(0);
    expect(run("ZMPOP", "1", "nokey", "MIN")).toBeNull();
  });

  test("ZMPOP errors", () => {
    expect(run("ZMPOP", "abc", "z", "MIN")).toEqual(err("ERR numkeys should be greater than 0"));
    expect(run("ZMPOP", "0", "z", "MIN")).toEqual(err("ERR numkeys should be greater than 0"));
    expect(run("ZMPOP", "2", "z", "MIN")).toEqual(syntax);
    expect(run("ZMPOP", "1", "z", "FOO")).toEqual(syntax);
    expect(run("ZMPOP", "1", "z", "MIN", "COUNT", "0")).toEqual(err("ERR count should be greater than 0"));
    expect(run("ZMPOP", "1", "z", "MIN", "COUNT", "abc")).toEqual(err("ERR count should be greater than 0"));
    expect(run("ZMPOP", "1", "z", "MIN", "COUNT", "1", "COUNT", "2")).toEqual(syntax);
    expect(run("ZMPOP", "1", "z", "MIN", "COUNT")).toEqual(syntax);
    // Keys are looked at in order: a wrong type before the first sorted set is an error.
    expect(run("ZMPOP", "2", "nokey", "s", "MIN")).toEqual(wrongType);
    expect(run("ZMPOP", "2", "z", "s", "MIN")).toEqual(["z", [["a", "1"]]]);
  });
});

describe("blocking pops", () => {
  beforeEach(() => {
    run("SET", "s", "x");
  });

  test("serve at once when a key has elements", () => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    expect(run("BZPOPMIN", "nokey", "z", "0")).toEqual(["z", "a", "1"]);
    expect(run("BZPOPMAX", "z", "0")).toEqual(["z", "c", "3"]);
    expect(run("BZMPOP", "0", "2", "nokey", "z", "MAX", "COUNT", "5")).toEqual(["z", [["b", "2"]]]);
    expect(run("EXISTS", "z")).toBe(0);
  });

  test("answer a null array at once where they cannot block (no connection, MULTI)", () => {
    expect(run("BZPOPMIN", "nokey", "0")).toBeNull();
    expect(run("BZMPOP", "0", "1", "nokey", "MIN")).toBeNull();
  });

  test("errors: timeout first for BZPOPMIN; numkeys, MIN|MAX and COUNT before the timeout for BZMPOP", () => {
    expect(run("BZPOPMIN", "s", "0")).toEqual(wrongType);
    expect(run("BZPOPMIN", "nokey", "s", "0")).toEqual(wrongType);
    expect(run("BZPOPMIN", "s", "abc")).toEqual(err("ERR timeout is not a float or out of range"));
    expect(run("BZPOPMIN", "z", "-1")).toEqual(err("ERR timeout is negative"));
    expect(run("BZMPOP", "abc", "1", "z", "MAX")).toEqual(err("ERR timeout is not a float or out of range"));
    expect(run("BZMPOP", "abc", "0", "z", "MAX")).toEqual(err("ERR numkeys should be greater than 0"));
    expect(run("BZMPOP", "-1", "1", "z", "FOO")).toEqual(syntax);
    expect(run("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0")).toEqual(err("ERR count should be greater than 0"));
    expect(run("BZMPOP", "0", "1", "s", "MIN")).toEqual(wrongType);
  });

  test("a blocked client is served when the key gets elements, and not by another type", () => {
    const client = blockingClient();
    client.send("BZPOPMIN", "q1", "q2", "0");
    expect(client.session.blocked).not.toBeNull();
    run("SET", "q1", "string");
    expect(client.replies).toEqual([]);
    run("ZADD", "q2", "2", "b", "1", "a");
    expect(client.replies).toEqual([["q2", "a", "1"]]);
    expect(client.session.blocked).toBeNull();
    expect(run("ZRANGE", "q2", "0", "-1")).toEqual(["b"]);
  });

  test("BZMPOP blocks and pops up to COUNT", () => {
    const client = blockingClient();
    client.send("BZMPOP", "0", "1", "q", "MAX", "COUNT", "2");
    expect(client.replies).toEqual([]);
    run("ZADD", "q", "1", "a", "2", "b", "3", "c");
    expect(client.replies).toEqual([
      [
        "q",
        [
          ["c", "3"],
          ["b", "2"],
        ],
      ],
    ]);
    expect(run("ZCARD", "q")).toBe(1);
  });
});

describe("ZRANDMEMBER", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    run("SET", "s", "x");
  });

  test("one member, or nil", () => {
    expect(["a", "b", "c"]).toContain(run("ZRANDMEMBER", "z") as string);
    expect(run("ZRANDMEMBER", "nokey")).toBeNull();
    expect(run("ZRANDMEMBER", "s")).toEqual(wrongType);
  });

  test("positive counts give distinct members; at least the size gives all, highest first", () => {
    expect(run("ZRANDMEMBER", "z", "5", "WITHSCORES")).toEqual(["c", "3", "b", "2", "a", "1"]);
    expect(run("ZRANDMEMBER", "z", "9223372036854775807")).toEqual(["c", "b", "a"]);
    const two = run("ZRANDMEMBER", "z", "2") as string[];
    expect(two).toHaveLength(2);
    expect(new Set(two).size).toBe(2);
    const withScores = run("ZRANDMEMBER", "z", "2", "WITHSCORES") as string[];
    expect(withScores).toHaveLength(4);
    expect(run("ZSCORE", "z", withScores[0]!)).toBe(withScores[1]!);
  });

  test("negative counts may repeat", () => {
    const picks = run("ZRANDMEMBER", "z", "-20") as string[];
    expect(picks).toHaveLength(20);
    for (const m of picks) expect(["a", "b", "c"]).toContain(m);
    expect(run("ZRANDMEMBER", "z", "-2", "WITHSCORES")).toHaveLength(4);
  });

  test("zero, missing keys, errors", () => {
    expect(run("ZRANDMEMBER", "z", "0")).toEqual([]);
    expect(run("ZRANDMEMBER", "nokey", "3")).toEqual([]);
    expect(run("ZRANDMEMBER", "s", "0")).toEqual(wrongType);
    expect(run("ZRANDMEMBER", "s", "abc")).toEqual(notInteger);
    expect(run("ZRANDMEMBER", "s", "2", "foo")).toEqual(syntax);
    expect(run("ZRANDMEMBER", "z", "1", "WITHSCORES", "x")).toEqual(syntax);
    expect(run("ZRANDMEMBER", "z", "-9223372036854775808")).toEqual(
      err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"),
    );
    expect(run("ZRANDMEMBER", "z", "9223372036854775808")).toEqual(notInteger);
    expect(run("ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES")).toEqual(err("ERR value is out of range"));
    expect(run("ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES")).toEqual(err("ERR value is out of range"));
  });
});

describe("ZUNION, ZINTER, ZDIFF", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    run("ZADD", "y", "10", "b", "20", "c", "30", "d");
    run("SET", "s", "x");
  });

  test("union, intersection and difference with scores", () => {
    expect(run("ZUNION", "2", "z", "y", "WITHSCORES")).toEqual(["a", "1", "b", "12", "c", "23", "d", "30"]);
    expect(run("ZINTER", "2", "z", "y", "WITHSCORES")).toEqual(["b", "12", "c", "23"]);
    expect(run("ZINTER", "2", "z", "y")).toEqual(["b", "c"]);
    expect(run("ZDIFF", "2", "z", "y", "WITHSCORES")).toEqual(["a", "1"]);
    expect(run("ZDIFF", "2", "y", "z")).toEqual(["d"]);
    expect(run("ZUNION", "2", "nokey", "nokey2")).toEqual([]);
    expect(run("ZINTER", "2", "nokey", "z")).toEqual([]);
  });

  test("WEIGHTS and AGGREGATE", () => {
    expect(run("ZUNION", "2", "z", "y", "WEIGHTS", "2", "0.5", "WITHSCORES")).toEqual(["a", "2", "b", "9", "d", "15", "c", "16"]);
    expect(run("ZUNION", "2", "z", "y", "AGGREGATE", "MIN", "WITHSCORES")).toEqual(["a", "1", "b", "2", "c", "3", "d", "30"]);
    expect(run("ZINTER", "2", "z", "y", "AGGREGATE", "max", "WITHSCORES")).toEqual(["b", "10", "c", "20"]);
    expect(run("ZINTER", "2", "z", "y", "WEIGHTS", "1", "-1", "AGGREGATE", "SUM", "WITHSCORES")).toEqual(["c", "-17", "b", "-8"]);
  });

  test("infinities: inf + -inf sums to 0, weight 0 times inf is 0", () => {
    run("ZADD", "pinf", "inf", "a");
    run("ZADD", "minf", "-inf", "a");
    expect(run("ZUNION", "2", "pinf", "minf", "WITHSCORES")).toEqual(["a", "0"]);
    expect(run("ZUNION", "2", "pinf", "minf", "WEIGHTS", "0", "1", "WITHSCORES")).toEqual(["a", "-inf"]);
    expect(run("ZINTER", "2", "pinf", "minf", "WEIGHTS", "0", "1", "AGGREGATE", "MAX", "WITHSCORES")).toEqual(["a", "0"]);
  });

  test("sums are added smallest input first, as in Redis", () => {
    run("ZADD", "w1", "0.1", "a");
    run("ZADD", "w2", "0.2", "a", "1", "b");
    run("ZADD", "w3", "0.3", "a", "1", "b", "2", "c");
    // (0.1 + 0.2) + 0.3, whichever order the keys are named in.
    expect(run("ZUNION", "3", "w3", "w2", "w1", "WITHSCORES")).toEqual(["a", "0.60000000000000009", "b", "2", "c", "2"]);
    expect(run("ZINTER", "3", "w3", "w2", "w1", "WITHSCORES")).toEqual(["a", "0.60000000000000009"]);
  });

  test("plain sets count as score 1", () => {
    h.engine.dbs[0]!.set("st", new MemberSet(["a", "x"]));
    expect(run("ZUNION", "2", "z", "st", "WITHSCORES")).toEqual(["x", "1", "a", "2", "b", "2", "c", "3"]);
    expect(run("ZINTER", "2", "z", "st", "WITHSCORES")).toEqual(["a", "2"]);
    expect(run("ZDIFF", "2", "st", "z", "WITHSCORES")).toEqual(["x", "1"]);
    expect(run("ZINTERCARD", "2", "z", "st")).toBe(1);
  });

  test("errors", () => {
    for (const name of ["ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"]) {
      expect(run(name, "0", "z")).toEqual(err(`ERR at least 1 input key is needed for '${name.toLowerCase()}' command`));
    }
    expect(run("ZUNION", "-1", "z")).toEqual(err("ERR at least 1 input key is needed for 'zunion' command"));
    expect(run("ZUNION", "abc", "z")).toEqual(notInteger);
    expect(run("ZUNION", "3", "z", "y")).toEqual(syntax);
    expect(run("ZUNION", "1", "z", "WEIGHTS", "1", "2")).toEqual(syntax);
    expect(run("ZUNION", "1", "z", "WEIGHTS", "x")).toEqual(err("ERR weight value is not a float"));
    expect(run("ZUNION", "1", "z", "WEIGHTS")).toEqual(syntax);
    expect(run("ZUNION", "1", "z", "AGGREGATE", "foo")).toEqual(syntax);
    expect(run("ZUNION", "1", "z", "AGGREGATE")).toEqual(syntax);
    expect(run("ZDIFF", "1", "z", "WEIGHTS", "1")).toEqual(syntax);
    expect(run("ZDIFF", "1", "z", "AGGREGATE", "MIN")).toEqual(syntax);
    // Input types are checked before the options.
    expect(run("ZUNION", "1", "s")).toEqual(wrongType);
    expect(run("ZUNION", "1", "s", "WEIGHTS", "x")).toEqual(wrongType);
    expect(run("ZUNION", "1", "z", "WITHSCORES", "WITHSCORES")).toEqual(["a", "1", "b", "2", "c", "3"]);
  });
});

describe("ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE", () => {
  beforeEach(() => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    run("ZADD", "y", "10", "b", "20", "c", "30", "d");
  });

  test("store results and reply their size", () => {
    expect(run("ZUNIONSTORE", "out", "2", "z", "y", "WEIGHTS", "1", "2")).toBe(4);
    expect(run("ZRANGE", "out", "0", "-1", "WITHSCORES")).toEqual(["a", "1", "b", "22", "c", "43", "d", "60"]);
    expect(run("ZINTERSTORE", "out", "2", "z", "y", "AGGREGATE", "MIN")).toBe(2);
    expect(run("ZRANGE", "out", "0", "-1", "WITHSCORES")).toEqual(["b", "2", "c", "3"]);
    expect(run("ZDIFFSTORE", "out", "2", "y", "z")).toBe(1);
    expect(run("ZRANGE", "out", "0", "-1", "WITHSCORES")).toEqual(["d", "30"]);
    expect(run("ZUNIONSTORE", "z", "2", "z", "y")).toBe(4);
    expect(run("ZSCORE", "z", "c")).toBe("23");
  });

  test("an empty result deletes the destination", () => {
    run("SET", "out", "x");
    expect(run("ZINTERSTORE", "out", "2", "z", "nokey")).toBe(0);
    expect(run("EXISTS", "out")).toBe(0);
    run("ZADD", "out", "1", "a");
    expect(run("ZDIFFSTORE", "out", "2", "z", "z")).toBe(0);
    expect(run("EXISTS", "out")).toBe(0);
  });

  test("errors", () => {
    expect(run("ZUNIONSTORE", "out", "0", "z")).toEqual(err("ERR at least 1 input key is needed for 'zunionstore' command"));
    expect(run("ZINTERSTORE", "out", "-1", "z")).toEqual(err("ERR at least 1 input key is needed for 'zinterstore' command"));
    expect(run("ZDIFFSTORE", "out", "0", "z")).toEqual(err("ERR at least 1 input key is needed for 'zdiffstore' command"));
    expect(run("ZUNIONSTORE", "out", "1", "z", "WITHSCORES")).toEqual(syntax);
    expect(run("ZUNIONSTORE", "out", "2", "z")).toEqual(syntax);
  });

  test("a sum of +inf and -inf is 0", () => {
    run("ZADD", "pinf", "inf", "a");
    run("ZADD", "minf", "-inf", "a");
    expect(run("ZUNIONSTORE", "out", "2", "pinf", "minf")).toBe(1);
    expect(run("ZSCORE", "out", "a")).toBe("0");
  });
});

describe("ZINTERCARD", () => {
  test("counts, with LIMIT", () => {
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
    run("ZADD", "y", "1", "b", "2", "c", "3", "d");
    expect(run("ZINTERCARD", "2", "z", "y")).toBe(2);
    expect(run("ZINTERCARD", "2", "z", "y", "LIMIT", "1")).toBe(1);
    expect(run("ZINTERCARD", "2", "z", "y", "LIMIT", "0")).toBe(2);
    expect(run("ZINTERCARD", "2", "z", "nokey")).toBe(0);
    expect(run("ZINTERCARD", "1", "z", "LIMIT", "-1")).toEqual(err("ERR LIMIT can't be negative"));
    expect(run("ZINTERCARD", "1", "z", "LIMIT", "abc")).toEqual(err("ERR LIMIT can't be negative"));
    expect(run("ZINTERCARD", "1", "z", "WITHSCORES")).toEqual(syntax);
    expect(run("ZINTERCARD", "1", "z", "WEIGHTS", "1")).toEqual(syntax);
  });
});

describe("ZSCAN", () => {
  test("a small set comes whole, in order, with cursor 0", () => {
    run("ZADD", "z", "1.1", "a", "2", "b", "3", "c", "5", "a b");
    expect(run("ZSCAN", "z", "0")).toEqual(["0", ["a", "1.1000000000000001", "b", "2", "c", "3", "a b", "5"]]);
    expect(run("ZSCAN", "z", "0", "MATCH", "a*", "COUNT", "1")).toEqual(["0", ["a", "1.1000000000000001", "a b", "5"]]);
  });

  test("a large set is walked with cursors, every member exactly once", () => {
    const args: string[] = [];
    for (let i = 0; i < 300; i++) args.push(String(i), `m${i}`);
    run("ZADD", "z", ...args);
    const seen = new Map<string, string>();
    let cursor = "0";
    do {
      const [next, items] = run("ZSCAN", "z", cursor, "COUNT", "25") as [string, string[]];
      for (let i = 0; i < items.length; i += 2) {
        expect(seen.has(items[i]!)).toBe(false);
        seen.set(items[i]!, items[i + 1]!);
      }
      cursor = next;
    } while (cursor !== "0");
    expect(seen.size).toBe(300);
    expect(seen.get("m299")).toBe("299");
  });

  test("missing keys, errors", () => {
    run("SET", "s", "x");
    run("ZADD", "z", "1", "a");
    expect(run("ZSCAN", "nokey", "0")).toEqual(["0", []]);
    expect(run("ZSCAN", "nokey", "0", "TYPE", "x")).toEqual(["0", []]);
    expect(run("ZSCAN", "z", "0", "TYPE", "x")).toEqual(syntax);
    expect(run("ZSCAN", "z", "abc")).toEqual(err("ERR invalid cursor"));
    expect(run("ZSCAN", "z", "0", "COUNT", "0")).toEqual(syntax);
    expect(run("ZSCAN", "z", "0", "MATCH")).toEqual(syntax);
    expect(run("ZSCAN", "s", "0")).toEqual(wrongType);
  });
});

describe("-0 and encodings", () => {
  test("a small set stores -0 as 0; a computed -0 is replied as -0", () => {
    expect(run("ZADD", "z", "INCR", "-0", "m")).toBe("-0");
    expect(run("ZSCORE", "z", "m")).toBe("0");
    expect(run("ZUNION", "1", "z", "WEIGHTS", "-1", "WITHSCORES")).toEqual(["m", "-0"]);
  });

  test("a skiplist-encoded set keeps -0", () => {
    const args: string[] = [];
    for (let i = 0; i < 200; i++) args.push(String(i + 1), `m${i}`);
    run("ZADD", "big", ...args);
    run("ZADD", "big", "-0", "zero");
    expect(run("ZSCORE", "big", "zero")).toBe("-0");
  });
});

describe("RESP3", () => {
  beforeEach(() => {
    run("HELLO", "3");
    run("ZADD", "z", "1", "a", "2", "b", "3", "c");
  });

  test("score pairs are nested where Redis nests them", () => {
    expect(run("ZRANGE", "z", "0", "1", "WITHSCORES")).toEqual([
      ["a", "1"],
      ["b", "2"],
    ]);
    expect(run("ZRANGEBYSCORE", "z", "-inf", "+inf", "WITHSCORES", "LIMIT", "0", "1")).toEqual([["a", "1"]]);
    expect(run("ZUNION", "1", "z", "WITHSCORES")).toEqual([
      ["a", "1"],
      ["b", "2"],
      ["c", "3"],
    ]);
    expect(run("ZRANDMEMBER", "z", "5", "WITHSCORES")).toEqual([
      ["c", "3"],
      ["b", "2"],
      ["a", "1"],
    ]);
    expect(run("ZPOPMIN", "z", "1")).toEqual([["a", "1"]]);
    expect(run("ZMPOP", "1", "z", "MIN")).toEqual(["z", [["b", "2"]]]);
  });

  test("but stay flat for ZPOPMIN without a count, BZPOPMIN and ZSCAN", () => {
    expect(run("ZPOPMIN", "z")).toEqual(["a", "1"]);
    expect(run("BZPOPMIN", "z", "0")).toEqual(["z", "b", "2"]);
    expect(run("ZSCAN", "z", "0")).toEqual(["0", ["c", "3"]]);
    expect(run("ZRANGE", "z", "0", "-1")).toEqual(["c"]);
  });
});

describe("WATCH sees in-place changes", () => {
  test("ZADD to a watched sorted set aborts the transaction", () => {
    run("ZADD", "z", "1", "a");
    run("WATCH", "z");
    const other = h.session();
    other.run("ZINCRBY", "z", "1", "a");
    run("MULTI");
    run("ZCARD", "z");
    expect(run("EXEC")).toBeNull();
  });
});
