// The append-only file, against real processes: what svc writes replays to the same data in svc
// and in redis-server itself, redis-check-aof accepts it, an acknowledged write survives kill -9
// with appendfsync always, the '#' fill it writes ahead is an annotation Redis's tools accept and
// is cut off at start, a torn tail is cut back, and a corrupt middle refuses to start.
import { describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { aofName, expectReplaysTo, newDir, onBothLoading, snapshot, startKvIn, withKvIn } from "../support/aof-files.ts";
import { RespClient, type RespValue, withClient } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";
import { waitUntil } from "../support/wire.ts";
import { framePayload } from "../../../src/kv/rdb/dump-payload.ts";
import { writeValue } from "../../../src/kv/rdb/value-writer.ts";
import { List } from "../../../src/kv/types/list/items.ts";
import { FieldMap } from "../../../src/kv/types/hash/field-map.ts";

/** DUMP payloads of svc's own making, for RESTOREs in the generated commands. */
const dumped = (value: List | FieldMap) => Buffer.from(framePayload(writeValue(value)!)).toString("latin1");
const listPayload = dumped(new List(["r1", "r2"]));
const hashPayload = dumped(new FieldMap([["rf", "rv"]]));

/** Commands whose effect depends on time, chance or blocking — the ones the file must rewrite. */
const command = fc.oneof(
  fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: -5, max: 5 })).map(([k, n]) => ["INCRBY", k, String(n)]),
  fc.tuple(fc.constantFrom("a", "b", "f"), fc.constantFrom("1.5", "0.1", "-2e-3")).map(([k, n]) => ["INCRBYFLOAT", k, n]),
  fc.tuple(fc.constantFrom("s1", "s2"), fc.string({ maxLength: 3 })).map(([k, v]) => ["SET", k, v, "EX", "1000"]),
  fc.constantFrom(["SETEX", "s3", "500", "v"], ["PSETEX", "s4", "500000", "v"], ["GETEX", "s1", "PX", "90000"], ["GETEX", "s2", "PERSIST"]),
  // A live time to live must outlast the restarts of the replay (100 ms did not, on a loaded machine).
  fc
    .tuple(fc.constantFrom("a", "s1", "l", "h"), fc.constantFrom(["EXPIRE", "100"], ["PEXPIRE", "100000"]), fc.boolean(), fc.constantFrom("0", "-1"))
    .map(([k, [c, live], alive, gone]) => [c, k, alive ? live : gone]),
  fc.tuple(fc.constantFrom("l", "m"), fc.array(fc.constantFrom("x", "y", "z"), { minLength: 1, maxLength: 3 })).map(([k, v]) => ["RPUSH", k, ...v]),
  fc.constantFrom(
    ["LPOP", "l"],
    ["BLPOP", "l", "m", "0.01"],
    ["BLMOVE", "l", "m", "LEFT", "RIGHT", "0.01"],
    ["BLMPOP", "0.01", "2", "l", "m", "RIGHT", "COUNT", "2"],
  ),
  fc.tuple(fc.constantFrom("set", "set2"), fc.array(fc.constantFrom("p", "q", "r", "t"), { minLength: 1, maxLength: 4 })).map(([k, v]) => ["SADD", k, ...v]),
  fc.constantFrom(["SPOP", "set"], ["SPOP", "set2", "2"], ["SMOVE", "set", "set2", "p"]),
  fc.tuple(fc.constantFrom("h"), fc.constantFrom("f1", "f2"), fc.constantFrom("1.25", "3")).map(([k, f, n]) => ["HINCRBYFLOAT", k, f, n]),
  fc.tuple(fc.constantFrom("z"), fc.integer({ min: 0, max: 9 }), fc.constantFrom("m1", "m2", "m3")).map(([k, s, m]) => ["ZADD", k, String(s), m]),
  fc.constantFrom(["ZPOPMIN", "z"], ["BZPOPMAX", "z", "0.01"], ["BZMPOP", "0.01", "1", "z", "MIN", "COUNT", "2"]),
  fc.constantFrom(["SELECT", "1"], ["SELECT", "0"], ["MOVE", "a", "2"], ["COPY", "l", "lcopy", "DB", "3"], ["SWAPDB", "0", "1"], ["RENAME", "set", "set3"]),
  fc.constantFrom(["MULTI"], ["EXEC"], ["DISCARD"], ["FLUSHDB"], ["DEL", "a", "l"], ["GET", "a"], ["PERSIST", "s1"]),
  // RESTORE's relative TTL is logged as ABSTTL; one already past deletes what REPLACE named.
  fc.constantFrom(
    ["RESTORE", "l", "0", listPayload, "REPLACE"],
    ["RESTORE", "h", "100000", hashPayload, "REPLACE"],
    ["RESTORE", "a", "1", listPayload, "ABSTTL", "REPLACE"],
  ),
  fc.constantFrom(
    ["SORT", "l", "ALPHA", "DESC", "STORE", "sorted"],
    ["SORT", "set", "BY", "nosort", "STORE", "sorted"],
    ["SORT", "z", "BY", "nosort", "STORE", "m"],
  ),
);

