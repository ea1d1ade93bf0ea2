// Keyspace notifications of the stream commands against redis-server 7.0: the same commands on
// both servers must publish the same events, in the same order (support/keyspace-events.ts). IDs
// are explicit wherever a reply or an event would carry one, so both transcripts match.
import { describe, expect, test } from "bun:test";
import { expectSameEvents, runAll } from "../support/keyspace-events.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** A stream `s` with entries 1-1 … 5-1 and a group `g` at 0 with consumer `c` holding 1-1 and 2-1. */
const streamWithGroup: readonly (readonly string[])[] = [
  ["XADD", "s", "1-1", "f", "1"],
  ["XADD", "s", "2-1", "f", "2"],
  ["XADD", "s", "3-1", "f", "3"],
  ["XADD", "s", "4-1", "f", "4"],
  ["XADD", "s", "5-1", "f", "5"],
  ["XGROUP", "CREATE", "s", "g", "0"],
  ["XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">"],
];

describe("entries: XADD, XTRIM, XDEL and XSETID", () => {
  test("XADD: a new stream, an existing one, NOMKSTREAM and refused IDs", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XADD", "s", "1-2", "f", "v", "g", "w"],
        ["XADD", "s", "2-*", "f", "v"],
        ["XADD", "s", "1-5", "f", "v"],
        ["XADD", "s", "2-1", "f", "v"],
        ["XADD", "s", "0-0", "f", "v"],
        ["XADD", "fresh", "0-0", "f", "v"],
        ["XADD", "missing", "NOMKSTREAM", "1-1", "f", "v"],
        ["XADD", "s", "NOMKSTREAM", "3-1", "f", "v"],
        ["XADD", "s", "3-2", "f"],
        ["XADD", "s", "bad", "f", "v"],
        ["SET", "str", "x"],
        ["XADD", "str", "1-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "-1", "4-1", "f", "v"],
        ["EXISTS", "missing", "fresh"],
        ["XLEN", "s"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:xadd s");
  });

  test('XADD that trims: an "xtrim" after the "xadd", only when entries went', async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "MAXLEN", "3", "1-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "3", "2-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "3", "3-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "3", "4-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "=", "1", "5-1", "f", "v"],
        ["XADD", "s", "MINID", "5-1", "6-1", "f", "v"],
        ["XADD", "s", "MINID", "6-1", "7-1", "f", "v"],
        // `~` removes whole nodes only: a stream of one node loses nothing.
        ["XADD", "s", "MAXLEN", "~", "1", "8-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "~", "1", "LIMIT", "10", "9-1", "f", "v"],
        // A new stream trimmed to nothing: "new", "xadd", "xtrim", and the key stays.
        ["XADD", "t", "MAXLEN", "0", "1-1", "f", "v"],
        ["XLEN", "t"],
        ["EXISTS", "t"],
        ["XADD", "missing", "NOMKSTREAM", "MAXLEN", "0", "1-1", "f", "v"],
        ["XLEN", "s"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:xtrim s");
  });

  test("XADD that trims whole nodes (stream-node-max-entries 2)", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.call(["CONFIG", "SET", "stream-node-max-entries", "2"]);
      try {
        for (let i = 1; i <= 6; i++) await t.call(["XADD", "s", `${i}-1`, "f", "v"]);
        for (const argv of [
          ["XADD", "s", "MAXLEN", "~", "3", "7-1", "f", "v"],
          ["XADD", "s", "MAXLEN", "~", "3", "LIMIT", "1", "8-1", "f", "v"],
          ["XTRIM", "s", "MAXLEN", "~", "2"],
          ["XTRIM", "s", "MINID", "~", "9-1"],
          ["XLEN", "s"],
        ])
          await t.call(argv);
      } finally {
        await t.call(["CONFIG", "SET", "stream-node-max-entries", "100"]);
      }
    });
  });

  test('XTRIM: an "xtrim" only when it removes something', async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XADD", "s", "2-1", "f", "v"],
        ["XADD", "s", "3-1", "f", "v"],
        ["XADD", "s", "4-1", "f", "v"],
        ["XTRIM", "s", "MAXLEN", "10"],
        ["XTRIM", "s", "MINID", "1-0"],
        ["XTRIM", "s", "MAXLEN", "~", "1"],
        ["XTRIM", "s", "MAXLEN", "3"],
        ["XTRIM", "s", "MINID", "3-1"],
        ["XTRIM", "s", "MAXLEN", "=", "0"],
        ["XTRIM", "s", "MAXLEN", "0"],
        ["XTRIM", "missing", "MAXLEN", "0"],
        ["XTRIM", "s"],
        ["XTRIM", "s", "MAXLEN", "1", "LIMIT", "5"],
        ["SET", "str", "x"],
        ["XTRIM", "str", "MAXLEN", "0"],
        ["XLEN", "s"],
        ["EXISTS", "s"],
      ]),
    );
  });

  test('XDEL: an "xdel" only when an entry went', async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XADD", "s", "2-1", "f", "v"],
        ["XADD", "s", "3-1", "f", "v"],
        ["XDEL", "s", "2-1"],
        ["XDEL", "s", "2-1"],
        ["XDEL", "s", "9-9", "8-8"],
        ["XDEL", "s", "1-1", "9-9", "3-1"],
        ["XDEL", "missing", "1-1"],
        ["XDEL", "s", "bad"],
        ["XLEN", "s"],
        ["EXISTS", "s"],
      ]),
    );
  });

  test('XSETID: an "xsetid" when it is done, none when refused', async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "5-1", "f", "v"],
        ["XSETID", "s", "10-1"],
        ["XSETID", "s", "10-1"],
        ["XSETID", "s", "20-1", "ENTRIESADDED", "7", "MAXDELETEDID", "3-1"],
        ["XSETID", "s", "1-1"],
        ["XSETID", "missing", "1-1"],
        ["XSETID", "s", "30-1", "ENTRIESADDED", "0"],
        ["XSETID", "s", "30-1", "MAXDELETEDID", "40-1"],
        ["XSETID", "s", "30-1", "BOGUS", "1"],
        ["XSETID", "s", "bad"],
        ["XADD", "e", "MAXLEN", "0", "1-1", "f", "v"],
        ["XSETID", "e", "0-1"],
      ]),
    );
  });
});

