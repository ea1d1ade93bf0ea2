// Keyspace notifications (CONFIG notify-keyspace-events) of hashes and sets, against
// redis-server 7.0: the same commands on both servers must publish the same events, in the same
// order (support/keyspace-events.ts writes them down between the commands). SPOP picks its
// members at random: its events do not depend on which, and its replies are written down sorted,
// or not at all where the members popped are a draw.
import { describe, expect, test } from "bun:test";
import { type EventTranscript, expectSameEvents, runAll } from "../support/keyspace-events.ts";
import { show } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Runs `argv` and writes its reply down with the members sorted (an SPOP that takes them all). */
async function callSorted(t: EventTranscript, argv: readonly string[]): Promise<void> {
  const at = t.lines.length;
  const reply = await t.call(argv);
  t.lines[at + 1] = `A< sorted ${show(Array.isArray(reply) ? [...(reply as string[])].sort() : reply)}`;
}

/** Runs `argv` and writes down only how many members it answered (an SPOP that draws some). */
async function callDrawn(t: EventTranscript, argv: readonly string[]): Promise<void> {
  const at = t.lines.length;
  const reply = await t.call(argv);
  t.lines[at + 1] = `A< drawn ${Array.isArray(reply) ? reply.length : typeof reply}`;
}

/** `count` names with a prefix: fields or members enough to outgrow a compact encoding. */
const names = (prefix: string, count: number, from = 0) => Array.from({ length: count }, (_, i) => `${prefix}${from + i}`);

describe("hashes", () => {
  test("HSET, HMSET and HSETNX, changing something or not", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["HSET", "h", "f", "v"],
        ["HSET", "h", "f", "v"],
        ["HSET", "h", "f", "w", "g", "x"],
        ["HSET", "h", "f", "w", "f", "w"],
        ["HMSET", "h", "a", "1", "b", "2"],
        ["HMSET", "h", "a", "1"],
        ["HMSET", "h2", "a", "1"],
        ["HSET", "h", "f"],
        ["HMSET", "h", "f"],
        ["HSETNX", "h", "f", "z"],
        ["HSETNX", "h", "new", "1"],
        ["HSETNX", "h3", "f", "v"],
        ["HSETNX", "h3", "f", "v"],
        ["HSET", "h", "long", "x".repeat(100)],
        ["HLEN", "h"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:hset h");
  });

  test("HINCRBY and HINCRBYFLOAT, and their errors", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["HINCRBY", "h", "n", "1"],
        ["HINCRBY", "h", "n", "5"],
        ["HINCRBY", "h", "n", "0"],
        ["HINCRBY", "h", "n", "x"],
        ["HINCRBY", "missing", "n", "x"],
        ["HSET", "h", "s", "abc", "max", "9223372036854775807", "huge", "1e4932"],
        ["HINCRBY", "h", "s", "1"],
        ["HINCRBY", "h", "max", "1"],
        ["HINCRBY", "h", "max", "0"],
        ["HINCRBYFLOAT", "h", "fl", "1.5"],
        ["HINCRBYFLOAT", "h", "fl", "0"],
        ["HINCRBYFLOAT", "h", "n", "2.5"],
        ["HINCRBYFLOAT", "hf", "fl", "0.5"],
        ["HINCRBYFLOAT", "h", "s", "1"],
        ["HINCRBYFLOAT", "h", "fl", "inf"],
        ["HINCRBYFLOAT", "h", "fl", "x"],
        ["HINCRBYFLOAT", "missing", "fl", "nan"],
        ["HINCRBYFLOAT", "h", "huge", "1e4932"],
        ["HGETALL", "h"],
        ["EXISTS", "missing"],
      ]),
    );
  });

  test("HDEL: of nothing, of some fields, of the last", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["HSET", "h", "a", "1", "b", "2", "c", "3"],
        ["HDEL", "h", "missing"],
        ["HDEL", "missing", "f"],
        ["HDEL", "h", "a"],
        ["HDEL", "h", "a", "missing"],
        ["HDEL", "h", "b", "missing", "c", "b"],
        ["HDEL", "h", "b"],
        ["EXISTS", "h"],
        ["HSET", "one", "f", "v"],
        ["HDEL", "one", "f"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:del h");
  });

  test("a key of another type: an error, and nothing published", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SET", "str", "x"],
        ["HSET", "str", "f", "v"],
        ["HMSET", "str", "f", "v"],
        ["HSETNX", "str", "f", "v"],
        ["HINCRBY", "str", "f", "1"],
        ["HINCRBYFLOAT", "str", "f", "1"],
        ["HDEL", "str", "f"],
        ["SADD", "set", "m"],
        ["HSET", "set", "f", "v"],
        ["HDEL", "set", "m"],
        ["GET", "str"],
      ]),
    );
  });

  test("a hash past the compact encoding's size: the same events", async () => {
    const fields = names("f", 200).flatMap((f) => [f, "v"]);
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["HSET", "big", ...fields],
        ["OBJECT", "ENCODING", "big"],
        ["HSET", "big", "f0", "v"],
        ["HSET", "big", "extra", "1"],
        ["HSETNX", "big", "f1", "w"],
        ["HSETNX", "big", "other", "w"],
        ["HINCRBY", "big", "extra", "2"],
        ["HINCRBYFLOAT", "big", "extra", "0.5"],
        ["HDEL", "big", "missing"],
        ["HDEL", "big", ...names("f", 100)],
        ["HDEL", "big", ...names("f", 100, 100), "extra"],
        ["HLEN", "big"],
        ["HDEL", "big", "other"],
        ["EXISTS", "big"],
        ["HSET", "grow", ...names("g", 127).flatMap((f) => [f, "v"])],
        ["OBJECT", "ENCODING", "grow"],
        ["HSET", "grow", "g127", "v", "g128", "v"],
        ["OBJECT", "ENCODING", "grow"],
        ["HSETNX", "wide", "f", "x".repeat(100)],
        ["OBJECT", "ENCODING", "wide"],
      ]),
    );
  });
});