describe("what svc writes", () => {
  test("replays to the same data in svc and in redis-server, and redis-check-aof accepts it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (commands) => {
        const dir = newDir();
        const kv = await startKvIn(dir);
        let before: Record<string, unknown>;
        try {
          await withClient(kv.port, async (c) => {
            for (const argv of commands) await c.call(...argv);
            if (commands.some((argv) => argv[0] === "MULTI")) await c.call("EXEC");
          });
          before = await snapshot(kv.port);
        } finally {
          await kv.stop();
        }
        const check = Bun.spawnSync(["redis-check-aof", join(dir, aofName)]);
        // A sequence that changed nothing leaves an empty file, which redis-check-aof calls empty.
        expect(check.stdout.toString()).toMatch(/is (valid|empty)/);
        await expectReplaysTo(dir, before);
      }),
      { numRuns: 8 },
    );
  }, 120_000);
});

describe("appendfsync always", () => {
  // Each writer pushes its own numbered values and remembers which were acknowledged; after
  // kill -9 at a random moment every acknowledged value must be back, in order.
  test("every acknowledged write survives kill -9 at random points", async () => {
    const dir = newDir();
    const acknowledged = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      const kv = await startKvIn(dir);
      const writers = Array.from({ length: 4 }, (_, w) => `w${w}`);
      let stop = false;
      const runs = writers.map(async (name) => {
        const client = await RespClient.connect(kv.port);
        // A reply that never comes because the server died counts as not acknowledged.
        const call = (...argv: string[]) => Promise.race([client.call(...argv), client.closed.then(() => null)]);
        let n = acknowledged.get(name) ?? 0;
        while (!stop) {
          const reply = await call("RPUSH", name, String(n + 1));
          if (typeof reply !== "bigint") break;
          n++;
          acknowledged.set(name, n);
          if ((await call("SET", `${name}:last`, String(n))) === null) break;
        }
        client.close();
      });
      await Bun.sleep(50 + Math.floor(Math.random() * 250));
      kv.proc.kill("SIGKILL");
      stop = true;
      await kv.proc.exited;
      await Promise.all(runs);
      const restarted = await startKvIn(dir);
      try {
        await withClient(restarted.port, async (c) => {
          for (const name of writers) {
            const values = (await c.call("LRANGE", name, "0", "-1")) as string[];
            const expected = acknowledged.get(name) ?? 0;
            // Acknowledged values are all there, in order; at most the one in flight beyond them.
            expect(values.slice(0, expected)).toEqual(Array.from({ length: expected }, (_, i) => String(i + 1)));
            expect(values.length).toBeLessThanOrEqual(expected + 1);
            acknowledged.set(name, values.length);
          }
        });
      } finally {
        await restarted.stop();
      }
    }
    expect([...acknowledged.values()].every((n) => n > 0)).toBe(true);
  }, 120_000);
});

describe("the fill written ahead under appendfsync always", () => {
  const infoField = (info: string, name: string) => Number(new RegExp(`${name}:(\\d+)`).exec(info)![1]);

  test("the file runs on past its commands with '#'; kill -9 leaves a file redis-check-aof and redis-server accept, the next start cuts the fill off, a stop too", async () => {
    const dir = newDir();
    const path = join(dir, aofName);
    const kv = await startKvIn(dir);
    const commandBytes = await withClient(kv.port, async (c) => {
      for (let i = 0; i < 50; i++) await c.call("SET", `k${i}`, String(i));
      return infoField((await c.call("INFO", "persistence")) as string, "aof_current_size");
    });
    // The fill follows the first sync, once it has answered: wait for it rather than race it.
    while (statSync(path).size === commandBytes) await Bun.sleep(5);
    kv.proc.kill("SIGKILL");
    await kv.proc.exited;
    const killed = readFileSync(path);
    expect(killed.length).toBeGreaterThan(commandBytes);
    expect(killed.subarray(commandBytes).every((b) => b === "#".charCodeAt(0))).toBe(true);
    expect(killed[commandBytes - 1]).toBe("\n".charCodeAt(0));
    // A killed server's file, fill and all, is one Redis's own tools take as it is.
    expect(Bun.spawnSync(["redis-check-aof", path]).stdout.toString()).toMatch(/is valid/);
    const redisDir = newDir();
    copyFileSync(path, join(redisDir, aofName));
    const redis = await startRedis(["--dir", redisDir, "--appendonly", "yes", "--appendfilename", aofName]);
    try {
      expect(await withClient(redis.port, (c) => c.call("MGET", "k0", "k49"))).toEqual(["0", "49"]);
    } finally {
      await redis.stop();
    }

    const again = await startKvIn(dir);
    try {
      expect(statSync(path).size).toBe(commandBytes);
      expect(again.output()).not.toContain("ended inside a command");
      expect(await withClient(again.port, (c) => c.call("MGET", "k0", "k49"))).toEqual(["0", "49"]);
      await withClient(again.port, (c) => c.call("SET", "after", "restart"));
    } finally {
      await again.stop();
    }
    const stopped = readFileSync(path);
    expect(stopped.subarray(commandBytes).toString()).toContain("after");
    expect(stopped.at(-1)).toBe("\n".charCodeAt(0));
    expect(Bun.spawnSync(["redis-check-aof", path]).stdout.toString()).toMatch(/is valid/);
  }, 30_000);
});

