// CLIENT PAUSE and UNPAUSE side by side with redis-server 7.0: which commands a WRITE pause holds
// and which go through, that a held command holds what its client sent after it, that UNPAUSE
// (or the end of the time) lets them run in order, that an ALL pause holds UNPAUSE itself, and
// the errors. Held is shown by order, not by timing: a reader sees the old value while a write
// waits, and the write's reply comes only after UNPAUSE's.
import { describe, expect, test } from "bun:test";
import { RespClient, type RespValue, show } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";
import { waitUntil } from "../../support/wait.ts";

const servers = redisAndKv();

/** Connections A–E to `port`, and a log of what happened in order. */
async function scene(port: number, body: (c: Record<string, RespClient>, log: (line: string) => void) => Promise<void>): Promise<string[]> {
  const names = ["A", "B", "C", "D", "E"];
  const clients = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await RespClient.connect(port)] as const)));
  const lines: string[] = [];
  try {
    await clients.A!.call("FLUSHALL");
    await body(clients, (line) => lines.push(line));
  } finally {
    await clients.A!.call("CLIENT", "UNPAUSE");
    for (const c of Object.values(clients)) c.close();
  }
  return lines;
}

async function sameOnBoth(body: (c: Record<string, RespClient>, log: (line: string) => void) => Promise<void>): Promise<string[]> {
  const redis = await scene(servers.redis.port, body);
  const kv = await scene(servers.kv.port, body);
  expect(kv).toEqual(redis);
  return kv;
}

/** Sends a command without waiting; its reply is logged when it comes, named by `label`. */
function send(c: RespClient, log: (line: string) => void, label: string, ...argv: string[]): Promise<void> {
  return c.call(...argv).then((reply: RespValue) => log(`${label} < ${show(reply)}`));
}

describe("CLIENT PAUSE WRITE", () => {
  test("holds writes, scripts, PUBLISH and PFCOUNT until UNPAUSE, and lets reads through", async () => {
    const lines = await sameOnBoth(async (c, log) => {
      await c.A!.call("SET", "k", "old");
      await c.A!.call("PFADD", "h", "x");
      log(`pause ${show(await c.A!.call("CLIENT", "PAUSE", "10000", "WRITE"))}`);
      // Which of the held clients goes first once released is not fixed: their replies are written down sorted.
      const replies: string[] = [];
      const keep = (line: string) => replies.push(line);
      const held = [
        send(c.B!, keep, "B SET", "SET", "k", "new"),
        send(c.C!, keep, "C PUBLISH", "PUBLISH", "ch", "m"),
        send(c.D!, keep, "D EVAL", "EVAL", "return 1", "0"),
        send(c.E!, keep, "E PFCOUNT", "PFCOUNT", "h"),
      ];
      // Reads, and the pauser's own reads, go through meanwhile: the old value is still there.
      log(`A GET ${show(await c.A!.call("GET", "k"))}`);
      log(`A EVAL_RO ${show(await c.A!.call("EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "k"))}`);
      log(`A MULTI ${show(await c.A!.call("MULTI"))} ${show(await c.A!.call("GET", "k"))} ${show(await c.A!.call("EXEC"))}`);
      log(`held before UNPAUSE: ${replies.length}`);
      // The held clients count as blocked ones, as Redis postpones them by blocking them (their
      // commands may still be on the way: asked until all four are).
      const blocked = async () => /blocked_clients:\d+/.exec(String(await c.A!.call("INFO", "clients")))![0];
      log(`A ${await waitUntil(async () => ((await blocked()) === "blocked_clients:4" ? "blocked_clients:4" : undefined), "four held clients")}`);
      log(`unpause ${show(await c.A!.call("CLIENT", "UNPAUSE"))}`);
      await Promise.all(held);
      for (const line of replies.sort()) log(line);
      log(`A GET ${show(await c.A!.call("GET", "k"))}`);
    });
    expect(lines).toContain("held before UNPAUSE: 0");
    expect(lines).toContain('B SET < {"s":"OK"}');
  });

  test("a held command holds what the client sent after it; they run in order once the pause ends", async () => {
    await sameOnBoth(async (c, log) => {
      await c.A!.call("CLIENT", "PAUSE", "10000", "WRITE");
      const pipeline = c.B!.pipeline([
        ["GET", "n"],
        ["INCR", "n"],
        ["GET", "n"],
        ["INCR", "n"],
      ]);
      log(`A GET ${show(await c.A!.call("GET", "n"))}`);
      await c.A!.call("CLIENT", "UNPAUSE");
      log(`B ${show(await pipeline)}`);
      // A transaction with a write is held at EXEC; one with reads only is not.
      await c.A!.call("CLIENT", "PAUSE", "10000", "WRITE");
      await c.C!.call("MULTI");
      log(`C queued ${show(await c.C!.call("GET", "n"))}`);
      const exec = send(c.C!, log, "C EXEC", "EXEC");
      await c.D!.call("MULTI");
      await c.D!.call("GET", "n");
      log(`D EXEC ${show(await c.D!.call("EXEC"))}`);
      await c.A!.call("CLIENT", "UNPAUSE");
      await exec;
    });
  });

  test("scripts and functions that declare no-writes, and SCRIPT LOAD and FLUSH, run through it; scripts that may write, or declare nothing, are held", async () => {
    await sameOnBoth(async (c, log) => {
      await c.A!.call("SET", "x", "y");
      const library = (name: string, flags: string) =>
        `#!lua name=${name}\nredis.register_function{function_name='${name}', callback=function() return 'hello' end, flags={${flags}}}`;
      await c.A!.call("FUNCTION", "LOAD", "REPLACE", library("ro", "'no-writes'"));
      await c.A!.call("FUNCTION", "LOAD", "REPLACE", library("rw", ""));
      const cached = await c.A!.call("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn redis.call('get', 'x')");
      await c.A!.call("CLIENT", "PAUSE", "10000", "WRITE");
      log(`B EVAL no-writes ${show(await c.B!.call("EVAL", "#!lua flags=no-writes\nreturn 'unique script'", "0"))}`);
      log(`B EVALSHA no-writes ${show(await c.B!.call("EVALSHA", String(cached), "0"))}`);
      log(`B FCALL no-writes ${show(await c.B!.call("FCALL", "ro", "0"))}`);
      log(`B EVAL_RO ${show(await c.B!.call("EVAL_RO", "return 1", "0"))}`);
      // Nor are scripts loaded or flushed: Redis 7.0 replicates no script, only what one does.
      log(`B SCRIPT LOAD ${show(await c.B!.call("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 2"))}`);
      log(`B SCRIPT FLUSH ${show(await c.B!.call("SCRIPT", "FLUSH"))}`);
      // Which held client goes first once released is not fixed: their replies are written down sorted.
      const replies: string[] = [];
      const keep = (line: string) => replies.push(line);
      const held = [
        send(c.C!, keep, "C EVAL may write", "EVAL", "#!lua\nreturn 1", "0"),
        send(c.D!, keep, "D FCALL may write", "FCALL", "rw", "0"),
        send(c.E!, keep, "E EVAL undeclared", "EVAL", "return 2", "0"),
      ];
      log(`held before UNPAUSE: ${replies.length}`);
      await c.A!.call("CLIENT", "UNPAUSE");
      await Promise.all(held);
      for (const line of replies.sort()) log(line);
      await c.A!.call("FUNCTION", "FLUSH");
    });
  });

  test("a key read past its time during the pause reads as gone and is deleted only after it", async () => {
    await sameOnBoth(async (c, log) => {
      const expired = async () => /expired_keys:\d+/.exec(String(await c.A!.call("INFO", "stats")))![0];
      const before = await expired();
      await c.A!.call("MULTI");
      await c.A!.call("SET", "foo", "bar", "PX", "10");
      await c.A!.call("SET", "bar", "foo", "PX", "10");
      await c.A!.call("CLIENT", "PAUSE", "50000", "WRITE");
      log(`EXEC ${show(await c.A!.call("EXEC"))}`);
      await Bun.sleep(50);
      log(`GET foo ${show(await c.B!.call("GET", "foo"))}, EXISTS bar ${show(await c.B!.call("EXISTS", "bar"))}`);
      log(`expired while paused: ${(await expired()) !== before}`);
      await c.A!.call("CLIENT", "UNPAUSE");
      log(`GET foo ${show(await c.B!.call("GET", "foo"))}, GET bar ${show(await c.B!.call("GET", "bar"))}`);
      log(`expired after: ${(await expired()) !== before}`);
    });
  });

  test("ends by itself when its time is up", async () => {
    await sameOnBoth(async (c, log) => {
      await c.A!.call("CLIENT", "PAUSE", "150", "WRITE");
      const started = performance.now();
      await c.B!.call("SET", "k", "v");
      // At least the pause: whatever else the machine does, the write cannot come back sooner.
      log(`held at least the pause: ${performance.now() - started >= 140}`);
    });
  });
});

