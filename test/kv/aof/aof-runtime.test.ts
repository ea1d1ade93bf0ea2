// The append-only file in a running server's life, against real processes: what happens when it
// cannot be written (Redis's MISCONF, or an exit under appendfsync always), SHUTDOWN, CONFIG SET
// appendonly starting and stopping it, and the CONFIG parameters fixed at start.
import { describe, expect, test } from "bun:test";
import { mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { aofName, expectReplaysTo, newDir, snapshot, startKvIn, withKvIn } from "../support/aof-files.ts";
import { RespClient, type RespValue, withClient } from "../support/resp-client.ts";
import { liftFileSizeLimit, startKv, startRedis } from "../support/servers.ts";

describe("when the file cannot be written", () => {
  // 512 KiB holds five SETs of a 100 kB value; the sixth's write fails (EFBIG, as ENOSPC would).
  const fileSizeLimitBytes = 512 * 1024;
  const value = "v".repeat(100_000);
  const misconf = "MISCONF Errors writing to the AOF file: File too large";
  const infoField = (info: RespValue, name: string) => new RegExp(`^${name}:(.*)\\r$`, "m").exec(info as string)?.[1];

  test("everysec: the write that fails is kept and retried; meanwhile writes and PING get MISCONF and change nothing, reads are served; writes resume once the file can be written", async () => {
    const dir = newDir();
    const kv = await startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec"], { fileSizeLimitBytes });
    const acknowledged: string[] = [];
    try {
      await withClient(kv.port, async (c) => {
        // As in Redis, the SET whose write finds the file full was run and is answered; the
        // refusals start with the next write.
        let refusal: RespValue = null;
        for (let i = 0; i < 20 && refusal === null; i++) {
          const reply = await c.call("SET", `k${i}`, value);
          if (typeof reply === "object" && reply !== null && "e" in reply) refusal = reply;
          else acknowledged.push(`k${i}`);
        }
        expect(refusal).toEqual({ e: misconf });
        expect(acknowledged.length).toBe(6);
        const refusedKey = `k${acknowledged.length}`;
        expect(await c.call("EXISTS", refusedKey)).toBe(0n);
        expect(await c.call("PING")).toEqual({ e: misconf });
        expect(await c.call("GET", acknowledged.at(-1)!)).toBe(value);
        expect(await c.call("DBSIZE")).toBe(6n);
        // A transaction with a write is refused as it is queued, and EXEC says why.
        expect(await c.call("MULTI")).toEqual({ s: "OK" });
        expect(await c.call("INCR", "counter")).toEqual({ e: misconf });
        expect(await c.call("EXEC")).toEqual({ e: "EXECABORT Transaction discarded because of previous errors." });
        expect(await c.call("GET", "counter")).toBeNull();
        const info = await c.call("INFO", "persistence");
        expect(infoField(info, "aof_last_write_status")).toBe("err");
        expect(Number(infoField(info, "aof_buffer_length"))).toBeGreaterThan(100_000);
        // REST: 503, since a retry may succeed once the server can persist again.
        const put = await fetch(`http://127.0.0.1:${kv.httpPort}/kv/rest`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ value: "1" }),
        });
        expect(put.status).toBe(503);
        expect(await put.json()).toEqual({ error: misconf });

        liftFileSizeLimit(kv.proc.pid);
        // Retried once a second: the kept write lands, and writes are accepted again.
        const deadline = Date.now() + 5000;
        while (infoField(await c.call("INFO", "persistence"), "aof_last_write_status") !== "ok" && Date.now() < deadline) await Bun.sleep(50);
        expect(await c.call("SET", "after", "1")).toEqual({ s: "OK" });
        expect(await c.call("PING")).toEqual({ s: "PONG" });
      });
      expect(kv.output()).toContain("cannot persist to the append-only file");
      expect(kv.output()).toContain("can be written again");
    } finally {
      await kv.stop();
    }
    expect(Bun.spawnSync(["redis-check-aof", join(dir, aofName)]).stdout.toString()).toMatch(/is valid/);
    await withKvIn(dir, async (c) => {
      for (const key of acknowledged) expect(await c.call("STRLEN", key)).toBe(BigInt(value.length));
      expect(await c.call("GET", "after")).toBe("1");
      expect(await c.call("DBSIZE")).toBe(BigInt(acknowledged.length + 1));
    });
  }, 30_000);

  test("always: a write that cannot be synced ends the process, as in Redis; every acknowledged write is in the file", async () => {
    const dir = newDir();
    const kv = await startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"], { fileSizeLimitBytes });
    const acknowledged: string[] = [];
    const client = await RespClient.connect(kv.port);
    for (let i = 0; i < 20; i++) {
      const reply = await Promise.race([client.call("SET", `k${i}`, value), client.closed.then(() => "closed" as const)]);
      if (reply === "closed") break;
      expect(reply).toEqual({ s: "OK" });
      acknowledged.push(`k${i}`);
    }
    expect(await kv.proc.exited).toBe(1);
    expect(acknowledged.length).toBeGreaterThanOrEqual(4);
    expect(kv.output()).toContain("cannot persist to the append-only file under appendfsync always; exiting");
    await withKvIn(dir, async (c) => {
      for (const key of acknowledged) expect(await c.call("STRLEN", key)).toBe(BigInt(value.length));
    });
  }, 30_000);

  test("a rewrite that cannot create its file fails without harm, and INFO counts it", async () => {
    const dir = newDir();
    await withKvIn(
      dir,
      async (c, kv) => {
        await c.call("SET", "k", "v");
        // A directory where the rewrite's temporary file goes: opening it for writing fails.
        mkdirSync(join(dir, `temp-rewriteaof-${kv.proc.pid}.aof`));
        expect(await c.call("BGREWRITEAOF")).toEqual({ e: "ERR Can't rewrite append only file in background: Illegal operation on a directory" });
        let info = await c.call("INFO", "persistence");
        expect(infoField(info, "aof_last_bgrewrite_status")).toBe("err");
        expect(infoField(info, "aof_rewrites_consecutive_failures")).toBe("1");
        expect(infoField(info, "aof_rewrite_in_progress")).toBe("0");
        // The file in use is untouched, and takes writes.
        expect(await c.call("SET", "k2", "v2")).toEqual({ s: "OK" });
        rmdirSync(join(dir, `temp-rewriteaof-${kv.proc.pid}.aof`));
        expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
        const deadline = Date.now() + 5000;
        do info = await c.call("INFO", "persistence");
        while (infoField(info, "aof_rewrite_in_progress") !== "0" && Date.now() < deadline);
        expect(infoField(info, "aof_last_bgrewrite_status")).toBe("ok");
        expect(infoField(info, "aof_rewrites_consecutive_failures")).toBe("0");
        // Counted as they start, as Redis counts them: the one that could not start is not.
        expect(infoField(info, "aof_rewrites")).toBe("1");
      },
      "everysec",
    );
    expect(await withKvIn(dir, (c) => c.call("MGET", "k", "k2"))).toEqual(["v", "v2"]);
  }, 30_000);
});