describe("the fill written ahead, across a rewrite", () => {
  test("a rewrite under appendfsync always swaps in a file without fill; writes after it get a fill again and survive kill -9", async () => {
    const dir = newDir();
    const path = join(dir, aofName);
    const kv = await startKvIn(dir);
    await withClient(kv.port, async (c) => {
      for (let i = 0; i < 200; i++) await c.call("RPUSH", "log", String(i));
      while (statSync(path).size < 4 * 1024 * 1024) await Bun.sleep(5);
      expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
      while (!((await c.call("INFO", "persistence")) as string).includes("aof_rewrite_in_progress:0")) await Bun.sleep(5);
      // The new file is the rewritten commands alone, until a sync appends a fill to it.
      const rewritten = readFileSync(path);
      expect(rewritten.at(-1)).toBe("\n".charCodeAt(0));
      for (let i = 200; i < 300; i++) await c.call("RPUSH", "log", String(i));
      while (statSync(path).size < 4 * 1024 * 1024) await Bun.sleep(5);
    });
    kv.proc.kill("SIGKILL");
    await kv.proc.exited;
    expect(Bun.spawnSync(["redis-check-aof", path]).stdout.toString()).toMatch(/is valid/);
    expect(await withKvIn(dir, (c) => c.call("LRANGE", "log", "0", "-1"))).toEqual(Array.from({ length: 300 }, (_, i) => String(i)));
    expect(Bun.spawnSync(["redis-check-aof", path]).stdout.toString()).toMatch(/is valid/);
  }, 30_000);
});

describe("the file a rewrite replaces", () => {
  /** Where the server's open descriptors lead, for the ones in `dir` (a replaced file reads "… (deleted)"). */
  const openFilesIn = (pid: number, dir: string) =>
    readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          return ""; // closed meanwhile
        }
      })
      .filter((target) => target.startsWith(dir))
      .sort();

  for (const fsync of ["always", "everysec"]) {
    test(`is closed once the rewrite is over (appendfsync ${fsync}): the server keeps no descriptor of it, so its space is freed`, async () => {
      const dir = newDir();
      const path = join(dir, aofName);
      await withKvIn(
        dir,
        async (c, kv) => {
          for (let round = 0; round < 3; round++) {
            for (let i = 0; i < 100; i++) await c.call("SET", `k${i}`, `v${round}`);
            expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
            await waitUntil(
              async () => (((await c.call("INFO", "persistence")) as string).includes("aof_rewrite_in_progress:0") ? true : undefined),
              "the rewrite to end",
            );
            // The old file's descriptors close off the event loop: wait for that, not a fixed time.
            const open = await waitUntil(() => {
              const files = openFilesIn(kv.proc.pid, dir);
              return files.some((f) => f.endsWith("(deleted)")) ? undefined : files;
            }, "the replaced file to be closed");
            // The file in use, once for writing at a position and once for appending the fill.
            expect(open).toEqual([path, path]);
          }
          expect(await c.call("GET", "k99")).toBe("v2");
        },
        fsync,
      );
      expect(await withKvIn(dir, (c) => c.call("GET", "k0"))).toBe("v2");
    }, 30_000);
  }
});

