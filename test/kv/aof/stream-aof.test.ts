// Streams in the append-only file, against real processes: a stream with deleted and trimmed
// entries, groups, pending entries (owners, delivery times and counts), consumers holding nothing
// and an empty stream with a group must come back the same after `kill -9` and a restart, after a
// rewrite (BGREWRITEAOF) and a restart, and when redis-server itself loads the file.
import { expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RespClient, type RespValue, withClient } from "../support/resp-client.ts";
import { startKv, startRedis } from "../support/servers.ts";
import { tempDir } from "../../support/temp-dir.ts";

const aofName = "appendonly.aof";
const newDir = () => tempDir("svc-stream-aof-");
const startKvIn = (dir: string) => startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"]);

/** Builds the streams: every kind of state the file must carry. */
async function build(c: RespClient): Promise<void> {
  for (let i = 1; i <= 250; i++) await c.call("XADD", "s", `${i}-0`, "f", String(i), "g", "x".repeat(i % 7));
  await c.call("XADD", "s", "MAXLEN", "~", "120", "251-*", "f", "251");
  await c.call("XDEL", "s", "200-0", "201-0", "251-0");
  await c.call("XGROUP", "CREATE", "s", "g", "0");
  await c.call("XGROUP", "CREATE", "s", "late", "$", "ENTRIESREAD", "5");
  await c.call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "5", "STREAMS", "s", ">");
  await c.call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "3", "NOACK", "STREAMS", "s", ">");
  await c.call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "4", "STREAMS", "s", ">");
  await c.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0");
  await c.call("XACK", "s", "g", "133-0");
  await c.call("XCLAIM", "s", "g", "carol", "0", "134-0", "135-0", "RETRYCOUNT", "7");
  await c.call("XGROUP", "CREATECONSUMER", "s", "g", "dave");
  await c.call("XSETID", "s", "900-0", "ENTRIESADDED", "300", "MAXDELETEDID", "260-0");
  await c.call("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM");
  await c.call("XADD", "gone", "1-0", "f", "v");
  await c.call("XDEL", "gone", "1-0");
}

/** What a client can read of the streams; consumers' seen times are not kept by Redis's file either. */
async function state(port: number): Promise<unknown> {
  return withClient(port, async (c) => {
    const out: Record<string, RespValue | undefined> = {};
    for (const key of ["s", "empty", "gone"]) {
      out[`${key} range`] = await c.call("XRANGE", key, "-", "+");
      const full = (await c.call("XINFO", "STREAM", key, "FULL", "COUNT", "0")) as RespValue[];
      out[`${key} full`] = JSON.parse(
        JSON.stringify(full, (_k, v) => (typeof v === "bigint" ? String(v) : v)).replace(/"seen-time","\d+"/g, '"seen-time","?"'),
      );
      out[`${key} groups`] = await c.call("XINFO", "GROUPS", key);
    }
    out.pending = await c.call("XPENDING", "s", "g");
    return out;
  });
}

test("streams, groups and pending entries survive kill -9, a rewrite, and load in redis-server", async () => {
  const dir = newDir();
  const kv = await startKvIn(dir);
  const before = await withClient(kv.port, async (c) => {
    await build(c);
    return state(kv.port);
  });
  kv.proc.kill("SIGKILL");
  await kv.proc.exited;
  expect(Bun.spawnSync(["redis-check-aof", join(dir, aofName)]).stdout.toString()).toMatch(/is valid/);

  const restarted = await startKvIn(dir);
  try {
    expect(await state(restarted.port)).toEqual(before);
    await withClient(restarted.port, async (c) => {
      expect(await c.call("BGREWRITEAOF")).toEqual({ s: "Background append only file rewriting started" });
      while (!((await c.call("INFO", "persistence")) as string).includes("aof_rewrite_in_progress:0")) await Bun.sleep(5);
    });
  } finally {
    await restarted.stop();
  }
  const file = readFileSync(join(dir, aofName), "latin1");
  expect(file).toContain("XSETID");
  expect(file).not.toContain("XREADGROUP");

  const rewritten = await startKvIn(dir);
  try {
    expect(await state(rewritten.port)).toEqual(before);
  } finally {
    await rewritten.stop();
  }

  // redis-server replays our file to the same entries, groups and pending entries.
  const redisDir = newDir();
  copyFileSync(join(dir, aofName), join(redisDir, aofName));
  const redis = await startRedis(["--dir", redisDir, "--appendonly", "yes", "--appendfilename", aofName]);
  try {
    const theirs = (await state(redis.port)) as Record<string, unknown>;
    const ours = before as Record<string, unknown>;
    for (const field of ["s range", "empty range", "s groups", "empty groups", "gone groups", "pending"])
      expect({ field, value: theirs[field] }).toEqual({ field, value: ours[field] });
  } finally {
    await redis.stop();
  }
});