describe("SHUTDOWN", () => {
  test("refuses what Redis refuses, with its words; inside MULTI too", async () => {
    const [kv, redis] = await Promise.all([startKvIn(newDir(), "everysec"), startRedis()]);
    try {
      for (const port of [kv.port, redis.port]) {
        await withClient(port, async (c) => {
          expect(await c.call("SHUTDOWN", "ABORT")).toEqual({ e: "ERR No shutdown in progress." });
          expect(await c.call("SHUTDOWN", "NOSAVE", "SAVE")).toEqual({ e: "ERR syntax error" });
          expect(await c.call("SHUTDOWN", "NOW", "ABORT")).toEqual({ e: "ERR syntax error" });
          expect(await c.call("SHUTDOWN", "LATER")).toEqual({ e: "ERR syntax error" });
          expect(await c.call("MULTI")).toEqual({ s: "OK" });
          expect(await c.call("SHUTDOWN")).toEqual({ e: "ERR Command not allowed inside a transaction" });
          expect(await c.call("EXEC")).toEqual({ e: "EXECABORT Transaction discarded because of previous errors." });
          expect(await c.call("PING")).toEqual({ s: "PONG" });
        });
      }
    } finally {
      await Promise.all([kv.stop(), redis.stop()]);
    }
  }, 30_000);

  test("writes the file and stops the server with status 0, answering nothing", async () => {
    const dir = newDir();
    const kv = await startKvIn(dir, "no");
    const client = await RespClient.connect(kv.port);
    expect(await client.call("SET", "kept", "1")).toEqual({ s: "OK" });
    const reply = await Promise.race([client.call("SHUTDOWN", "NOSAVE", "NOW"), client.closed.then(() => "closed")]);
    expect(reply).toBe("closed");
    expect(await kv.proc.exited).toBe(0);
    await withKvIn(
      dir,
      async (c) => {
        expect(await c.call("GET", "kept")).toBe("1");
        // What was loaded is saved; changes count from there until a SAVE.
        expect(await c.call("INFO", "persistence")).toContain("rdb_changes_since_last_save:0\r\n");
        await c.call("MSET", "a", "1", "b", "2");
        expect(await c.call("INFO", "persistence")).toContain("rdb_changes_since_last_save:2\r\n");
        expect(await c.call("SAVE")).toEqual({ s: "OK" });
        const info = await c.call("INFO", "persistence");
        expect(info).toContain("rdb_changes_since_last_save:0\r\n");
        expect(info).toContain("rdb_saves:1\r\n");
      },
      "everysec",
    );
  }, 30_000);

  test("when the file cannot be written it stays up and says so; FORCE stops it anyway", async () => {
    const dir = newDir();
    const kv = await startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "no"], { fileSizeLimitBytes: 64 * 1024 });
    const client = await RespClient.connect(kv.port);
    expect(await client.call("SET", "big", "v".repeat(100_000))).toEqual({ s: "OK" });
    expect(await client.call("SHUTDOWN")).toEqual({ e: "ERR Errors trying to SHUTDOWN. Check logs." });
    expect(await client.call("GET", "big")).toBe("v".repeat(100_000));
    expect(await Promise.race([client.call("SHUTDOWN", "FORCE"), client.closed.then(() => "closed")])).toBe("closed");
    expect(await kv.proc.exited).toBe(0);
    expect(kv.output()).toContain("could not write the append-only file while stopping");
  }, 30_000);
});

