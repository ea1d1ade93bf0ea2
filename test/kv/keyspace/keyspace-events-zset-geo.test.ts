// Keyspace notifications of the sorted-set and geo commands against redis-server 7.0: the same
// commands on both servers must publish the same events, in the same order (see
// support/keyspace-events.ts). Every command is run where it changes something and where it
// changes nothing (which publishes nothing), on small sets and on sets past 128 members (which
// svc holds another way), and the blocking pops are served by another connection's write.
import { describe, test } from "bun:test";
import { expectSameEvents, runAll } from "../support/keyspace-events.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** ZADD's arguments for `count` members named `prefix0`, `prefix1`, … scored 0, 1, … */
const manyPairs = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => [String(i), `${prefix}${i}`]).flat();

/** GEOADD's arguments for `count` members in a line east of (10, 40), about 1 km apart. */
const manyPlaces = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, i) => [String(10 + i * 0.01), "40", `${prefix}${i}`]).flat();

describe("ZADD and ZINCRBY", () => {
  const script = runAll([
    ["ZADD", "z", "1", "a", "2", "b"],
    ["ZADD", "z", "1", "a"],
    ["ZADD", "z", "1", "a", "2", "b", "3", "c"],
    ["ZADD", "z", "5", "a"],
    ["ZADD", "z", "CH", "5", "a"],
    ["ZADD", "z", "CH", "6", "a"],
    ["ZADD", "z", "NX", "9", "a"],
    ["ZADD", "z", "NX", "9", "a", "4", "d"],
    ["ZADD", "z", "XX", "9", "e"],
    ["ZADD", "z", "XX", "9", "a"],
    ["ZADD", "missing", "XX", "1", "a"],
    ["ZADD", "z", "GT", "1", "a"],
    ["ZADD", "z", "GT", "10", "a"],
    ["ZADD", "z", "LT", "20", "a"],
    ["ZADD", "z", "LT", "CH", "0", "a"],
    ["ZADD", "z", "GT", "7", "f"],
    ["ZADD", "z", "GT", "XX", "7", "g"],
    ["ZADD", "z", "INCR", "1", "a"],
    ["ZADD", "z", "INCR", "0", "a"],
    ["ZADD", "z", "NX", "INCR", "1", "a"],
    ["ZADD", "z", "XX", "INCR", "1", "new"],
    ["ZADD", "z", "GT", "INCR", "-1", "a"],
    ["ZADD", "z", "LT", "INCR", "-1", "a"],
    ["ZADD", "inc", "INCR", "2", "m"],
    ["ZINCRBY", "z", "3", "a"],
    ["ZINCRBY", "z", "0", "a"],
    ["ZINCRBY", "zi", "1", "m"],
    ["ZINCRBY", "zi", "1.5", "n"],
    ["ZADD", "n", "inf", "m"],
    ["ZINCRBY", "n", "-inf", "m"],
    ["ZADD", "n", "INCR", "-inf", "m"],
    // Errors: nothing changes.
    ["ZADD", "z", "NX", "XX", "1", "a"],
    ["ZADD", "z", "1"],
    ["ZADD", "z", "x", "a"],
    ["ZADD", "z", "1", "a", "y", "b"],
    ["ZADD", "z", "INCR", "1", "a", "2", "b"],
    ["ZINCRBY", "z", "nan", "a"],
    ["SET", "s", "v"],
    ["ZADD", "s", "1", "a"],
    ["ZINCRBY", "s", "1", "a"],
    ["ZADD", "s", "XX", "1", "a"],
  ]);

  for (const classes of ["KEA", "KEAn", "Ez", "Kz", "Eg"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(servers, classes, script);
    });
  }

  test("past 128 members, and many pairs at once into a small set", async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["ZADD", "big", ...manyPairs("m", 200)],
        ["ZADD", "big", ...manyPairs("m", 200)],
        ["ZADD", "big", "1000", "m5"],
        ["ZADD", "big", "NX", ...manyPairs("m", 10)],
        ["ZINCRBY", "big", "1", "m7"],
        ["ZADD", "big", "GT", "1", "m150"],
        ["ZADD", "small", "1", "a"],
        ["ZADD", "small", ...manyPairs("p", 60)],
        ["ZADD", "small", ...manyPairs("p", 60)],
        ["ZADD", "small", ...manyPairs("q", 100)],
        ["ZADD", "long", "1", "x".repeat(100)],
      ]),
    );
  });
});