describe("rewriting the file", () => {
  // A walk over 30k keys and four collections of 20k items takes many slices; meanwhile writers
  // change the keys the walk has and has not reached and the collections it writes in parts, a
  // blocked client is served, and SWAPDB forces the walk to finish at once.
  test("a rewrite under concurrent writes loses nothing, shrinks the file, and redis-server loads the result", async () => {
    const dir = newDir();
    const kv = await startKvIn(dir, "everysec");
    let before: Record<string, unknown>;
    try {
      await withClient(kv.port, async (c) => {
        const loads: Promise<RespValue>[] = [];
        for (let i = 0; i < 10_000; i++) {
          loads.push(c.call("SET", `s${i}`, String(i)), c.call("RPUSH", `l${i % 100}`, String(i)), c.call("ZADD", `z${i % 50}`, String(i / 7), `m${i}`));
          if (i % 3 === 0) loads.push(c.call("SADD", `set${i % 30}`, String(i)), c.call("HSET", `h${i % 40}`, `f${i}`, String(i)));
        }
        for (let i = 0; i < 5000; i++) loads.push(c.call("INCR", "counter"));
        // Collections large enough to be written in parts over several steps of the walk, which
        // the writers change meanwhile.
        for (let i = 0; i < 20_000; i += 1000) {
          const items = Array.from({ length: 1000 }, (_, j) => `b${i + j}`);
          loads.push(
            c.call("RPUSH", "biglist", ...items),
            c.call("SADD", "bigset", ...items),
            c.call("HSET", "bighash", ...items.flatMap((item) => [item, "v"])),
            c.call("ZADD", "bigzset", ...items.flatMap((item, j) => [String(j), item])),
          );
        }
        await Promise.all(loads);
      });
      const sizeBefore = statSync(join(dir, aofName)).size;
      let stop = false;
      const writer = async (w: number) =>
        withClient(kv.port, async (c) => {
          for (let n = 0; !stop; n++) {
            const i = Math.floor(Math.random() * 10_000);
            await Promise.all([
              c.call("INCR", `s${i}`),
              c.call("LPOP", `l${i % 100}`),
              c.call("ZINCRBY", `z${i % 50}`, "1.5", `m${i}`),
              c.call("SADD", `set${i % 30}`, `w${w}-${n}`),
              c.call("HDEL", `h${i % 40}`, `f${i}`),
              c.call("PEXPIRE", `s${(i + 1) % 10_000}`, "100000"),
              c.call("RENAME", `s${(i + 2) % 10_000}`, `renamed${w}-${n}`).catch(() => null),
              c.call("LPUSH", "biglist", `w${w}-${n}`),
              c.call("HSET", "bighash", `b${i}`, `w${w}-${n}`),
              c.call("SREM", "bigset", `b${i}`),
              c.call("ZINCRBY", "bigzset", "1", `b${i}`),
            ]);
          }
        });
      const blocked = withClient(kv.port, (c) => c.call("BLPOP", "wakeup", "0"));
      const writers = [writer(0), writer(1)];
      await withClient(kv.port, async (c) => {
        for (let round = 0; round < 3; round++) {
          expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
          if (round === 1) await c.call("SWAPDB", "0", "1");
          if (round === 2) await c.call("RPUSH", "wakeup", "now");
          for (;;) {
            const info = (await c.call("INFO", "persistence")) as string;
            if (info.includes("aof_rewrite_in_progress:0")) break;
            await Bun.sleep(5);
          }
        }
      });
      stop = true;
      await Promise.all([...writers, blocked]);
      before = await snapshot(kv.port);
      await withClient(kv.port, (c) => c.call("SAVE"));
      expect(statSync(join(dir, aofName)).size).toBeLessThan(sizeBefore);
    } finally {
      await kv.stop();
    }
    await expectReplaysTo(dir, before);
  }, 120_000);
});

describe("keys whose time passed while the server was down", () => {
  test("are replayed as they were when each command ran, then expire: none comes back, in svc as in redis-server", async () => {
    const dir = newDir();
    // Written by a live server: each key changed while it still had time to live.
    await withKvIn(dir, async (c) => {
      await c.call("SET", "k", "v", "PX", "300");
      await c.call("APPEND", "k", "x");
      await c.call("RPUSH", "l", "a");
      await c.call("PEXPIRE", "l", "300");
      await c.call("RPUSH", "l", "b");
      await c.call("SET", "n", "1", "PX", "300");
      await c.call("INCR", "n");
      await c.call("RESTORE", "r", "300", listPayload);
      await c.call("RPUSH", "r", "r3");
      await c.call("SET", "kept", "1");
    });
    // Commands a file may hold with times already past when they were written (another
    // server's file, or one cut by hand): EXPIRE, GETEX and RESTORE keep such a time while
    // loading, as Redis does, rather than deleting the key before the next command.
    appendFileSync(
      join(dir, aofName),
      [
        ["SET", "g", "1"],
        ["GETEX", "g", "PXAT", "1000"],
        ["APPEND", "g", "2"],
        ["SADD", "s", "m"],
        ["PEXPIREAT", "s", "1000"],
        ["SADD", "s", "m2"],
        ["RESTORE", "r2", "1000", listPayload, "ABSTTL"],
        ["RPUSH", "r2", "more"],
      ]
        .map((argv) => `*${argv.length}\r\n${argv.map((a) => `$${Buffer.byteLength(a, "latin1")}\r\n${a}\r\n`).join("")}`)
        .join(""),
      "latin1",
    );
    await Bun.sleep(400);
    const seen = await onBothLoading(dir, (port) =>
      withClient(port, async (c) => {
        const exists: RespValue[] = [];
        for (const key of ["k", "l", "n", "r", "g", "s", "r2"]) exists.push(await c.call("EXISTS", key));
        return { exists, kept: await c.call("GET", "kept"), dbsize: await c.call("DBSIZE") };
      }),
    );
    expect(seen[0]).toEqual({ exists: [0n, 0n, 0n, 0n, 0n, 0n, 0n], kept: "1", dbsize: 1n });
    expect(seen[0]).toEqual(seen[1]);
  }, 60_000);
});

