// COMMAND INFO and COMMAND LIST side by side with redis-server 7.0: each command's and
// subcommand's arity, flags, key positions and ACL categories, and the lists COMMAND LIST gives
// whole and filtered by module, ACL category and pattern — what client libraries and tools read
// to learn the commands.
import { expect, test } from "bun:test";
import { type RespClient, type RespValue, show } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

const text = (v: RespValue) => (typeof v === "string" ? v : (v as { s: string }).s);

/** COMMAND INFO of one command or subcommand, as [name, arity, flags sorted, first, last, step, categories]. */
async function info(client: RespClient, name: string): Promise<unknown> {
  const [container, sub] = name.split("|") as [string, string | undefined];
  const [entry] = (await client.call("COMMAND", "INFO", container)) as RespValue[][];
  const found = sub === undefined ? entry : (entry![9] as RespValue[][]).find((e) => e[0] === name);
  if (found === undefined || found === null) return null;
  const [, arity, flags, first, last, step, categories] = found;
  return [name, arity, (flags as RespValue[]).map(text).sort(), first, last, step, (categories as RespValue[]).map(text)];
}

const list = async (client: RespClient, ...args: string[]) => {
  const reply = await client.call("COMMAND", "LIST", ...args);
  return Array.isArray(reply) ? (reply as string[]).sort() : reply;
};

test("COMMAND INFO describes every command svc has as redis-server describes it", async () => {
  const names = (await list(s.kvClient)) as string[];
  const redisNames = new Set((await list(s.redisClient)) as string[]);
  const differ: string[] = [];
  let compared = 0;
  for (const name of names) {
    // The Bloom filter commands are RedisBloom's module, which this redis-server has not loaded.
    if (name.startsWith("bf.")) continue;
    expect({ name, inRedis: redisNames.has(name) }).toEqual({ name, inRedis: true });
    const [redis, kv] = [await info(s.redisClient, name), await info(s.kvClient, name)];
    if (show(kv as RespValue) !== show(redis as RespValue)) differ.push(`${show(kv as RespValue)} ≠ redis ${show(redis as RespValue)}`);
    compared++;
  }
  expect(differ).toEqual([]);
  expect(compared).toBeGreaterThanOrEqual(240);
  expect(names).toContain("client|list");
});

test("COMMAND INFO and DOCS take a subcommand by its full name, in any case; an unknown one is nil", async () => {
  const direct = async (client: RespClient, ...names: string[]) => {
    const entries = (await client.call("COMMAND", "INFO", ...names)) as RespValue[];
    // An unknown name is a null array.
    return entries.map((e) =>
      !Array.isArray(e) ? e : [e[0], e[1], (e[2] as RespValue[]).map(text).sort(), e[3], e[4], e[5], (e[6] as RespValue[]).map(text)],
    );
  };
  const names = ["config|get", "MEMORY|STATS", "latency|history", "client|nosuch", "get|x"];
  expect(await direct(s.kvClient, ...names)).toEqual(await direct(s.redisClient, ...names));
  const docs = (await s.kvClient.call("COMMAND", "DOCS", "config|get")) as RespValue[];
  expect(docs[0]).toBe("config|get");
});

test("COMMAND LIST filters by module, ACL category and pattern as redis-server does", async () => {
  for (const args of [
    ["FILTERBY", "ACLCAT", "geo"],
    ["FILTERBY", "ACLCAT", "HyperLogLog"],
    ["FILTERBY", "ACLCAT", "nosuch"],
    ["FILTERBY", "ACLCAT", "@geo"],
    ["FILTERBY", "MODULE", "nosuch"],
    ["FILTERBY", "PATTERN", "Z*STORE"],
    ["FILTERBY", "PATTERN", "config|*"],
    ["FILTERBY", "NOSUCH", "x"],
    ["x"],
    ["FILTERBY", "PATTERN"],
  ]) {
    expect({ args, kv: await list(s.kvClient, ...args) }).toEqual({ args, kv: await list(s.redisClient, ...args) });
  }
  // What svc has of a category Redis fills with commands svc lacks (streams, scripting, …) is in Redis's.
  for (const category of ["write", "read", "fast", "slow", "keyspace", "dangerous"]) {
    const redis = new Set((await list(s.redisClient, "FILTERBY", "ACLCAT", category)) as string[]);
    const kv = ((await list(s.kvClient, "FILTERBY", "ACLCAT", category)) as string[]).filter((name) => !name.startsWith("bf."));
    expect({ category, missing: kv.filter((name) => !redis.has(name)) }).toEqual({ category, missing: [] });
    expect(kv.length).toBeGreaterThan(5);
  }
  expect(await list(s.kvClient, "FILTERBY", "MODULE", "bf")).toContain("bf.add");
});