describe("CONFIG SET appendonly", () => {
  /** Waits until the file is on and no rewrite runs: one started with it has written the dataset. */
  const fileWritten = async (c: RespClient) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const info = (await c.call("INFO", "persistence")) as string;
      if (info.includes("aof_enabled:1") && info.includes("aof_rewrite_in_progress:0")) return info;
      if (Date.now() > deadline) throw new Error(`the file was not written:\n${info}`);
      await Bun.sleep(10);
    }
  };

  test("yes on a running server writes the dataset into a new file through a rewrite, then logs every write; svc and redis-server load it", async () => {
    const dir = newDir();
    writeFileSync(join(dir, aofName), "*3\r\n$3\r\nSET\r\n$5\r\nstale\r\n$1\r\n1\r\n");
    const kv = await startKv(["--dir", dir, "--appendonly", "no"]);
    let expected: Record<string, unknown>;
    try {
      expected = await withClient(kv.port, async (c) => {
        // Nothing was loaded: the file from before is not this server's.
        expect(await c.call("EXISTS", "stale")).toBe(0n);
        await c.call("SET", "s", "1");
        await c.call("RPUSH", "l", "a", "b", "c");
        await c.call("HSET", "h", "f", "v");
        await c.call("SET", "ttl", "x", "EX", "1000");
        await c.call("SELECT", "2");
        await c.call("SADD", "set", "m");
        await c.call("SELECT", "0");
        expect(await c.call("CONFIG", "SET", "appendonly", "maybe")).toEqual({
          e: "ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'",
        });
        expect(await c.call("CONFIG", "SET", "appendonly", "yes")).toEqual({ s: "OK" });
        expect(await c.call("CONFIG", "GET", "appendonly")).toEqual(["appendonly", "yes"]);
        expect(await c.call("INFO", "persistence")).toContain("aof_enabled:1");
        expect(await fileWritten(c)).toContain("aof_last_bgrewrite_status:ok");
        await c.call("INCR", "s");
        await c.call("LPUSH", "l", "z");
        return snapshot(kv.port);
      });
    } finally {
      await kv.stop();
    }
    expect(expected["0:stale"]).toBeUndefined();
    expect(Bun.spawnSync(["redis-check-aof", join(dir, aofName)]).stdout.toString()).toMatch(/is valid/);
    await expectReplaysTo(dir, expected);
  }, 30_000);

  test("under appendfsync always, a file started at runtime syncs every write once its rewrite is done: they survive kill -9", async () => {
    const dir = newDir();
    const kv = await startKv(["--dir", dir, "--appendonly", "no", "--appendfsync", "always"]);
    await withClient(kv.port, async (c) => {
      await c.pipeline(Array.from({ length: 1000 }, (_, i) => ["SET", `before:${i}`, String(i)]));
      expect(await c.call("CONFIG", "SET", "appendonly", "yes")).toEqual({ s: "OK" });
      // Writes while the rewrite runs are answered without waiting for a sync; they reach the file through the rewrite.
      expect(await c.call("SET", "during", "1")).toEqual({ s: "OK" });
      await fileWritten(c);
      for (let i = 0; i < 50; i++) expect(await c.call("SET", `after:${i}`, String(i))).toEqual({ s: "OK" });
    });
    kv.proc.kill("SIGKILL");
    await kv.proc.exited;
    await withKvIn(dir, async (c) => {
      expect(await c.call("DBSIZE")).toBe(1051n);
      expect(await c.call("MGET", "before:999", "during", "after:49")).toEqual(["999", "1", "49"]);
    });
  }, 30_000);

  test("a file that cannot be started leaves the server serving, with aof_enabled:0 and the reason in the log", async () => {
    const parent = newDir();
    const dir = join(parent, "data");
    const kv = await startKv(["--dir", dir, "--appendonly", "no"]);
    try {
      // --dir is a plain file by now: the directory for the file cannot be made.
      writeFileSync(dir, "not a directory");
      await withClient(kv.port, async (c) => {
        expect(await c.call("CONFIG", "SET", "appendonly", "yes")).toEqual({ s: "OK" });
        const deadline = Date.now() + 5000;
        while (!kv.output().includes("could not start or stop the append-only file") && Date.now() < deadline) await Bun.sleep(10);
        expect(await c.call("INFO", "persistence")).toContain("aof_enabled:0");
        expect(await c.call("SET", "k", "v")).toEqual({ s: "OK" });
        expect(await c.call("PING")).toEqual({ s: "PONG" });
      });
      expect(kv.output()).toContain("could not start or stop the append-only file");
    } finally {
      await kv.stop();
    }
  }, 30_000);

  test("no stops the file: writes after it are not in it, and SAVE has nothing to save to", async () => {
    const dir = newDir();
    await withKvIn(dir, async (c) => {
      await c.call("SET", "before", "1");
      expect(await c.call("CONFIG", "SET", "appendonly", "no")).toEqual({ s: "OK" });
      expect(await c.call("INFO", "persistence")).toContain("aof_enabled:0");
      await c.call("SET", "after", "2");
      expect(await c.call("SAVE")).toEqual({ e: "ERR svc persists through the append-only file, which is off (start it with --appendonly yes)" });
    });
    expect(await withKvIn(dir, (c) => c.call("MGET", "before", "after"))).toEqual(["1", null]);
  }, 30_000);

  test("changes apply one at a time, in order: no, yes, no, yes ends with a file that holds everything", async () => {
    const dir = newDir();
    const expected = await withKvIn(
      dir,
      async (c, kv) => {
        await c.call("SET", "k0", "0");
        const replies = await c.pipeline([
          ["CONFIG", "SET", "appendonly", "no"],
          ["SET", "k1", "1"],
          ["CONFIG", "SET", "appendonly", "yes"],
          ["SET", "k2", "2"],
          ["CONFIG", "SET", "appendonly", "no"],
          ["SET", "k3", "3"],
          ["CONFIG", "SET", "appendonly", "yes"],
          ["SET", "k4", "4"],
        ]);
        expect(replies.every((r) => JSON.stringify(r) === JSON.stringify({ s: "OK" }))).toBe(true);
        // Each change waits for the one before; the last leaves a file being started, then written.
        // A rewrite stopped by the next change is not a failure.
        expect(await fileWritten(c)).toContain("aof_last_bgrewrite_status:ok");
        await c.call("SET", "k5", "5");
        return snapshot(kv.port);
      },
      "everysec",
    );
    expect(Object.keys(expected).sort()).toEqual(["0:k0", "0:k1", "0:k2", "0:k3", "0:k4", "0:k5"]);
    await expectReplaysTo(dir, expected);
  }, 30_000);
});