describe("the commands a rewrite writes", () => {
  test("plain strings as MSETs of at most 64 pairs, an expiring string as one SET … PXAT; the exact expiry survives a restart in svc and redis-server", async () => {
    const dir = newDir();
    const expiresAtMs = Date.now() + 3_600_000;
    const plain = (db: number) => Array.from({ length: 300 }, (_, i) => [`plain${db}:${i}`, `v${i}`]).flat();
    await withKvIn(dir, async (c) => {
      // Database 0 holds only plain strings (the walk copies them from the key table's bytes);
      // database 1 has keys that expire too (each key is read as a value).
      await c.call("MSET", ...plain(0));
      await c.call("SELECT", "1");
      await c.call("MSET", ...plain(1));
      await c.call("SET", "ttl", "t", "PXAT", String(expiresAtMs));
      await c.call("RPUSH", "list", "a", "b");
      await c.call("PEXPIREAT", "list", String(expiresAtMs));
      expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
      await waitUntil(
        async () => (((await c.call("INFO", "persistence")) as string).includes("aof_rewrite_in_progress:0") ? true : undefined),
        "the rewrite to end",
      );
    });
    const file = readFileSync(join(dir, aofName), "latin1");
    expect(file).toContain(`*5\r\n$3\r\nSET\r\n$3\r\nttl\r\n$1\r\nt\r\n$4\r\nPXAT\r\n$13\r\n${expiresAtMs}\r\n`);
    expect(file).toContain(`*3\r\n$9\r\nPEXPIREAT\r\n$4\r\nlist\r\n$13\r\n${expiresAtMs}\r\n`);
    expect(file).not.toContain("PEXPIREAT\r\n$3\r\nttl");
    // Every plain string is in an MSET or, alone between other commands, a SET; no MSET holds more than 64.
    const msetPairs = [...file.matchAll(/\*(\d+)\r\n\$4\r\nMSET\r\n/g)].map((m) => (Number(m[1]) - 1) / 2);
    const loneSets = [...file.matchAll(/\*3\r\n\$3\r\nSET\r\n\$\d+\r\nplain/g)].length;
    expect(msetPairs.reduce((a, b) => a + b, 0) + loneSets).toBe(600);
    expect(Math.max(...msetPairs)).toBe(64);
    expect(loneSets).toBeLessThanOrEqual(2);
    await onBothLoading(dir, (port) =>
      withClient(port, async (c) => {
        expect(await c.call("MGET", "plain0:0", "plain0:63", "plain0:64", "plain0:299")).toEqual(["v0", "v63", "v64", "v299"]);
        expect(await c.call("DBSIZE")).toBe(300n);
        await c.call("SELECT", "1");
        expect(await c.call("PEXPIRETIME", "ttl")).toBe(BigInt(expiresAtMs));
        expect(await c.call("PEXPIRETIME", "list")).toBe(BigInt(expiresAtMs));
        expect(await c.call("PEXPIRETIME", "plain1:7")).toBe(-1n);
        expect(await c.call("MGET", "plain1:0", "plain1:299", "ttl")).toEqual(["v0", "v299", "t"]);
        expect(await c.call("DBSIZE")).toBe(302n);
      }),
    );
  }, 60_000);
});