describe("consumer groups", () => {
  test("XGROUP CREATE, with MKSTREAM and ENTRIESREAD, and BUSYGROUP", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATE", "s", "g", "$"],
        ["XGROUP", "CREATE", "s", "h", "$", "ENTRIESREAD", "1"],
        ["XGROUP", "CREATE", "missing", "g", "0"],
        ["XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"],
        ["XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"],
        ["XGROUP", "CREATE", "m", "g2", "0", "MKSTREAM"],
        ["XGROUP", "CREATE", "s", "x", "bad"],
        ["XGROUP", "CREATE", "n", "x", "bad", "MKSTREAM"],
        ["XGROUP", "CREATE", "s", "x", "0", "BOGUS"],
        ["SET", "str", "v"],
        ["XGROUP", "CREATE", "str", "g", "0", "MKSTREAM"],
        ["EXISTS", "m", "n"],
      ]),
    );
  });

  test("XGROUP SETID and DESTROY", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "SETID", "s", "g", "$"],
        ["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"],
        ["XGROUP", "SETID", "s", "nogroup", "0"],
        ["XGROUP", "SETID", "missing", "g", "0"],
        ["XGROUP", "SETID", "s", "g", "bad"],
        ["XGROUP", "DESTROY", "s", "g"],
        ["XGROUP", "DESTROY", "s", "g"],
        ["XGROUP", "DESTROY", "missing", "g"],
      ]),
    );
  });

  test("XGROUP CREATECONSUMER and DELCONSUMER", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ...streamWithGroup,
        ["XGROUP", "CREATECONSUMER", "s", "g", "d"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "d"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        ["XGROUP", "CREATECONSUMER", "s", "nogroup", "d"],
        ["XGROUP", "CREATECONSUMER", "missing", "g", "d"],
        ["XGROUP", "DELCONSUMER", "s", "g", "d"],
        ["XGROUP", "DELCONSUMER", "s", "g", "d"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c"],
        ["XGROUP", "DELCONSUMER", "s", "nogroup", "c"],
        ["XPENDING", "s", "g"],
      ]),
    );
  });

  test("XREADGROUP: the consumer it makes, when it is served", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["XADD", "s", "1-1", "f", "v"],
        ["XADD", "s", "2-1", "f", "v"],
        ["XADD", "t", "1-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATE", "t", "g", "$"],
        ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        // Nothing new: served nothing, so no consumer made.
        ["XREADGROUP", "GROUP", "g", "d", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "d", "STREAMS", "t", ">"],
        // Its history (an ID, not `>`) is served even when empty.
        ["XREADGROUP", "GROUP", "g", "e", "STREAMS", "s", "0"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"],
        ["XADD", "s", "3-1", "f", "v"],
        ["XADD", "t", "2-1", "f", "v"],
        ["XREADGROUP", "GROUP", "g", "f", "NOACK", "STREAMS", "s", "t", ">", ">"],
        ["XREADGROUP", "GROUP", "g", "h", "STREAMS", "s", "t", "0", "0"],
        ["XREADGROUP", "GROUP", "nogroup", "c", "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "missing", ">"],
        ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "s", ">"],
        ["XPENDING", "s", "g"],
      ]),
    );
  });

  test("XACK publishes nothing", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ...streamWithGroup,
        ["XACK", "s", "g", "1-1"],
        ["XACK", "s", "g", "1-1", "9-9"],
        ["XACK", "s", "g", "2-1"],
        ["XACK", "s", "nogroup", "1-1"],
        ["XACK", "missing", "g", "1-1"],
        ["XACK", "s", "g", "bad"],
        ["XPENDING", "s", "g"],
      ]),
    );
  });

  test("XCLAIM: the consumer it makes when it claims, and pending entries of deleted entries", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ...streamWithGroup,
        ["XCLAIM", "s", "g", "c", "0", "1-1"],
        ["XCLAIM", "s", "g", "d", "0", "1-1"],
        // Nothing claimed: an entry pending for no one, an idle time not reached, a missing ID.
        ["XCLAIM", "s", "g", "e", "0", "3-1"],
        ["XCLAIM", "s", "g", "e", "100000", "2-1"],
        ["XCLAIM", "s", "g", "e", "0", "9-9"],
        ["XCLAIM", "s", "g", "e", "0", "3-1", "FORCE", "JUSTID"],
        ["XCLAIM", "s", "g", "f", "0", "2-1", "JUSTID", "LASTID", "9-9"],
        ["XCLAIM", "s", "g", "e", "0", "1-1", "LASTID", "9-9"],
        // A pending entry whose entry was deleted goes, claimed by no one.
        ["XDEL", "s", "2-1"],
        ["XCLAIM", "s", "g", "x", "0", "2-1"],
        ["XCLAIM", "s", "nogroup", "x", "0", "1-1"],
        ["XCLAIM", "s", "g", "x", "bad", "1-1"],
        ["XPENDING", "s", "g"],
      ]),
    );
  });

  test("XAUTOCLAIM: the consumer it makes, and the pending entries of deleted entries it drops", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ...streamWithGroup,
        ["XAUTOCLAIM", "s", "g", "d", "100000", "0"],
        ["XAUTOCLAIM", "s", "g", "d", "0", "0", "COUNT", "1"],
        ["XAUTOCLAIM", "s", "g", "c", "0", "0"],
        ["XAUTOCLAIM", "s", "g", "e", "0", "9-9"],
        ["XDEL", "s", "1-1"],
        ["XAUTOCLAIM", "s", "g", "x", "0", "0", "COUNT", "1"],
        ["XAUTOCLAIM", "s", "g", "y", "0", "0", "JUSTID"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["XDEL", "s", "3-1", "4-1", "5-1"],
        ["XAUTOCLAIM", "s", "g", "z", "0", "0"],
        ["XAUTOCLAIM", "s", "nogroup", "x", "0", "0"],
        ["XAUTOCLAIM", "missing", "g", "x", "0", "0"],
        ["XPENDING", "s", "g"],
      ]),
    );
  });
});

