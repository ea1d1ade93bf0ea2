// Redis's long-script model, side by side with redis-server 7.0: past busy-reply-threshold a
// script lets the server answer others — BUSY, but for the few commands that may end or wait for
// it — SCRIPT KILL and FUNCTION KILL end one that has not written (however it catches errors),
// one that has written is UNKILLABLE, and MULTI/EXEC, blocked clients and the script's own
// client wait for it. Each scenario runs on both servers and the replies are compared.
import { describe, expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";
import { startKv, startRedis, type ServerProcess } from "../support/servers.ts";

const servers = redisAndKv();

/** The BUSY errors, as Redis 7.0 words them. */
const busyEval = { e: "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE." };
const busyFunction = { e: "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE." };

/** busy-reply-threshold in these tests, ms: short, so scenarios are quick. */
const thresholdMs = 100;

/** Runs `scenario` on redis-server, then on svc, each with two fresh clients; returns both results. */
async function onBoth<T>(scenario: (a: RespClient, b: RespClient, port: number) => Promise<T>): Promise<{ redis: T; kv: T }> {
  const results: T[] = [];
  for (const server of [servers.redis, servers.kv]) {
    const a = await RespClient.connect(server.port);
    const b = await RespClient.connect(server.port);
    try {
      await b.call("FLUSHALL");
      await b.call("FUNCTION", "FLUSH");
      await b.call("CONFIG", "SET", "busy-reply-threshold", String(thresholdMs));
      results.push(await scenario(a, b, server.port));
    } finally {
      a.close();
      b.close();
    }
  }
  return { redis: results[0]!, kv: results[1]! };
}

/**
 * Sends `argv` (an EVAL or FCALL whose script begins by publishing to channel "started") on `a`
 * and waits until the script runs: the server reads other clients' commands in whatever order,
 * and one read before the script would not meet it. `after`: commands pipelined behind it.
 */
async function startScript(a: RespClient, port: number, argv: string[], after: string[][] = []): Promise<{ reply: Promise<RespValue> }> {
  const subscriber = await RespClient.connect(port);
  try {
    await subscriber.call("SUBSCRIBE", "started");
    const replies = a.pipeline([argv, ...after]);
    await subscriber.read();
    // In an object: an async function's promise would wait for a promise it returned.
    return { reply: replies.then((all) => (after.length === 0 ? all[0]! : all)) };
  } finally {
    subscriber.close();
  }
}

/**
 * Lua that runs on for `ms` by the server's clock (TIME), as long compiled (compiled/) as on Lua,
 * as long on svc as on Redis: a loop counted in iterations ends far sooner compiled.
 */
const spinFor = (ms: number) =>
  `local function now() local t = redis.call('time') return t[1] * 1000 + t[2] / 1000 end local stop = now() + ${ms} while now() < stop do end`;

/** A script's text after the line that says it has started (startScript). */
const announced = (body: string) => `redis.call('publish', 'started', '1') ${body}`;

/** `reply` with the SHA-1 or duration it names replaced, so the two servers' can be compared. */
const stable = (reply: RespValue): RespValue =>
  JSON.parse(JSON.stringify(reply, (_k, v) => (typeof v === "bigint" ? `:${v}` : v)).replace(/[0-9a-f]{40}/g, "<sha>"));

/** The errorstats lines of INFO (errorstat_BUSY:count=…), in order. */
async function errorStats(client: RespClient): Promise<string[]> {
  const info = (await client.call("INFO", "errorstats")) as string;
  return info.split("\r\n").filter((line) => line.startsWith("errorstat_"));
}

describe("a busy script", () => {
  test("others are answered BUSY but for the allow-busy commands, and SCRIPT KILL ends it", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      await b.call("CONFIG", "RESETSTAT");
      const { reply: looping } = await startScript(a, port, ["EVAL", announced("while true do end"), "0"]);
      const seen: RespValue[] = [];
      // The first reply comes once the script has passed its threshold.
      for (const argv of [
        ["PING"],
        ["GET", "x"],
        ["SET", "x", "1"],
        ["FUNCTION", "KILL"],
        ["FUNCTION", "STATS"],
        ["SHUTDOWN"],
        ["INFO"],
        ["MULTI"],
        ["SET", "k", "v"],
        ["EXEC"],
        ["WATCH", "x"],
        ["UNWATCH"],
        ["MULTI"],
        ["DISCARD"],
        ["AUTH", "nobody", "wrong"],
        ["SCRIPT", "KILL"],
      ]) {
        seen.push(await b.call(...argv));
      }
      seen.push(stable(await looping));
      seen.push(await b.call("PING"), await b.call("SCRIPT", "KILL"));
      seen.push(await errorStats(b));
      return seen;
    });
    expect(kv).toEqual(redis);
    expect(kv.slice(0, 3)).toEqual([busyEval, busyEval, busyEval]);
    expect(kv).toContainEqual({ s: "OK" });
    expect(kv).toContainEqual({ e: "ERR Script killed by user with SCRIPT KILL... script: <sha>, on @user_script:1." });
    expect(kv.at(-2)).toEqual({ e: "NOTBUSY No scripts in execution right now." });
  }, 30_000);

  test("a pcall around a loop of redis.call cannot keep it from being killed (the freeze of issue 35)", async () => {
    const scripts = [
      "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end",
      "while true do pcall(redis.call, 'ping') end",
      "local co = coroutine.wrap(function() while true do pcall(error, 'x') end end) co()",
      "local t = {} for i = 1, 50 do t[i] = i end while true do pcall(table.sort, t, function(a, b) while true do end end) end",
    ];
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const seen: RespValue[] = [];
      for (const script of scripts) {
        const { reply: looping } = await startScript(a, port, ["EVAL", announced(script), "0"]);
        seen.push(await b.call("PING"), await b.call("SCRIPT", "KILL"), stable(await looping), await a.call("PING"));
      }
      return seen;
    });
    expect(kv).toEqual(redis);
    expect(kv.slice(0, 2)).toEqual([busyEval, { s: "OK" }]);
    expect(kv[2]).toEqual({ e: expect.stringMatching(/^ERR Script killed by user with SCRIPT KILL\.\.\. script: <sha>, on @user_script:\d+\.$/) });
  }, 60_000);

  test("an xpcall whose handler loops is killed too (redis-server 7.0.15 runs that handler with hooks off and never ends)", async () => {
    const a = await RespClient.connect(servers.kv.port);
    const b = await RespClient.connect(servers.kv.port);
    try {
      await b.call("CONFIG", "SET", "busy-reply-threshold", String(thresholdMs));
      const script = announced("while true do xpcall(function() while true do end end, function() while true do end end) end");
      const { reply: looping } = await startScript(a, servers.kv.port, ["EVAL", script, "0"]);
      expect(await b.call("PING")).toEqual(busyEval);
      expect(await b.call("SCRIPT", "KILL")).toEqual({ s: "OK" });
      expect(stable(await looping)).toEqual({ e: "ERR Script killed by user with SCRIPT KILL... script: <sha>, on @user_script:1." });
      expect(await b.call("PING")).toEqual({ s: "PONG" });
    } finally {
      a.close();
      b.close();
    }
  });

  test("one that has written is UNKILLABLE and runs to its end; its writes are all there", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const script = `redis.call('set', 'w', '1') ${spinFor(400)} redis.call('incr', 'w') return 'done'`;
      const { reply: running } = await startScript(a, port, ["EVAL", announced(script), "0"]);
      const seen: RespValue[] = [await b.call("GET", "w"), await b.call("SCRIPT", "KILL"), await b.call("FUNCTION", "KILL")];
      seen.push(await running, await b.call("GET", "w"));
      return seen;
    });
    expect(kv).toEqual(redis);
    expect(kv).toEqual([
      busyEval,
      {
        e: "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
      },
      {
        e: "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.",
      },
      "done",
      "2",
    ]);
  }, 30_000);

  test("a busy function is answered for with FUNCTION KILL's words, shown by FUNCTION STATS, and ended by FUNCTION KILL", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const code = "#!lua name=spin\nredis.register_function('spin', function(keys, args)\n  redis.call('publish', 'started', '1') while true do end\nend)";
      await b.call("FUNCTION", "LOAD", code);
      const { reply: looping } = await startScript(a, port, ["FCALL", "spin", "1", "k", "arg"]);
      const seen: RespValue[] = [await b.call("PING"), await b.call("SCRIPT", "KILL")];
      const stats = (await b.call("FUNCTION", "STATS")) as RespValue[];
      // duration_ms grows while it runs: only its presence is compared.
      const running = stats[1] as RespValue[];
      seen.push([stats[0]!, running.slice(0, 4), running[4]!, typeof running[5]], stats.slice(2));
      seen.push(await b.call("FUNCTION", "KILL"), await looping, await b.call("FUNCTION", "STATS"));
      return seen;
    });
    expect(kv).toEqual(redis);
    expect(kv.slice(0, 2)).toEqual([busyFunction, busyFunction]);
    expect(kv[2]).toEqual(["running_script", ["name", "spin", "command", ["FCALL", "spin", "1", "k", "arg"]], "duration_ms", "bigint"]);
    expect(kv[5]).toEqual({ e: "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:3." });
  }, 30_000);

  test("EXEC with a busy script in it goes on with the rest of its queue once the script is killed", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const queued = a.pipeline([["MULTI"], ["SET", "a", "1"], ["EVAL", announced("while true do end"), "0"], ["SET", "b", "2"]]);
      const { reply: exec } = await startScript(a, port, ["EXEC"]);
      const transaction = Promise.all([queued, exec]);
      const seen: RespValue[] = [await b.call("GET", "a"), await b.call("SCRIPT", "KILL")];
      seen.push(stable(await transaction), await b.call("MGET", "a", "b"));
      return seen;
    });
    expect(kv).toEqual(redis);
    expect(kv.at(-1)).toEqual(["1", "2"]);
  }, 30_000);

  test("the script's own client waits for its reply; a client blocked on a key it pushed is served only after it ends", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const c = await RespClient.connect(port);
      try {
        const popped = c.call("BLPOP", "list", "0");
        await b.call("PING");
        // Bounded: it pushes, then runs on past the threshold, and ends by itself.
        const script = announced(`redis.call('rpush', 'list', 'x') ${spinFor(300)} return 'done'`);
        const { reply: own } = await startScript(a, port, ["EVAL", script, "0"], [["LLEN", "list"]]);
        const seen: RespValue[] = [await b.call("LLEN", "list")];
        seen.push(c.tryRead() === undefined ? "not yet served" : "served early");
        seen.push(await own, await popped, await b.call("LLEN", "list"));
        return seen;
      } finally {
        c.close();
      }
    });
    expect(kv).toEqual(redis);
    // The blocked client is served as the script ends, before the script's client's next command.
    expect(kv).toEqual([busyEval, "not yet served", ["done", 0n], ["list", "x"], 0n]);
  }, 30_000);

  test("over REST, a busy script's own request waits for its end, and others get 503 with the BUSY error", async () => {
    const rest = `http://127.0.0.1:${servers.kv.httpPort}`;
    const post = (command: string, args: string[]) =>
      fetch(`${rest}/cmd`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command, args }) });
    const b = await RespClient.connect(servers.kv.port);
    const subscriber = await RespClient.connect(servers.kv.port);
    try {
      await b.call("CONFIG", "SET", "busy-reply-threshold", String(thresholdMs));
      await subscriber.call("SUBSCRIBE", "started");
      const looping = post("EVAL", [announced("while true do end"), "0"]);
      await subscriber.read();
      const other = await post("GET", ["x"]);
      expect(other.status).toBe(503);
      expect(await other.json()).toMatchObject({ error: busyEval.e });
      expect(await b.call("SCRIPT", "KILL")).toEqual({ s: "OK" });
      const own = await looping;
      expect(own.status).toBe(400);
      expect(((await own.json()) as { error: string }).error).toStartWith("ERR Script killed by user with SCRIPT KILL... script: ");
      expect((await post("PING", [])).status).toBe(200);
    } finally {
      b.close();
      subscriber.close();
    }
  });

  test("a client whose BLPOP times out while a script is busy is served what the script pushed, not its timeout", async () => {
    const { redis, kv } = await onBoth(async (a, b, port) => {
      const c = await RespClient.connect(port);
      try {
        const popped = c.call("BLPOP", "late", "0.2");
        await b.call("PING");
        const script = announced(`redis.call('rpush', 'late', 'x') ${spinFor(500)} return 'done'`);
        const { reply: own } = await startScript(a, port, ["EVAL", script, "0"]);
        return [await b.call("LLEN", "late"), await own, await popped];
      } finally {
        c.close();
      }
    });
    expect(kv).toEqual(redis);
    expect(kv).toEqual([busyEval, "done", ["late", "x"]]);
  }, 30_000);

  test("busy-reply-threshold and its old name lua-time-limit are one parameter", async () => {
    const { redis, kv } = await onBoth(async (_a, b) => [
      await b.call("CONFIG", "SET", "lua-time-limit", "1234"),
      await b.call("CONFIG", "GET", "busy-reply-threshold"),
      await b.call("CONFIG", "SET", "busy-reply-threshold", "-1"),
      await b.call("CONFIG", "GET", "lua-time-limit"),
    ]);
    expect(kv).toEqual(redis);
    expect(kv[1]).toEqual(["busy-reply-threshold", "1234"]);
  });
});