describe("ZREM and the range removals", () => {
  test("ZREM", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        ["ZREM", "z", "a"],
        ["ZREM", "z", "a"],
        ["ZREM", "z", "x", "y"],
        ["ZREM", "missing", "a"],
        ["ZREM", "z", "b", "b", "nope"],
        ["ZREM", "z", "c"],
        ["EXISTS", "z"],
        ["LPUSH", "l", "x"],
        ["ZREM", "l", "x"],
      ]),
    );
  });

  for (const classes of ["KEA", "Ez"]) {
    test(`ZREMRANGEBYSCORE, ZREMRANGEBYRANK and ZREMRANGEBYLEX, classes "${classes}"`, async () => {
      await expectSameEvents(
        servers,
        classes,
        runAll([
          ["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"],
          ["ZREMRANGEBYSCORE", "z", "10", "20"],
          ["ZREMRANGEBYSCORE", "z", "(1", "2"],
          ["ZREMRANGEBYSCORE", "missing", "-inf", "+inf"],
          ["ZREMRANGEBYRANK", "z", "5", "10"],
          ["ZREMRANGEBYRANK", "z", "2", "1"],
          ["ZREMRANGEBYRANK", "z", "-1", "-1"],
          ["ZREMRANGEBYRANK", "missing", "0", "-1"],
          ["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"],
          ["ZREMRANGEBYLEX", "lex", "[x", "[z"],
          ["ZREMRANGEBYLEX", "lex", "[a", "(c"],
          ["ZREMRANGEBYLEX", "missing", "-", "+"],
          // Emptying the set deletes the key.
          ["ZREMRANGEBYLEX", "lex", "-", "+"],
          ["ZREMRANGEBYSCORE", "z", "-inf", "3"],
          ["ZREMRANGEBYRANK", "z", "0", "-1"],
          ["EXISTS", "z", "lex"],
          // Bad ranges and other types.
          ["ZADD", "z", "1", "a"],
          ["ZREMRANGEBYSCORE", "z", "x", "1"],
          ["ZREMRANGEBYLEX", "z", "a", "b"],
          ["ZREMRANGEBYRANK", "z", "a", "1"],
          ["SET", "s", "v"],
          ["ZREMRANGEBYSCORE", "s", "0", "1"],
          ["ZREMRANGEBYRANK", "s", "0", "1"],
          ["ZREMRANGEBYLEX", "s", "-", "+"],
        ]),
      );
    });
  }

  test("on a set past 128 members", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["ZADD", "big", ...manyPairs("m", 300)],
        ["ZREM", "big", "m0", "m1", "nope"],
        ["ZREMRANGEBYSCORE", "big", "2", "9"],
        ["ZREMRANGEBYRANK", "big", "0", "9"],
        ["ZREMRANGEBYRANK", "big", "1000", "2000"],
        ["ZREMRANGEBYSCORE", "big", "-inf", "+inf"],
        // A lex range is only defined over equal scores.
        ["ZADD", "lex", ...Array.from({ length: 200 }, (_, i) => ["0", `m${i}`]).flat()],
        ["ZREMRANGEBYLEX", "lex", "[m3", "[m4"],
        ["ZREMRANGEBYLEX", "lex", "(m4", "[m5"],
        ["ZREMRANGEBYLEX", "lex", "-", "+"],
        ["EXISTS", "big", "lex"],
      ]),
    );
  });
});

