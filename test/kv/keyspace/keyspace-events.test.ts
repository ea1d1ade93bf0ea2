// Keyspace notifications (CONFIG notify-keyspace-events) against redis-server 7.0: the same
// commands on both servers must publish the same events, in the same order, on the same
// channels (support/keyspace-events.ts writes them down between the commands). This file holds
// the configuration, the events of commands on any key, strings, bitmaps and HyperLogLogs, and
// the delivery rules (classes, channel kinds, transactions, scripts, expiry).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { expectSameEvents, runAll } from "../support/keyspace-events.ts";
import { show, withClient } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** What each server answers to setting each of `values` and reading it back; the two must agree. */
async function configTranscripts(values: readonly string[]): Promise<string[][]> {
  const seen: string[][] = [];
  for (const server of [servers.redis, servers.kv]) {
    seen.push(
      await withClient(server.port, async (c) => {
        const lines: string[] = [];
        for (const value of values) {
          const set = await c.call("CONFIG", "SET", "notify-keyspace-events", value);
          lines.push(`${JSON.stringify(value)} -> ${show(set)} ${show(await c.call("CONFIG", "GET", "notify-keyspace-events"))}`);
        }
        await c.call("CONFIG", "SET", "notify-keyspace-events", "");
        return lines;
      }),
    );
  }
  expect(seen[1]).toEqual(seen[0]!);
  return seen;
}

describe("CONFIG notify-keyspace-events", () => {
  test("reads back as Redis writes it, and refuses a letter that is no class", async () => {
    const values = ["KEA", "AKE", "gKE", "K", "E", "Kgx$lshzetdnm", "Ag$", "KEAmn", "KEQ", "", "d", "AKEtm", "Exg", "n", "KEn", "lsK", "A", "x", "$E"];
    const [, kv] = await configTranscripts(values);
    expect(kv).toContain(`"KEA" -> {"s":"OK"} ["notify-keyspace-events","AKE"]`);
  });

  test("any string of letters: the same answer and the same value read back as redis-server's", async () => {
    const letters = fc.constantFrom(..."Ag$lshzxeKEtmdnQa1 ".split(""));
    await configTranscripts(
      fc.sample(
        fc.array(letters, { maxLength: 12 }).map((l) => l.join("")),
        { numRuns: 300, seed: 5 },
      ),
    );
  });
});

