/**
 * MEMORY USAGE: the bytes a key and its value take in this process, estimated from their layout
 * (memory-sizes.ts, and each type's `memoryBytes`), as Redis estimates from its allocator's sizes.
 * A large collection's elements are sized from a sample, as Redis samples them: the first
 * `samples` (5 unless asked; 0 reads them all). The numbers differ from Redis's, whose layouts
 * differ; what they are for is the same — finding the keys that hold the memory.
 */
import { isKeyword, parseInt64 } from "../text/args.ts";
import { notAnInteger, syntaxError } from "../text/errors.ts";
import type { Keyspace } from "./keyspace.ts";
import type { Value } from "../types/value.ts";
import { pointerBytes, stringBytes } from "../types/memory-sizes.ts";
import { MutableString } from "../types/string/bytes.ts";
import { BloomChain } from "../types/bloom/chain.ts";

/** Elements of a collection MEMORY USAGE sizes when not told (Redis's default too). */
export const memoryUsageSamplesDefault = 5;

/** The value's own bytes, beyond its key's entry. */
export function valueMemoryBytes(value: Value, samples: number): number {
  if (typeof value === "string") return stringBytes(value.length);
  if (value instanceof MutableString || value instanceof BloomChain) return value.memoryBytes();
  return value.memoryBytes(samples);
}

/**
 * Bytes of `key` in `db` — its entry, its value, its time to live — or null when there is no
 * such key. A key whose time has passed but which has not been deleted yet is counted, not
 * deleted, as Redis 7.0 does.
 */
export function keyMemoryBytes(db: Keyspace, key: string, samples: number): number | null {
  const { table } = db;
  const ref = table.find(key);
  if (ref === -1) return null;
  let bytes = table.entryMemoryBytes(ref);
  // A short string lives inside the entry; anything else is held beside it, through a slot of
  // the table's array of held objects.
  if (table.valueLength(ref) === -1) bytes += pointerBytes + valueMemoryBytes(table.valueOf(ref), samples);
  return bytes;
}

/**
 * MEMORY USAGE's options after the key, `SAMPLES count`, checked as Redis checks them, before it
 * looks the key up: a count that is not a long long is "not an integer", a negative one or any
 * other word a syntax error; 0 (or more than could ever be sampled) means all.
 */
export function parseMemoryUsageSamples(argv: readonly string[]): number {
  let samples = memoryUsageSamplesDefault;
  for (let i = 3; i < argv.length; i++) {
    if (!isKeyword(argv[i]!, "SAMPLES") || i + 1 === argv.length) throw syntaxError();
    const count = parseInt64(argv[++i]!);
    if (count === null) throw notAnInteger();
    if (count < 0n) throw syntaxError();
    samples = count > BigInt(Number.MAX_SAFE_INTEGER) ? 0 : Number(count);
  }
  return samples;
}
