// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN) across several real
// connections: each scenario runs on redis-server and on `svc kv`, and the transcripts — every
// command and every reply, on every connection, in order — must be identical. Waiting points
// ("3 clients are blocked") come from the server's INFO, so no scenario depends on a sleep.
import { describe, expect, test } from "bun:test";
import { expectSameTranscripts, type Scenario } from "../support/scenario.ts";
import { redisAndKv } from "../support/side-by-side.ts";

/** redis-server and svc kv, up from before the first test until after the last. */
const servers = redisAndKv();

/** Plays the scenario on redis-server, then on svc kv; the transcripts must match. */
const sameAsRedis = (body: (s: Scenario) => Promise<void>) => expectSameTranscripts(servers, body);

describe("wake-up order", () => {
  test("clients blocked on one key are served first come, first served", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BLPOP", "q", "0");
      await s.blocked(2);
      s.send("C", "BRPOP", "q", "0");
      await s.blocked(3);
      for (const [element, left] of [
        ["first", 2],
        ["second", 1],
        ["third", 0],
      ] as const) {
        await s.call("P", "RPUSH", "q", element);
        await s.blocked(left);
      }
      await s.read("A");
      await s.read("B");
      await s.read("C");
      await s.call("P", "EXISTS", "q");
    });
  });

  test("one RPUSH of several elements serves several blocked clients at once, in blocking order", async () => {
    const transcript = await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BRPOP", "q", "0");
      await s.blocked(2);
      s.send("C", "BLPOP", "q", "0");
      await s.blocked(3);
      await s.call("P", "RPUSH", "q", "1", "2", "3", "4");
      await s.read("A");
      await s.read("B");
      await s.read("C");
      await s.blocked(0);
      await s.call("P", "LRANGE", "q", "0", "-1");
    });
    // The reply to RPUSH is the length before anyone was served, as Redis serves after the command.
    expect(transcript).toContain('P< ":4"');
  });

  test("LPUSH of several elements inside MULTI serves waiters once EXEC is done", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BLPOP", "q", "0");
      await s.blocked(2);
      await s.call("P", "MULTI");
      await s.call("P", "LPUSH", "q", "x", "y", "z");
      await s.call("P", "LLEN", "q");
      await s.call("P", "EXEC");
      await s.read("A");
      await s.read("B");
      await s.call("P", "LRANGE", "q", "0", "-1");
    });
  });

  test("a client blocked on several keys is served from the key that got data first", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      s.send("A", "BLPOP", "k1", "k2", "k3", "0");
      await s.blocked(1);
      await s.call("P", "RPUSH", "k3", "from-k3");
      await s.read("A");
      // Two keys become ready in one transaction: k2 was pushed first, so A is served from k2.
      s.send("A", "BLPOP", "k1", "k2", "k3", "0");
      await s.blocked(1);
      await s.call("P", "MULTI");
      await s.call("P", "RPUSH", "k2", "from-k2");
      await s.call("P", "RPUSH", "k1", "from-k1");
      await s.call("P", "EXEC");
      await s.read("A");
      await s.call("P", "LRANGE", "k1", "0", "-1");
      // With data already there, the first key named that has data answers at once.
      await s.call("P", "RPUSH", "k3", "again");
      await s.call("A", "BLPOP", "k2", "k3", "k1", "0");
      // A waits on k1 and k2, B on k2 alone: a push to k2 goes to A, who blocked first.
      await s.call("P", "DEL", "k1", "k2", "k3");
      s.send("A", "BLPOP", "k1", "k2", "0");
      await s.blocked(1);
      s.send("B", "BLPOP", "k2", "0");
      await s.blocked(2);
      await s.call("P", "RPUSH", "k2", "one");
      await s.blocked(1);
      await s.call("P", "RPUSH", "k2", "two");
      await s.read("A");
      await s.read("B");
    });
  });

  test("a key set to another type keeps its waiters blocked until it holds a list again", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "Z", "P");
      s.send("A", "BLPOP", "k", "0");
      await s.blocked(1);
      s.send("Z", "BZPOPMIN", "k", "0");
      await s.blocked(2);
      await s.call("P", "SET", "k", "a string");
      await s.call("P", "DEL", "k");
      await s.call("P", "ZADD", "k", "2", "two", "1", "one");
      await s.blocked(1);
      await s.read("Z");
      await s.call("P", "DEL", "k");
      await s.call("P", "RPUSH", "k", "v");
      await s.blocked(0);
      await s.read("A");
    });
  });

  test("commands a blocked client pipelined after the blocking one run, in order, once it is served", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      s.pipeline("A", ["BLPOP", "q", "0"], ["PING"], ["RPUSH", "mine", "x"], ["LLEN", "mine"]);
      await s.blocked(1);
      await s.call("P", "EXISTS", "mine");
      await s.call("P", "RPUSH", "q", "v");
      for (let i = 0; i < 4; i++) await s.read("A");
    });
  });
});

