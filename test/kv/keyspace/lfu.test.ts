// LFU access counters (maxmemory-policy allkeys-lfu / volatile-lfu) side by side with redis-server
// 7.0: with lfu-log-factor 0 every access raises the counter by one, so OBJECT FREQ is exact and
// the two servers must answer alike — which commands count as an access, what a new key starts
// at, RESTORE … FREQ and IDLETIME under each policy, and OBJECT IDLETIME/FREQ refusing the field
// the policy does not keep.
import { expect, test } from "bun:test";
import { withClient } from "../support/resp-client.ts";
import { show } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

const script: string[][] = [
  ["FLUSHALL"],
  ["CONFIG", "SET", "lfu-log-factor", "0"],
  ["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
  ["SET", "k", "v"],
  ["OBJECT", "FREQ", "k"],
  ["GET", "k"],
  ["GET", "k"],
  ["OBJECT", "FREQ", "k"],
  ["EXISTS", "k"],
  ["TYPE", "k"],
  ["OBJECT", "FREQ", "k"],
  ["SET", "k", "w"],
  ["OBJECT", "FREQ", "k"],
  ["APPEND", "k", "x"],
  ["STRLEN", "k"],
  ["OBJECT", "FREQ", "k"],
  ["OBJECT", "IDLETIME", "k"],
  ["HSET", "h", "f", "v"],
  ["OBJECT", "FREQ", "h"],
  ["HGET", "h", "f"],
  ["HSET", "h", "g", "v"],
  ["OBJECT", "FREQ", "h"],
  ["RPUSH", "l", "a"],
  ["LRANGE", "l", "0", "-1"],
  ["OBJECT", "FREQ", "l"],
  ["TOUCH", "l", "k"],
  ["OBJECT", "FREQ", "l"],
  ["OBJECT", "FREQ", "missing"],
  ["DUMP", "k"],
  ["OBJECT", "FREQ", "k"],
  ["CONFIG", "SET", "maxmemory-policy", "volatile-lfu"],
  ["OBJECT", "FREQ", "k"],
  ["CONFIG", "GET", "lfu-log-factor"],
  ["CONFIG", "GET", "lfu-decay-time"],
  ["CONFIG", "SET", "lfu-log-factor", "-1"],
  ["CONFIG", "SET", "lfu-decay-time", "x"],
  ["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
  ["OBJECT", "FREQ", "k"],
  ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
  ["CONFIG", "SET", "lfu-log-factor", "10"],
];

test("OBJECT FREQ counts the accesses redis-server counts, and each policy refuses the other field", async () => {
  const transcripts: string[][] = [];
  for (const server of [servers.redis, servers.kv]) {
    transcripts.push(
      await withClient(server.port, async (c) => {
        const lines: string[] = [];
        for (const argv of script) {
          const reply = await c.call(...argv);
          // A DUMP payload is each server's own RDB version: only whether there was one is compared.
          lines.push(`${argv.join(" ")} -> ${argv[0] === "DUMP" ? typeof reply : show(reply)}`);
        }
        return lines;
      }),
    );
  }
  expect(transcripts[1]).toEqual(transcripts[0]!);
  expect(transcripts[1]).toContain('OBJECT FREQ k -> ":7"');
});

test("RESTORE sets the counter with FREQ under an LFU policy, the idle time with IDLETIME under another", async () => {
  const transcripts: string[][] = [];
  for (const server of [servers.redis, servers.kv]) {
    transcripts.push(
      await withClient(server.port, async (c) => {
        await c.call("FLUSHALL");
        await c.call("SET", "src", "v");
        const payload = (await c.call("DUMP", "src")) as string;
        const steps = [
          ["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"],
          ["RESTORE", "a", "0", payload, "FREQ", "100"],
          ["OBJECT", "FREQ", "a"],
          ["RESTORE", "b", "0", payload, "IDLETIME", "1000"],
          ["OBJECT", "FREQ", "b"],
          ["RESTORE", "c", "0", payload, "FREQ", "256"],
          ["RESTORE", "c", "0", payload, "FREQ", "1", "IDLETIME", "5"],
          ["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
          ["RESTORE", "d", "0", payload, "IDLETIME", "1000"],
          ["OBJECT", "IDLETIME", "d"],
          ["RESTORE", "e", "0", payload, "FREQ", "100"],
          ["OBJECT", "IDLETIME", "e"],
          ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
        ];
        const lines: string[] = [];
        for (const argv of steps) lines.push(`${argv[0]} ${argv[1]} -> ${show(await c.call(...argv))}`);
        return lines;
      }),
    );
  }
  expect(transcripts[1]).toEqual(transcripts[0]!);
});