describe("ZPOPMIN, ZPOPMAX and ZMPOP", () => {
  for (const classes of ["KEA", "Ez"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(
        servers,
        classes,
        runAll([
          ["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"],
          ["ZPOPMIN", "z"],
          ["ZPOPMAX", "z"],
          ["ZPOPMIN", "z", "0"],
          ["ZPOPMAX", "z", "0"],
          ["ZPOPMIN", "z", "2"],
          ["ZPOPMIN", "missing"],
          ["ZPOPMAX", "missing", "3"],
          ["ZPOPMIN", "z", "-1"],
          ["ZPOPMIN", "z", "x"],
          // Popping the last one, and more than there are, deletes the key.
          ["ZPOPMAX", "z", "10"],
          ["EXISTS", "z"],
          ["ZADD", "z", "1", "a"],
          ["ZPOPMIN", "z"],
          ["EXISTS", "z"],
          ["ZADD", "y", "1", "a", "2", "b", "3", "c"],
          ["ZMPOP", "2", "missing", "y", "MIN"],
          ["ZMPOP", "1", "y", "MAX", "COUNT", "1"],
          ["ZMPOP", "2", "missing", "other", "MIN"],
          ["ZMPOP", "1", "y", "MIN", "COUNT", "5"],
          ["EXISTS", "y"],
          ["ZMPOP", "1", "y", "MIN", "COUNT", "0"],
          ["ZMPOP", "0", "y", "MIN"],
          ["SET", "s", "v"],
          ["ZPOPMIN", "s"],
          ["ZPOPMAX", "s", "0"],
          ["ZMPOP", "2", "s", "y", "MIN"],
          ["ZADD", "y", "1", "a"],
          ["ZMPOP", "2", "y", "s", "MAX"],
        ]),
      );
    });
  }

  test("on a set past 128 members", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["ZADD", "big", ...manyPairs("m", 200)],
        ["ZPOPMIN", "big", "50"],
        ["ZPOPMAX", "big"],
        ["ZMPOP", "1", "big", "MAX", "COUNT", "100"],
        ["ZPOPMIN", "big", "1000"],
        ["EXISTS", "big"],
      ]),
    );
  });

  test("BZPOPMIN, BZPOPMAX and BZMPOP served at once, or timing out", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        ["BZPOPMIN", "missing", "z", "0"],
        ["BZPOPMAX", "z", "0"],
        ["BZMPOP", "0", "2", "missing", "z", "MIN", "COUNT", "5"],
        ["EXISTS", "z"],
        ["BZPOPMIN", "z", "0.01"],
        ["BZMPOP", "0.01", "1", "z", "MAX"],
        ["SET", "s", "v"],
        ["BZPOPMIN", "s", "0"],
        ["BZMPOP", "0", "1", "s", "MIN"],
        // Inside MULTI nothing blocks: a missing key answers nil at once.
        ["MULTI"],
        ["BZPOPMIN", "z", "0"],
        ["ZADD", "z", "1", "a"],
        ["BZPOPMAX", "z", "0"],
        ["EXEC"],
      ]),
    );
  });
});

