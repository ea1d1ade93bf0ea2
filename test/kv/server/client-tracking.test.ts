// Client-side caching (CLIENT TRACKING) against redis-server 7.0: the same commands on the same
// connections must give the same replies and the same invalidation messages, in the same places
// (support/tracking-transcript.ts). Default mode, OPTIN/OPTOUT, BCAST with prefixes, NOLOOP,
// REDIRECT to RESP3 and to subscribed RESP2 clients, flushes, transactions, scripts, the
// options' errors, CLIENT TRACKINGINFO/GETREDIR/LIST and INFO's counts.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { expectSameTracking, type TrackingTranscript } from "../support/tracking-transcript.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Runs each command on its connection: [connection, ...argv]. */
const script = (t: TrackingTranscript, steps: readonly (readonly string[])[]) =>
  steps.reduce((done, [name, ...argv]) => done.then(() => t.call(name!, ...argv).then(() => {})), Promise.resolve());

describe("default mode", () => {
  test("a key read by a tracking client is invalidated once, on its first change by anyone", async () => {
    const lines = await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("B");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on"],
        ["A", "GET", "k"],
        ["B", "SET", "k", "1"],
        ["B", "SET", "k", "2"],
        ["A", "MGET", "k", "j", "i"],
        ["B", "MSET", "j", "1", "i", "2"],
        ["B", "DEL", "k"],
        // Read and failed (WRONGTYPE), or missing: remembered all the same.
        ["B", "SET", "s", "x"],
        ["A", "HGET", "s", "f"],
        ["A", "STRLEN", "missing"],
        ["B", "LPUSH", "missing", "a"],
        ["B", "APPEND", "s", "y"],
        // Reads of any type; the name is tracked whatever database it is in.
        ["B", "SADD", "set", "m"],
        ["A", "SMEMBERS", "set"],
        ["A", "SELECT", "2"],
        ["B", "SELECT", "2"],
        ["B", "SADD", "set", "n"],
        ["A", "GET", "k2"],
        ["B", "SELECT", "0"],
        ["B", "SET", "k2", "v"],
        // Writes do not track what they read or write.
        ["A", "SELECT", "0"],
        ["A", "INCR", "n"],
        ["B", "INCR", "n"],
        ["A", "GETSET", "g", "v"],
        ["B", "DEL", "g"],
        ["A", "CLIENT", "TRACKING", "off"],
        ["A", "GET", "off"],
        ["B", "SET", "off", "1"],
      ]);
    });
    expect(lines).toContain('A! ["invalidate",["k"]]');
  });

  test("a change a client makes to a key it tracks is told after the reply; NOLOOP leaves it out", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("N");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on"],
        ["A", "GET", "k"],
        ["A", "SET", "k", "1"],
        ["A", "GET", "k"],
        ["A", "GET", "j"],
        ["A", "MULTI"],
        ["A", "SET", "k", "2"],
        ["A", "GET", "k"],
        ["A", "SET", "j", "2"],
        ["A", "EXEC"],
        ["A", "EVAL", "redis.call('GET', KEYS[1]); redis.call('SET', KEYS[1], 'x'); return redis.call('GET', KEYS[2])", "2", "e", "f"],
        ["A", "SET", "f", "y"],
        ["N", "CLIENT", "TRACKING", "on", "NOLOOP"],
        ["N", "GET", "k"],
        ["N", "SET", "k", "3"],
        ["N", "GET", "k"],
        ["A", "SET", "k", "4"],
      ]);
    });
  });

  test("a script's read tracks the keys its command declares (EVAL_RO's too), a script with no read tracks nothing, read-only or not", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("B");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on"],
        ["A", "EVAL_RO", "return redis.call('GET', 'read')", "1", "declared"],
        ["B", "SET", "declared", "1"],
        ["B", "SET", "read", "1"],
        // EVAL_RO is read-only itself, yet remembers nothing when its script reads nothing.
        ["A", "EVAL_RO", "return redis.call('PING')", "2", "ro1", "ro2"],
        ["A", "EVAL", "return redis.call('PING')", "1", "ro3"],
        ["B", "MSET", "ro2", "1", "ro1", "1", "ro3", "1"],
        ["A", "EVAL", "return redis.call('GET', KEYS[1])", "1", "e"],
        ["B", "SET", "e", "1"],
        ["A", "FCALL_RO", "nothing", "0"],
      ]);
    });
  });

  test("a blocked BLMOVE served by another's push: the invalidation of the key it moved into, which it tracks, follows its reply", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("B");
      await script(t, [
        ["B", "RPUSH", "list2", "a"],
        ["A", "CLIENT", "TRACKING", "on"],
        ["A", "LRANGE", "list2", "0", "-1"],
        ["B", "CLIENT", "TRACKING", "on"],
        ["B", "GET", "list1"],
      ]);
      await t.block("A", "BLMOVE", "list1", "list2", "LEFT", "LEFT", "0");
      await t.call("B", "RPUSH", "list1", "foo");
      await t.receive("A");
      await t.call("A", "LRANGE", "list2", "0", "-1");
    });
  });

  test("OPTIN tracks only after CLIENT CACHING YES, OPTOUT all but after CLIENT CACHING NO", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("I");
      await t.connect("O");
      await t.connect("W");
      await script(t, [
        ["I", "CLIENT", "TRACKING", "on", "OPTIN"],
        ["I", "GET", "a"],
        ["I", "CLIENT", "CACHING", "yes"],
        ["I", "CLIENT", "TRACKINGINFO"],
        ["I", "GET", "b"],
        ["I", "GET", "c"],
        ["I", "CLIENT", "TRACKINGINFO"],
        ["I", "CLIENT", "CACHING", "yes"],
        ["I", "MULTI"],
        ["I", "GET", "d"],
        ["I", "GET", "e"],
        ["I", "EXEC"],
        ["I", "GET", "f"],
        ["O", "CLIENT", "TRACKING", "on", "OPTOUT"],
        ["O", "GET", "a"],
        ["O", "CLIENT", "CACHING", "no"],
        ["O", "GET", "b2"],
        ["O", "GET", "c2"],
        ["W", "MSET", "a", "1", "b", "1", "c", "1", "d", "1", "e", "1", "f", "1", "b2", "1", "c2", "1"],
        ["I", "CLIENT", "CACHING", "no"],
        ["O", "CLIENT", "CACHING", "yes"],
        ["I", "CLIENT", "CACHING", "maybe"],
        ["W", "CLIENT", "CACHING", "yes"],
      ]);
    });
  });
});