describe("BLMOVE and BRPOPLPUSH", () => {
  test("a chain of blocked moves passes one element along in a single push", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "D", "P");
      s.send("A", "BLMOVE", "src", "mid", "LEFT", "RIGHT", "0");
      await s.blocked(1);
      s.send("B", "BRPOPLPUSH", "mid", "mid2", "0");
      await s.blocked(2);
      s.send("C", "BLMOVE", "mid2", "dst", "RIGHT", "LEFT", "0");
      await s.blocked(3);
      s.send("D", "BLPOP", "dst", "0");
      await s.blocked(4);
      await s.call("P", "RPUSH", "src", "baton");
      await s.read("A");
      await s.read("B");
      await s.read("C");
      await s.read("D");
      await s.blocked(0);
      await s.call("P", "EXISTS", "src", "mid", "mid2", "dst");
    });
  });

  test("a blocked BLMOVE onto its own source rotates the list", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      s.send("A", "BLMOVE", "ring", "ring", "LEFT", "RIGHT", "0");
      await s.blocked(1);
      await s.call("P", "RPUSH", "ring", "a", "b", "c");
      await s.read("A");
      await s.call("P", "LRANGE", "ring", "0", "-1");
    });
  });

  test("BLMOVE to a key of the wrong type answers WRONGTYPE and leaves the element in place", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.call("P", "SET", "dst", "string");
      s.send("A", "BLMOVE", "src", "dst", "LEFT", "LEFT", "0");
      await s.blocked(1);
      await s.call("P", "RPUSH", "src", "v");
      await s.read("A");
      await s.call("P", "LRANGE", "src", "0", "-1");
    });
  });
});

describe("timeouts", () => {
  const timeoutSeconds = 0.2;
  /** Lower bound only: a timed-out client must not be answered much before its timeout. */
  const earliestMs = timeoutSeconds * 1000 * 0.75;

  test("each blocking command answers its own null reply after roughly its timeout", async () => {
    const elapsed: number[] = [];
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "D", "E", "F");
      const started = performance.now();
      const t = String(timeoutSeconds);
      s.send("A", "BLPOP", "none", t);
      s.send("B", "BRPOP", "none", "none2", t);
      s.send("C", "BLMOVE", "none", "dst", "LEFT", "RIGHT", t);
      s.send("D", "BRPOPLPUSH", "none", "dst", t);
      s.send("E", "BZPOPMIN", "nonez", t);
      s.send("F", "BLMPOP", t, "2", "none", "none2", "LEFT", "COUNT", "3");
      for (const name of ["A", "B", "C", "D", "E", "F"]) {
        await s.read(name);
        elapsed.push(performance.now() - started);
      }
      await s.blocked(0);
      await s.call("A", "EXISTS", "dst");
    });
    for (const ms of elapsed) expect(ms).toBeGreaterThanOrEqual(earliestMs);
  });

  test("data arriving before the timeout wins; the timeout then never fires", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      s.send("A", "BLPOP", "q", "5");
      await s.blocked(1);
      await s.call("P", "RPUSH", "q", "in-time");
      await s.read("A");
      await s.call("A", "PING");
    });
  });

  test("bad timeouts are refused at once with Redis's errors", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      for (const bad of ["-1", "-2.5", "abc", "", "nan", " 1", "1 ", "1s"]) {
        await s.call("A", "BLPOP", "q", bad);
        await s.call("A", "BLMOVE", "q", "d", "LEFT", "LEFT", bad);
        await s.call("A", "BZPOPMIN", "z", bad);
      }
      await s.blocked(0);
    });
  });

  // Redis 7.0 reads the timeout as a long double and converts seconds * 1000 to a long long with
  // no range check (src/kv/kit/timeout-arg.ts): infinities and products past 2^63 ms become LLONG_MIN,
  // "timeout is negative"; past the long double's own range, or NaN, is "not a float".
  test("timeouts beyond a long long of milliseconds are negative; beyond a long double, not a float", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      for (const edge of [
        "inf",
        "+inf",
        "-inf",
        "infinity",
        "1e400",
        "-1e400",
        "1e300",
        "9.3e15",
        "9223372036854775.808",
        "-9223372036854775.809",
        "1e5000",
        "1e-5000",
        "nan",
        " 1",
        "1 ",
        "0x",
      ]) {
        await s.call("A", "BLPOP", "q", edge);
      }
      await s.blocked(0);
    });
  });

  // ... and milliseconds are rounded up: a negative amount above -1 ms becomes 0, which means
  // no timeout at all — -0.001 among them, its long double being a hair above -1/1000. The
  // clients are still blocked after longer than any timeout near those, and are served by a push.
  test("negative timeouts above -1 ms, -0.001 included, block without a deadline", async () => {
    await sameAsRedis(async (s) => {
      const edges = ["-0.001", "-0.0009", "-0.0005", "-1e-400", "-0"];
      const names = edges.map((_, i) => `C${i}`);
      await s.open(...names, "P");
      for (const [i, edge] of edges.entries()) {
        s.send(names[i]!, "BLPOP", "q", edge);
        await s.blocked(i + 1);
      }
      await Bun.sleep(50);
      await s.blocked(edges.length);
      await s.call("P", "RPUSH", "q", ...names.map((n) => `for-${n}`));
      await s.blocked(0);
      for (const name of names) await s.read(name);
    });
  });

  test("positive timeouts under a millisecond wait one millisecond", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      for (const edge of ["0.001", "0.0009", "1e-400", "3.6e-4951", "0x0.01p-4"]) await s.call("A", "BLPOP", "q", edge);
      await s.blocked(0);
    });
  });
});

