/**
 * Reading one value in RDB format, as it follows its type byte in a DUMP payload: every encoding
 * Redis 5 to 7.2 writes for strings, lists, sets, sorted sets, hashes and streams — plain elements, and the
 * compact ones (intsets, ziplists, listpacks, quicklist nodes, LZF-compressed and integer-encoded
 * strings). Anything malformed — a length past the end, a bad container, a duplicate member, a NaN
 * score — reads as null: RESTORE answers "Bad data format" and stores nothing.
 */
import { strtod } from "../text/args.ts";
import type { Value } from "../types/value.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { ZSet } from "../types/zset/zset.ts";
import { intsetEntries, listpackEntries, ziplistEntries } from "./packed-lists.ts";
import { rdbType } from "./value-types.ts";
import { readStream } from "./stream-rdb.ts";
import { BadRdbData, bad, RdbCursor } from "./rdb-cursor.ts";

/** Elements of a compact container held as one RDB string. */
function container(c: RdbCursor, read: (bytes: Uint8Array) => string[] | null): string[] {
  return read(c.stringBytes()) ?? bad();
}

/** Pairs of consecutive entries: a hash's fields and values, a sorted set's members and scores. */
function pairs(entries: string[]): [string, string][] {
  if (entries.length % 2 !== 0) bad();
  const out: [string, string][] = [];
  for (let i = 0; i < entries.length; i += 2) out.push([entries[i]!, entries[i + 1]!]);
  return out;
}

/** A set, checked free of duplicates as Redis checks it. */
function setOf(members: string[]): MemberSet {
  const set = new MemberSet(members);
  return set.size === members.length && members.length > 0 ? set : bad();
}

function hashOf(entries: [string, string][]): FieldMap {
  const hash = new FieldMap(entries);
  return hash.size === entries.length && entries.length > 0 ? hash : bad();
}

function zsetOf(entries: [string, number][]): ZSet {
  if (entries.some(([, score]) => Number.isNaN(score))) bad();
  const zset = ZSet.of(entries.map(([member, score]) => ({ member, score })));
  return zset.size === entries.length && entries.length > 0 ? zset : bad();
}

/** A score a ziplist or listpack holds as text ("inf", "-0", "1.5") or an integer, read as Redis reads it: strtod. */
function packedScore(text: string): number {
  return strtod(text) ?? bad();
}

function listOf(items: string[]): List {
  return items.length > 0 ? new List(items) : bad();
}

function readOne(c: RdbCursor, type: number): Value {
  switch (type) {
    case rdbType.string:
      return c.string();
    case rdbType.list:
      return listOf(Array.from({ length: c.length() }, () => c.string()));
    case rdbType.set:
      return setOf(Array.from({ length: c.length() }, () => c.string()));
    case rdbType.zsetText:
    case rdbType.zset: {
      const n = c.length();
      const entries: [string, number][] = [];
      for (let i = 0; i < n; i++) entries.push([c.string(), type === rdbType.zset ? c.binaryDouble() : c.textDouble()]);
      return zsetOf(entries);
    }
    case rdbType.hash: {
      const n = c.length();
      const entries: [string, string][] = [];
      for (let i = 0; i < n; i++) entries.push([c.string(), c.string()]);
      return hashOf(entries);
    }
    case rdbType.setIntset:
      return setOf(container(c, intsetEntries));
    case rdbType.setListpack:
      return setOf(container(c, listpackEntries));
    case rdbType.listZiplist:
      return listOf(container(c, ziplistEntries));
    case rdbType.hashZiplist:
      return hashOf(pairs(container(c, ziplistEntries)));
    case rdbType.hashListpack:
      return hashOf(pairs(container(c, listpackEntries)));
    case rdbType.zsetZiplist:
    case rdbType.zsetListpack: {
      const entries = pairs(container(c, type === rdbType.zsetZiplist ? ziplistEntries : listpackEntries));
      return zsetOf(entries.map(([member, score]) => [member, packedScore(score)]));
    }
    case rdbType.listQuicklist: {
      const items: string[] = [];
      for (let nodes = c.length(); nodes > 0; nodes--) items.push(...container(c, ziplistEntries));
      return listOf(items);
    }
    case rdbType.listQuicklist2: {
      const items: string[] = [];
      for (let nodes = c.length(); nodes > 0; nodes--) {
        const kind = c.length();
        // 1: one plain item (a large one), 2: a listpack of items.
        if (kind === 1) items.push(c.string());
        else if (kind === 2) items.push(...container(c, listpackEntries));
        else bad();
      }
      return listOf(items);
    }
    case rdbType.streamListpacks:
    case rdbType.streamListpacks2:
    case rdbType.streamListpacks3:
      return readStream(c, type);
    default:
      return bad();
  }
}

/** The value `bytes` (a type byte, then the value) encodes; null when they are not a valid one. */
export function readValue(bytes: Uint8Array): Value | null {
  const c = new RdbCursor(bytes);
  try {
    return readOne(c, c.byte());
  } catch (error) {
    if (error instanceof BadRdbData || error instanceof RangeError) return null;
    throw error;
  }
}
