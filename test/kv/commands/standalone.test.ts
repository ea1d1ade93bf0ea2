// The replication and cluster commands a standalone server answers (src/kv/commands/standalone.ts),
// side by side with redis-server 7.0 (no replicas, cluster mode off): the same replies, errors
// included, and WAIT for a replica waits out its timeout — in MULTI it cannot, and answers 0.
import { describe, expect, test } from "bun:test";
import type { RespValue } from "../support/resp-client.ts";
import { pipelineOnBoth, redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

const onBoth = (commands: string[][]) => pipelineOnBoth(s, commands);

describe("a standalone server's replication and cluster answers, side by side with redis-server", () => {
  test("ROLE, WAIT without replicas to wait for, and their errors", async () => {
    const [redis, kv] = await onBoth([
      ["ROLE"],
      ["WAIT", "0", "0"],
      ["WAIT", "-1", "0"],
      ["WAIT", "0", "100"],
      ["WAIT", "a", "0"],
      ["WAIT", "a", "abc"],
      ["WAIT", "0", "-1"],
      ["WAIT", "0", "abc"],
      ["WAIT", "99999999999999999999", "0"],
      ["WAIT", "1"],
      ["MULTI"],
      ["WAIT", "1", "0"],
      ["EXEC"],
    ]);
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual(["master", 0n, []]);
    expect(kv.at(-1)).toEqual([0n]);
  });

  test("WAIT for a replica waits out its timeout, then answers 0", async () => {
    for (const client of [s.redisClient, s.kvClient]) {
      const started = performance.now();
      expect(await client.call("WAIT", "1", "150")).toBe(0n);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    }
  });

  test("CLUSTER, READONLY, READWRITE and ASKING are refused: cluster support is disabled", async () => {
    const [redis, kv] = await onBoth([
      ["CLUSTER", "INFO"],
      ["CLUSTER", "SLOTS"],
      ["CLUSTER", "NODES"],
      ["CLUSTER", "KEYSLOT", "foo"],
      ["CLUSTER", "HELP"],
      ["CLUSTER", "nope"],
      ["CLUSTER"],
      // Each subcommand's arity is checked before the refusal, as Redis declares it.
      ["CLUSTER", "NODES", "extra"],
      ["CLUSTER", "KEYSLOT"],
      ["CLUSTER", "reset", "hard"],
      // RESET is noscript: a script is refused it before cluster mode is looked at.
      ["EVAL", "return redis.pcall('cluster', 'reset', 'hard')", "0"],
      ["EVAL", "return redis.pcall('cluster', 'info')", "0"],
      ["COMMAND", "GETKEYS", "cluster", "nope"],
      // Nobody's replica: replicaof (and its old name) is empty, and not set by CONFIG SET.
      ["CONFIG", "GET", "replicaof"],
      ["CONFIG", "GET", "slaveof"],
      ["CONFIG", "SET", "replicaof", "127.0.0.1 6379"],
      ["READONLY"],
      ["READWRITE"],
      ["ASKING"],
      ["READONLY", "x"],
    ]);
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual({ e: "ERR This instance has cluster support disabled" });
  });

  test("REPLICAOF NO ONE stays a master; FAILOVER's arguments are checked, then refused for want of replicas", async () => {
    const [redis, kv] = await onBoth([
      ["REPLICAOF", "NO", "ONE"],
      ["SLAVEOF", "no", "one"],
      ["REPLICAOF", "127.0.0.1", "notaport"],
      ["REPLICAOF", "127.0.0.1", "-1"],
      ["REPLICAOF", "127.0.0.1", "65536"],
      ["REPLICAOF", "NO", "TWO"],
      ["REPLICAOF", "a"],
      ["EVAL", "return redis.pcall('replicaof', 'no', 'one')", "0"],
      ["ROLE"],
      ["FAILOVER"],
      ["FAILOVER", "ABORT"],
      ["FAILOVER", "TO", "127.0.0.1", "6380"],
      ["FAILOVER", "TO", "127.0.0.1", "6380", "FORCE"],
      ["FAILOVER", "FORCE"],
      ["FAILOVER", "TIMEOUT", "100"],
      ["FAILOVER", "TIMEOUT", "-1"],
      ["FAILOVER", "TIMEOUT", "0"],
      ["FAILOVER", "TIMEOUT", "x"],
      ["FAILOVER", "TIMEOUT", "10", "TIMEOUT", "20"],
      ["FAILOVER", "TO", "h"],
      ["FAILOVER", "TO", "h", "p"],
      ["FAILOVER", "TO", "127.0.0.1", "6380", "TIMEOUT", "10", "FORCE"],
      ["FAILOVER", "ABORT", "TIMEOUT", "5"],
      ["FAILOVER", "FORCE", "FORCE"],
      ["FAILOVER", "BOGUS"],
      ["FAILOVER", "abort", "abort"],
      ["INFO", "replication"],
    ]);
    // INFO's replication section is compared by its role and failover state (the ids differ).
    const fields = (text: RespValue) =>
      String(text)
        .split("\r\n")
        .filter((line) => /^(role|connected_slaves|master_failover_state):/.test(line));
    expect(fields(kv.pop()!)).toEqual(fields(redis.pop()!));
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual({ s: "OK" });
    expect(kv[9]).toEqual({ e: "ERR FAILOVER requires connected replicas." });
  });

  test("a master to follow is refused with svc's own words: svc kv does not replicate", async () => {
    expect(await s.kvClient.call("REPLICAOF", "127.0.0.1", String(s.redis.port))).toEqual({
      e: "ERR svc kv does not replicate: it is always a master (REPLICAOF NO ONE is the form it takes)",
    });
    expect(await s.kvClient.call("ROLE")).toEqual(["master", 0n, []]);
  });
});

describe("the rest of Redis 7.0's command table, side by side with redis-server", () => {
  test("RESTORE-ASKING restores as RESTORE does; SCRIPT DEBUG NO and its errors; LOLWUT names the version", async () => {
    // Each server restores its own DUMP (their payloads' RDB versions differ).
    const play = async (client: typeof s.kvClient) => {
      await client.call("SET", "src", "value");
      const payload = String(await client.call("DUMP", "src"));
      return client.pipeline([
        ["RESTORE-ASKING", "copy", "0", payload],
        ["RESTORE-ASKING", "copy", "0", payload],
        ["RESTORE-ASKING", "copy", "0", payload, "REPLACE"],
        ["GET", "copy"],
        ["RESTORE-ASKING", "copy"],
        ["DEL", "src", "copy"],
        ["SCRIPT", "DEBUG", "NO"],
        ["SCRIPT", "DEBUG", "MAYBE"],
        ["SCRIPT", "DEBUG"],
        ["LOLWUT", "VERSION", "x"],
        ["LOLWUT", "BOGUS"],
      ]);
    };
    const [redisAfter, kvAfter] = await Promise.all([play(s.redisClient), play(s.kvClient)]);
    expect(kvAfter).toEqual(redisAfter);
    // Alone, not behind pipelined replies, SCRIPT DEBUG NO is taken.
    for (const client of [s.redisClient, s.kvClient]) expect(await client.call("SCRIPT", "DEBUG", "NO")).toEqual({ s: "OK" });
    expect(await s.kvClient.call("SCRIPT", "DEBUG", "MAYBE")).toEqual(await s.redisClient.call("SCRIPT", "DEBUG", "MAYBE"));
    expect(kvAfter.at(-1)).toBe("Redis ver. 7.0.15\n");
    // svc draws no art: every version is the version line alone; Redis draws for 5 and 6.
    expect(await s.kvClient.call("LOLWUT")).toBe("Redis ver. 7.0.15\n");
    expect(String(await s.redisClient.call("LOLWUT"))).toContain("Redis ver. 7.0.15");
    expect(await s.kvClient.call("SCRIPT", "DEBUG", "YES")).toEqual({ e: "ERR svc has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported" });
  });

  test("DEBUG OBJECT describes a key as Redis does: refcount, encoding, serialized length, idle time; a missing key is an error", async () => {
    /** DEBUG OBJECT's fields by name. */
    const fields = (reply: RespValue) =>
      Object.fromEntries(
        String((reply as { s: string }).s)
          .split(" ")
          .map((pair) => pair.split(":")),
      );
    for (const [key, value] of [
      ["dbg:s", "some text"],
      ["dbg:n", "42"],
      ["dbg:long", "x".repeat(100)],
    ] as const) {
      const [redis, kv] = await onBoth([
        ["SET", key, value],
        ["DEBUG", "OBJECT", key],
      ]);
      const [mine, theirs] = [fields(kv[1]!), fields(redis[1]!)];
      expect(Object.keys(mine)).toEqual(Object.keys(theirs));
      expect([key, mine.refcount, mine.encoding]).toEqual([key, theirs.refcount, theirs.encoding]);
      // The serialized length is of each server's own RDB form: Redis packs integers and long
      // strings (LZF), svc's DUMP writes them plain, so only a short text compares.
      if (key === "dbg:s") expect(mine.serializedlength).toBe(theirs.serializedlength);
      // Idle seconds and the LRU clock are each server's own moments (a shared integer's even
      // count from its server's start, in Redis): compared by form only.
      expect(mine.lru_seconds_idle).toMatch(/^\d+$/);
      expect(Number(mine.lru)).toBeLessThanOrEqual(0xffffff);
    }
    const [redis, kv] = await onBoth([
      ["DEBUG", "OBJECT", "dbg:none"],
      ["DEBUG", "OBJECT"],
      ["DEL", "dbg:s", "dbg:n", "dbg:long"],
    ]);
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual({ e: "ERR no such key" });
  });
});