describe("blocked pops served by another connection's write", () => {
  for (const classes of ["KEA", "KEAn", "Ez"]) {
    test(`ZADD, ZINCRBY and GEOADD wake BZPOPMIN, BZPOPMAX and BZMPOP, classes "${classes}"`, async () => {
      await expectSameEvents(servers, classes, async (t) => {
        // The one member added is popped: the key is created and deleted.
        await t.send(["BZPOPMIN", "q", "0"], "B");
        await t.call(["ZADD", "q", "1", "a"]);
        await t.settle("B");
        // Two of three popped: the key stays.
        await t.send(["BZMPOP", "0", "2", "other", "q", "MAX", "COUNT", "2"], "B");
        await t.call(["ZADD", "q", "1", "a", "2", "b", "3", "c"]);
        await t.settle("B");
        await t.call(["ZPOPMIN", "q"]);
        await t.send(["BZPOPMAX", "x", "q", "0"], "B");
        await t.call(["ZINCRBY", "q", "5", "m"]);
        await t.settle("B");
        await t.send(["BZMPOP", "0", "1", "g", "MIN"], "B");
        await t.call(["GEOADD", "g", "10", "40", "place"]);
        await t.settle("B");
        // Two waiting on the same key, one member: the first is served, the second waits on.
        await t.send(["BZPOPMIN", "w", "0"], "B");
        await t.send(["BZPOPMAX", "w", "0"], "C");
        await t.call(["ZADD", "w", "1", "a"]);
        await t.settle("B");
        await t.call(["ZADD", "w", "2", "b", "3", "c"]);
        await t.settle("C");
        await t.call(["ZRANGE", "w", "0", "-1"]);
      });
    });
  }

  test("a transaction's ZADDs, and a *STORE creating the key, wake a blocked pop after their events", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BZPOPMIN", "q", "0"], "B");
      await t.call(["MULTI"]);
      await t.call(["ZADD", "q", "1", "a"]);
      await t.call(["ZADD", "q", "2", "b"]);
      await t.call(["ZREM", "q", "a"]);
      await t.call(["EXEC"]);
      await t.settle("B");
      await t.call(["ZADD", "src", "1", "a", "2", "b"]);
      await t.send(["BZMPOP", "0", "1", "dst", "MAX", "COUNT", "5"], "B");
      await t.call(["ZUNIONSTORE", "dst", "1", "src"]);
      await t.settle("B");
      await t.send(["BZPOPMIN", "dst", "0"], "B");
      await t.call(["ZRANGESTORE", "dst", "src", "0", "0"]);
      await t.settle("B");
      await t.send(["BZPOPMAX", "dst", "0"], "B");
      await t.call(["GEOADD", "geo", "10", "40", "a", "11", "40", "b"]);
      await t.call(["GEOSEARCHSTORE", "dst", "geo", "FROMLONLAT", "10", "40", "BYRADIUS", "500", "km"]);
      await t.settle("B");
    });
  });

  test("a set past 128 members wakes BZMPOP", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.send(["BZMPOP", "0", "1", "big", "MIN", "COUNT", "150"], "B");
      await t.call(["ZADD", "big", ...manyPairs("m", 200)]);
      await t.settle("B");
      await t.send(["BZPOPMAX", "big2", "0"], "B");
      await t.call(["ZADD", "big2", ...manyPairs("m", 129)]);
      await t.settle("B");
    });
  });
});

