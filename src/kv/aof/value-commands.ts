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
import type { CommandBuffer } from "./command-buffer.ts";

/** Redis's AOF_REWRITE_ITEMS_PER_CMD. */
const itemsPerCommand = 64;

/** Appends to `out` the commands that recreate `key` holding `value`, expiring at `expiresAtMs` if given. */
export function writeValueCommands(out: CommandBuffer, key: string, value: Value, expiresAtMs: number | undefined): void {
  const type = typeOf(value);
  if (type === "string") out.push(["SET", key, value.toString()]);
  else if (type === "list") {
    const list = value as List;
    writeListItems(out, key, list, 0, list.size);
  } else if (type === "hash") {
    const chunk = new Chunker(out, ["HSET", key], 2);
    for (const [field, fieldValue] of value as FieldMap) chunk.add(field, fieldValue);
    chunk.flush();
  } else if (type === "set") {
    const chunk = new Chunker(out, ["SADD", key], 1);
    for (const member of value as MemberSet) chunk.add(member);
    chunk.flush();
  } else if (type === "zset") {
    const chunk = new Chunker(out, ["ZADD", key], 2);
    for (const e of (value as ZSet).entries()) chunk.add(formatDouble(e.score), e.member);
    chunk.flush();
  } else if (type === bloomTypeName) for (const argv of loadChunkCommands(key, value as BloomChain)) out.push(argv);
  else throw new Error(`an append-only file rewrite cannot write a ${type} value yet`);
  if (expiresAtMs !== undefined) out.push(["PEXPIREAT", key, String(expiresAtMs)]);
}

/** Appends RPUSH commands for the list's items [from, to), at most itemsPerCommand per command. */
export function writeListItems(out: CommandBuffer, key: string, list: List, from: number, to: number): void {
  const head = ["RPUSH", key];
  for (let i = from; i < to; i += itemsPerCommand) out.pushItems(head, list, i, Math.min(itemsPerCommand, to - i));
}

/** Gathers items (of `width` arguments each) into commands of `head` + at most itemsPerCommand items. */
class Chunker {
  private readonly argv: string[];

  constructor(
    private readonly out: CommandBuffer,
    private readonly head: readonly string[],
    private readonly width: number,
  ) {
    this.argv = [...head];
  }

  /** One item: `first`, and `second` when items are pairs. */
  add(first: string, second?: string): void {
    this.argv.push(first);
    if (second !== undefined) this.argv.push(second);
    if (this.argv.length === this.head.length + itemsPerCommand * this.width) this.flush();
  }

  /** Writes the items gathered since the last command, if any. */
  flush(): void {
    if (this.argv.length === this.head.length) return;
    this.out.push(this.argv);
    this.argv.length = this.head.length;
  }
}