describe("CLIENT PAUSE ALL", () => {
  test("holds every command, CLIENT UNPAUSE from another client too, until the time is up", async () => {
    await sameOnBoth(async (c, log) => {
      await c.A!.call("CLIENT", "PAUSE", "200");
      const started = performance.now();
      const unpause = c.C!.call("CLIENT", "UNPAUSE");
      log(`B GET ${show(await c.B!.call("GET", "k"))}`);
      await unpause;
      log(`held at least the pause: ${performance.now() - started >= 190}`);
      // A later, shorter pause does not shorten a longer one, and WRITE does not weaken ALL.
      await c.A!.call("CLIENT", "PAUSE", "200", "ALL");
      await c.D!.call("CLIENT", "PAUSE", "10", "WRITE");
      const again = performance.now();
      log(`B GET ${show(await c.B!.call("GET", "k"))}`);
      log(`held at least the first pause: ${performance.now() - again >= 150}`);
    });
  });
});

test("errors, as redis-server words them", async () => {
  await sameOnBoth(async (c, log) => {
    for (const argv of [
      ["CLIENT", "PAUSE", "abc"],
      ["CLIENT", "PAUSE", "-1"],
      ["CLIENT", "PAUSE", "10", "BOGUS"],
      ["CLIENT", "PAUSE", "10", "write", "extra"],
      ["CLIENT", "PAUSE"],
      ["CLIENT", "UNPAUSE", "x"],
      ["CLIENT", "UNPAUSE"],
    ]) {
      log(`${argv.join(" ")} -> ${show(await c.A!.call(...argv))}`);
    }
  });
});

test("over the REST API too: a write waits for the pause to end, a read does not", async () => {
  const base = `http://127.0.0.1:${servers.kv.httpPort}`;
  const c = await RespClient.connect(servers.kv.port);
  await c.call("SET", "rest:k", "old");
  await c.call("CLIENT", "PAUSE", "10000", "WRITE");
  let written = false;
  const put = fetch(`${base}/kv/rest:k`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ value: "new" }) }).then(
    async (r) => {
      written = true;
      return r.json();
    },
  );
  expect(await (await fetch(`${base}/kv/rest:k`)).json()).toEqual({ result: "old" });
  expect(written).toBe(false);
  await c.call("CLIENT", "UNPAUSE");
  expect(await put).toEqual({ result: "OK" });
  expect(await c.call("GET", "rest:k")).toBe("new");
  c.close();
});
