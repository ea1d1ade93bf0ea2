// CLIENT REPLY ON|OFF|SKIP side by side with redis-server 7.0: the bytes a client receives for a
// pipeline that turns its replies off, skips one, turns them back on — errors included — and
// that pub/sub messages still reach a client whose replies are off.
import { expect, test } from "bun:test";
import { encodeCommand, RespClient } from "./support/resp-client.ts";
import { redisAndKv } from "./support/side-by-side.ts";

const servers = redisAndKv();

const pipeline: string[][] = [
  ["FLUSHALL"], ["CLIENT", "REPLY", "OFF"], ["SET", "a", "1"], ["GET", "a"], ["CLIENT", "REPLY", "bogus"], ["INCR", "a"], ["CLIENT", "REPLY", "ON"],
  ["GET", "a"], ["CLIENT", "REPLY", "SKIP"], ["GET", "a"], ["INCR", "n"], ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "SKIP"], ["GET", "a"],
  ["CLIENT", "REPLY", "OFF"], ["CLIENT", "REPLY", "SKIP"], ["PING"], ["CLIENT", "REPLY", "ON"], ["CLIENT", "REPLY"], ["ECHO", "last"],
];

/** Everything the server sends back for the pipeline, up to the reply to its last command. */
async function received(port: number): Promise<string> {
  const { promise, resolve } = Promise.withResolvers<string>();
  let bytes = "";
  await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      open: (socket) => void socket.write(Buffer.concat(pipeline.map(encodeCommand))),
      data: (socket, chunk) => {
        bytes += chunk.toString("latin1");
        if (!bytes.endsWith("$4\r\nlast\r\n")) return;
        socket.end();
        resolve(bytes);
      },
    },
  });
  return promise;
}

test("what a client receives with its replies off, skipped and on again is what redis-server sends", async () => {
  const redis = await received(servers.redis.port);
  const kv = await received(servers.kv.port);
  expect(kv).toBe(redis);
  // Only the answers given while replies were on: FLUSHALL, REPLY ON's OK, GET, INCR, REPLY ON's OK, the arity error, ECHO.
  expect(kv.startsWith("+OK\r\n+OK\r\n$1\r\n2\r\n:1\r\n+OK\r\n")).toBe(true);
});

test("a client whose replies are off still receives its pub/sub messages (RESP3)", async () => {
  for (const port of [servers.redis.port, servers.kv.port]) {
    const sub = await RespClient.connect(port);
    const pub = await RespClient.connect(port);
    await sub.call("HELLO", "3");
    await sub.call("SUBSCRIBE", "news");
    sub.writeRaw(encodeCommand(["CLIENT", "REPLY", "OFF"]));
    await pub.call("PING");
    expect(await pub.call("PUBLISH", "news", "hello")).toBe(1n);
    expect(await sub.read()).toEqual({ push: ["message", "news", "hello"] });
    sub.close();
    pub.close();
  }
});

test("a blocked command of a client whose replies are off answers nothing when served, timed out or unblocked (as redis-server)", async () => {
  const transcripts: string[] = [];
  for (const port of [servers.redis.port, servers.kv.port]) {
    const waiter = await RespClient.connect(port);
    const other = await RespClient.connect(port);
    await other.call("DEL", "q");
    const id = await waiter.call("CLIENT", "ID");
    waiter.writeRaw(encodeCommand(["CLIENT", "REPLY", "OFF"]));
    // Served by a push: the pop happens (the list is empty after), and nothing is answered.
    waiter.writeRaw(encodeCommand(["BLPOP", "q", "0"]));
    await until(async () => String(await other.call("CLIENT", "LIST", "ID", String(id))).includes("flags=b"));
    expect(await other.call("RPUSH", "q", "x")).toBe(1n);
    // Timed out, then unblocked by CLIENT UNBLOCK: nothing answered either time.
    waiter.writeRaw(encodeCommand(["BLPOP", "empty", "0.05"]));
    await Bun.sleep(150);
    waiter.writeRaw(encodeCommand(["BLPOP", "empty", "0"]));
    await until(async () => String(await other.call("CLIENT", "LIST", "ID", String(id))).includes("flags=b"));
    expect(await other.call("CLIENT", "UNBLOCK", String(id), "ERROR")).toBe(1n);
    // Replies on again: the first thing the client hears is this OK, then its PING.
    waiter.writeRaw(encodeCommand(["CLIENT", "REPLY", "ON"]));
    expect(await waiter.read()).toEqual({ s: "OK" });
    expect(await waiter.call("PING")).toEqual({ s: "PONG" });
    transcripts.push(`${await other.call("LLEN", "q")}`);
    waiter.close();
    other.close();
  }
  expect(transcripts).toEqual(["0", "0"]);
});

/** Polls `condition` until it holds (a few seconds at most). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (await condition()) return;
    await Bun.sleep(10);
  }
  throw new Error("condition never held");
}
