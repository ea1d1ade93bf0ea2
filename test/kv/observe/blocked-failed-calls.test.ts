// A blocked command that is served an error — XREADGROUP whose group XGROUP DESTROY removed or
// whose stream was deleted, BLMOVE whose destination became another type — is a failed call in
// INFO commandstats, and its error is counted in errorstats, as redis-server 7.0 counts them.
import { expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** INFO's `cmdstat_<name>:…` and `errorstat_…` lines as name → {calls, failed_calls, rejected_calls} or count. */
async function counts(client: RespClient): Promise<Record<string, string>> {
  const text = `${await client.call("INFO", "commandstats")}${await client.call("INFO", "errorstats")}`;
  const out: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const m = /^(cmdstat_[^:]+|errorstat_[^:]+):(.*)$/.exec(line);
    if (m !== null) out[m[1]!] = m[2]!.replace(/usec=[^,]+,usec_per_call=[^,]+,/, "");
  }
  return out;
}

/** Blocks `blocker` in `blocking`, runs `ending` from another client, and returns what the blocker was told. */
async function blockThen(
  port: number,
  setup: string[][],
  blocking: string[],
  ending: string[][],
): Promise<{ reply: RespValue; counts: Record<string, string> }> {
  const blocker = await RespClient.connect(port);
  const other = await RespClient.connect(port);
  await other.pipeline([["FLUSHALL"], ["CONFIG", "RESETSTAT"], ...setup]);
  const id = String(await blocker.call("CLIENT", "ID"));
  const reply = blocker.call(...blocking);
  for (let tries = 0; tries < 200 && !String(await other.call("CLIENT", "LIST", "ID", id)).includes("flags=b"); tries++) await Bun.sleep(5);
  await other.pipeline(ending);
  const result = { reply: await reply, counts: await counts(other) };
  blocker.close();
  other.close();
  return result;
}

const cases: [name: string, setup: string[][], blocking: string[], ending: string[][], error: string][] = [
  [
    "XGROUP DESTROY of the group",
    [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
    ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"],
    [["XGROUP", "DESTROY", "s", "g"]],
    "NOGROUP",
  ],
  [
    "DEL of the stream",
    [["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
    ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"],
    [["DEL", "s"]],
    "UNBLOCKED",
  ],
  ["a destination of another type", [["SET", "dst", "x"]], ["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"], [["RPUSH", "src", "a"]], "WRONGTYPE"],
];

for (const [name, setup, blocking, ending, error] of cases) {
  test(`${blocking[0]} ended by ${name}: its error, a failed call and its errorstat, as redis-server`, async () => {
    const redis = await blockThen(servers.redis.port, setup, blocking, ending);
    const kv = await blockThen(servers.kv.port, setup, blocking, ending);
    expect(kv.reply).toEqual(redis.reply);
    expect(kv.counts).toEqual(redis.counts);
    expect((kv.reply as { e: string }).e.startsWith(error)).toBe(true);
    expect(kv.counts[`cmdstat_${blocking[0]!.toLowerCase()}`]).toBe("calls=1,rejected_calls=0,failed_calls=1");
    expect(kv.counts[`errorstat_${error}`]).toBe("count=1");
  });
}

/**
 * CLIENT UNBLOCK, TIMEOUT or ERROR: Redis 7.0.15 records the ended command as an unblocked call
 * with errors — a failed call even for TIMEOUT, with its time in LATENCY HISTOGRAM and INFO
 * latencystats (networking.c calls updateStatsOnUnblock(target, 0, 0, 1)).
 */
async function unblockedBy(port: number, reason: string): Promise<{ reply: RespValue; counts: Record<string, string>; latency: boolean }> {
  const blocker = await RespClient.connect(port);
  const other = await RespClient.connect(port);
  await other.pipeline([["FLUSHALL"], ["CONFIG", "RESETSTAT"]]);
  const id = String(await blocker.call("CLIENT", "ID"));
  const reply = blocker.call("BLPOP", "empty", "0");
  for (let tries = 0; tries < 200 && !String(await other.call("CLIENT", "LIST", "ID", id)).includes("flags=b"); tries++) await Bun.sleep(5);
  expect(await other.call("CLIENT", "UNBLOCK", id, reason)).toBe(1n);
  const result = {
    reply: await reply,
    counts: await counts(other),
    latency: String(await other.call("INFO", "latencystats")).includes("latency_percentiles_usec_blpop:"),
  };
  blocker.close();
  other.close();
  return result;
}

for (const reason of ["TIMEOUT", "ERROR"]) {
  test(`BLPOP ended by CLIENT UNBLOCK ${reason}: a failed call with its latency recorded, as redis-server`, async () => {
    const redis = await unblockedBy(servers.redis.port, reason);
    const kv = await unblockedBy(servers.kv.port, reason);
    expect(kv).toEqual(redis);
    expect(kv.counts.cmdstat_blpop).toBe("calls=1,rejected_calls=0,failed_calls=1");
    expect(kv.latency).toBe(true);
  });
}
