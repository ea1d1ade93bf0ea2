// Keyspace notifications of the list commands against redis-server 7.0: the same commands on
// both servers must publish the same events, in the same order (support/keyspace-events.ts).
import { describe, expect, test } from "bun:test";
import { expectSameEvents, runAll } from "../support/keyspace-events.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

describe("pushes", () => {
  test("LPUSH, RPUSH, LPUSHX and RPUSHX", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["LPUSH", "l", "a", "b", "c"],
        ["RPUSH", "l", "d"],
        ["RPUSH", "r", "x", "y"],
        ["LPUSHX", "l", "e", "f"],
        ["RPUSHX", "l", "g"],
        ["LPUSHX", "missing", "a"],
        ["RPUSHX", "missing", "a"],
        ["SET", "s", "v"],
        ["LPUSH", "s", "a"],
        ["RPUSHX", "s", "a"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:lpush l");
  });
});

describe("pops", () => {
  test("LPOP and RPOP, with and without a count, down to an empty list", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["RPUSH", "l", "a", "b", "c", "d", "e", "f"],
        ["LPOP", "l"],
        ["RPOP", "l"],
        ["LPOP", "l", "2"],
        ["RPOP", "l", "0"],
        ["LPOP", "l", "0"],
        ["RPOP", "l", "5"],
        ["LPOP", "l"],
        ["LPOP", "l", "3"],
        ["RPOP", "missing"],
        ["RPOP", "missing", "0"],
        ["RPUSH", "one", "x"],
        ["RPOP", "one"],
        ["RPUSH", "one", "x"],
        ["LPOP", "one", "1"],
        ["LPOP", "l", "-1"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:del l");
  });

  test("LMPOP", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["RPUSH", "b", "1", "2", "3", "4"],
        ["LMPOP", "2", "a", "b", "LEFT"],
        ["LMPOP", "2", "a", "b", "RIGHT", "COUNT", "2"],
        ["LMPOP", "1", "b", "LEFT", "COUNT", "10"],
        ["LMPOP", "2", "a", "b", "LEFT"],
        ["RPUSH", "a", "x"],
        ["LMPOP", "2", "a", "b", "RIGHT"],
      ]),
    );
  });

  test("BLPOP, BRPOP, BLMPOP and BLMOVE served at once", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["RPUSH", "l", "a", "b", "c", "d", "e"],
        ["BLPOP", "missing", "l", "0"],
        ["BRPOP", "l", "0"],
        ["BLMPOP", "0", "2", "missing", "l", "LEFT", "COUNT", "2"],
        ["BLMOVE", "l", "m", "LEFT", "RIGHT", "0"],
        ["BRPOPLPUSH", "m", "l", "0"],
        ["BLPOP", "l", "0"],
      ]),
    );
  });
});

describe("editing in place", () => {
  test("LINSERT, LSET, LREM and LTRIM, with their no-ops and errors", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["RPUSH", "l", "a", "b", "a", "c", "a"],
        ["LINSERT", "l", "BEFORE", "b", "x"],
        ["LINSERT", "l", "AFTER", "c", "y"],
        ["LINSERT", "l", "BEFORE", "nope", "z"],
        ["LINSERT", "missing", "BEFORE", "a", "z"],
        ["LINSERT", "l", "SIDEWAYS", "a", "z"],
        ["LSET", "l", "0", "A"],
        ["LSET", "l", "-1", "Z"],
        ["LSET", "l", "100", "v"],
        ["LSET", "missing", "0", "v"],
        ["LREM", "l", "0", "nope"],
        ["LREM", "l", "1", "a"],
        ["LREM", "l", "-1", "Z"],
        ["LREM", "l", "0", "a"],
        ["LREM", "missing", "0", "a"],
        ["LTRIM", "l", "0", "-1"],
        ["LTRIM", "l", "0", "100"],
        ["LTRIM", "l", "1", "-2"],
        ["LTRIM", "missing", "0", "1"],
        ["LTRIM", "l", "5", "1"],
        ["RPUSH", "r", "a", "a"],
        ["LREM", "r", "0", "a"],
        ["RPUSH", "r", "a"],
        ["LTRIM", "r", "-1", "0"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:ltrim l");
  });
});

describe("moving between lists", () => {
  test("LMOVE and RPOPLPUSH: onto a missing destination, onto itself, emptying the source, with errors", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["RPUSH", "src", "a", "b", "c"],
        ["LMOVE", "src", "dst", "LEFT", "RIGHT"],
        ["LMOVE", "src", "dst", "RIGHT", "LEFT"],
        ["LMOVE", "src", "src", "LEFT", "RIGHT"],
        ["RPOPLPUSH", "src", "dst"],
        ["RPOPLPUSH", "src", "dst"],
        ["LMOVE", "missing", "dst", "LEFT", "LEFT"],
        ["RPUSH", "one", "x"],
        ["RPOPLPUSH", "one", "one"],
        ["LMOVE", "one", "one", "LEFT", "LEFT"],
        ["SET", "str", "v"],
        ["LMOVE", "dst", "str", "LEFT", "LEFT"],
        ["RPOPLPUSH", "dst", "str"],
        ["LMOVE", "dst", "other", "UP", "LEFT"],
      ]),
    );
  });
});

