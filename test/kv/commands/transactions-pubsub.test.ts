// Transactions (WATCH/MULTI/EXEC) and pub/sub across several real connections: each scenario
// runs on redis-server and on `svc kv`, and the transcripts — every command and every reply, on
// every connection, in order — must be identical. Where Redis leaves an order undefined (the
// channels of PUBSUB CHANNELS, the replies of UNSUBSCRIBE from everything) the transcript writes
// down a sorted form.
import { describe, expect, test } from "bun:test";
import { type RespValue, show } from "../support/resp-client.ts";
import { expectSameTranscripts, type Scenario } from "../support/scenario.ts";
import { redisAndKv } from "../support/side-by-side.ts";

/** redis-server and svc kv, up from before the first test until after the last. */
const servers = redisAndKv();

/** Plays the scenario on redis-server, then on svc kv; the transcripts must match. */
const sameAsRedis = (body: (s: Scenario) => Promise<void>) => expectSameTranscripts(servers, body);

describe("WATCH / MULTI / EXEC", () => {
  test("a write by another client to a watched key makes EXEC answer a null array and run nothing", async () => {
    const transcript = await sameAsRedis(async (s) => {
      await s.open("A", "B");
      await s.call("A", "SET", "k", "before");
      await s.call("A", "WATCH", "k", "unrelated");
      await s.call("B", "SET", "k", "theirs");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "mine");
      await s.call("A", "INCR", "counter");
      await s.call("A", "EXEC");
      await s.call("A", "MGET", "k", "counter");
      // The failed EXEC also forgot the watch: the next transaction runs.
      await s.call("B", "SET", "k", "again");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "mine");
      await s.call("A", "EXEC");
    });
    expect(transcript).toContain('A< {"nullArray":true}');
  });

  test("the transaction's own queued writes to a watched key do not abort it", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "WATCH", "k");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "1");
      await s.call("A", "INCR", "k");
      await s.call("A", "DEL", "k");
      await s.call("A", "EXEC");
    });
  });

  test("a write by the watching client itself before MULTI does abort it", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "WATCH", "k");
      await s.call("A", "SET", "k", "self");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "k");
      await s.call("A", "EXEC");
    });
  });

  test("writes that change nothing do not abort; every kind of change does", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B");
      await s.call("B", "SET", "k", "v");
      const attempt = async (...write: string[]) => {
        await s.call("A", "WATCH", "k");
        await s.call("B", ...write);
        await s.call("A", "MULTI");
        await s.call("A", "PING");
        await s.call("A", "EXEC");
      };
      await attempt("SET", "k", "other", "NX");
      await attempt("DEL", "missing");
      await attempt("INCR", "k");
      await attempt("GET", "k");
      await attempt("EXPIRE", "k", "100");
      await attempt("PERSIST", "k");
      await attempt("APPEND", "k", "x");
      await attempt("RENAME", "k", "k2");
      await attempt("RENAME", "k2", "k");
      await attempt("FLUSHDB");
      await attempt("SET", "k", "back");
    });
  });

  test("watching a missing key: creating it aborts; a write to the same name in another database does not", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B");
      await s.call("A", "WATCH", "k");
      await s.call("B", "SELECT", "1");
      await s.call("B", "SET", "k", "db1");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "k");
      await s.call("A", "EXEC");
      await s.call("A", "WATCH", "k");
      await s.call("B", "SELECT", "0");
      await s.call("B", "SET", "k", "db0");
      await s.call("B", "DEL", "k");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "k");
      await s.call("A", "EXEC");
    });
  });

  test("a watched key that expires before EXEC aborts the transaction", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B");
      // Expired and still untouched when EXEC runs.
      await s.call("A", "SET", "k", "v", "PX", "50");
      await s.call("A", "WATCH", "k");
      await Bun.sleep(150);
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "new");
      await s.call("A", "EXEC");
      // Expired, and then read (so deleted) by another client before EXEC.
      await s.call("A", "SET", "j", "v", "PX", "50");
      await s.call("A", "WATCH", "j");
      await Bun.sleep(150);
      await s.call("B", "GET", "j");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "j", "new");
      await s.call("A", "EXEC");
      // Already expired when watched: nothing changes after WATCH, so EXEC runs.
      await s.call("A", "SET", "e", "v", "PX", "1");
      await Bun.sleep(20);
      await s.call("A", "WATCH", "e");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "e");
      await s.call("A", "EXEC");
    });
  });

  test("UNWATCH and DISCARD forget the watched keys", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B");
      await s.call("A", "WATCH", "k");
      await s.call("A", "UNWATCH");
      await s.call("B", "SET", "k", "1");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "k");
      await s.call("A", "EXEC");
      await s.call("A", "WATCH", "k");
      await s.call("A", "MULTI");
      await s.call("A", "DISCARD");
      await s.call("B", "SET", "k", "2");
      await s.call("A", "MULTI");
      await s.call("A", "GET", "k");
      await s.call("A", "EXEC");
    });
  });

  test("WATCH inside MULTI is an error that does not spoil the transaction", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "MULTI");
      await s.call("A", "WATCH", "k");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "v");
      await s.call("A", "EXEC");
      await s.call("A", "EXEC");
      await s.call("A", "DISCARD");
    });
  });

  test("a command refused while queueing makes EXEC answer EXECABORT and run nothing", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "queued");
      await s.call("A", "SET", "k");
      await s.call("A", "NOSUCHCOMMAND", "x");
      await s.call("A", "INCR", "k");
      await s.call("A", "EXEC");
      await s.call("A", "EXISTS", "k");
      // The aborted transaction is over: a new one works.
      await s.call("A", "MULTI");
      await s.call("A", "SET", "k", "v");
      await s.call("A", "EXEC");
    });
  });

  test("an error while EXEC runs fails that command only: nothing is rolled back", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B");
      await s.call("A", "SET", "s", "not a number");
      await s.call("A", "MULTI");
      await s.call("A", "SET", "t", "1");
      await s.call("A", "INCR", "s");
      await s.call("A", "LPUSH", "s", "x");
      await s.call("A", "INCR", "t");
      await s.call("A", "EXPIRE", "t", "notanumber");
      await s.call("A", "EXEC");
      await s.call("B", "MGET", "s", "t");
    });
  });

  test("a transaction's PUBLISH and pushes take effect when EXEC runs, all at once", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "S");
      await s.callMany("S", 1, "SUBSCRIBE", "tx:news");
      s.send("B", "BLPOP", "tx:q", "0");
      await s.blocked(1);
      await s.call("A", "MULTI");
      await s.call("A", "PUBLISH", "tx:news", "queued");
      await s.call("A", "RPUSH", "tx:q", "queued");
      await s.call("A", "LLEN", "tx:q");
      await s.call("A", "EXEC");
      await s.read("S");
      await s.read("B");
    });
  });
});