describe("sets", () => {
  test("SADD and SREM, changing something or not", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SADD", "s", "a", "b"],
        ["SADD", "s", "a"],
        ["SADD", "s", "a", "a", "c"],
        ["SADD", "ints", "1", "2"],
        ["SADD", "ints", "2"],
        ["SADD", "ints", "x"],
        ["SREM", "s", "missing"],
        ["SREM", "missing", "a"],
        ["SREM", "s", "a"],
        ["SREM", "s", "a", "missing"],
        ["SREM", "s", "b", "c", "b"],
        ["EXISTS", "s"],
        ["SREM", "ints", "1", "2", "x"],
        ["EXISTS", "ints"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:sadd s");
    expect(t).toContain("! __keyevent@0__:del ints");
  });

  test("SMOVE: missing members and keys, one key for both, emptying the source, the member already there", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SADD", "src", "a", "b", "c", "d"],
        ["SADD", "dst", "x", "c"],
        ["SMOVE", "src", "dst", "missing"],
        ["SMOVE", "missing", "dst", "a"],
        ["SMOVE", "missing", "missing2", "a"],
        ["SMOVE", "src", "src", "a"],
        ["SMOVE", "src", "src", "missing"],
        ["SMOVE", "src", "dst", "a"],
        ["SMOVE", "src", "dst", "c"],
        ["SMOVE", "src", "fresh", "b"],
        ["SMOVE", "dst", "src", "x"],
        ["SMOVE", "src", "dst", "d"],
        ["SMOVE", "src", "dst", "x"],
        ["EXISTS", "src"],
        ["SADD", "lone", "m"],
        ["SMOVE", "lone", "nowhere", "m"],
        ["EXISTS", "lone", "nowhere"],
        ["SMEMBERS", "nowhere"],
        ["SADD", "last", "c"],
        ["SMOVE", "last", "dst", "c"],
        ["SCARD", "dst"],
      ]),
    );
  });

  test("SMOVE and SREM on keys of another type: an error, and nothing published", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SET", "str", "x"],
        ["SADD", "s", "a"],
        ["SMOVE", "str", "s", "a"],
        ["SMOVE", "s", "str", "a"],
        ["SMOVE", "s", "str", "missing"],
        ["SMOVE", "missing", "str", "a"],
        ["SMOVE", "str", "str", "a"],
        ["SADD", "str", "a"],
        ["SREM", "str", "a"],
        ["SPOP", "str"],
        ["SPOP", "str", "2"],
        ["HSET", "h", "f", "v"],
        ["SADD", "h", "f"],
        ["SMEMBERS", "s"],
      ]),
    );
  });

  test("SPOP with and without a count", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      for (const argv of [
        ["SPOP", "missing"],
        ["SPOP", "missing", "3"],
        ["SPOP", "missing", "0"],
        ["SADD", "one", "x"],
        ["SPOP", "one"],
        ["EXISTS", "one"],
        ["SADD", "s", "a", "b", "c"],
        ["SPOP", "s", "0"],
        ["SPOP", "s", "-1"],
        ["SPOP", "s", "x"],
        ["SPOP", "s", "1", "2"],
        ["SADD", "one", "x"],
        ["SPOP", "one", "1"],
        ["EXISTS", "one"],
      ])
        await t.call(argv);
      await callSorted(t, ["SPOP", "s", "3"]);
      await t.call(["EXISTS", "s"]);
      await t.call(["SADD", "s", "1", "2", "3"]);
      await callSorted(t, ["SPOP", "s", "10"]);
      await t.call(["SADD", "s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
      // Fewer than all: which members is a draw, but not the events.
      await callDrawn(t, ["SPOP", "s"]);
      await callDrawn(t, ["SPOP", "s", "1"]);
      await callDrawn(t, ["SPOP", "s", "6"]);
      await callDrawn(t, ["SPOP", "s", "2"]);
      await t.call(["SCARD", "s"]);
      await callSorted(t, ["SPOP", "s", "1000"]);
      await t.call(["EXISTS", "s"]);
    });
  });

  test("SINTERSTORE, SUNIONSTORE and SDIFFSTORE: new, overwritten, empty onto a key and onto none", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SADD", "a", "1", "2", "3"],
        ["SADD", "b", "2", "3", "4"],
        ["SINTERSTORE", "d", "a", "b"],
        ["SINTERSTORE", "d", "a", "b"],
        ["SUNIONSTORE", "d", "a", "b"],
        ["SDIFFSTORE", "d", "a", "b"],
        ["SDIFFSTORE", "d", "a", "a"],
        ["EXISTS", "d"],
        ["SDIFFSTORE", "d", "a", "a"],
        ["SINTERSTORE", "d", "a", "missing"],
        ["SUNIONSTORE", "d", "missing", "missing2"],
        ["SDIFFSTORE", "d", "missing", "a"],
        ["SUNIONSTORE", "u", "a", "missing"],
        ["SINTERSTORE", "u", "a", "missing"],
        ["EXISTS", "u"],
        ["SET", "str", "x"],
        ["SINTERSTORE", "str", "a", "b"],
        ["TYPE", "str"],
        ["SET", "str", "x"],
        ["SDIFFSTORE", "str", "a", "a"],
        ["EXISTS", "str"],
        ["SET", "str", "x"],
        ["SUNIONSTORE", "d", "a", "str"],
        ["SINTERSTORE", "d", "missing", "str"],
        ["SDIFFSTORE", "d", "a", "str"],
        ["SUNIONSTORE", "a", "a", "b"],
        ["SINTERSTORE", "a", "a", "b"],
        ["SMEMBERS", "a"],
        ["SADD", "lone", "x"],
        ["SDIFFSTORE", "lone", "lone", "lone"],
        ["EXISTS", "lone"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:sinterstore d");
  });

  test("sets past the compact encodings' size: the same events", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      for (const argv of [
        ["SADD", "big", ...names("m", 200)],
        ["OBJECT", "ENCODING", "big"],
        ["SADD", "big", "m0"],
        ["SADD", "big", "m0", "extra"],
        ["SADD", "ints", ...names("", 600)],
        ["OBJECT", "ENCODING", "ints"],
        ["SADD", "ints", "x"],
        ["OBJECT", "ENCODING", "ints"],
        ["SADD", "grow", ...names("g", 128)],
        ["OBJECT", "ENCODING", "grow"],
        ["SADD", "grow", "g128"],
        ["OBJECT", "ENCODING", "grow"],
        ["SREM", "big", "missing"],
        ["SREM", "big", ...names("m", 100)],
        ["SMOVE", "big", "other", "m150"],
        ["SMOVE", "big", "grow", "m151"],
        ["SINTERSTORE", "inter", "big", "grow"],
        ["SUNIONSTORE", "union", "big", "grow", "ints"],
        ["SDIFFSTORE", "diff", "big", "grow"],
        ["SCARD", "union"],
        ["SDIFFSTORE", "union", "big", "big"],
        ["EXISTS", "union"],
      ])
        await t.call(argv);
      await callDrawn(t, ["SPOP", "big", "5"]);
      await callDrawn(t, ["SPOP", "big", "80"]);
      await callDrawn(t, ["SPOP", "ints"]);
      await callDrawn(t, ["SPOP", "ints", "500"]);
      await t.call(["SCARD", "big"]);
      // What is left after the draws differs, but not how much of it.
      await callDrawn(t, ["SPOP", "big", "1000"]);
      await callDrawn(t, ["SPOP", "ints", "100"]);
      await t.call(["EXISTS", "big", "ints"]);
    });
  });
});