/** Starts a server of `kind` persisting to an append-only file in `dir` (a fresh one if not given). */
async function startPersistent(kind: "redis" | "kv", dir?: string): Promise<{ server: ServerProcess; dir: string }> {
  const args = dir === undefined ? [] : ["--dir", dir];
  const server =
    kind === "redis"
      ? await startRedis(["--appendonly", "yes", "--appendfsync", "always", ...args])
      : await startKv(["--appendonly", "yes", "--appendfsync", "always", ...args]);
  const info = await RespClient.connect(server.port);
  const [, found] = (await info.call("CONFIG", "GET", "dir")) as string[];
  info.close();
  return { server, dir: found! };
}

test("SHUTDOWN NOSAVE ends the server under a busy script that wrote; what it wrote is not there after a restart", async () => {
  const outcomes: RespValue[][] = [];
  for (const kind of ["redis", "kv"] as const) {
    const { server, dir } = await startPersistent(kind);
    const a = await RespClient.connect(server.port);
    const b = await RespClient.connect(server.port);
    await b.call("SET", "before", "1");
    await b.call("CONFIG", "SET", "busy-reply-threshold", String(thresholdMs));
    const { reply: running } = await startScript(a, server.port, ["EVAL", announced("redis.call('set', 'during', '1') while true do end"), "0"]);
    const seen: RespValue[] = [await b.call("SHUTDOWN"), await b.call("SHUTDOWN", "SAVE")];
    b.writeRaw("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
    await b.closed;
    await a.closed;
    void running;
    await server.proc.exited;
    await server.stop();
    const again = await startPersistent(kind, dir);
    const c = await RespClient.connect(again.server.port);
    seen.push(await c.call("GET", "before"), await c.call("GET", "during"));
    c.close();
    await again.server.stop();
    outcomes.push(seen);
  }
  expect(outcomes[1]).toEqual(outcomes[0]!);
  expect(outcomes[1]).toEqual([busyEval, busyEval, "1", null]);
}, 60_000);
