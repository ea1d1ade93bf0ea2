/**
 * Shared by the append-only file tests: a fresh directory, svc started on it with the file on,
 * and the check that svc and redis-server load a file to the same data.
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "bun:test";
import { type RespClient, type RespValue, withClient } from "./resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "./servers.ts";
import { tempDir } from "../../support/temp-dir.ts";

export const aofName = "appendonly.aof";
export const newDir = () => tempDir("svc-aof-");
export const startKvIn = (dir: string, fsync = "always") => startKv(["--dir", dir, "--appendonly", "yes", "--appendfsync", fsync]);

/**
 * Every key of databases 0-3 with its type, its whole content in a canonical order and whether
 * it has a time to live: what two servers must agree on after loading the same file.
 */
export async function snapshot(port: number): Promise<Record<string, unknown>> {
  return withClient(port, async (c) => {
    const out: Record<string, unknown> = {};
    for (let db = 0; db < 4; db++) {
      await c.call("SELECT", String(db));
      const keys = ((await c.call("KEYS", "*")) as string[]).sort();
      for (const key of keys) {
        const type = ((await c.call("TYPE", key)) as { s: string }).s;
        const content: Record<string, () => Promise<RespValue>> = {
          string: () => c.call("GET", key),
          list: () => c.call("LRANGE", key, "0", "-1"),
          hash: async () => ((await c.call("HGETALL", key)) as string[]).join("\0").split("\0").sort(),
          set: async () => ((await c.call("SMEMBERS", key)) as string[]).sort(),
          zset: () => c.call("ZRANGE", key, "0", "-1", "WITHSCORES"),
        };
        const ttl = (await c.call("PTTL", key)) as bigint;
        out[`${db}:${key}`] = { type, value: await content[type]!(), expires: ttl >= 0n };
      }
    }
    return out;
  });
}

/**
 * svc restarted on `dir`, and redis-server on a copy of its file, each given to `look` (by its
 * port) once it has loaded the file; both stopped afterwards. Returns what `look` returned: svc's, then Redis's.
 */
export async function onBothLoading<T>(dir: string, look: (port: number) => Promise<T>): Promise<[T, T]> {
  const redisDir = newDir();
  copyFileSync(join(dir, aofName), join(redisDir, aofName));
  const [again, redis] = await Promise.all([startKvIn(dir), startRedis(["--dir", redisDir, "--appendonly", "yes", "--appendfilename", aofName])]);
  try {
    return [await look(again.port), await look(redis.port)];
  } finally {
    await Promise.all([again.stop(), redis.stop()]);
  }
}

/** svc restarted on `dir`, and redis-server on a copy of its file, both hold exactly `expected`. */
export async function expectReplaysTo(dir: string, expected: Record<string, unknown>): Promise<void> {
  const [svc, redis] = await onBothLoading(dir, snapshot);
  expect(svc).toEqual(expected);
  expect(redis).toEqual(expected);
}

/**
 * svc started on `dir` with the file on (a new directory, or one a server left), `body` run on a
 * client of it (and given the server, for its pid or output), then stopped whatever happens.
 */
export async function withKvIn<T>(dir: string, body: (c: RespClient, kv: ServerProcess) => Promise<T>, fsync = "always"): Promise<T> {
  const kv = await startKvIn(dir, fsync);
  try {
    return await withClient(kv.port, (c) => body(c, kv));
  } finally {
    await kv.stop();
  }
}