/** UNSUBSCRIBE/PUNSUBSCRIBE from everything: the names sorted, and the counts in reply order. */
const unsubscribedFromAll = (replies: RespValue[]): string => {
  const items = replies as [string, string, bigint][];
  const kinds = [...new Set(items.map((r) => r[0]))];
  const names = items.map((r) => r[1]).sort();
  const counts = items.map((r) => r[2]);
  return `${show(kinds)} names ${show(names)} counts ${show(counts)}`;
};

/** An array reply sorted (PUBSUB CHANNELS: Redis walks a hash table). */
const sorted = (replies: RespValue[]): string => show((replies[0] as string[]).slice().sort());

describe("pub/sub", () => {
  test("SUBSCRIBE, PSUBSCRIBE and the messages they receive, byte for byte", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.callMany("A", 2, "SUBSCRIBE", "ps:one", "ps:two");
      await s.callMany("A", 1, "PSUBSCRIBE", "ps:news.*");
      await s.callMany("A", 1, "SUBSCRIBE", "ps:one");
      await s.call("P", "PUBLISH", "ps:one", "hello");
      await s.read("A");
      await s.call("P", "PUBLISH", "ps:news.sport", "goal");
      await s.read("A");
      await s.call("P", "PUBLISH", "ps:two", "\0\r\n\xff binary");
      await s.read("A");
      await s.call("P", "PUBLISH", "ps:nobody", "lost");
      await s.call("P", "PUBLISH", "ps:one", "");
      await s.read("A");
    });
  });

  test("PUBLISH counts every receiving subscription: channel and pattern, across clients", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      await s.callMany("A", 1, "SUBSCRIBE", "pc:ch");
      await s.callMany("A", 1, "PSUBSCRIBE", "pc:*");
      await s.callMany("B", 2, "PSUBSCRIBE", "pc:c?", "nomatch*");
      await s.call("P", "PUBLISH", "pc:ch", "m");
      // Redis delivers to channel subscribers first, then to patterns.
      await s.read("A");
      await s.read("A");
      await s.read("B");
      await s.call("P", "PUBLISH", "pc:xyz", "m2");
      await s.read("A");
    });
  });

  test("PUBSUB CHANNELS, NUMSUB and NUMPAT", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      await s.callMany("A", 3, "SUBSCRIBE", "in:a", "in:b", "other");
      await s.callMany("B", 1, "SUBSCRIBE", "in:a");
      await s.callMany("A", 2, "PSUBSCRIBE", "in:*", "x*");
      await s.callMany("B", 1, "PSUBSCRIBE", "in:*");
      s.send("P", "PUBSUB", "CHANNELS");
      await s.readMany("P", 1, sorted);
      s.send("P", "PUBSUB", "CHANNELS", "in:*");
      await s.readMany("P", 1, sorted);
      await s.call("P", "PUBSUB", "CHANNELS", "none*");
      await s.call("P", "PUBSUB", "NUMSUB", "in:a", "in:b", "missing", "in:a");
      await s.call("P", "PUBSUB", "NUMSUB");
      await s.call("P", "PUBSUB", "NUMPAT");
      await s.callMany("B", 1, "UNSUBSCRIBE", "in:a");
      await s.call("P", "PUBSUB", "NUMSUB", "in:a");
      await s.call("P", "PUBSUB", "NOSUCH");
    });
  });

  test("a RESP2 subscriber may only (un)subscribe, PING, QUIT and RESET", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.callMany("A", 1, "SUBSCRIBE", "ctx:ch");
      await s.call("A", "GET", "k");
      await s.call("A", "SET", "k", "v");
      await s.call("A", "PUBLISH", "ctx:ch", "self");
      await s.call("A", "MULTI");
      await s.call("A", "PING");
      await s.call("A", "PING", "hello");
      await s.call("A", "NOSUCHCOMMAND");
      await s.callMany("A", 1, "PSUBSCRIBE", "ctx:*");
      await s.callMany("A", 1, "UNSUBSCRIBE", "ctx:ch");
      await s.call("A", "GET", "k");
      await s.callMany("A", 1, "PUNSUBSCRIBE", "ctx:*");
      // Back in normal mode.
      await s.call("A", "GET", "k");
      await s.call("A", "PING");
    });
  });

  test("UNSUBSCRIBE and PUNSUBSCRIBE without arguments leave everything, one reply each", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.callMany("A", 3, "SUBSCRIBE", "u:a", "u:b", "u:c");
      await s.callMany("A", 2, "PSUBSCRIBE", "u:*", "v:*");
      await s.callMany("A", 1, "UNSUBSCRIBE", "u:not-subscribed");
      s.send("A", "UNSUBSCRIBE");
      await s.readMany("A", 3, unsubscribedFromAll);
      await s.call("P", "PUBLISH", "u:a", "still the pattern");
      await s.read("A");
      s.send("A", "PUNSUBSCRIBE");
      await s.readMany("A", 2, unsubscribedFromAll);
      await s.call("A", "UNSUBSCRIBE");
      await s.call("A", "PUNSUBSCRIBE");
      await s.call("P", "PUBLISH", "u:a", "nobody");
      await s.call("A", "PING");
    });
  });

  test("RESET leaves every subscription and returns the client to normal mode", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.callMany("A", 2, "SUBSCRIBE", "r:a", "r:b");
      await s.callMany("A", 1, "PSUBSCRIBE", "r:*");
      await s.call("A", "RESET");
      await s.call("P", "PUBLISH", "r:a", "gone");
      await s.call("P", "PUBSUB", "NUMPAT");
      await s.call("A", "GET", "k");
    });
  });

  test("over RESP3 messages are pushes and a subscriber may run any command", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.quietly("A", "HELLO", "3");
      await s.callMany("A", 1, "SUBSCRIBE", "r3:ch");
      await s.callMany("A", 1, "PSUBSCRIBE", "r3:*");
      await s.call("A", "SET", "k", "v");
      await s.call("A", "GET", "k");
      await s.call("P", "PUBLISH", "r3:ch", "pushed");
      await s.read("A");
      await s.read("A");
      await s.call("A", "PING");
      await s.callMany("A", 1, "UNSUBSCRIBE", "r3:ch");
      await s.call("A", "GET", "missing");
    });
  });

  test("a subscriber killed by CLIENT KILL receives nothing more, even from a PUBLISH in the same pipeline", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      await s.callMany("A", 1, "SUBSCRIBE", "k:ch");
      await s.callMany("B", 1, "SUBSCRIBE", "k:ch");
      s.pipeline("P", ["CLIENT", "KILL", "ID", s.idOf("A")], ["PUBLISH", "k:ch", "after the kill"], ["PUBSUB", "NUMSUB", "k:ch"]);
      await s.read("P");
      await s.read("P");
      await s.read("P");
      await s.read("B");
      await s.closed("A");
      s.unread("A");
    });
  });
});