describe("commands on keys of any type", () => {
  test("DEL, UNLINK, EXPIRE and PERSIST", async () => {
    const t = await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SET", "a", "1"],
        ["SET", "b", "2"],
        ["SET", "c", "3"],
        ["DEL", "a", "missing", "b"],
        ["UNLINK", "c", "c"],
        ["SET", "k", "v"],
        ["EXPIRE", "k", "100"],
        ["PEXPIRE", "k", "200000"],
        ["EXPIREAT", "k", "4000000000"],
        ["PEXPIREAT", "k", "4000000000000"],
        ["EXPIRE", "k", "50", "GT"],
        ["EXPIRE", "k", "5000000", "NX"],
        ["EXPIRE", "missing", "10"],
        ["PERSIST", "k"],
        ["PERSIST", "k"],
        // A time already past deletes the key: a "del", not an "expire".
        ["EXPIRE", "k", "0"],
        ["SET", "k", "v"],
        ["PEXPIREAT", "k", "1"],
        ["SET", "k", "v"],
        ["EXPIRE", "k", "-5"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:del a");
  });

  test("RENAME, RENAMENX, MOVE and COPY", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SET", "a", "1"],
        ["RENAME", "a", "b"],
        ["SET", "c", "3"],
        ["RENAME", "b", "c"],
        ["RENAME", "c", "c"],
        ["RENAME", "missing", "x"],
        ["SET", "p", "1"],
        ["RENAMENX", "p", "c"],
        ["RENAMENX", "p", "q"],
        ["RENAMENX", "q", "q"],
        ["EXPIRE", "q", "100"],
        ["RENAME", "q", "r"],
        ["MOVE", "r", "1"],
        ["SET", "r", "again"],
        ["MOVE", "r", "1"],
        ["SELECT", "1"],
        ["MOVE", "r", "0"],
        ["SELECT", "0"],
        ["COPY", "c", "d"],
        ["COPY", "c", "d"],
        ["COPY", "c", "d", "REPLACE"],
        ["COPY", "c", "e", "DB", "2"],
        ["COPY", "missing", "f"],
      ]),
    );
  });

  test("RESTORE and SORT … STORE", async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.call(["RPUSH", "l", "3", "1", "2"]);
      const dump = (await t.call(["DUMP", "l"])) as string;
      for (const argv of [
        ["RESTORE", "m", "0", dump],
        ["RESTORE", "m", "0", dump],
        ["RESTORE", "m", "0", dump, "REPLACE"],
        ["RESTORE", "n", "100000", dump],
        ["SORT", "l", "STORE", "sorted"],
        ["SORT", "missing", "STORE", "sorted"],
        ["SORT", "missing", "STORE", "sorted"],
      ])
        await t.call(argv);
      // Each server's payload is its own RDB version's: written down as a placeholder.
      for (let i = 0; i < t.lines.length; i++) {
        t.lines[i] = t.lines[i]!.startsWith("A< ") && t.lines[i - 1] === "A> DUMP l" ? "A< <payload>" : t.lines[i]!.split(dump).join("<payload>");
      }
    });
  });

  test('a key that expires is an "expired" event, whether a lookup or the active cycle finds it', async () => {
    await expectSameEvents(servers, "KEA", async (t) => {
      await t.call(["SET", "lazy", "v", "PX", "30"]);
      await t.call(["SET", "active", "v", "PX", "30"]);
      await t.call(["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
      await Bun.sleep(60);
      await t.call(["GET", "lazy"]);
      await t.call(["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
      // The active cycle runs ten times a second: give it time to meet the key.
      for (let i = 0; i < 50 && (await t.call(["DBSIZE"])) !== 0n; i++) await Bun.sleep(20);
      // Only what the cycle published counts; how many DBSIZEs it took is timing.
      t.lines.splice(0, t.lines.length, ...t.lines.filter((l) => l.startsWith("!")));
    });
  });

  test("new keys (class n) and key misses (class m)", async () => {
    const t = await expectSameEvents(
      servers,
      "KEAnm",
      runAll([
        ["SET", "a", "1"],
        ["SET", "a", "2"],
        ["GET", "a"],
        ["GET", "missing"],
        ["EXISTS", "missing", "a"],
        ["TTL", "missing"],
        ["TYPE", "missing"],
        ["OBJECT", "ENCODING", "missing"],
        ["LPUSH", "l", "x"],
        ["LPUSH", "l", "y"],
        ["HGET", "h", "f"],
        ["SADD", "s", "m"],
        ["RENAME", "a", "b"],
        ["RENAME", "b", "l"],
        ["COPY", "l", "c"],
        ["MSET", "a", "1", "z", "2"],
        ["INCR", "counter"],
        ["INCR", "counter"],
        ["APPEND", "ap", "x"],
        ["SETRANGE", "sr", "2", "x"],
        ["SETBIT", "bits", "3", "1"],
        ["PFADD", "hll", "a"],
        ["DEL", "a", "z"],
        ["MGET", "a", "b", "c"],
      ]),
    );
    expect(t).toContain("! __keyevent@0__:new a");
    expect(t).toContain("! __keyevent@0__:keymiss missing");
  });
});

describe("strings, bitmaps and HyperLogLogs", () => {
  test("SET and its forms", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SET", "k", "v"],
        ["SET", "k", "v", "EX", "100"],
        ["SET", "k", "v", "PX", "100000", "GET"],
        ["SET", "k", "v", "KEEPTTL"],
        ["SET", "k", "w", "NX"],
        ["SET", "k", "w", "XX"],
        ["SET", "new", "w", "XX"],
        ["SET", "k", "v", "EXAT", "4000000000"],
        ["SETNX", "k", "v"],
        ["SETNX", "k2", "v"],
        ["SETEX", "k3", "100", "v"],
        ["PSETEX", "k4", "100000", "v"],
        ["GETSET", "k", "x"],
        ["GETSET", "k5", "x"],
        ["GETDEL", "k"],
        ["GETDEL", "k"],
        ["GETEX", "k2", "EX", "100"],
        ["GETEX", "k2", "PERSIST"],
        ["GETEX", "k2"],
        ["GETEX", "k2", "PXAT", "1"],
        ["GETEX", "k2", "EX", "5"],
        ["MSET", "a", "1", "b", "2", "a", "3"],
        ["MSETNX", "c", "1", "a", "2"],
        ["MSETNX", "c", "1", "d", "2"],
      ]),
    );
  });

  test("APPEND, SETRANGE, INCR and its kin", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["APPEND", "a", "x"],
        ["APPEND", "a", "y"],
        ["APPEND", "a", ""],
        ["SETRANGE", "r", "3", "abc"],
        ["SETRANGE", "r", "0", ""],
        ["SETRANGE", "missing", "0", ""],
        ["INCR", "n"],
        ["DECR", "n"],
        ["INCRBY", "n", "5"],
        ["DECRBY", "n", "2"],
        ["INCRBYFLOAT", "n", "1.5"],
        ["INCR", "a"],
        ["INCRBYFLOAT", "f", "0"],
      ]),
    );
  });

  test("SETBIT, BITFIELD and BITOP", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SETBIT", "b", "7", "1"],
        ["SETBIT", "b", "7", "1"],
        ["SETBIT", "b", "100", "0"],
        ["BITFIELD", "bf", "SET", "u8", "0", "255"],
        ["BITFIELD", "bf", "GET", "u8", "0"],
        ["BITFIELD", "bf", "INCRBY", "u8", "0", "1"],
        ["BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"],
        ["BITFIELD", "missing", "GET", "u8", "0"],
        ["BITFIELD_RO", "bf", "GET", "u8", "0"],
        ["SET", "x", "ab"],
        ["BITOP", "AND", "dest", "x", "b"],
        ["BITOP", "NOT", "dest", "x"],
        ["BITOP", "OR", "dest", "missing1", "missing2"],
        ["BITOP", "OR", "dest", "missing1"],
      ]),
    );
  });

  test("PFADD, PFMERGE and PFCOUNT", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["PFADD", "h", "a", "b"],
        ["PFADD", "h", "a"],
        ["PFADD", "h"],
        ["PFADD", "empty"],
        ["PFADD", "empty"],
        ["PFMERGE", "m", "h", "empty"],
        ["PFMERGE", "m"],
        ["PFMERGE", "n2"],
        ["PFCOUNT", "h"],
        ["PFCOUNT", "h", "m"],
      ]),
    );
  });
});

describe("which events go out", () => {
  const script = runAll([
    ["SET", "k", "v"],
    ["LPUSH", "l", "a"],
    ["EXPIRE", "k", "100"],
    ["DEL", "k", "l"],
  ]);

  for (const classes of ["K$", "E$", "Kl", "El", "Eg", "KE$l", "g", "$", "KEg$lshzxet", "Ax", "KEA"]) {
    test(`classes "${classes}"`, async () => {
      await expectSameEvents(servers, classes, script);
    });
  }

  test("a transaction's and a script's commands publish as they run", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["MULTI"],
        ["SET", "a", "1"],
        ["INCR", "a"],
        ["DEL", "a"],
        ["EXEC"],
        ["EVAL", "redis.call('SET', KEYS[1], 'x'); redis.call('APPEND', KEYS[1], 'y'); return redis.call('DEL', KEYS[1])", "1", "s"],
      ]),
    );
  });

  test("in another database, the channels name it", async () => {
    await expectSameEvents(
      servers,
      "KEA",
      runAll([
        ["SELECT", "3"],
        ["SET", "k", "v"],
        ["DEL", "k"],
        ["SELECT", "0"],
      ]),
    );
  });
});