describe("ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and ZRANGESTORE", () => {
  for (const classes of ["KEA", "KEAn", "Ez"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(
        servers,
        classes,
        runAll([
          ["ZADD", "a", "1", "x", "2", "y", "3", "z"],
          ["ZADD", "b", "1", "y", "5", "w"],
          ["ZUNIONSTORE", "u", "2", "a", "b"],
          ["ZUNIONSTORE", "u", "2", "a", "b", "WEIGHTS", "2", "3"],
          ["ZUNIONSTORE", "u", "1", "missing"],
          ["ZUNIONSTORE", "u", "1", "missing"],
          ["ZINTERSTORE", "i", "2", "a", "b"],
          ["ZINTERSTORE", "i", "2", "a", "b", "AGGREGATE", "MAX"],
          ["ZINTERSTORE", "i", "2", "a", "missing"],
          ["ZINTERSTORE", "i", "2", "a", "missing"],
          ["ZDIFFSTORE", "d", "2", "a", "b"],
          ["ZDIFFSTORE", "d", "2", "a", "a"],
          ["ZDIFFSTORE", "d", "1", "missing"],
          // A result stored over its own source, and a plain set as a source.
          ["ZUNIONSTORE", "a", "2", "a", "b"],
          ["SADD", "plain", "x", "q"],
          ["ZINTERSTORE", "ps", "2", "plain", "a"],
          ["ZRANGESTORE", "r", "a", "0", "1"],
          ["ZRANGESTORE", "r", "a", "0", "-1", "REV"],
          ["ZRANGESTORE", "r", "a", "(1", "2", "BYSCORE"],
          ["ZRANGESTORE", "r", "a", "10", "20"],
          ["ZRANGESTORE", "r", "a", "10", "20"],
          ["ZRANGESTORE", "r", "missing", "0", "-1"],
          ["ZRANGESTORE", "r2", "a", "[a", "[z", "BYLEX"],
          ["ZRANGESTORE", "r2", "a", "5", "0", "BYSCORE"],
          // Over a key of another type; errors change nothing.
          ["SET", "str", "v"],
          ["ZUNIONSTORE", "str", "1", "a"],
          ["SET", "str", "v"],
          ["ZINTERSTORE", "str", "1", "missing"],
          ["SET", "str", "v"],
          ["ZRANGESTORE", "str", "a", "0", "0"],
          ["SET", "str", "v"],
          ["ZRANGESTORE", "str", "missing", "0", "0"],
          ["ZUNIONSTORE", "u", "2", "a", "str"],
          ["ZDIFFSTORE", "d", "1", "str"],
          ["ZRANGESTORE", "r", "str", "0", "-1"],
          ["ZUNIONSTORE", "u", "0", "a"],
          ["ZINTERSTORE", "i", "2", "a"],
          ["ZRANGESTORE", "r", "a", "0", "-1", "WITHSCORES"],
          ["ZUNIONSTORE", "u", "1", "a", "WEIGHTS", "x"],
          ["EXISTS", "u", "i", "d", "r", "r2", "str"],
        ]),
      );
    });
  }

  test("results past 128 members", async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["ZADD", "big", ...manyPairs("m", 200)],
        ["ZADD", "other", ...manyPairs("m", 150)],
        ["ZUNIONSTORE", "u", "2", "big", "other"],
        ["ZINTERSTORE", "i", "2", "big", "other"],
        ["ZDIFFSTORE", "d", "2", "big", "other"],
        ["ZDIFFSTORE", "d", "2", "other", "big"],
        ["ZRANGESTORE", "r", "big", "0", "149"],
        ["ZRANGESTORE", "r", "big", "0", "-1", "REV"],
        ["ZRANGESTORE", "r", "big", "1000", "2000"],
        ["EXISTS", "u", "i", "d", "r"],
      ]),
    );
  });

  test("key misses of the sources (class m)", async () => {
    await expectSameEvents(
      servers,
      "KEAm",
      runAll([
        ["ZADD", "a", "1", "x"],
        ["ZUNIONSTORE", "u", "2", "a", "missing"],
        ["ZINTERSTORE", "i", "2", "missing", "a"],
        ["ZDIFFSTORE", "d", "2", "a", "missing"],
        ["ZRANGESTORE", "r", "missing", "0", "-1"],
        ["ZREM", "missing", "x"],
        ["ZADD", "new", "1", "x"],
        ["ZPOPMIN", "missing"],
        ["ZMPOP", "1", "missing", "MIN"],
        ["ZREMRANGEBYRANK", "missing", "0", "1"],
        ["ZINCRBY", "new2", "1", "x"],
        ["GEOADD", "g", "10", "40", "p"],
        ["GEORADIUS", "missing", "10", "40", "1", "km", "STORE", "dst"],
        ["GEOSEARCHSTORE", "dst", "missing", "FROMLONLAT", "10", "40", "BYRADIUS", "1", "km"],
        ["GEOSEARCH", "missing", "FROMLONLAT", "10", "40", "BYRADIUS", "1", "km"],
      ]),
    );
  });
});

describe("GEOADD", () => {
  for (const classes of ["KEA", "KEAn", "Ez"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(
        servers,
        classes,
        runAll([
          ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
          ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
          ["GEOADD", "g", "CH", "13.361389", "38.115556", "Palermo"],
          ["GEOADD", "g", "13.4", "38.1", "Palermo"],
          ["GEOADD", "g", "CH", "13.5", "38.1", "Palermo"],
          ["GEOADD", "g", "NX", "1", "1", "Palermo"],
          ["GEOADD", "g", "NX", "1", "1", "Palermo", "2", "2", "Rome"],
          ["GEOADD", "g", "XX", "1", "1", "Milan"],
          ["GEOADD", "g", "XX", "1", "1", "Rome"],
          ["GEOADD", "missing", "XX", "1", "1", "a"],
          ["GEOADD", "g", "XX", "CH", "1", "1", "Rome"],
          ["GEOADD", "other", "NX", "1", "1", "a"],
          // Errors change nothing.
          ["GEOADD", "g", "200", "1", "bad"],
          ["GEOADD", "g", "1", "1", "ok", "1", "100", "bad"],
          ["GEOADD", "g", "NX", "XX", "1", "1", "a"],
          ["GEOADD", "g", "1", "1"],
          ["SET", "s", "v"],
          ["GEOADD", "s", "1", "1", "a"],
          ["GEOADD", "s", "XX", "1", "1", "a"],
        ]),
      );
    });
  }

  test("past 128 members", async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["GEOADD", "g", ...manyPlaces("p", 200)],
        ["GEOADD", "g", ...manyPlaces("p", 200)],
        ["GEOADD", "g", "NX", ...manyPlaces("q", 10)],
        ["GEOADD", "g", "1", "1", "p5"],
      ]),
    );
  });
});