describe("inside MULTI", () => {
  test("blocking commands in a transaction answer at once instead of blocking", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "RPUSH", "full", "x", "y");
      await s.call("A", "MULTI");
      await s.call("A", "BLPOP", "empty", "0");
      await s.call("A", "BRPOP", "empty", "full", "0");
      await s.call("A", "BLMOVE", "empty", "dst", "LEFT", "LEFT", "0");
      await s.call("A", "BRPOPLPUSH", "full", "dst", "0");
      await s.call("A", "BZPOPMAX", "emptyz", "0");
      await s.call("A", "BLMPOP", "0", "1", "empty", "RIGHT");
      await s.call("A", "EXEC");
      await s.blocked(0);
      await s.call("A", "LRANGE", "dst", "0", "-1");
    });
  });
});

describe("clients that go away while blocked", () => {
  test("CLIENT KILL of a blocked client closes it unanswered, and the next waiter gets the data", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BLPOP", "q", "0");
      await s.blocked(2);
      await s.kill("A");
      await s.closed("A");
      s.unread("A");
      await s.blocked(1);
      await s.call("P", "RPUSH", "q", "v");
      await s.read("B");
      await s.call("P", "LLEN", "q");
    });
  });

  test("a push pipelined right after CLIENT KILL of the first waiter goes to the second", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BLPOP", "q", "0");
      await s.blocked(2);
      s.pipeline("P", ["CLIENT", "KILL", "ID", s.idOf("A")], ["RPUSH", "q", "v"], ["LLEN", "q"]);
      await s.read("P");
      await s.read("P");
      await s.read("P");
      await s.read("B");
      await s.closed("A");
      s.unread("A");
    });
  });

  test("a blocked client that disconnects is forgotten: later pushes serve the others or stay in the list", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "P");
      s.send("A", "BLPOP", "q", "0");
      await s.blocked(1);
      s.send("B", "BLMOVE", "q", "dst", "LEFT", "LEFT", "0");
      await s.blocked(2);
      s.send("C", "BLPOP", "q", "0");
      await s.blocked(3);
      await s.disconnect("A");
      await s.disconnect("C");
      await s.blocked(1);
      await s.call("P", "RPUSH", "q", "1", "2");
      await s.read("B");
      await s.call("P", "LRANGE", "q", "0", "-1");
      await s.call("P", "LRANGE", "dst", "0", "-1");
    });
  });
});