describe("BCAST", () => {
  test("changed keys under a client's prefixes come once per turn, per prefix, in byte order", async () => {
    const lines = await expectSameTracking(servers, async (t) => {
      await t.connect("P");
      await t.connect("All");
      await t.connect("W");
      await script(t, [
        ["P", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "order:"],
        ["All", "CLIENT", "TRACKING", "on", "BCAST"],
        ["W", "MSET", "user:2", "a", "user:1", "b", "order:9", "c", "other", "d"],
        ["W", "DEL", "user:2", "nothing"],
        ["W", "MULTI"],
        ["W", "SET", "user:3", "x"],
        ["W", "SET", "user:3", "y"],
        ["W", "LPUSH", "order:1", "z"],
        ["W", "EXEC"],
        ["P", "GET", "user:1"],
        ["W", "SET", "other", "e"],
        ["P", "CLIENT", "TRACKINGINFO"],
        ["All", "CLIENT", "TRACKINGINFO"],
        ["P", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x"],
        ["P", "CLIENT", "TRACKINGINFO"],
        ["W", "SET", "xy", "1"],
        ["P", "CLIENT", "TRACKING", "off"],
        ["W", "SET", "user:1", "c"],
      ]);
    });
    expect(lines.some((l) => l.startsWith('P! ["invalidate",["user:1","user:2"]]'))).toBe(true);
  });

  test("NOLOOP leaves out the keys the client itself changed first", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("N");
      await t.connect("W");
      await script(t, [
        ["N", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"],
        ["N", "SET", "own", "1"],
        ["W", "SET", "theirs", "1"],
        ["N", "MULTI"],
        ["N", "SET", "a", "1"],
        ["N", "SET", "b", "1"],
        ["N", "EXEC"],
      ]);
    });
  });

  test("the options' errors, in Redis's order", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("B", 2);
      await script(t, [
        ["A", "CLIENT", "TRACKING", "maybe"],
        ["A", "CLIENT", "TRACKING", "on", "PREFIX", "a"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "OPTIN"],
        ["A", "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"],
        ["A", "CLIENT", "TRACKING", "on", "REDIRECT", "999999"],
        ["A", "CLIENT", "TRACKING", "on", "REDIRECT", "abc"],
        ["A", "CLIENT", "TRACKING", "on", "REDIRECT", "0"],
        ["A", "CLIENT", "TRACKING", "on", "BOGUS"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"],
        ["A", "CLIENT", "TRACKING", "on", "PREFIX"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "abc"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "abcd"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "abc"],
        ["A", "CLIENT", "TRACKING", "on"],
        ["A", "CLIENT", "TRACKING", "off"],
        ["A", "CLIENT", "TRACKING", "on", "OPTIN"],
        ["A", "CLIENT", "TRACKING", "on", "OPTOUT"],
        ["A", "CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP"],
        ["A", "CLIENT", "TRACKINGINFO"],
        ["A", "CLIENT", "TRACKING", "on", "BCAST"],
        ["A", "CLIENT", "TRACKING", "off", "BCAST"],
        ["A", "CLIENT", "TRACKING", "off"],
        ["B", "CLIENT", "TRACKING", "on"],
        ["B", "CLIENT", "TRACKINGINFO"],
        ["B", "CLIENT", "GETREDIR"],
        ["B", "CLIENT", "CACHING", "yes"],
      ]);
    });
  });
});