describe("CONFIG parameters fixed at start", () => {
  test("immutable ones are refused with Redis's words and stay as they were; ones svc sets only from its flags (dir, bind) are refused too", async () => {
    const [kv, redis] = await Promise.all([startKvIn(newDir(), "everysec"), startRedis()]);
    try {
      const answers = async (port: number) =>
        withClient(port, async (c) => [
          await c.call("CONFIG", "GET", "appendfilename"),
          await c.call("CONFIG", "SET", "appendfilename", "other.aof"),
          await c.call("CONFIG", "SET", "databases", "32"),
          // All or nothing: a refused parameter leaves the others in the same call unset.
          await c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru", "databases", "32"),
          await c.call("CONFIG", "GET", "maxmemory-policy"),
          await c.call("CONFIG", "GET", "appendfilename"),
          // Both run without a config file: nothing to write CONFIG SET's changes to.
          await c.call("CONFIG", "REWRITE"),
        ]);
      expect(await answers(kv.port)).toEqual(await answers(redis.port));
      await withClient(kv.port, async (c) => {
        expect(await c.call("CONFIG", "SET", "dir", "/tmp")).toEqual({
          e: "ERR CONFIG SET failed (possibly related to argument 'dir') - svc sets it at start only; restart with --dir",
        });
        expect(await c.call("CONFIG", "SET", "bind", "0.0.0.0")).toEqual({
          e: "ERR CONFIG SET failed (possibly related to argument 'bind') - svc sets it at start only; restart with --bind",
        });
        expect(await c.call("CONFIG", "GET", "dir")).not.toEqual(["dir", "/tmp"]);
      });
    } finally {
      await Promise.all([kv.stop(), redis.stop()]);
    }
  }, 30_000);
});
