// MIGRATE side by side with redis-server 7.0.15: each server moves the same keys to a target of
// its own (a fresh redis-server each, and svc as a target too), and the replies, what is left on
// the source and what arrived on the target must be the same. Then what is svc's alone to show:
// nothing else is served while MIGRATE waits for its target, and a moved key stays moved after
// kill -9.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { freePort } from "../../support/spawn.ts";
import { newDir, startKvIn } from "../support/aof-files.ts";
import { RespClient, type RespValue, show } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";

/** The values of the keys the tests move, read so that any server's encoding reads the same. */
async function contents(c: RespClient, db: string): Promise<RespValue[]> {
  await c.call("SELECT", db);
  const keys = ((await c.call("KEYS", "*")) as string[]).sort();
  const out: RespValue[] = [];
  for (const key of keys) {
    const type = (await c.call("TYPE", key)) as { s: string };
    const read: Record<string, string[]> = {
      string: ["GET", key],
      list: ["LRANGE", key, "0", "-1"],
      hash: ["HGETALL", key],
      set: ["SORT", key, "ALPHA"],
      zset: ["ZRANGE", key, "0", "-1", "WITHSCORES"],
      stream: ["XRANGE", key, "-", "+"],
    };
    const ttl = (await c.call("PTTL", key)) as bigint;
    out.push([key, type.s, await c.call(...read[type.s]!), ttl > 0n ? "expires" : String(ttl)]);
  }
  await c.call("SELECT", "0");
  return out;
}

describe("MIGRATE against redis-server", () => {
  let redis: ServerProcess;
  let kv: ServerProcess;
  const targets: ServerProcess[] = [];

  beforeAll(async () => {
    [redis, kv] = await Promise.all([startRedis(), startKv()]);
  });
  afterAll(async () => {
    await Promise.all([redis.stop(), kv.stop(), ...targets.map((t) => t.stop())]);
  });

  /** Plays the same MIGRATEs from `source` to `target`; returns the source's replies and both servers' data. */
  async function play(source: ServerProcess, target: ServerProcess, nowhere: number): Promise<RespValue[]> {
    const [s, t] = await Promise.all([RespClient.connect(source.port), RespClient.connect(target.port)]);
    const to = ["127.0.0.1", String(target.port)];
    const steps: string[][] = [
      ["SET", "a", "1"],
      ["SET", "b", "2", "PX", "100000"],
      ["RPUSH", "l", "x", "y", "z"],
      ["HSET", "h", "f", "v", "g", "w"],
      ["ZADD", "z", "1", "m", "2.5", "n"],
      ["SADD", "s", "m1", "m2", "3"],
      ["XADD", "st", "1-1", "f", "v"],
      ["SET", "c", "source"],
      ["SET", "big", "x".repeat(300_000)],
      ["MIGRATE", ...to, "a", "0", "5000"],
      ["EXISTS", "a"],
      ["MIGRATE", ...to, "", "0", "5000", "KEYS", "b", "l", "h", "nosuch", "z", "s", "st", "big"],
      ["MIGRATE", ...to, "nosuch", "0", "5000"],
      ["MIGRATE", ...to, "", "0", "5000", "KEYS", "nosuch", "nosuch2"],
      // The target has c: BUSYKEY, and c stays; with REPLACE it goes, with COPY it stays here too.
      ["MIGRATE", ...to, "c", "0", "5000"],
      ["MIGRATE", ...to, "c", "0", "5000", "COPY", "REPLACE"],
      ["GET", "c"],
      ["MIGRATE", ...to, "c", "3", "5000", "REPLACE"],
      ["EXISTS", "c"],
      // A target with no password set refuses AUTH: nothing is deleted.
      ["SET", "d", "1"],
      ["MIGRATE", ...to, "d", "0", "5000", "AUTH", "secret"],
      ["MIGRATE", ...to, "d", "0", "5000", "AUTH2", "someone", "secret"],
      ["MIGRATE", ...to, "d", "99", "5000"],
      ["EXISTS", "d"],
      ["MIGRATE", "127.0.0.1", String(nowhere), "d", "0", "500"],
      // Errors of the command itself.
      ["MIGRATE", ...to, "d", "0", "5000", "KEYS", "d"],
      ["MIGRATE", ...to, "d", "0", "5000", "NOSUCH"],
      ["MIGRATE", ...to, "d", "0", "5000", "AUTH"],
      ["MIGRATE", ...to, "d", "0", "5000", "AUTH2", "x"],
      ["MIGRATE", ...to, "d", "zero", "5000"],
      ["MIGRATE", ...to, "d", "0", "soon"],
      ["MIGRATE", ...to, "d", "0"],
      ["COMMAND", "GETKEYS", "MIGRATE", ...to, "", "0", "5000", "AUTH", "KEYS", "KEYS", "k1", "k2"],
      ["DBSIZE"],
    ];
    try {
      await t.call("SET", "c", "target");
      const replies: RespValue[] = [];
      // Each reply is labelled with its command, the target's port and long values cut short.
      const label = (argv: string[]) => argv.map((a) => (a === String(target.port) ? "<target>" : a.slice(0, 20))).join(" ");
      for (const argv of steps) replies.push([label(argv), await s.call(...argv)]);
      return [...replies, ["source", await contents(s, "0")], ["target", await contents(t, "0")], ["target db 3", await contents(t, "3")]];
    } finally {
      await s.call("FLUSHALL");
      s.close();
      t.close();
    }
  }

  test("keys move with their values and times, errors and NOKEY answer as Redis's, to a redis-server target", async () => {
    // A port nothing listens on: one taken and let go.
    const nowhere = freePort();
    const [forRedis, forKv] = await Promise.all([startRedis(), startRedis()]);
    targets.push(forRedis, forKv);
    const [fromRedis, fromKv] = await Promise.all([play(redis, forRedis, nowhere), play(kv, forKv, nowhere)]);
    expect(fromKv).toEqual(fromRedis);
    expect(fromRedis).toContainEqual([
      "MIGRATE 127.0.0.1 <target> c 0 5000",
      { e: "ERR Target instance replied with error: BUSYKEY Target key name already exists." },
    ]);
  });

  test("and to an svc target", async () => {
    const nowhere = freePort();
    const [forRedis, forKv] = await Promise.all([startKv(), startRedis()]);
    targets.push(forRedis, forKv);
    // redis-server moves to svc, svc to redis-server: the same as both moving to redis-server.
    const [fromRedis, fromKv] = await Promise.all([play(redis, forRedis, nowhere), play(kv, forKv, nowhere)]);
    expect(fromKv).toEqual(fromRedis);
  });
});

