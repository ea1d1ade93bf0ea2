/**
 * The Lua costs BullMQ's scripts pay, one at a time, on svc kv and redis-server: a script's fixed
 * cost (EVALSHA of `return 1`), a redis.call's (PING, which does nothing itself), plain Lua, and
 * the cmsgpack and cjson calls BullMQ makes on every job (it packs a job's options with msgpack and
 * encodes events as JSON), and making the local functions each of its scripts defines on every
 * run (moveToFinished defines 37); then some of BullMQ's own commands called from a script. Each
 * is timed by the server itself: INFO commandstats' µs per EVALSHA, divided by the times the
 * script repeats the thing, so neither the client nor the network is in it. Part of `svc bench
 * kv`, after the BullMQ table (lib/kv-bullmq.ts).
 */
import { RespClient } from "../../test/kv/support/resp-client.ts";
import { median, redisCli } from "./redis-benchmark.ts";
import type { ServerProcess } from "../../test/kv/support/servers.ts";

/** A BullMQ job's options as its addStandardJob script receives them: msgpack of a seven-field map. */
const packedOptions = Buffer.from(
  "87a46e616d65a36a6f62a464617461a47b6e3a317da7617474656d707473a131a564656c6179a130a87072696f72697479a130a3726f63c3a3666f6fa3626172",
  "hex",
).toString("latin1");

/** Each case: its script, and how many times it does what is timed (the µs per EVALSHA is divided by it). */
const cases: { name: string; body: string; repeats: number }[] = [
  { name: "a script's fixed cost (EVALSHA of `return 1`)", body: "return 1", repeats: 1 },
  { name: "redis.call('ping'), per call", body: "for i = 1, 1000 do redis.call('ping') end return 1", repeats: 1000 },
  {
    name: "plain Lua: a string made and stored, per iteration",
    body: "local t = {} for i = 1, 1000 do t[i] = tostring(i) .. ':x' end return #t",
    repeats: 1000,
  },
  {
    name: "cmsgpack.unpack of a job's options, per call",
    body: "local n = 0 for i = 1, 1000 do n = n + #cmsgpack.unpack(ARGV[1]) end return n",
    repeats: 1000,
  },
  {
    name: "cjson.encode of a three-field table, per call",
    body: "local n = 0 for i = 1, 1000 do n = n + #cjson.encode({id = i, name = 'job', attempts = 3}) end return n",
    repeats: 1000,
  },
  {
    name: "cjson.decode of a job's options, per call",
    body: `local n = 0 for i = 1, 1000 do n = n + #cjson.decode('{"attempts":0,"removeOnComplete":true,"delay":0,"name":"job","priority":0}') end return n`,
    repeats: 1000,
  },
  { name: "20 local functions defined, per script run", body: "local f = {} for i = 1, 20 do f[i] = function(x) return x + i end end return #f", repeats: 1 },
  // BullMQ's own commands, each on keys shaped like its own, the Lua that names them included:
  // what a command costs once called from a script, where the cases above cost the crossing.
  { name: "EXISTS of a job that is not there, per call", body: "for i = 1, 1000 do redis.call('exists', 'bq:job:' .. i) end return 1", repeats: 1000 },
  {
    name: "HMSET of a job's six fields, then DEL of the job, per pair",
    body:
      "for i = 1, 1000 do local k = 'bq:job:' .. i " +
      "redis.call('hmset', k, 'name', 'job', 'data', '{\"n\":1}', 'opts', '{\"attempts\":0}', 'timestamp', '1764489600000', 'delay', '0', 'priority', '0') " +
      "redis.call('del', k) end return 1",
    repeats: 1000,
  },
  {
    name: "XADD MAXLEN ~ 10000 to the events stream, per call",
    body: "for i = 1, 1000 do redis.call('xadd', 'bq:events', 'MAXLEN', '~', 10000, '*', 'event', 'added', 'jobId', i, 'name', 'job') end return 1",
    repeats: 1000,
  },
  {
    name: "ZADD of a new member, then ZREM of it, per pair",
    body:
      "redis.call('zadd', 'bq:delayed', 0, 'kept') " +
      "for i = 1, 1000 do redis.call('zadd', 'bq:delayed', i, 'j' .. i) redis.call('zrem', 'bq:delayed', 'j' .. i) end return 1",
    repeats: 1000,
  },
];
/** EVALSHAs per measurement: a case that repeats its work 1000 times needs fewer. */
const callsFor = (repeats: number) => (repeats === 1 ? 2000 : 20);
/**
 * Unmeasured repetitions of each case's work first (svc's JIT, both servers' caches), at least
 * warmUpCallsMin EVALSHAs. svc's EVALSHA of `return 1` takes ~30,000 calls to reach its steady
 * cost: over rounds of 2,000 it went 4.4 → 1.7 → 1.2 → 0.9 µs (2026-11-30), and 200 calls of
 * warm-up had it measured at twice its steady cost.
 */
const warmUpRepetitions = 40_000;
const warmUpCallsMin = 200;
/** EVALSHAs sent in one pipeline while warming up. */
const warmUpBatch = 2000;
const rounds = 5;

/** µs one repetition of the case's work takes on the server: the median over rounds. */
async function microsPer(server: ServerProcess, client: RespClient, sha: string, repeats: number): Promise<number> {
  const warmUpCalls = Math.max(warmUpCallsMin, Math.ceil(warmUpRepetitions / repeats));
  for (let sent = 0; sent < warmUpCalls; sent += warmUpBatch) {
    await client.pipeline(Array.from({ length: Math.min(warmUpBatch, warmUpCalls - sent) }, () => ["EVALSHA", sha, "0", packedOptions]));
  }
  const measured: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await redisCli(server.port, ["CONFIG", "RESETSTAT"]);
    await client.pipeline(Array.from({ length: callsFor(repeats) }, () => ["EVALSHA", sha, "0", packedOptions]));
    const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redisCli(server.port, ["INFO", "commandstats"]));
    if (stats === null) throw new Error("no EVALSHA in INFO commandstats");
    measured.push(Number(stats[2]) / Number(stats[1]) / repeats);
  }
  return median(measured);
}

/** Prints the table for two running servers. */
export async function bullmqLuaCosts(redis: ServerProcess, kv: ServerProcess): Promise<void> {
  const clients = await Promise.all([RespClient.connect(redis.port), RespClient.connect(kv.port)]);
  try {
    console.log(`### kv: the Lua costs BullMQ's scripts pay (µs, timed by each server: INFO commandstats, median of ${rounds})\n`);
    console.log("| case | redis µs | svc µs | svc/redis |");
    console.log("|---|---:|---:|---:|");
    for (const c of cases) {
      const micros: number[] = [];
      for (const [i, server] of [redis, kv].entries()) {
        const sha = String(await clients[i]!.call("SCRIPT", "LOAD", c.body));
        micros.push(await microsPer(server, clients[i]!, sha, c.repeats));
      }
      console.log(`| ${c.name} | ${micros[0]!.toFixed(2)} | ${micros[1]!.toFixed(2)} | ${(micros[1]! / micros[0]!).toFixed(2)}× |`);
    }
    console.log("");
  } finally {
    for (const client of clients) client.close();
  }
}
