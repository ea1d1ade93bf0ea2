// CONFIG GET * and CONFIG SET side by side with redis-server 7.0.15: svc reports every parameter
// Redis has, and those it only remembers (replication, cluster, TLS, the defragmenter …) with
// Redis's defaults; setting one is checked as Redis checks it, and an old name sets its new one.
import { expect, test } from "bun:test";
import { rememberedParams } from "../../../src/kv/config/remembered-params.ts";
import type { RespValue } from "../support/resp-client.ts";
import { pipelineOnBoth, redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** CONFIG GET's flat reply as a map. */
const asMap = (reply: RespValue) => {
  const flat = reply as string[];
  return new Map(Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i]!, flat[2 * i + 1]!] as const));
};

/** CONFIG GET's pairs in name order: each server lists them in its own table's order. */
const sortedPairs = (reply: RespValue) => (Array.isArray(reply) ? [...asMap(reply)].sort(([a], [b]) => (a < b ? -1 : 1)) : reply);

/** Runs each command on both servers and returns their replies side by side, CONFIG GET's sorted. */
async function onBoth(commands: string[][]): Promise<{ redis: RespValue[]; kv: RespValue[] }> {
  const tidy = (replies: RespValue[]) => replies.map((reply, i) => (commands[i]![1] === "GET" ? sortedPairs(reply) : reply));
  const [redis, kv] = await pipelineOnBoth(servers, commands);
  return { redis: tidy(redis), kv: tidy(kv) };
}

test("CONFIG GET * names every parameter Redis has, and the remembered ones hold Redis's defaults", async () => {
  const { redis, kv } = await onBoth([["CONFIG", "GET", "*"]]);
  const fromRedis = new Map(redis[0] as [string, string][]);
  const fromKv = new Map(kv[0] as [string, string][]);
  expect(fromRedis.size).toBeGreaterThan(180);
  expect([...fromKv.keys()].sort()).toEqual([...fromRedis.keys()].sort());
  const remembered = rememberedParams.flatMap((p) => (p.alias === undefined ? [p.name] : [p.name, p.alias]));
  // The test's redis-server runs without persistence and in the foreground, as svc does.
  expect(remembered.map((name) => [name, fromKv.get(name)])).toEqual(remembered.map((name) => [name, fromRedis.get(name)]));
});

test("CONFIG SET of a remembered parameter: Redis's checks and words, its old name, and immutable ones refused", async () => {
  const commands = [
    ["CONFIG", "SET", "activedefrag", "maybe"],
    ["CONFIG", "SET", "active-defrag-cycle-max", "100"],
    ["CONFIG", "SET", "active-defrag-cycle-max", "99"],
    ["CONFIG", "SET", "active-defrag-cycle-min", "0"],
    ["CONFIG", "SET", "repl-backlog-size", "2mb"],
    ["CONFIG", "SET", "repl-backlog-size", "0"],
    ["CONFIG", "SET", "loglevel", "LOUD"],
    ["CONFIG", "SET", "loglevel", "WARNING"],
    ["CONFIG", "SET", "hash-max-ziplist-entries", "100"],
    ["CONFIG", "GET", "hash-max-*"],
    ["CONFIG", "SET", "slave-read-only", "no"],
    ["CONFIG", "GET", "*read-only"],
    ["CONFIG", "SET", "replica-announce-port", "65536"],
    ["CONFIG", "SET", "io-threads", "2"],
    ["CONFIG", "SET", "daemonize", "yes"],
    ["CONFIG", "SET", "cluster-enabled", "yes"],
    ["CONFIG", "SET", "lazyfree-lazy-user-flush", "yes"],
    ["CONFIG", "GET", "lazyfree-lazy-user-flush"],
    // Redis's test parameters: named exactly (in any case, answered as typed), never by a pattern.
    ["CONFIG", "GET", "key-load-delay"],
    ["CONFIG", "GET", "KEY-LOAD-DELAY"],
    ["CONFIG", "GET", "key-load*"],
    ["CONFIG", "GET", "MAXMEMORY"],
    ["CONFIG", "SET", "key-load-delay", "5"],
    ["CONFIG", "GET", "key-load-delay", "loading-process-events-interval-bytes", "watchdog-period", "use-exit-on-panic", "rdb-key-save-delay"],
    ["CONFIG", "SET", "key-load-delay", "0"],
    // maxmemory-clients: bytes, or a share of maxmemory up to 100%; a bad one fails the whole SET.
    ...["10%", "101%", "0%", "-5%", "5mb", "1.5%", "abc%", "%"].flatMap((v) => [
      ["CONFIG", "SET", "maxmemory-clients", v],
      ["CONFIG", "GET", "maxmemory-clients"],
    ]),
    ["CONFIG", "SET", "maxmemory", "10000001", "maxmemory-clients", "200%", "client-query-buffer-limit", "invalid"],
    ["CONFIG", "GET", "maxmemory"],
    // Put back what was changed.
    ["CONFIG", "SET", "active-defrag-cycle-max", "25", "repl-backlog-size", "1048576", "loglevel", "notice", "maxmemory-clients", "0"],
    ["CONFIG", "SET", "hash-max-listpack-entries", "512", "replica-read-only", "yes", "lazyfree-lazy-user-flush", "no"],
  ];
  const { redis, kv } = await onBoth(commands);
  expect(kv.map((reply, i) => [commands[i]!.join(" "), reply])).toEqual(redis.map((reply, i) => [commands[i]!.join(" "), reply]));
  expect(redis[1]).toEqual({
    e: "ERR CONFIG SET failed (possibly related to argument 'active-defrag-cycle-max') - argument must be between 1 and 99 inclusive",
  });
});
