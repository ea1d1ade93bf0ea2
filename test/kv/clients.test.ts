// The clients users already have — redis-cli, ioredis and node-redis — work unmodified against a
// real `svc kv` process: connection handshakes, pipelines, transactions, blocking pops, pub/sub,
// keyspace notifications, client-side caching and scanning, each through the client's own API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import { createClient } from "redis";
import { type ServerProcess, startKv } from "./support/servers.ts";

let kv: ServerProcess;

beforeAll(async () => {
  kv = await startKv();
});

afterAll(async () => {
  await kv?.stop();
});

async function redisCli(...args: string[]): Promise<{ stdout: string; exitCode: number }> {
  const proc = Bun.spawn(["redis-cli", "-p", String(kv.port), ...args], { stdout: "pipe", stderr: "pipe" });
  const stdout = await new Response(proc.stdout).text();
  return { stdout, exitCode: await proc.exited };
}

describe("redis-cli", () => {
  test("runs commands and prints replies as it does for Redis", async () => {
    expect((await redisCli("PING")).stdout).toBe("PONG\n");
    expect((await redisCli("SET", "cli:k", "hello world")).stdout).toBe("OK\n");
    expect((await redisCli("GET", "cli:k")).stdout).toBe("hello world\n");
    expect((await redisCli("RPUSH", "cli:l", "a", "b")).stdout).toBe("2\n");
    expect((await redisCli("LRANGE", "cli:l", "0", "-1")).stdout).toBe("a\nb\n");
    expect((await redisCli("--no-raw", "INCR", "cli:l")).stdout).toBe("(error) WRONGTYPE Operation against a key holding the wrong kind of value\n");
  });

  test("pipes a file of commands (redis-cli --pipe) and reports every reply", async () => {
    const input = Array.from({ length: 1000 }, (_, i) => `*3\r\n$3\r\nSET\r\n$${`pipe:${i}`.length}\r\npipe:${i}\r\n$1\r\n${i % 10}\r\n`).join("");
    const proc = Bun.spawn(["redis-cli", "-p", String(kv.port), "--pipe"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    proc.stdin.write(input);
    await proc.stdin.end();
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    expect(out).toContain("errors: 0, replies: 1000");
    expect((await redisCli("GET", "pipe:999")).stdout).toBe("9\n");
  });

  test("--scan walks every key matching a pattern", async () => {
    for (let i = 0; i < 50; i++) await redisCli("SET", `scan:${i}`, "v");
    const { stdout } = await redisCli("--scan", "--pattern", "scan:*");
    expect(new Set(stdout.trim().split("\n")).size).toBe(50);
  });
});

describe("ioredis", () => {
  let client: Redis;
  beforeAll(async () => {
    client = new Redis({ port: kv.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
  });
  afterAll(() => client?.disconnect());

  test("connects with its ready check and round-trips strings, numbers and binary data", async () => {
    expect(client.status).toBe("ready");
    await client.set("io:s", "value", "EX", 100);
    expect(await client.get("io:s")).toBe("value");
    expect(await client.ttl("io:s")).toBeGreaterThan(90);
    expect(await client.incrby("io:n", 41)).toBe(41);
    expect(await client.incrbyfloat("io:f", "0.1")).toBe("0.1");
    const binary = Buffer.from([0, 255, 13, 10, 128]);
    await client.set("io:b", binary);
    expect(await client.getBuffer("io:b")).toEqual(binary);
  });

  test("pipelines and transactions return results in order", async () => {
    const results = await client.pipeline().set("io:p1", "1").incr("io:p1").get("io:p1").exec();
    expect(results).toEqual([
      [null, "OK"],
      [null, 2],
      [null, "2"],
    ]);
    const tx = await client.multi().rpush("io:q", "a", "b").lpop("io:q").exec();
    expect(tx).toEqual([
      [null, 2],
      [null, "a"],
    ]);
  });

  test("hashes come back as objects; WRONGTYPE is a rejected promise", async () => {
    await client.hset("io:h", { a: "1", b: "2" });
    expect(await client.hgetall("io:h")).toEqual({ a: "1", b: "2" });
    expect(client.lpush("io:h", "x")).rejects.toThrow("WRONGTYPE");
  });

  test("BLPOP wakes when another client pushes", async () => {
    const waiter = client.duplicate();
    const popped = waiter.blpop("io:blocked", 5);
    await Bun.sleep(50);
    await client.rpush("io:blocked", "job");
    expect(await popped).toEqual(["io:blocked", "job"]);
    waiter.disconnect();
  });

  test("subscribers receive published messages and pattern messages", async () => {
    const sub = client.duplicate();
    const got: string[] = [];
    sub.on("message", (channel, message) => got.push(`${channel}:${message}`));
    sub.on("pmessage", (pattern, channel, message) => got.push(`${pattern}|${channel}:${message}`));
    await sub.subscribe("io:news");
    await sub.psubscribe("io:*");
    expect(await client.publish("io:news", "hello")).toBe(2);
    await Bun.sleep(50);
    expect(got.sort()).toEqual(["io:*|io:news:hello", "io:news:hello"]);
    sub.disconnect();
  });

  test("keyspace notifications reach a subscriber: a key's expiry, as cache-expiry listeners use them", async () => {
    const sub = client.duplicate();
    const expired: string[] = [];
    sub.on("message", (channel, key) => expired.push(`${channel} ${key}`));
    await client.config("SET", "notify-keyspace-events", "Ex");
    await sub.subscribe("__keyevent@0__:expired");
    await client.set("io:session", "v", "PX", 20);
    for (let i = 0; i < 100 && expired.length === 0; i++) await Bun.sleep(10);
    expect(expired).toEqual(["__keyevent@0__:expired io:session"]);
    await client.config("SET", "notify-keyspace-events", "");
    sub.disconnect();
  });

  test("scanStream visits every key", async () => {
    for (let i = 0; i < 120; i++) await client.set(`io:scan:${i}`, "v");
    const seen = new Set<string>();
    for await (const batch of client.scanStream({ match: "io:scan:*", count: 25 })) for (const key of batch as string[]) seen.add(key);
    expect(seen.size).toBe(120);
  });
});

describe("node-redis", () => {
  test("connects (HELLO 3, CLIENT SETINFO) and its typed commands work over RESP3", async () => {
    const client = createClient({ socket: { port: kv.port } });
    await client.connect();
    expect(await client.ping()).toBe("PONG");
    await client.set("nr:k", "v", { EX: 60 });
    expect(await client.get("nr:k")).toBe("v");
    expect(
      await client.zAdd("nr:z", [
        { score: 2, value: "b" },
        { score: 1, value: "a" },
      ]),
    ).toBe(2);
    expect(await client.zRange("nr:z", 0, -1)).toEqual(["a", "b"]);
    expect(await client.sAdd("nr:s", ["x", "y"])).toBe(2);
    expect((await client.sMembers("nr:s")).sort()).toEqual(["x", "y"]);
    const replies: unknown = await client.multi().set("nr:c", "5").incr("nr:c").exec();
    expect(replies).toEqual(["OK", 6]);
    expect(await client.clientGetName()).toBeNull();
    await client.quit();
  });

  test("a blocking pop on an isolated connection times out with null", async () => {
    const client = createClient({ socket: { port: kv.port } });
    await client.connect();
    expect(await client.blPop("nr:empty", 0.1)).toBeNull();
    await client.quit();
  });

  test("its client-side cache serves repeated reads locally and drops a value another client changes", async () => {
    const cached = createClient({ socket: { port: kv.port }, RESP: 3, clientSideCache: { ttl: 0, maxEntries: 100 } });
    const writer = createClient({ socket: { port: kv.port } });
    await Promise.all([cached.connect(), writer.connect()]);
    await writer.set("csc:k", "first");
    expect(await cached.get("csc:k")).toBe("first");
    expect(await cached.get("csc:k")).toBe("first");
    const cache = cached.clientSideCache!;
    expect(cache.stats().hitCount).toBe(1);
    await writer.set("csc:k", "second");
    // The invalidation is a push on the cached client's connection: a round trip on it reads it.
    await cached.ping();
    expect(await cached.get("csc:k")).toBe("second");
    expect(cache.stats().missCount).toBe(2);
    await Promise.all([cached.quit(), writer.quit()]);
  });
});