describe("redirection and flushes", () => {
  test("invalidations to another RESP3 client, and to a subscribed RESP2 one on __redis__:invalidate", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("R3");
      await t.connect("R2", 2);
      await t.connect("C", 2);
      await t.connect("W");
      await t.call("R2", "SUBSCRIBE", "__redis__:invalidate");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on", "REDIRECT", t.id("R3")],
        ["A", "CLIENT", "GETREDIR"],
        ["A", "CLIENT", "TRACKINGINFO"],
        ["A", "GET", "k"],
        ["W", "SET", "k", "1"],
        ["C", "CLIENT", "TRACKING", "on", "REDIRECT", t.id("R2")],
        ["C", "GET", "k"],
        ["C", "GET", "j"],
        ["W", "SET", "k", "2"],
        ["C", "SET", "j", "1"],
        ["C", "GET", "j"],
        ["W", "FLUSHALL"],
        ["A", "GET", "x"],
        ["C", "FLUSHDB"],
      ]);
    });
  });

  test("a redirect target that leaves breaks the redirection, and the client is told", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("R");
      await t.connect("W");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on", "REDIRECT", t.id("R")],
        ["A", "GET", "k"],
        ["A", "GET", "j"],
      ]);
      await t.close("R");
      await script(t, [
        ["W", "SET", "k", "1"],
        ["A", "CLIENT", "TRACKINGINFO"],
        ["W", "SET", "j", "1"],
        ["A", "CLIENT", "GETREDIR"],
      ]);
    });
  });

  test("FLUSHALL and FLUSHDB tell every tracking client, the flushing one after its reply", async () => {
    await expectSameTracking(servers, async (t) => {
      await t.connect("A");
      await t.connect("B");
      await t.connect("X");
      await script(t, [
        ["A", "CLIENT", "TRACKING", "on"],
        ["B", "CLIENT", "TRACKING", "on", "BCAST"],
        ["A", "GET", "k"],
        ["A", "FLUSHALL"],
        ["X", "SET", "k", "1"],
        ["A", "GET", "k"],
        ["X", "FLUSHDB"],
        ["X", "SET", "k", "2"],
        ["X", "SWAPDB", "0", "1"],
        ["A", "RESET"],
        ["X", "FLUSHALL"],
      ]);
    });
  });
});

