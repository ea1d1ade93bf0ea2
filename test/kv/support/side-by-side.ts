/**
 * redis-server and `svc kv` side by side, for a test file that compares the two: both start
 * before the file's first test and stop after its last. Call it at the top level of the file; the
 * fields are filled in once the servers are up, so read them inside tests and hooks only.
 */
import { afterAll, beforeAll } from "bun:test";
import { RespClient, type RespValue } from "./resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "./servers.ts";

export interface RedisAndKv {
  readonly redis: ServerProcess;
  readonly kv: ServerProcess;
}

export interface RedisAndKvClients extends RedisAndKv {
  /** One connection to each server, opened once both are up and closed before they stop. */
  readonly redisClient: RespClient;
  readonly kvClient: RespClient;
}

/** Both servers, with no connection of ours left open (scenarios count the server's clients). */
export function redisAndKv(): RedisAndKv {
  return sideBySide(false);
}

/** Both servers, each with one client connected for the file's tests to share. */
export function redisAndKvWithClients(): RedisAndKvClients {
  return sideBySide(true);
}

function sideBySide(withClients: boolean): RedisAndKvClients {
  const s: { redis?: ServerProcess; kv?: ServerProcess; redisClient?: RespClient; kvClient?: RespClient } = {};
  beforeAll(async () => {
    const [redis, kv] = await Promise.all([startRedis(), startKv()]);
    s.redis = redis;
    s.kv = kv;
    if (withClients) [s.redisClient, s.kvClient] = await Promise.all([RespClient.connect(redis.port), RespClient.connect(kv.port)]);
  });
  afterAll(async () => {
    s.redisClient?.close();
    s.kvClient?.close();
    await Promise.all([s.redis?.stop(), s.kv?.stop()]);
  });
  return s as RedisAndKvClients;
}

/** Sends `commands` as one pipeline on each server's shared client; their replies, redis-server's first. */
export async function pipelineOnBoth(s: RedisAndKvClients, commands: readonly string[][]): Promise<[RespValue[], RespValue[]]> {
  const [redis, kv] = await Promise.all([s.redisClient.pipeline(commands), s.kvClient.pipeline(commands)]);
  return [redis, kv];
}

/**
 * `svc kv` started with `args` and one RESP client on it, for a test file (or a describe block)
 * that shares them: `ready` receives both once they are up, before the first test; the client is
 * closed and the server stopped after the last.
 */
export function kvWithClient(args: string[], ready: (kv: ServerProcess, client: RespClient) => void | Promise<void>): void {
  let kv: ServerProcess | undefined;
  let client: RespClient | undefined;
  beforeAll(async () => {
    kv = await startKv(args);
    client = await RespClient.connect(kv.port);
    await ready(kv, client);
  });
  afterAll(async () => {
    client?.close();
    await kv?.stop();
  });
}
