// CLIENT REPLY ON|OFF|SKIP side by side with redis-server 7.0: the bytes a client receives for a
// pipeline that turns its replies off, skips one, turns them back on — errors included, ON right
// after SKIP too — and that pub/sub messages and subscription confirmations (pushes, which Redis
// writes whatever CLIENT REPLY says) still reach a client whose replies are off or skipped.
import { expect, test } from "bun:test";
import { encodeCommand, RespClient } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

const pipeline: string[][] = [
  ["FLUSHALL"],
  ["CLIENT", "REPLY", "OFF"],
  ["SET", "a", "1"],
  ["GET", "a"],
  ["CLIENT", "REPLY", "bogus"],
  ["INCR", "a"],
  ["CLIENT", "REPLY", "ON"],
  ["GET", "a"],
  ["CLIENT", "REPLY", "SKIP"],
  ["GET", "a"],
  ["INCR", "n"],
  ["CLIENT", "REPLY", "SKIP"],
  ["CLIENT", "REPLY", "SKIP"],
  ["GET", "a"],
  ["CLIENT", "REPLY", "OFF"],
  ["CLIENT", "REPLY", "SKIP"],
  ["PING"],
  ["CLIENT", "REPLY", "ON"],
  ["CLIENT", "REPLY"],
  ["ECHO", "last"],
];

/** Everything the server sends back for `pipeline`, up to the reply to its last command (ECHO last). */
async function received(port: number, commands: string[][] = pipeline): Promise<string> {
  const { promise, resolve } = Promise.withResolvers<string>();
  let bytes = "";
  await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      open: (socket) => void socket.write(Buffer.concat(commands.map(encodeCommand))),
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

test("CLIENT REPLY ON right after SKIP is answered: ON ends the skip before it answers (as redis-server)", async () => {
  const commands = [
    ["CLIENT", "REPLY", "SKIP"],
    ["CLIENT", "REPLY", "ON"],
    ["PING"],
    ["CLIENT", "REPLY", "SKIP"],
    ["CLIENT", "REPLY", "OFF"],
    ["PING"],
    ["CLIENT", "REPLY", "ON"],
    ["ECHO", "last"],
  ];
  const [redis, kv] = [await received(servers.redis.port, commands), await received(servers.kv.port, commands)];
  expect(kv).toBe(redis);
  expect(kv).toBe("+OK\r\n+PONG\r\n+OK\r\n$4\r\nlast\r\n");
});

test("subscription confirmations reach a client whose replies are off or skipped, as redis-server sends them (RESP2 and RESP3)", async () => {
  const subscribing = [
    ["CLIENT", "REPLY", "OFF"],
    ["SUBSCRIBE", "a", "b"],
    ["PSUBSCRIBE", "x*"],
    ["SSUBSCRIBE", "s"],
    ["PING"],
    ["UNSUBSCRIBE", "a"],
    ["PUNSUBSCRIBE"],
    ["SUNSUBSCRIBE", "s", "t"],
    ["UNSUBSCRIBE"],
    ["UNSUBSCRIBE"],
    ["CLIENT", "REPLY", "ON"],
    ["CLIENT", "REPLY", "SKIP"],
    ["SUBSCRIBE", "c"],
    ["PING"],
    ["CLIENT", "REPLY", "SKIP"],
    ["PUNSUBSCRIBE", "y*"],
    ["UNSUBSCRIBE", "c"],
    ["ECHO", "last"],
  ];
  for (const hello of [[], [["HELLO", "3"]]]) {
    const commands = [...hello, ...subscribing];
    const [redis, kv] = [await received(servers.redis.port, commands), await received(servers.kv.port, commands)];
    // HELLO's reply names the connection's id, which differs.
    const withoutHello = (bytes: string) => (hello.length === 0 ? bytes : bytes.slice(bytes.indexOf("modules") + "modules\r\n*0\r\n".length));
    expect(withoutHello(kv)).toBe(withoutHello(redis));
    const push = hello.length === 0 ? "*3" : ">3";
    // The first thing after HELLO: SUBSCRIBE's two confirmations, though replies are off.
    expect(withoutHello(kv).startsWith(`${push}\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n${push}\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n`)).toBe(true);
    // The skipped PUNSUBSCRIBE y* still confirms, with its count.
    expect(withoutHello(kv)).toContain(`${push}\r\n$12\r\npunsubscribe\r\n$2\r\ny*\r\n:1\r\n`);
  }
});

test("a client whose replies are off gets the message it published to its own channel, and not PUBLISH's count (RESP3)", async () => {
  const commands = [
    ["HELLO", "3"],
    ["SUBSCRIBE", "self"],
    ["CLIENT", "REPLY", "OFF"],
    ["PUBLISH", "self", "hi"],
    ["CLIENT", "REPLY", "ON"],
    ["ECHO", "last"],
  ];
  const [redis, kv] = [await received(servers.redis.port, commands), await received(servers.kv.port, commands)];
  const afterHello = (bytes: string) => bytes.slice(bytes.indexOf("modules") + "modules\r\n*0\r\n".length);
  expect(afterHello(kv)).toBe(afterHello(redis));
  expect(afterHello(kv)).toBe(">3\r\n$9\r\nsubscribe\r\n$4\r\nself\r\n:1\r\n>3\r\n$7\r\nmessage\r\n$4\r\nself\r\n$2\r\nhi\r\n+OK\r\n$4\r\nlast\r\n");
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