describe("blocked clients served by a push", () => {
  test("BLPOP and BRPOP: the push's events, then the served pop's", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BLPOP", "q", "0"], "B");
      await t.call(["RPUSH", "q", "a"]);
      await t.settle("B");
      await t.send(["BRPOP", "other", "q", "0"], "B");
      await t.call(["LPUSH", "q", "x", "y", "z"]);
      await t.settle("B");
      await t.call(["LRANGE", "q", "0", "-1"]);
    });
  });

  test("BLMOVE and BRPOPLPUSH: onto a missing destination, and into another blocked client", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"], "B");
      await t.call(["RPUSH", "src", "a", "b"]);
      await t.settle("B");
      await t.send(["BRPOPLPUSH", "from", "to", "0"], "B");
      await t.send(["BLPOP", "to", "0"], "C");
      await t.call(["LPUSH", "from", "x"]);
      await t.settle("B");
      await t.settle("C");
      await t.send(["BLMOVE", "same", "same", "LEFT", "RIGHT", "0"], "B");
      await t.call(["RPUSH", "same", "only"]);
      await t.settle("B");
    });
  });

  test("BLMPOP: served a count from the pushed list, which empties it", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "5"], "B");
      await t.call(["RPUSH", "b", "1", "2", "3"]);
      await t.settle("B");
      await t.send(["BLMPOP", "0", "1", "a", "LEFT", "COUNT", "1"], "B");
      await t.call(["RPUSH", "a", "1", "2"]);
      await t.settle("B");
    });
  });

  test("two waiters on one key, the push inside MULTI", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BLPOP", "q", "0"], "B");
      await t.send(["BRPOP", "q", "0"], "C");
      await t.call(["MULTI"]);
      await t.call(["RPUSH", "q", "a"]);
      await t.call(["RPUSH", "q", "b", "c"]);
      await t.call(["EXEC"]);
      await t.settle("B");
      await t.settle("C");
    });
  });
});

describe("transactions and classes", () => {
  test("list commands inside MULTI/EXEC publish as they run", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["MULTI"],
        ["RPUSH", "l", "a", "b", "c"],
        ["LINSERT", "l", "AFTER", "a", "x"],
        ["LSET", "l", "0", "A"],
        ["LREM", "l", "1", "x"],
        ["LMOVE", "l", "m", "LEFT", "LEFT"],
        ["BLPOP", "l", "0"],
        ["BLPOP", "empty", "0"],
        ["BLMOVE", "empty", "m", "LEFT", "LEFT", "0"],
        ["LTRIM", "l", "1", "0"],
        ["RPOP", "m", "5"],
        ["EXEC"],
      ]),
    );
  });

  test("new keys (class n)", async () => {
    const t = await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["LPUSH", "l", "a"],
        ["LPUSH", "l", "b"],
        ["LPUSHX", "x", "a"],
        ["LMOVE", "l", "m", "LEFT", "RIGHT"],
        ["RPOPLPUSH", "l", "l2"],
        ["RPOPLPUSH", "l2", "l2"],
        ["LMPOP", "1", "m", "LEFT"],
        ["RPUSH", "m", "z"],
        ["SORT", "m", "ALPHA", "STORE", "sorted"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:new m");
  });

  test("key misses (class m): the reads' lookups only, not the writes'", async () => {
    const t = await expectSameEvents(
      servers,
      "KEm",
      runAll([
        ["LLEN", "missing"],
        ["LRANGE", "missing", "0", "-1"],
        ["LINDEX", "missing", "0"],
        ["LPOS", "missing", "a"],
        ["LPOP", "missing"],
        ["RPOP", "missing", "2"],
        ["LMPOP", "2", "missing", "other", "LEFT"],
        ["LMOVE", "missing", "dst", "LEFT", "LEFT"],
        ["RPUSH", "l", "a"],
        ["LMOVE", "l", "dst", "LEFT", "LEFT"],
        ["LREM", "missing", "0", "a"],
        ["LTRIM", "missing", "0", "1"],
        ["LINSERT", "missing", "BEFORE", "a", "b"],
        ["LPUSHX", "missing", "a"],
        ["LSET", "missing", "0", "a"],
        ["MULTI"],
        ["BLPOP", "missing", "0"],
        ["BLMOVE", "missing", "dst", "LEFT", "LEFT", "0"],
        ["BLMPOP", "0", "1", "missing", "LEFT"],
        ["EXEC"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:keymiss missing");
  });

  test("only list events, on the keyevent channels (classes El)", async () => {
    await expectSameEvents(servers, "El", async (t) => {
      await runAll([
        ["RPUSH", "l", "a", "b", "c"],
        ["LSET", "l", "1", "B"],
        ["LTRIM", "l", "0", "1"],
        ["LMOVE", "l", "n", "LEFT", "LEFT"],
        ["LPOP", "l"],
        ["LREM", "n", "0", "a"],
        ["SET", "k", "v"],
        ["DEL", "k"],
      ])(t);
      await t.send(["BLMOVE", "q", "r", "RIGHT", "LEFT", "0"], "B");
      await t.call(["LPUSH", "q", "v"]);
      await t.settle("B");
    });
  });
});