describe("what the server reports", () => {
  test("INFO's tracking counts, CLIENT LIST's flags and redir", async () => {
    const counts = async (port: number) => {
      const { RespClient } = await import("../support/resp-client.ts");
      const [a, b, w] = await Promise.all([RespClient.connect(port), RespClient.connect(port), RespClient.connect(port)]);
      await w.call("FLUSHALL");
      await a.call("HELLO", "3");
      await b.call("HELLO", "3");
      await a.call("CLIENT", "TRACKING", "on");
      await a.call("MGET", "x", "y", "z");
      await b.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p", "PREFIX", "q");
      await b.call("GET", "x");
      const info = String(await w.call("INFO", "everything"));
      const fields = ["tracking_clients", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes"].map(
        (f) => new RegExp(`${f}:\\d+`).exec(info)![0],
      );
      const list = String(await w.call("CLIENT", "LIST"));
      const flags = list
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => `${/flags=(\w+)/.exec(l)![1]} ${/redir=(-?\d+)/.exec(l)![1]}`)
        .sort();
      await w.call("SET", "x", "1");
      const after = /tracking_total_items:\d+/.exec(String(await w.call("INFO", "stats")))![0];
      for (const c of [a, b, w]) c.close();
      return { fields, flags, after };
    };
    const redis = await counts(servers.redis.port);
    const kv = await counts(servers.kv.port);
    expect(kv).toEqual(redis);
    expect(kv.fields).toEqual(["tracking_clients:2", "tracking_total_keys:3", "tracking_total_items:3", "tracking_total_prefixes:2"]);
  });

  test("tracking-table-max-keys bounds the keys remembered: those past it are invalidated", async () => {
    const { RespClient } = await import("../support/resp-client.ts");
    const [a, b, w] = await Promise.all([RespClient.connect(servers.kv.port), RespClient.connect(servers.kv.port), RespClient.connect(servers.kv.port)]);
    await a.call("HELLO", "3");
    await b.call("HELLO", "3");
    await w.call("CONFIG", "SET", "tracking-table-max-keys", "3");
    await a.call("CLIENT", "TRACKING", "on");
    await b.call("CLIENT", "TRACKING", "on", "BCAST");
    const reply = await a.call("MGET", "k1", "k2", "k3", "k4", "k5");
    expect(reply).toEqual(Array(5).fill({ nil: true }));
    const messages = [await a.read(), await a.read()];
    expect(messages).toEqual([{ push: ["invalidate", ["k1"]] }, { push: ["invalidate", ["k2"]] }]);
    // Forgetting a key is no change to it: a BCAST client hears nothing (Redis's table limit alike).
    expect(await b.call("PING")).toEqual({ s: "PONG" });
    b.close();
    expect(String(await w.call("INFO", "stats"))).toContain("tracking_total_keys:3");
    await w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000");
    a.close();
    w.close();
  });

  test("a bound lowered by CONFIG SET holds on an idle server: keys past it are invalidated with no command after", async () => {
    const { RespClient } = await import("../support/resp-client.ts");
    for (const server of [servers.redis, servers.kv]) {
      const [a, w] = await Promise.all([RespClient.connect(server.port), RespClient.connect(server.port)]);
      await a.call("HELLO", "3");
      await a.call("CLIENT", "TRACKING", "on");
      expect(await a.call("MGET", "idle1", "idle2")).toEqual([{ nil: true }, { nil: true }]);
      await w.call("CONFIG", "SET", "tracking-table-max-keys", "1");
      // Redis forgets one at random, svc the one read first: either way one of the two, told
      // by the server's periodic run (no command is sent until the message has come).
      const message = (await a.read()) as { push: [string, string[]] };
      expect(message.push[0]).toBe("invalidate");
      expect(message.push[1]).toHaveLength(1);
      expect(["idle1", "idle2"]).toContain(message.push[1][0]!);
      expect(String(await w.call("INFO", "stats"))).toContain("tracking_total_keys:1");
      await w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000");
      a.close();
      w.close();
    }
  });
});