describe("GEORADIUS, GEORADIUSBYMEMBER and GEOSEARCHSTORE storing", () => {
  for (const classes of ["KEA", "KEAn", "Ez"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(
        servers,
        classes,
        runAll([
          ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania", "2.35", "48.85", "Paris"],
          ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "r"],
          ["GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "r"],
          ["GEORADIUS", "g", "15", "37", "200", "km", "COUNT", "1", "STORE", "r2"],
          ["GEORADIUS", "g", "15", "37", "200", "km"],
          ["GEORADIUSBYMEMBER", "g", "Palermo", "300", "km", "STORE", "rm"],
          ["GEORADIUSBYMEMBER", "g", "Paris", "1", "km", "STOREDIST", "rm"],
          ["GEOSEARCHSTORE", "s", "g", "FROMMEMBER", "Palermo", "BYBOX", "500", "500", "km"],
          ["GEOSEARCHSTORE", "s", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "STOREDIST"],
          // Finding nothing deletes the destination, if there is one.
          ["GEORADIUS", "g", "100", "0", "1", "km", "STORE", "r"],
          ["GEORADIUS", "g", "100", "0", "1", "km", "STORE", "r"],
          ["GEORADIUSBYMEMBER", "g", "Paris", "1", "m", "STORE", "r2"],
          ["GEORADIUSBYMEMBER", "g", "Paris", "1", "m", "STORE", "r2"],
          ["GEOSEARCHSTORE", "s", "g", "FROMLONLAT", "100", "0", "BYRADIUS", "1", "km"],
          ["GEOSEARCHSTORE", "s", "g", "FROMLONLAT", "100", "0", "BYRADIUS", "1", "km"],
          // A missing source, onto an existing destination and a missing one.
          ["ZADD", "r", "1", "a"],
          ["GEORADIUS", "missing", "15", "37", "200", "km", "STORE", "r"],
          ["GEORADIUS", "missing", "15", "37", "200", "km", "STORE", "r"],
          ["ZADD", "s", "1", "a"],
          ["GEOSEARCHSTORE", "s", "missing", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
          ["GEOSEARCHSTORE", "s", "missing", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
          ["ZADD", "rm", "1", "a"],
          ["GEORADIUSBYMEMBER", "missing", "Palermo", "300", "km", "STORE", "rm"],
          // Over a key of another type; over its own source.
          ["SET", "str", "v"],
          ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "str"],
          ["SET", "str", "v"],
          ["GEOSEARCHSTORE", "str", "g", "FROMLONLAT", "100", "0", "BYRADIUS", "1", "km"],
          ["GEOSEARCHSTORE", "g", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "10", "km"],
          // Errors change nothing.
          ["GEORADIUSBYMEMBER", "g", "nobody", "1", "km", "STORE", "rm"],
          ["GEORADIUS", "g", "15", "37", "200", "km", "WITHDIST", "STORE", "r"],
          ["GEOSEARCHSTORE", "s", "g", "FROMLONLAT", "15", "37"],
          ["GEORADIUS", "str", "15", "37", "200", "km", "STORE", "r"],
          ["GEOSEARCHSTORE", "s", "str", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
          ["EXISTS", "r", "r2", "rm", "s", "str", "g"],
        ]),
      );
    });
  }

  test("results past 128 members", async () => {
    await expectSameEvents(
      servers,
      "KEAn",
      runAll([
        ["GEOADD", "g", ...manyPlaces("p", 200)],
        ["GEORADIUS", "g", "10", "40", "500", "km", "STORE", "r"],
        ["GEORADIUS", "g", "10", "40", "500", "km", "COUNT", "150", "STOREDIST", "r"],
        ["GEOSEARCHSTORE", "s", "g", "FROMMEMBER", "p0", "BYBOX", "1000", "1000", "km"],
        ["GEOSEARCHSTORE", "s", "g", "FROMMEMBER", "p0", "BYBOX", "1", "1", "m"],
        ["EXISTS", "r", "s"],
      ]),
    );
  });
});