describe("blocked XREADGROUP", () => {
  test("served by an XADD: the XADD's events, then the consumer made for the served client", async () => {
    const t = await expectSameEvents(servers, "KEA", async (t) => {
      await t.call(["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
      await t.send(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      await t.call(["XADD", "s", "1-1", "f", "v"]);
      await t.settle("B");
      // A known consumer, and an XADD that trims.
      await t.send(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      await t.call(["XADD", "s", "MAXLEN", "1", "2-1", "f", "v"]);
      await t.settle("B");
      await t.send(["XREADGROUP", "GROUP", "g", "d", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      await t.call(["XADD", "s", "MAXLEN", "1", "3-1", "f", "v"]);
      await t.settle("B");
      // Served at EXEC, after the transaction's events.
      await t.send(["XREADGROUP", "GROUP", "g", "e", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      for (const argv of [["MULTI"], ["XADD", "s", "4-1", "f", "v"], ["XADD", "s", "5-1", "f", "v"], ["EXEC"]]) await t.call(argv);
      await t.settle("B");
      await t.call(["XPENDING", "s", "g"]);
    });
    expect(t).toContain("! __keyevent@0__:xgroup-createconsumer s");
  });

  test("a group destroyed, or a key deleted, under a blocked consumer", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.call(["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]);
      await t.send(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      await t.call(["XGROUP", "DESTROY", "s", "g"]);
      await t.settle("B");
      await t.call(["XGROUP", "CREATE", "s", "g", "$"]);
      await t.send(["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"], "B");
      await t.call(["DEL", "s"]);
      await t.settle("B");
    });
  });
});

describe("delivery", () => {
  const script = runAll([
    ["XADD", "s", "1-1", "f", "v"],
    ["XADD", "s", "MAXLEN", "1", "2-1", "f", "v"],
    ["XGROUP", "CREATE", "s", "g", "0"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
    ["XGROUP", "CREATECONSUMER", "s", "g", "d"],
    ["XGROUP", "CREATE", "m", "g", "0", "MKSTREAM"],
    ["XDEL", "s", "2-1"],
    ["XSETID", "s", "5-1"],
    ["DEL", "m"],
  ]);

  for (const classes of ["KEAn", "Et", "Kt", "KEt", "KEg", "KEgn", "Etn", "KEA"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(servers, classes, script);
    });
  }

  test("a transaction's commands publish as they run", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["MULTI"],
        ["XADD", "s", "1-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "1", "2-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["XCLAIM", "s", "g", "d", "0", "2-1"],
        ["XAUTOCLAIM", "s", "g", "e", "0", "0"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "SETID", "s", "g", "0"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c"],
        ["XTRIM", "s", "MAXLEN", "0"],
        ["XSETID", "s", "1-1"],
        ["XSETID", "s", "9-9"],
        ["XDEL", "s", "2-1"],
        ["XGROUP", "DESTROY", "s", "g"],
        ["EXEC"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:xgroup-setid s");
  });

  test("in another database, the channels name it", async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["SELECT", "2"],
        ["XADD", "s", "1-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"],
        ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        ["SELECT", "0"],
      ]),
    );
  });
});
