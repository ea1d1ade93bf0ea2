// The replication and cluster commands a standalone server answers (src/kv/commands/standalone.ts),
// side by side with redis-server 7.0 (no replicas, cluster mode off): the same replies, errors
// included, and WAIT for a replica waits out its timeout — in MULTI it cannot, and answers 0.
import { describe, expect, test } from "bun:test";
import type { RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

async function onBoth(commands: string[][]): Promise<[RespValue[], RespValue[]]> {
  const replies = await Promise.all([s.redisClient, s.kvClient].map((client) => client.pipeline(commands)));
  return replies as [RespValue[], RespValue[]];
}

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
});