describe("generated", () => {
  const key = fc.constantFrom("a", "b", "user:1", "user:2");
  const conn = fc.constantFrom("A", "B", "C");
  const step = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(conn, fc.constantFrom("GET", "STRLEN", "EXISTS", "TYPE"), key).map((s) => [...s]) },
    { weight: 1, arbitrary: fc.tuple(conn, key, key).map(([c, k, j]) => [c, "MGET", k, j]) },
    { weight: 4, arbitrary: fc.tuple(conn, fc.constantFrom("SET", "APPEND"), key).map(([c, cmd, k]) => [c, cmd, k, "v"]) },
    { weight: 2, arbitrary: fc.tuple(conn, fc.constantFrom("DEL", "INCR", "PERSIST"), key).map((s) => [...s]) },
    { weight: 1, arbitrary: fc.tuple(conn, key, key).map(([c, k, j]) => [c, "RENAME", k, j]) },
    { weight: 1, arbitrary: conn.map((c) => [c, "CLIENT", "CACHING", "yes"]) },
    { weight: 1, arbitrary: conn.map((c) => [c, "FLUSHDB"]) },
    // Other types, expiry, a script that reads and writes, a transaction, another database.
    {
      weight: 2,
      arbitrary: fc
        .tuple(conn, fc.constantFrom("HGET", "LRANGE", "SCARD", "ZSCORE"), key)
        .map(([c, cmd, k]) => (cmd === "LRANGE" ? [c, cmd, k, "0", "-1"] : cmd === "SCARD" ? [c, cmd, k] : [c, cmd, k, "m"])),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(conn, fc.constantFrom("HSET", "LPUSH", "SADD", "ZADD"), key)
        .map(([c, cmd, k]) => (cmd === "HSET" ? [c, cmd, k, "m", "v"] : cmd === "ZADD" ? [c, cmd, k, "1", "m"] : [c, cmd, k, "m"])),
    },
    { weight: 1, arbitrary: fc.tuple(conn, key).map(([c, k]) => [c, "EXPIRE", k, "0"]) },
    {
      weight: 1,
      arbitrary: fc.tuple(conn, key, key).map(([c, k, j]) => [c, "EVAL", "redis.call('GET', KEYS[1]); return redis.call('SET', KEYS[2], 'x')", "2", k, j]),
    },
    { weight: 1, arbitrary: fc.tuple(conn, key).map(([c, k]) => [c, "EVAL_RO", "return redis.call('GET', KEYS[1])", "1", k]) },
    { weight: 1, arbitrary: fc.tuple(conn, fc.constantFrom("0", "1")).map(([c, db]) => [c, "SELECT", db]) },
  );
  const setup = fc.constantFrom<string[][]>(
    [
      ["A", "CLIENT", "TRACKING", "on"],
      ["B", "CLIENT", "TRACKING", "on", "NOLOOP"],
    ],
    [
      ["A", "CLIENT", "TRACKING", "on", "OPTIN"],
      ["B", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:"],
    ],
    [
      ["A", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"],
      ["B", "CLIENT", "TRACKING", "on", "OPTOUT", "NOLOOP"],
    ],
  );

  test("sequences of reads and writes on three clients give redis-server's messages", async () => {
    await fc.assert(
      fc.asyncProperty(setup, fc.array(step, { minLength: 3, maxLength: 25 }), async (first, steps) => {
        await expectSameTracking(servers, async (t) => {
          for (const name of ["A", "B", "C"]) await t.connect(name);
          await script(t, [...first, ...steps]);
        });
      }),
      { numRuns: Number(process.env.SVC_DIFF_RUNS ?? 40) },
    );
  }, 120_000);
});
