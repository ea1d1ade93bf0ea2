/**
 * Typed key lookups for command code: each returns the value when the key holds the expected
 * type, undefined when it is missing, and throws WRONGTYPE otherwise. They also keep INFO's
 * keyspace hit and miss counters, as Redis's lookupKeyRead does.
 */
import { wrongType } from "../errors.ts";
import type { Value } from "../keyspace.ts";
import type { List } from "../types/list.ts";
import type { ZSet } from "../types/zset.ts";
import type { Exec } from "./spec.ts";

function lookup(x: Exec, key: string): Value | undefined {
  const value = x.db.read(key);
  if (value === undefined) x.engine.stats.keyspaceMisses++;
  else x.engine.stats.keyspaceHits++;
  return value;
}

export function getString(x: Exec, key: string): string | undefined {
  const value = lookup(x, key);
  if (value !== undefined && typeof value !== "string") throw wrongType();
  return value;
}

export function getList(x: Exec, key: string): List | undefined {
  const value = lookup(x, key);
  if (value !== undefined && (typeof value === "string" || value instanceof Map || value instanceof Set || value.kind !== "list")) throw wrongType();
  return value;
}

export function getHash(x: Exec, key: string): Map<string, string> | undefined {
  const value = lookup(x, key);
  if (value !== undefined && !(value instanceof Map)) throw wrongType();
  return value;
}

export function getSet(x: Exec, key: string): Set<string> | undefined {
  const value = lookup(x, key);
  if (value !== undefined && !(value instanceof Set)) throw wrongType();
  return value;
}

export function getZSet(x: Exec, key: string): ZSet | undefined {
  const value = lookup(x, key);
  if (value !== undefined && (typeof value === "string" || value instanceof Map || value instanceof Set || value.kind !== "zset")) throw wrongType();
  return value;
}

/** Answers an array of bulk strings. */
export function replyStrings(x: Exec, values: readonly (string | null)[]): void {
  x.reply.array(values.length);
  for (const v of values) x.reply.bulk(v);
}