describe("which events go out", () => {
  const script = runAll([
    ["HSET", "h", "f", "1"],
    ["HSET", "h", "f", "1"],
    ["HSETNX", "h", "g", "2"],
    ["HSETNX", "h2", "g", "2"],
    ["HINCRBY", "h3", "n", "1"],
    ["HINCRBYFLOAT", "h4", "n", "1.5"],
    ["HMSET", "h5", "a", "1"],
    ["HDEL", "h", "f", "g"],
    ["SADD", "s", "a", "b"],
    ["SMOVE", "s", "t", "a"],
    ["SMOVE", "s", "t", "b"],
    ["SREM", "t", "a"],
    ["SADD", "one", "x"],
    ["SPOP", "one"],
    ["SADD", "one", "x"],
    ["SPOP", "one", "5"],
    ["SINTERSTORE", "i", "t", "t"],
    ["SUNIONSTORE", "u", "t"],
    ["SDIFFSTORE", "d", "t", "missing"],
    ["SDIFFSTORE", "u", "t", "t"],
    ["DEL", "h2", "h3"],
  ]);

  for (const classes of ["KEAn", "Eh", "Ks", "Kh", "Es", "KEg", "En", "Khs", "KEhsn", "Ag"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(servers, classes, script);
    });
  }

  /** Plays `argv` after making `expiring` keys that have expired, with active expiry off. */
  const afterExpiry = (expiring: readonly string[], commands: readonly (readonly string[])[]) => async (t: EventTranscript) => {
    await t.call(["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    try {
      for (const key of expiring) await t.call(["SET", key, "v", "PX", "30"]);
      await t.call(["SADD", "live", "a", "b"]);
      await t.call(["SET", "str", "x"]);
      await Bun.sleep(60);
      for (const argv of commands) await t.call(argv);
    } finally {
      await t.call(["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
    }
  };

  test('a key whose time has passed expires (an "expired" event) before the command sees it missing', async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      afterExpiry(
        ["h", "h2", "h3", "s", "s2", "s3", "src", "dst", "dst2", "dst3"],
        [
          ["HSET", "h", "f", "v"],
          ["HINCRBY", "h2", "f", "1"],
          ["HDEL", "h3", "f"],
          ["SADD", "s", "a"],
          ["SREM", "s2", "a"],
          ["SPOP", "s3"],
          ["SMOVE", "src", "dst", "a"],
          ["SMOVE", "live", "dst2", "a"],
          ["SMOVE", "str", "dst3", "a"],
          ["DBSIZE"],
        ],
      ),
    );
  });

  // Redis stores a *STORE result with setKey, which looks the destination up first: one whose
  // time has passed is "expired", then "new". svc's db.set (keyspace.ts) overwrites it silently.
  test('a *STORE result onto a key whose time has passed: "expired", then "new"', async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      afterExpiry(
        ["d1", "d2", "d3"],
        [
          ["SINTERSTORE", "d1", "live", "live"],
          ["SUNIONSTORE", "d2", "live"],
          ["SDIFFSTORE", "d3", "live", "missing"],
        ],
      ),
    );
  });

  // Redis deletes an empty result's destination without looking it up: one whose time has passed
  // is a "del", not an "expired". svc's storeResult (commands/lookup.ts) expires it first.
  test('an empty *STORE result onto a key whose time has passed: a "del"', async () => {
    await expectSameEvents(
      servers,
      "KEA",
      afterExpiry(
        ["d1", "d2", "d3"],
        [
          ["SINTERSTORE", "d1", "live", "missing"],
          ["SUNIONSTORE", "d2", "missing"],
          ["SDIFFSTORE", "d3", "live", "live"],
        ],
      ),
    );
  });

  test("inside a transaction, each command publishes as it runs", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([["MULTI"], ["HSET", "h", "f", "v"], ["HINCRBY", "h", "n", "2"], ["SADD", "s", "a"], ["SMOVE", "s", "t", "a"], ["HDEL", "h", "f", "n"], ["EXEC"]]),
    );
  });
});