describe("a rewrite cut off", () => {
  test("stopping the server during a rewrite keeps the old file and leaves no temporary file", async () => {
    const dir = newDir();
    const kv = await startKvIn(dir, "everysec");
    const keys = 200_000;
    await withClient(kv.port, async (c) => {
      for (let from = 0; from < keys; from += 10_000) {
        await c.pipeline(Array.from({ length: 10_000 }, (_, i) => ["SET", `key:${from + i}`, String(from + i)]));
      }
      expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
      // The walk over 200k keys takes many 2 ms slices: it is still running when the stop comes.
      expect(await c.call("INFO", "persistence")).toContain("aof_rewrite_in_progress:1");
    });
    await kv.stop();
    expect(await kv.proc.exited).toBe(0);
    expect(kv.output()).toContain("rewrite stopped with the server");
    expect(readdirSync(dir)).toEqual([aofName]);
    expect(await withKvIn(dir, (c) => c.call("DBSIZE"))).toBe(BigInt(keys));
  }, 60_000);

  test("a temporary file a killed server left is removed at start", async () => {
    const dir = newDir();
    const kv = await startKvIn(dir, "everysec");
    await withClient(kv.port, (c) => c.call("SET", "k", "v"));
    await kv.stop();
    writeFileSync(join(dir, "temp-rewriteaof-12345.aof"), "*1\r\n$4\r\nPING\r\n");
    writeFileSync(join(dir, "notes.txt"), "not ours");
    const again = await startKv(["--dir", dir, "--appendonly", "yes", "--log-level", "warn"]);
    try {
      expect(await withClient(again.port, (c) => c.call("GET", "k"))).toBe("v");
      expect(readdirSync(dir).sort()).toEqual([aofName, "notes.txt"]);
      expect(again.output()).toContain("removed the temporary file of an append-only file rewrite");
    } finally {
      await again.stop();
    }
  }, 30_000);
});

describe("a damaged file", () => {
  async function fileWith(commands: string[][]): Promise<string> {
    const dir = newDir();
    const kv = await startKvIn(dir);
    await withClient(kv.port, async (c) => {
      for (const argv of commands) await c.call(...argv);
    });
    await kv.stop();
    return dir;
  }

  test("a tail cut inside a command loads up to the last complete one and is cut there", async () => {
    const dir = await fileWith([
      ["SET", "kept", "1"],
      ["RPUSH", "list", "a", "b"],
    ]);
    const path = join(dir, aofName);
    const whole = statSync(path).size;
    appendFileSync(path, "*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nval");
    const kv = await startKvIn(dir);
    try {
      expect(await withClient(kv.port, (c) => c.call("MGET", "kept", "torn"))).toEqual(["1", null]);
      expect(await withClient(kv.port, (c) => c.call("LRANGE", "list", "0", "-1"))).toEqual(["a", "b"]);
      expect(statSync(path).size).toBe(whole);
      expect(kv.output()).toContain("ended inside a command");
    } finally {
      await kv.stop();
    }
  }, 30_000);

  test("with --aof-load-truncated no, a tail cut inside a command refuses to start, names the byte, and leaves the file as it was; a whole file with a fill starts", async () => {
    const dir = await fileWith([["SET", "kept", "1"]]);
    const path = join(dir, aofName);
    const whole = statSync(path).size;
    appendFileSync(path, Buffer.alloc(100, "#"));
    const started = await startKv(["--dir", dir, "--appendonly", "yes", "--aof-load-truncated", "no"]);
    try {
      expect(await withClient(started.port, (c) => c.call("GET", "kept"))).toBe("1");
    } finally {
      await started.stop();
    }
    appendFileSync(path, "*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nval");
    const damaged = readFileSync(path);
    await expect(startKv(["--dir", dir, "--appendonly", "yes", "--aof-load-truncated", "no"])).rejects.toThrow(
      `ends inside a command at byte ${whole}, and aof-load-truncated is no`,
    );
    expect(readFileSync(path).equals(damaged)).toBe(true);
  }, 30_000);

  // '#' is the fill; svc wrote zeros ahead before it, and a file from then loads too.
  for (const [fill, byte] of [
    ["'#' fill", 0x23],
    ["zeros", 0],
  ] as const) {
    test(`a tail cut inside a command, then ${fill} written ahead, loads up to the last complete one`, async () => {
      const dir = await fileWith([["SET", "kept", "1"]]);
      const path = join(dir, aofName);
      const whole = statSync(path).size;
      appendFileSync(path, Buffer.concat([Buffer.from("*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nva"), Buffer.alloc(4096, byte)]));
      const kv = await startKvIn(dir);
      try {
        expect(await withClient(kv.port, (c) => c.call("MGET", "kept", "torn"))).toEqual(["1", null]);
        expect(statSync(path).size).toBe(whole);
        expect(kv.output()).toContain("ended inside a command");
      } finally {
        await kv.stop();
      }
    }, 30_000);
  }

  test("zeros with commands after them are corruption: refuses to start, naming the offset of the zeros", async () => {
    const dir = await fileWith([
      ["SET", "a", "1"],
      ["SET", "b", "2"],
    ]);
    const path = join(dir, aofName);
    const bytes = readFileSync(path);
    const at = bytes.indexOf("*3\r\n$3\r\nSET\r\n$1\r\nb");
    const damaged = Buffer.concat([bytes.subarray(0, at), Buffer.alloc(512), bytes.subarray(at)]);
    writeFileSync(path, damaged);
    await expect(startKvIn(dir)).rejects.toThrow(`corrupt at byte ${at}`);
    expect(readFileSync(path).equals(damaged)).toBe(true);
  }, 30_000);

  test("a transaction whose EXEC the tail lost is dropped whole", async () => {
    const dir = await fileWith([["SET", "kept", "1"]]);
    const path = join(dir, aofName);
    const whole = statSync(path).size;
    appendFileSync(path, "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR");
    const kv = await startKvIn(dir);
    try {
      expect(await withClient(kv.port, (c) => c.call("MGET", "kept", "half"))).toEqual(["1", null]);
      expect(statSync(path).size).toBe(whole);
    } finally {
      await kv.stop();
    }
  }, 30_000);

  test("corruption in the middle refuses to start and names the byte offset", async () => {
    const dir = await fileWith([
      ["SET", "a", "1"],
      ["SET", "b", "2"],
      ["SET", "c", "3"],
    ]);
    const path = join(dir, aofName);
    const bytes = readFileSync(path);
    const at = bytes.indexOf("*3\r\n$3\r\nSET\r\n$1\r\nb");
    const damaged = Buffer.concat([bytes.subarray(0, at), Buffer.from("?garbage\r\n"), bytes.subarray(at)]);
    writeFileSync(path, damaged);
    await expect(startKvIn(dir)).rejects.toThrow(`corrupt at byte ${at}`);
    // Nothing was cut from a file we refused.
    expect(readFileSync(path).equals(damaged)).toBe(true);
  }, 30_000);

  test("an unknown command refuses to start", async () => {
    const dir = newDir();
    writeFileSync(join(dir, aofName), "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$7\r\nNOTACMD\r\n$1\r\nx\r\n");
    await expect(startKvIn(dir)).rejects.toThrow("corrupt at byte 23");
  }, 30_000);
});