describe("MIGRATE in svc", () => {
  test("arbitrary options and keys after the five arguments never crash it: an answer Redis gives, and the server serves on", async () => {
    const nowhere = freePort();
    const kv = await startKv();
    const c = await RespClient.connect(kv.port);
    try {
      await c.call("MSET", "a", "1", "b", "2");
      const word = fc.oneof(fc.constantFrom("COPY", "REPLACE", "AUTH", "AUTH2", "KEYS", "keys", "a", "b", ""), fc.string({ maxLength: 6 }));
      const head = fc.tuple(fc.constantFrom("a", "", "nosuch"), fc.constantFrom("0", "-1", "x", "99999999999999999999"), fc.constantFrom("1", "0", "-5", "t"));
      await fc.assert(
        fc.asyncProperty(head, fc.array(word, { maxLength: 6 }), async ([key, db, timeout], rest) => {
          // A COPY keeps the keys for the next run; a move would take them from it.
          const reply = await c.call("MIGRATE", "127.0.0.1", String(nowhere), key, db, timeout, "COPY", ...rest);
          const text = typeof reply === "object" && reply !== null && "e" in reply ? reply.e : show(reply);
          expect(text).toMatch(
            /^(ERR syntax error|ERR value is not an integer or out of range|ERR When using MIGRATE KEYS option, the key argument must be set to the empty string|IOERR error or timeout (writing|connecting)( to the client| to target instance)|\{"s":"NOKEY"\})$/,
          );
        }),
        { numRuns: 200 },
      );
      expect(await c.call("MGET", "a", "b")).toEqual(["1", "2"]);
    } finally {
      c.close();
      await kv.stop();
    }
  });

  test("nothing else is served while it waits for its target: another client's PING is answered after it", async () => {
    // A target that takes the connection and never answers; it says when MIGRATE has connected.
    let connected: () => void = () => {};
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: () => connected(), data() {} } });
    const kv = await startKv();
    const [a, b] = await Promise.all([RespClient.connect(kv.port), RespClient.connect(kv.port)]);
    try {
      await a.call("SET", "k", "v");
      const order: string[] = [];
      const migrating = a.call("MIGRATE", "127.0.0.1", String(silent.port), "k", "0", "700").then((reply) => {
        order.push("migrate");
        return reply;
      });
      // MIGRATE is waiting for its target now: a PING sent meanwhile is answered after it.
      await reached;
      const pinged = b.call("PING").then((reply) => {
        order.push("ping");
        return reply;
      });
      expect(await migrating).toEqual({ e: "IOERR error or timeout reading to target instance" });
      expect(await pinged).toEqual({ s: "PONG" });
      expect(order).toEqual(["migrate", "ping"]);
      // A key whose move failed is still here.
      expect(await a.call("GET", "k")).toBe("v");
    } finally {
      a.close();
      b.close();
      silent.stop(true);
      await kv.stop();
    }
  });

  test("a moved key stays moved after kill -9: the deletion is in the append-only file before the reply", async () => {
    const dir = newDir();
    const [kv, target] = await Promise.all([startKvIn(dir), startRedis()]);
    const c = await RespClient.connect(kv.port);
    try {
      await c.call("MSET", "m1", "a", "m2", "b", "stay", "c");
      expect(await c.call("MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000", "KEYS", "m1", "m2")).toEqual({ s: "OK" });
      kv.proc.kill("SIGKILL");
      await kv.proc.exited;
    } finally {
      c.close();
    }
    const again = await startKvIn(dir);
    const [d, t] = await Promise.all([RespClient.connect(again.port), RespClient.connect(target.port)]);
    try {
      expect(await d.call("MGET", "m1", "m2", "stay")).toEqual([null, null, "c"]);
      expect(await t.call("MGET", "m1", "m2")).toEqual(["a", "b"]);
    } finally {
      d.close();
      t.close();
      await Promise.all([again.stop(), target.stop()]);
    }
  });
});
