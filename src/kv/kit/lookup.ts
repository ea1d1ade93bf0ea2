/**
 * Key access for command code. The typed lookups return the value when the key holds the
 * expected type, undefined when it is missing, and throw WRONGTYPE otherwise; they also keep
 * INFO's keyspace hit and miss counters, as Redis's lookupKeyRead does. The settling helpers
 * end a change to a collection the way Redis does: an emptied collection takes its key with it.
 */
import type { Keyspace } from "../keyspace/keyspace.ts";
import type { KeyEvent } from "../keyspace/keyspace-events.ts";
import { MutableString } from "../types/string/bytes.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import type { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import type { ZSet } from "../types/zset/zset.ts";
import type { CommandSpec, Exec } from "./spec.ts";
import { parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, wrongType } from "../text/errors.ts";
import { type Value, typeOf } from "../types/value.ts";

/**
 * Write commands whose key reads Redis makes with lookupKeyRead, so that they count as keyspace
 * hits and misses: the sources of the STORE forms, what GETSET, GETDEL, GETEX and SET … GET
 * answer, COPY's source, SORT's key, XREADGROUP's streams. Every other write command looks its
 * keys up for writing, which Redis does not count.
 */
const writesCountingReads = new Set([
  "set",
  "getset",
  "getdel",
  "getex",
  "copy",
  "sort",
  "bitop",
  "pfmerge",
  "sunionstore",
  "sinterstore",
  "sdiffstore",
  "zunionstore",
  "zinterstore",
  "zdiffstore",
  "zrangestore",
  "georadius",
  "georadiusbymember",
  "geosearchstore",
  "xreadgroup",
]);

/** Whether a command's key reads count in INFO's keyspace_hits and keyspace_misses. */
export const countsReads = (spec: CommandSpec): boolean => !spec.flags.includes("write") || writesCountingReads.has(spec.name);

/**
 * Counts a lookup of `key`'s hit or miss, if the running command's reads count; a miss is also a
 * "keymiss" event, as in Redis, unless `notifyMiss` is false (OBJECT's lookups notify nothing).
 */
export function countLookup(x: Exec, key: string, found: boolean, notifyMiss = true): void {
  if (!x.countsReads) return;
  if (found) x.engine.stats.keyspaceHits++;
  else {
    x.engine.stats.keyspaceMisses++;
    if (notifyMiss) x.db.notify("keymiss", key);
  }
}

/** The ref of `key`'s entry (-1 when missing), recording the read and counting the hit or miss. */
function readCounted(x: Exec, key: string): number {
  const ref = x.db.readRef(key, x.timeMs);
  countLookup(x, key, ref !== -1);
  return ref;
}

/** The value at `key` whatever its type, counting the hit or miss. */
export function getValue(x: Exec, key: string): Value | undefined {
  const ref = readCounted(x, key);
  return ref === -1 ? undefined : x.db.table.valueOf(ref);
}

/**
 * The ref of a string key's entry in the table (-1 when missing), counting the hit or miss and
 * recording the read; WRONGTYPE for another type.
 */
export function getStringRef(x: Exec, key: string): number {
  const ref = readCounted(x, key);
  // An inline value is a string; only an object needs its type checked.
  if (ref !== -1 && x.db.table.valueLength(ref) === -1) {
    const value = x.db.table.valueOf(ref);
    if (typeof value !== "string" && !(value instanceof MutableString)) throw wrongType();
  }
  return ref;
}

/** The text of the string value at `ref`, a ref getStringRef returned. */
export function stringAt(x: Exec, ref: number): string {
  const value = x.db.table.valueOf(ref);
  return typeof value === "string" ? value : (value as MutableString).toString();
}

/**
 * Answers a string's value as a bulk (GET), or the null bulk: a short value is copied to the reply
 * straight from the table's bytes. With `orNull`, another type answers null instead of WRONGTYPE
 * (MGET, which still counts a key of another type as a hit, as Redis does).
 */
export function replyString(x: Exec, key: string, orNull = false): void {
  const table = x.db.table;
  const ref = orNull ? readCounted(x, key) : getStringRef(x, key);
  if (ref === -1) return x.reply.bulk(null);
  const length = table.valueLength(ref);
  if (length !== -1) {
    const at = table.valueAt(ref);
    return x.reply.bulkBytes(table.bytesOf(ref), at, at + length);
  }
  const value = table.valueOf(ref);
  x.reply.bulk(typeof value === "string" ? value : value instanceof MutableString ? value.toString() : null);
}

export function getString(x: Exec, key: string): string | undefined {
  const ref = getStringRef(x, key);
  return ref === -1 ? undefined : stringAt(x, ref);
}