describe("aof-timestamp-enabled", () => {
  test("#TS annotations as Redis 7 writes them: redis-check-aof cuts the file back to a point in time, and svc loads what is left", async () => {
    const dir = newDir();
    const kv = await startKv(["--dir", dir, "--appendonly", "yes", "--aof-timestamp-enabled", "yes"]);
    try {
      await withClient(kv.port, async (c) => {
        await c.call("SET", "first", "1");
        // The next second gets an annotation of its own.
        await Bun.sleep(1100);
        await c.call("SET", "second", "2");
        // Turned off: no more annotations.
        expect(await c.call("CONFIG", "SET", "aof-timestamp-enabled", "no")).toEqual({ s: "OK" });
        await Bun.sleep(1100);
        await c.call("SET", "third", "3");
      });
    } finally {
      await kv.stop();
    }
    const path = join(dir, aofName);
    const stamps = [...readFileSync(path, "latin1").matchAll(/^#TS:(\d+)\r\n/gm)].map((m) => Number(m[1]));
    expect(stamps.length).toBe(2);
    expect(stamps[1]! - stamps[0]!).toBeGreaterThanOrEqual(1);
    expect(Bun.spawnSync(["redis-check-aof", path]).stdout.toString()).toMatch(/is valid/);
    const cut = Bun.spawnSync(["redis-check-aof", "--truncate-to-timestamp", String(stamps[0]), path], { stdin: Buffer.from("y\n") });
    expect(cut.stdout.toString()).toContain("Successfully truncated");
    expect(await withKvIn(dir, (c) => c.call("MGET", "first", "second", "third"))).toEqual(["1", null, null]);
  }, 30_000);
});

describe("the counters after loading", () => {
  /** What INFO counts, without times: the commandstats calls per command, and the totals. */
  async function counters(port: number): Promise<Record<string, string>> {
    return withClient(port, async (c) => {
      const info = ((await c.call("INFO", "commandstats")) as string) + ((await c.call("INFO", "stats")) as string);
      const out: Record<string, string> = {};
      for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[name!] = calls!;
      for (const [, name, value] of info.matchAll(/^(total_commands_processed|total_connections_received):(\d+)/gm)) out[name!] = value!;
      return out;
    });
  }

  test("are Redis's: no command statistics for the file's commands, a total of only those its EXEC ran, and the load is no connection", async () => {
    const dir = newDir();
    await withKvIn(dir, async (c) => {
      await c.call("SET", "a", "1");
      await c.call("INCR", "a");
      await c.call("MULTI");
      await c.call("RPUSH", "l", "x");
      await c.call("SADD", "s", "m");
      await c.call("EXEC");
      await c.call("SELECT", "1");
      await c.call("HSET", "h", "f", "v");
    });
    const again = await startKvIn(dir);
    const redisDir = newDir();
    copyFileSync(join(dir, aofName), join(redisDir, aofName));
    const redis = await startRedis(["--dir", redisDir, "--appendonly", "yes", "--appendfilename", aofName]);
    try {
      const [ours, theirs] = [await counters(again.port), await counters(redis.port)];
      expect(ours).toEqual(theirs);
      // No command statistics at all; the total is the two commands the file's EXEC ran and
      // the INFO before it; the one connection is ours.
      expect(ours).toEqual({ total_commands_processed: "3", total_connections_received: "1" });
    } finally {
      await Promise.all([again.stop(), redis.stop()]);
    }
  }, 30_000);
});

describe("a file redis-server wrote", () => {
  test("with aof-timestamp-enabled loads in svc: its #TS annotations are skipped", async () => {
    const redisDir = newDir();
    const redis = await startRedis(["--dir", redisDir, "--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--aof-timestamp-enabled", "yes"]);
    try {
      await withClient(redis.port, async (c) => {
        await c.call("SET", "before", "1");
        await c.call("RPUSH", "list", "a", "b");
        // Redis writes an annotation when the second changes between appends.
        await Bun.sleep(1100);
        await c.call("SET", "after", "2");
        await c.call("HSET", "h", "f", "v");
      });
    } finally {
      await redis.stop();
    }
    // Redis 7 keeps its file in parts, a base and the writes since, which it loads in that order:
    // together they are one file as svc keeps it. The base starts with an annotation.
    const parts = ["appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof"].map((name) => readFileSync(join(redisDir, "appendonlydir", name)));
    const written = Buffer.concat(parts);
    expect(written.toString().match(/^#TS:\d+\r\n/gm)?.length).toBeGreaterThanOrEqual(2);
    const dir = newDir();
    writeFileSync(join(dir, aofName), written);
    const kv = await startKvIn(dir);
    try {
      await withClient(kv.port, async (c) => {
        expect(await c.call("MGET", "before", "after")).toEqual(["1", "2"]);
        expect(await c.call("LRANGE", "list", "0", "-1")).toEqual(["a", "b"]);
        expect(await c.call("HGETALL", "h")).toEqual(["f", "v"]);
      });
      // A whole file with annotations is not a torn one: nothing is cut.
      expect(kv.output()).not.toContain("ended inside a command");
      expect(statSync(join(dir, aofName)).size).toBe(written.length);
    } finally {
      await kv.stop();
    }
  }, 30_000);
});

describe("CONFIG SET appendfsync", () => {
  test("checks the word as Redis does and switches policy at once; writes under each policy survive kill -9", async () => {
    const dir = newDir();
    // Both start with Redis's default policy, so their CONFIG GET answers can be compared.
    const [kv, redis] = await Promise.all([startKvIn(dir, "everysec"), startRedis()]);
    try {
      const attempts = [["sometimes"], ["ALWAYS"], [""]].map(([word]) => ["CONFIG", "SET", "appendfsync", word!]);
      const answers = async (port: number) =>
        withClient(port, async (c) => {
          const replies: RespValue[] = [];
          for (const argv of attempts) replies.push(await c.call(...argv), await c.call("CONFIG", "GET", "appendfsync"));
          return replies;
        });
      expect(await answers(kv.port)).toEqual(await answers(redis.port));
      await withClient(kv.port, async (c) => {
        let n = 0;
        for (const policy of ["always", "everysec", "no", "always"]) {
          await c.call("CONFIG", "SET", "appendfsync", policy);
          for (let i = 0; i < 20; i++) await c.call("RPUSH", "log", String(++n));
        }
      });
    } finally {
      kv.proc.kill("SIGKILL");
      await Promise.all([kv.proc.exited, redis.stop()]);
    }
    expect(await withKvIn(dir, (c) => c.call("LLEN", "log"), "no")).toBe(80n);
  }, 30_000);
});

describe("appendfsync everysec and no", () => {
  for (const fsync of ["everysec", "no"]) {
    test(`${fsync}: an acknowledged write is in the file before its reply, so it survives kill -9`, async () => {
      const dir = newDir();
      const kv: ServerProcess = await startKvIn(dir, fsync);
      await withClient(kv.port, async (c) => {
        for (let i = 0; i < 100; i++) await c.call("SET", `k${i}`, String(i));
      });
      kv.proc.kill("SIGKILL");
      await kv.proc.exited;
      const values = await withKvIn(dir, (c) => c.call("MGET", ...Array.from({ length: 100 }, (_, i) => `k${i}`)), fsync);
      expect(values).toEqual(Array.from({ length: 100 }, (_, i) => String(i)));
    }, 30_000);
  }
});
