/**
 * The fewest commands that rebuild one key: what an append-only file rewrite writes for it. Big
 * collections are split into commands of at most `itemsPerCommand` items, as Redis does, so that
 * no single command in the file is huge. A Bloom filter is written as RedisBloom writes it: its
 * BF.SCANDUMP chunks, each loaded by a BF.LOADCHUNK (types/bloom/dump.ts).
 */
import { typeOf, type Value } from "../keyspace.ts";
import { formatDouble } from "../reply.ts";
import { type BloomChain, bloomTypeName } from "../types/bloom/chain.ts";
import { loadChunkCommands } from "../types/bloom/dump.ts";
import type { FieldMap } from "../types/field-map.ts";
import type { List } from "../types/list.ts";
import type { MemberSet } from "../types/member-set.ts";
import type { ZSet } from "../types/zset/zset.ts";

/** Redis's AOF_REWRITE_ITEMS_PER_CMD. */
const itemsPerCommand = 64;

/** Commands that recreate `key` holding `value`, expiring at `expiresAtMs` if given. */
export function valueCommands(key: string, value: Value, expiresAtMs: number | undefined): string[][] {
  const commands: string[][] = [];
  const type = typeOf(value);
  if (type === "string") commands.push(["SET", key, value.toString()]);
  else if (type === "list") chunked(commands, ["RPUSH", key], (value as List).toArray(), 1);
  else if (type === "hash") chunked(commands, ["HSET", key], (value as FieldMap).entries().flat(), 2);
  else if (type === "set") chunked(commands, ["SADD", key], (value as MemberSet).members(), 1);
  else if (type === "zset") {
    const pairs: string[] = [];
    for (const e of (value as ZSet).entries()) pairs.push(formatDouble(e.score), e.member);
    chunked(commands, ["ZADD", key], pairs, 2);
  } else if (type === bloomTypeName) commands.push(...loadChunkCommands(key, value as BloomChain));
  else throw new Error(`an append-only file rewrite cannot write a ${type} value yet`);
  if (expiresAtMs !== undefined) commands.push(["PEXPIREAT", key, String(expiresAtMs)]);
  return commands;
}

/** Pushes `head` + items, `itemsPerCommand` items (of `width` arguments each) per command. */
function chunked(commands: string[][], head: string[], args: string[], width: number): void {
  const step = itemsPerCommand * width;
  for (let i = 0; i < args.length; i += step) commands.push([...head, ...args.slice(i, i + step)]);
}
