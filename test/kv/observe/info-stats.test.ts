// INFO side by side with redis-server 7.0, as monitoring tools read it by name: every section's
// fields in the same order; after the same commands over the same connections the same counts —
// commands, connections, bytes in and out, socket reads and writes, error replies by code, each
// command's keyspace hits and misses — which CONFIG RESETSTAT zeroes on both; avg_ttl; the bytes a
// connection holds (CLIENT LIST's qbuf); and maxclients, enforced as Redis enforces it.
import { expect, test } from "bun:test";
import { humanBytes } from "../../../src/kv/text/human-bytes.ts";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

/** INFO `section` as name → value, in the order the server wrote them. */
async function info(client: RespClient, section: string): Promise<[string, string][]> {
  const text = (await client.call("INFO", section)) as string;
  return text
    .split("\r\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon), line.slice(colon + 1)];
    });
}

/** Fields that count what the commands below did, the same on both servers. */
const counted = [
  "total_connections_received",
  "total_commands_processed",
  "total_net_input_bytes",
  "total_net_output_bytes",
  "expired_keys",
  "keyspace_hits",
  "keyspace_misses",
  "total_error_replies",
  "total_reads_processed",
  "total_writes_processed",
];

/** The same commands, one round trip at a time, on `client`; two short connections of their own. */
async function workload(client: RespClient, port: number): Promise<RespValue[]> {
  const replies: RespValue[] = [];
  const calls: string[][] = [
    ["SET", "k", "v"],
    ["GET", "k"],
    ["GET", "missing"],
    ["LPUSH", "k", "x"],
    ["GET"],
    ["NOSUCH", "a"],
    ["MULTI"],
    ["INCR", "k"],
    ["NOSUCH"],
    ["EXEC"],
    ["MULTI"],
    ["INCR", "k"],
    ["SET", "n", "1"],
    ["EXEC"],
    ["AUTH", "wrong"],
    ["AUTH", "default", "wrong"],
    ["SET", "t", "v", "PX", "1"],
    ["ZADD", "z", "x", "m"],
    ["OBJECT", "NOPE", "k"],
  ];
  for (const argv of calls) replies.push(await client.call(...argv));
  // One client that hangs up (its end of stream is a read), one that sends QUIT (no read after).
  const hangsUp = await RespClient.connect(port);
  replies.push(await hangsUp.call("PING"));
  hangsUp.close();
  const quits = await RespClient.connect(port);
  replies.push(await quits.call("QUIT"));
  quits.close();
  await Bun.sleep(200);
  return replies;
}

/** Fields svc adds to Redis's: the runtime it runs on, and 7.2's count of subscribed clients. */
const svcOnlyFields = new Set(["svc_runtime", "pubsub_clients"]);

