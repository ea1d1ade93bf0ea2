// XREAD and XREADGROUP with BLOCK across several real connections: each scenario runs on
// redis-server and on `svc kv`, and the transcripts — every command and every reply, on every
// connection, in order — must be identical. Waiting points come from the server's INFO
// (blocked_clients), so no scenario depends on a sleep; the one timeout is checked for its reply.
import { describe, expect, test } from "bun:test";
import { type Scenario, expectSameTranscripts } from "../../support/scenario.ts";
import { redisAndKv } from "../../support/side-by-side.ts";

const servers = redisAndKv();
const sameAsRedis = (body: (s: Scenario) => Promise<void>) => expectSameTranscripts(servers, body);

describe("XREAD BLOCK", () => {
  test("clients waiting on $ are served by the next XADD, each with the entries after its own ID", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "P");
      await s.call("P", "XADD", "s", "1-0", "f", "old");
      s.send("A", "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
      await s.blocked(1);
      s.send("B", "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "other", "s", "0-0", "1-0");
      await s.blocked(2);
      // A client blocked on a key that does not exist yet, with $: any first entry serves it.
      s.send("C", "XREAD", "BLOCK", "0", "STREAMS", "fresh", "$");
      await s.blocked(3);
      // A write to a key nobody waits on wakes no one.
      await s.call("P", "XADD", "unrelated", "1-0", "f", "v");
      await s.blocked(3);
      await s.call("P", "XADD", "s", "2-0", "f", "new", "g", "more");
      await s.blocked(1);
      await s.read("A");
      await s.read("B");
      await s.call("P", "XADD", "fresh", "5-0", "f", "v");
      await s.blocked(0);
      await s.read("C");
    });
  });

  test("BLOCK inside MULTI answers at once as if timed out; a served read inside MULTI answers entries", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "XADD", "s", "1-0", "f", "v");
      await s.call("A", "MULTI");
      await s.call("A", "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
      await s.call("A", "XREAD", "BLOCK", "0", "STREAMS", "s", "0");
      await s.call("A", "EXEC");
    });
  });

  test("a timed-out XREAD gets a null array; bad BLOCK values are refused", async () => {
    const transcript = await sameAsRedis(async (s) => {
      await s.open("A");
      await s.call("A", "XREAD", "BLOCK", "50", "STREAMS", "s", "$");
      await s.call("A", "XREAD", "BLOCK", "-1", "STREAMS", "s", "$");
      await s.call("A", "XREAD", "BLOCK", "1.5", "STREAMS", "s", "$");
      await s.call("A", "XREAD", "BLOCK", "abc", "STREAMS", "s", "$");
    });
    expect(transcript.join("\n")).toContain("timeout is negative");
  });
});

describe("XREADGROUP BLOCK", () => {
  test("a blocked consumer is delivered the new entries, which become pending to it (NOACK: not)", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "P");
      await s.call("P", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
      s.send("A", "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">");
      await s.blocked(1);
      s.send("B", "XREADGROUP", "GROUP", "g", "bob", "NOACK", "BLOCK", "0", "STREAMS", "s", ">");
      await s.blocked(2);
      // The consumers are made only once served.
      await s.call("P", "XINFO", "GROUPS", "s");
      await s.call("P", "XADD", "s", "1-0", "f", "1");
      await s.blocked(1);
      await s.read("A");
      await s.call("P", "XADD", "s", "2-0", "f", "2");
      await s.blocked(0);
      await s.read("B");
      await s.call("P", "XPENDING", "s", "g");
      await s.call("P", "XINFO", "GROUPS", "s");
    });
  });

  test("deleting or overwriting the key ends a consumer's wait with UNBLOCKED; a plain XREAD waits on", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "B", "C", "P");
      await s.call("P", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
      await s.call("P", "XGROUP", "CREATE", "t", "g", "$", "MKSTREAM");
      s.send("A", "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">");
      await s.blocked(1);
      s.send("B", "XREAD", "BLOCK", "0", "STREAMS", "s", "$");
      await s.blocked(2);
      s.send("C", "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "t", ">");
      await s.blocked(3);
      await s.call("P", "DEL", "s");
      await s.blocked(2);
      await s.read("A");
      await s.call("P", "SET", "t", "a string now");
      await s.blocked(1);
      await s.read("C");
      // B still waits for entries in s: a new stream there serves it.
      await s.call("P", "XADD", "s", "1-1", "f", "v");
      await s.blocked(0);
      await s.read("B");
    });
  });

  test("destroying the group answers its blocked consumers NOGROUP", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.call("P", "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
      s.send("A", "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">");
      await s.blocked(1);
      await s.call("P", "XGROUP", "DESTROY", "s", "g");
      await s.blocked(0);
      await s.read("A");
    });
  });

  test("moving the group back (XGROUP SETID) wakes no consumer, nor do other changes to the stream; the next entry delivers all that is due", async () => {
    await sameAsRedis(async (s) => {
      await s.open("A", "P");
      await s.call("P", "XADD", "s", "1-1", "f", "v1");
      await s.call("P", "XGROUP", "CREATE", "s", "g", "$");
      s.send("A", "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">");
      await s.blocked(1);
      // 1-1 is after the group's last ID again, but Redis 7.0 signals only new entries.
      await s.call("P", "XGROUP", "SETID", "s", "g", "0");
      await s.call("P", "XREADGROUP", "GROUP", "g", "bob", "NOACK", "STREAMS", "s", "0");
      await s.call("P", "XTRIM", "s", "MAXLEN", "5");
      await s.blocked(1);
      await s.call("P", "XADD", "s", "2-1", "f", "v2");
      await s.blocked(0);
      await s.read("A");
    });
  });
});