/** A string value in whichever form it is held, for commands that read its bytes (GETBIT, BITCOUNT, PFCOUNT). */
export function getStringValue(x: Exec, key: string): string | MutableString | undefined {
  const value = getValue(x, key);
  if (value !== undefined && typeof value !== "string" && !(value instanceof MutableString)) throw wrongType();
  return value;
}

/**
 * A string value to change in place (SETBIT, BITFIELD, PFADD): a plain string becomes a
 * MutableString once, keeping its time to live.
 */
export function getMutableString(x: Exec, key: string): MutableString | undefined {
  const value = getStringValue(x, key);
  if (typeof value !== "string") return value;
  const mutable = MutableString.from(value);
  x.db.set(key, mutable, true);
  return mutable;
}

export function getList(x: Exec, key: string): List | undefined {
  const value = getValue(x, key);
  if (value !== undefined && typeOf(value) !== "list") throw wrongType();
  return value as List | undefined;
}

export function getHash(x: Exec, key: string): FieldMap | undefined {
  const value = getValue(x, key);
  if (value !== undefined && !(value instanceof FieldMap)) throw wrongType();
  return value;
}

export function getSet(x: Exec, key: string): MemberSet | undefined {
  const value = getValue(x, key);
  if (value !== undefined && !(value instanceof MemberSet)) throw wrongType();
  return value;
}

export function getZSet(x: Exec, key: string): ZSet | undefined {
  const value = getValue(x, key);
  if (value !== undefined && typeOf(value) !== "zset") throw wrongType();
  return value as ZSet | undefined;
}

/**
 * After removing elements in place: publishes `event` (the removal: "lpop", "srem", …), then
 * deletes the key once its collection is empty, with a "del" event, as Redis does; else reports
 * the change.
 */
export function afterRemoval(x: Exec, key: string, collection: { readonly size: number }, event: KeyEvent): void {
  const emptied = collection.size === 0;
  if (emptied) x.db.delete(key);
  else x.db.modified(key);
  x.db.notify(event, key);
  if (emptied) x.db.notify("del", key);
}

/**
 * Deletes a key a command deletes (DEL, GETDEL, a time already past), with Redis's "del" event;
 * returns whether it was there.
 */
export function deleteKey(db: Keyspace, key: string): boolean {
  if (!db.delete(key)) return false;
  db.notify("del", key);
  return true;
}

/**
 * An empty result's ending (*STORE, SORT … STORE, BITOP): the destination is deleted as it
 * stands, past its time or not, as Redis's dbDelete does, with a "del" event if it was there.
 */
export function deleteDestination(x: Exec, key: string): void {
  if (x.db.deleteAsIs(key)) x.db.notify("del", key);
}

/**
 * The *STORE commands' ending: stores the result and publishes `event`, or deletes the
 * destination for an empty result ("del" if there was one to delete), and answers its size.
 */
export function storeResult(x: Exec, key: string, result: MemberSet | ZSet, event: KeyEvent): void {
  if (result.size > 0) {
    x.db.set(key, result);
    x.db.notify(event, key);
  } else deleteDestination(x, key);
  x.reply.integer(result.size);
}

/** Answers an array of bulk strings. */
export function replyStrings(x: Exec, values: readonly (string | null)[]): void {
  x.reply.array(values.length);
  for (const v of values) x.reply.bulk(v);
}

/**
 * Gives `key` the expiry time `at` (Unix ms), or deletes it when `at` is not after `now`, as Redis
 * does; the file records the outcome in absolute terms (PEXPIREAT or DEL), as Redis propagates it.
 */
export function expireAtOrDelete(x: Exec, key: string, at: number, now: number): void {
  if (x.engine.alreadyPast(at, now)) {
    deleteKey(x.db, key);
    x.propagate = [["DEL", key]];
  } else {
    x.db.setExpire(key, at);
    x.db.notify("expire", key);
    x.propagate = [["PEXPIREAT", key, String(at)]];
  }
}

const int32Min = -2147483648n;
const int32Max = 2147483647n;

/**
 * A database index argument (SELECT, SWAPDB, MOVE, COPY ... DB); `notInteger` is the error for
 * text that is not an integer, which SWAPDB words its own way.
 */
export function dbIndex(x: Exec, text: string, notInteger?: () => Error): number {
  const n = parseInt64(text);
  if (n === null) throw (notInteger ?? notAnInteger)();
  // Redis reads the index as a C int first (getIntFromObjectOrReply): past it, its own words,
  // or the caller's (SWAPDB's) for both cases.
  if (n < int32Min || n > int32Max) throw notInteger?.() ?? new KvError(`ERR value is out of range, value must between ${int32Min} and ${int32Max}`);
  if (n < 0n || n >= BigInt(x.engine.dbs.length)) throw new KvError("ERR DB index is out of range");
  return Number(n);
}