test("every INFO section lists the fields redis-server lists, in its order", async () => {
  // The append-only file's sizes show only while it is on: on for both.
  expect(await s.redisClient.call("CONFIG", "SET", "appendonly", "yes")).toEqual({ s: "OK" });
  for (const section of ["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "cluster"]) {
    const [redis, kv] = await Promise.all([s.redisClient, s.kvClient].map((c) => info(c, section)));
    const names = (fields: [string, string][]) => fields.map(([name]) => name).filter((name) => !svcOnlyFields.has(name));
    expect({ section, names: names(kv!) }).toEqual({ section, names: names(redis!) });
  }
  const server = Object.fromEntries(await info(s.kvClient, "server"));
  expect(server.run_id).toMatch(/^[0-9a-f]{40}$/);
  expect(Number(server.server_time_usec)).toBeGreaterThan(Date.now() * 1000 - 60_000_000);
  const memory = Object.fromEntries(await info(s.kvClient, "memory"));
  expect(Number(memory.used_memory)).toBeGreaterThan(0);
  expect(Number(memory.used_memory_peak)).toBeGreaterThanOrEqual(Number(memory.used_memory));
  expect(memory.used_memory_human).toMatch(/^\d+\.\d\d[KMGTP]$/);
  expect(Number(memory.total_system_memory)).toBeGreaterThan(Number(memory.used_memory_rss));
  expect(await s.redisClient.call("CONFIG", "SET", "appendonly", "no")).toEqual({ s: "OK" });
});

test("byte counts are written as Redis writes them", () => {
  expect([0, 200, 1023, 1024, 939_208, 7_020_544, 25_276_510_208].map(humanBytes)).toEqual(["0B", "200B", "1023B", "1.00K", "917.20K", "6.70M", "23.54G"]);
});

test("after the same commands and CONFIG RESETSTAT, the counts and errorstats are redis-server's", async () => {
  for (const c of [s.redisClient, s.kvClient]) {
    await c.call("FLUSHALL");
    expect(await c.call("CONFIG", "RESETSTAT")).toEqual({ s: "OK" });
  }
  const [redisReplies, kvReplies] = [await workload(s.redisClient, s.redis.port), await workload(s.kvClient, s.kv.port)];
  expect(kvReplies).toEqual(redisReplies);
  const [redisStats, kvStats] = await Promise.all([s.redisClient, s.kvClient].map((c) => info(c, "stats")));
  const pick = (fields: [string, string][]) => Object.fromEntries(fields.filter(([name]) => counted.includes(name)));
  expect(pick(kvStats!)).toEqual(pick(redisStats!));
  // Something to count, so the equality above is not of zeros.
  expect(Number(pick(kvStats!).total_error_replies)).toBeGreaterThan(5);
  const [redisErrors, kvErrors] = await Promise.all([s.redisClient, s.kvClient].map((c) => info(c, "errorstats")));
  expect(kvErrors).toEqual(redisErrors!);
  expect(kvErrors!.map(([name]) => name)).toEqual(["errorstat_ERR", "errorstat_EXECABORT", "errorstat_WRONGTYPE"]);
  // Zeroed, on both alike: only the INFO commands since count.
  for (const c of [s.redisClient, s.kvClient]) await c.call("CONFIG", "RESETSTAT");
  const [redisAfter, kvAfter] = await Promise.all([s.redisClient, s.kvClient].map((c) => info(c, "stats")));
  expect(pick(kvAfter!)).toEqual(pick(redisAfter!));
  expect(await s.kvClient.call("INFO", "errorstats")).toBe("# Errorstats\r\n");
});

test("instantaneous_ops_per_sec follows the command rate, and the expiry cycle's share of expired keys shows", async () => {
  const kv = s.kvClient;
  await kv.call("CONFIG", "RESETSTAT");
  const rate = async () => Number(Object.fromEntries(await info(kv, "stats")).instantaneous_ops_per_sec);
  // Idle: nothing in the last samples.
  await Bun.sleep(1800);
  expect(await rate()).toBe(0);
  await kv.pipeline(Array.from({ length: 5000 }, () => ["PING"]));
  await Bun.sleep(250);
  expect(await rate()).toBeGreaterThan(0);
  // Keys that expire unread are found by the cycle, which then reports a share of stale keys.
  await kv.pipeline(Array.from({ length: 200 }, (_, i) => ["SET", `stale:${i}`, "v", "PX", "1"]));
  await Bun.sleep(600);
  const stats = Object.fromEntries(await info(kv, "stats"));
  expect(Number(stats.expired_keys)).toBe(200);
  expect(Number(stats.expired_stale_perc)).toBeGreaterThan(0);
});

/** One command of each kind of key read: some count as keyspace hits and misses in Redis, some not. */
const lookups: string[][] = [
  ["get", "s"],
  ["get", "nope"],
  ["mget", "s", "nope", "s2"],
  ["incr", "s"],
  ["incr", "nope"],
  ["append", "s", "x"],
  ["setrange", "s", "0", "x"],
  ["getrange", "s", "0", "1"],
  ["strlen", "s"],
  ["getdel", "s"],
  ["getex", "s"],
  ["getset", "s", "y"],
  ["set", "s", "y", "get"],
  ["setnx", "s", "y"],
  ["exists", "s", "nope"],
  ["type", "s"],
  ["ttl", "s"],
  ["del", "s"],
  ["lpush", "l", "x"],
  ["lpush", "nope", "x"],
  ["rpop", "l"],
  ["lrange", "l", "0", "-1"],
  ["llen", "l"],
  ["lindex", "l", "0"],
  ["lmove", "l", "l2", "left", "right"],
  ["rpoplpush", "l", "l2"],
  ["sadd", "set", "c"],
  ["smembers", "set"],
  ["sismember", "set", "a"],
  ["scard", "set"],
  ["sunionstore", "d", "set", "set2"],
  ["sinter", "set", "set2"],
  ["sinterstore", "d", "set", "set2"],
  ["smove", "set", "set2", "a"],
  ["srem", "set", "a"],
  ["spop", "set"],
  ["srandmember", "set"],
  ["hset", "h", "f2", "v"],
  ["hget", "h", "f"],
  ["hgetall", "h"],
  ["hincrby", "h", "n", "1"],
  ["hdel", "h", "f"],
  ["zadd", "z", "3", "c"],
  ["zscore", "z", "a"],
  ["zrange", "z", "0", "-1"],
  ["zincrby", "z", "1", "a"],
  ["zunionstore", "d", "2", "z", "z"],
  ["zrangestore", "d", "z", "0", "-1"],
  ["zrem", "z", "a"],
  ["zcard", "z"],
  ["pfadd", "hll", "b"],
  ["pfcount", "hll"],
  ["pfmerge", "d", "hll"],
  ["object", "encoding", "s"],
  ["expire", "s", "100"],
  ["persist", "s"],
  ["rename", "s", "s3"],
  ["copy", "s", "s9"],
  ["sort", "l", "alpha"],
  ["sort", "l", "alpha", "store", "d"],
  ["bitop", "and", "d", "s", "s2"],
  ["setbit", "s", "1", "1"],
  ["getbit", "s", "1"],
  ["bitcount", "s"],
  ["dump", "s"],
  ["touch", "s"],
  ["unlink", "s"],
  ["pttl", "s"],
  ["expiretime", "s"],
  ["pexpiretime", "nope"],
  ["memory", "usage", "s"],
  ["memory", "usage", "nope"],
  ["scan", "0", "type", "string"],
  ["scan", "0", "match", "s*"],
  ["sort", "l", "by", "nosort", "get", "s"],
  ["sort", "l", "by", "w_*", "get", "#"],
  ["object", "freq", "s"],
  ["object", "idletime", "nope"],
  ["randomkey"],
  ["dbsize"],
  ["keys", "*"],
  ["exists", "nope", "nope2"],
  ["lpos", "l", "a"],
  ["linsert", "l", "before", "a", "x"],
  ["lset", "l", "0", "y"],
  ["lrem", "l", "0", "a"],
  ["ltrim", "l", "0", "0"],
  ["lpushx", "l", "z"],
  ["rpushx", "nope", "z"],
  ["lmpop", "1", "l", "left"],
  ["blpop", "l", "1"],
  ["zpopmin", "z"],
  ["zmpop", "1", "z", "min"],
  ["zrangebyscore", "z", "0", "10"],
  ["zrank", "z", "a"],
  ["zrandmember", "z"],
  ["hrandfield", "h"],
  ["hexists", "h", "f"],
  ["hlen", "h"],
  ["hkeys", "h"],
  ["hstrlen", "h", "f"],
  ["hsetnx", "h", "f", "v"],
  ["hmget", "h", "f", "g"],
  ["smismember", "set", "a", "z"],
  ["sintercard", "2", "set", "set2"],
  ["sdiff", "set", "set2"],
  ["sdiffstore", "d", "set", "set2"],
  ["zdiffstore", "d", "2", "z", "z"],
  ["zinterstore", "d", "2", "z", "z"],
  ["zinter", "2", "z", "z"],
  ["zunion", "2", "z", "z"],
  ["zrangebylex", "z", "-", "+"],
  ["incrbyfloat", "s", "1.5"],
  ["decr", "s"],
  ["msetnx", "a", "1", "b", "2"],
  ["psetex", "s", "100", "v"],
  ["setex", "s", "100", "v"],
  ["lcs", "s", "s2"],
  ["substr", "s", "0", "1"],
  ["bitfield", "s", "get", "u8", "0"],
  ["bitfield_ro", "s", "get", "u8", "0"],
  ["bitpos", "s", "1"],
  ["geoadd", "g", "0", "0", "m"],
  ["geopos", "z", "a"],
  ["geodist", "z", "a", "b"],
  ["georadius", "z", "0", "0", "100", "km"],
  ["geosearch", "z", "fromlonlat", "0", "0", "byradius", "100", "km"],
  ["geosearchstore", "d", "z", "fromlonlat", "0", "0", "byradius", "100", "km"],
  ["geohash", "z", "a"],
  ["pfcount", "hll", "nope"],
  ["pfcount", "nope"],
  ["restore", "r9", "0", "x"],
  ["rename", "nope", "x"],
  ["renamenx", "s", "s2"],
  ["move", "s", "1"],
  ["swapdb", "0", "1"],
  // Streams: XREAD and XREADGROUP look each key up twice (to check it, then to serve it).
  ["xread", "streams", "st", "nokey", "0", "0"],
  ["xread", "streams", "st", "$"],
  ["xreadgroup", "group", "g", "c", "streams", "st", ">"],
  ["xreadgroup", "group", "g", "c", "streams", "st", "st", "0", "0"],
  ["xreadgroup", "group", "g", "c", "streams", "nokey", ">"],
  ["xreadgroup", "group", "nog", "c", "streams", "st", ">"],
];

test("each command counts keyspace hits and misses as redis-server does (read lookups count, write lookups do not)", async () => {
  const setup = [
    ["FLUSHALL"],
    ["MSET", "s", "1", "s2", "abc"],
    ["RPUSH", "l", "a", "b"],
    ["SADD", "set", "a", "b"],
    ["SADD", "set2", "b", "c"],
    ["HSET", "h", "f", "v"],
    ["ZADD", "z", "1", "a", "2", "b"],
    ["PFADD", "hll", "a"],
    ["XADD", "st", "1-0", "f", "v"],
    ["XGROUP", "CREATE", "st", "g", "0"],
    ["CONFIG", "RESETSTAT"],
  ];
  const counts = async (client: RespClient, argv: string[]) => {
    await client.pipeline(setup);
    await client.call(...argv);
    const stats = Object.fromEntries(await info(client, "stats"));
    return `${stats.keyspace_hits}/${stats.keyspace_misses}`;
  };
  const differ: string[] = [];
  let counted = 0;
  for (const argv of lookups) {
    const [redis, kv] = [await counts(s.redisClient, argv), await counts(s.kvClient, argv)];
    if (kv !== redis) differ.push(`${argv.join(" ")}: redis ${redis}, svc ${kv}`);
    if (redis !== "0/0") counted++;
  }
  expect(differ).toEqual([]);
  // Both kinds are in the list.
  expect(counted).toBeGreaterThan(20);
  expect(lookups.length - counted).toBeGreaterThan(20);
});

test("INFO keyspace's avg_ttl estimates the time left to keys with one, as redis-server's does", async () => {
  const ttlMs = 100_000;
  const avgTtls: number[] = [];
  for (const c of [s.redisClient, s.kvClient]) {
    await c.call("FLUSHALL");
    expect(await c.call("INFO", "keyspace")).toBe("# Keyspace\r\n");
    await c.pipeline(Array.from({ length: 500 }, (_, i) => ["SET", `ttl:${i}`, "v", "PX", String(ttlMs)]));
    await c.call("SET", "forever", "v");
  }
  // A few runs of each server's expiry cycle (every 100 ms) meet the keys.
  await Bun.sleep(500);
  for (const c of [s.redisClient, s.kvClient]) {
    const line = ((await c.call("INFO", "keyspace")) as string).split("\r\n")[1]!;
    const match = /^db0:keys=501,expires=500,avg_ttl=(\d+)$/.exec(line);
    expect(match).not.toBeNull();
    avgTtls.push(Number(match![1]));
  }
  // Each estimate starts from the first keys its cycle met: a little under 100 s on both.
  for (const avg of avgTtls) {
    expect(avg).toBeGreaterThan(ttlMs * 0.9);
    expect(avg).toBeLessThanOrEqual(ttlMs);
  }
  // No key with a time, no estimate.
  await s.kvClient.pipeline(Array.from({ length: 500 }, (_, i) => ["PERSIST", `ttl:${i}`]));
  await Bun.sleep(300);
  expect(((await s.kvClient.call("INFO", "keyspace")) as string).split("\r\n")[1]).toBe("db0:keys=501,expires=0,avg_ttl=0");
});

test("CLIENT LIST and INFO clients show the bytes a connection holds, as redis-server does, and its protocol", async () => {
  // A command cut short inside its last argument: the arguments before it are parsed, what
  // arrived of that one waits in the connection's query buffer (qbuf), on both servers.
  const pending = "x".repeat(400);
  const partial = `*3\r\n$3\r\nSET\r\n$4\r\npart\r\n$1000\r\n${pending}`;
  const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S*)`).exec(line)![1]!;
  const lineOf = async (server: { port: number }, client: RespClient) => {
    const raw = await Bun.connect({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } });
    raw.write(partial);
    await Bun.sleep(100);
    const lines = ((await client.call("CLIENT", "LIST")) as string).trim().split("\n");
    return { raw, lines, line: lines.find((line) => field(line, "addr") === `127.0.0.1:${raw.localPort}`)! };
  };
  const redis = await lineOf(s.redis, s.redisClient);
  const kv = await lineOf(s.kv, s.kvClient);
  expect(Number(field(kv.line, "qbuf"))).toBe(Number(field(redis.line, "qbuf")));
  expect(Number(field(kv.line, "qbuf"))).toBe(pending.length);
  expect(Number(field(kv.line, "tot-mem"))).toBeGreaterThanOrEqual(pending.length);
  expect(field(kv.line, "resp")).toBe("2");
  const clients = Object.fromEntries(await info(s.kvClient, "clients"));
  expect(Number(clients.client_recent_max_input_buffer)).toBe(pending.length);
  const memory = Object.fromEntries(await info(s.kvClient, "memory"));
  expect(Number(memory.mem_clients_normal)).toBeGreaterThan(pending.length);
  for (const { raw } of [redis, kv]) raw.end();
  // A client that said HELLO 3 is listed with resp=3.
  const resp3 = await RespClient.connect(s.kv.port);
  await resp3.call("HELLO", "3");
  const lines = ((await s.kvClient.call("CLIENT", "LIST")) as string).trim().split("\n");
  expect(lines.filter((line) => field(line, "resp") === "3")).toHaveLength(1);
  resp3.close();
});

test("past maxclients a connection gets Redis's error and is closed, counted as rejected, not received", async () => {
  /** Connects, waits for the server's first words or its close, and says what came. */
  const attempt = async (port: number) => {
    let received = "";
    const { promise: closed, resolve } = Promise.withResolvers<void>();
    const socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data(_s, d) {
          received += d.toString();
        },
        close() {
          resolve();
        },
      },
    });
    socket.write("*1\r\n$4\r\nPING\r\n");
    await Promise.race([closed, Bun.sleep(500)]);
    socket.end();
    return received;
  };
  const outcomes: unknown[] = [];
  for (const [client, port] of [
    [s.redisClient, s.redis.port],
    [s.kvClient, s.kv.port],
  ] as const) {
    const refusals = await client.pipeline([
      ["CONFIG", "SET", "maxclients", "0"],
      ["CONFIG", "SET", "maxclients", "4294967296"],
      ["CONFIG", "SET", "maxclients", "x"],
    ]);
    await client.call("CONFIG", "RESETSTAT");
    // This client is the only one: one more may come, a third may not.
    expect(await client.call("CONFIG", "SET", "maxclients", "2")).toEqual({ s: "OK" });
    const second = await RespClient.connect(port);
    const third = await attempt(port);
    const stats = Object.fromEntries(await info(client, "stats"));
    const clients = Object.fromEntries(await info(client, "clients"));
    second.close();
    expect(await client.call("CONFIG", "SET", "maxclients", "10000")).toEqual({ s: "OK" });
    outcomes.push({ refusals, third, received: stats.total_connections_received, rejected: stats.rejected_connections, max: clients.maxclients });
  }
  expect(outcomes[1]).toEqual(outcomes[0]);
  expect(outcomes[1]).toMatchObject({ third: "-ERR max number of clients reached\r\n", received: "1", rejected: "1", max: "2" });
});

test("CONFIG SET refuses an unknown name, a repeated one and an odd count as redis-server does, and changes nothing", async () => {
  const calls = [
    ["CONFIG", "SET", "nosuch", "1"],
    ["CONFIG", "SET", "slowlog-max-len", "7", "NoSuch", "2"],
    ["CONFIG", "SET", "slowlog-max-len", "8", "SLOWLOG-MAX-LEN", "9"],
    ["CONFIG", "SET", "slowlog-max-len", "5", "nosuch"],
    ["CONFIG", "SET", "slowlog-max-len"],
    ["CONFIG", "GET", "slowlog-max-len"],
    ["CONFIG", "SET", "slowlog-max-len", "100", "timeout", "0"],
    ["CONFIG", "GET", "slowlog-max-len"],
  ];
  const [redis, kv] = await Promise.all([s.redisClient, s.kvClient].map((c) => c.pipeline(calls)));
  expect(kv).toEqual(redis!);
  expect(kv![0]).toEqual({ e: "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'" });
  expect(kv![5]).toEqual(["slowlog-max-len", "128"]);
  expect(kv![7]).toEqual(["slowlog-max-len", "100"]);
  await Promise.all([s.redisClient, s.kvClient].map((c) => c.call("CONFIG", "SET", "slowlog-max-len", "128")));
});

test("past maxmemory, commands that may grow the data are refused with Redis's OOM error, as redis-server refuses them", async () => {
  const calls = [
    ["SET", "mm", "v"],
    ["CONFIG", "SET", "maxmemory", "1"],
    ["SET", "mm", "w"],
    ["GET", "mm"],
    ["INCR", "n"],
    ["DEL", "nothing"],
    ["MULTI"],
    ["GET", "mm"],
    ["EXEC"],
    ["CONFIG", "GET", "maxmemory"],
    ["CONFIG", "SET", "maxmemory", "0"],
    ["SET", "mm", "x"],
    ["CONFIG", "SET", "maxmemory", "5mb"],
    ["CONFIG", "GET", "maxmemory"],
    ["CONFIG", "SET", "maxmemory", "0"],
  ];
  const [redis, kv] = await Promise.all([s.redisClient, s.kvClient].map((c) => c.pipeline(calls)));
  expect(kv).toEqual(redis!);
  expect(kv![2]).toEqual({ e: "OOM command not allowed when used memory > 'maxmemory'." });
  expect(kv![3]).toBe("v");
  expect(kv![13]).toEqual(["maxmemory", "5242880"]);
});
