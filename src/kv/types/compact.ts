/**
 * When a collection is small enough for Redis's compact encodings (listpack), the limits at their
 * defaults. svc keeps small collections packed by the same limits, and reports the encoding
 * Redis would use (encoding.ts).
 */

/**
 * Redis 7.0's limits for its compact encodings at their defaults: zset-max-listpack-entries (and
 * the packed lists' length, ours), hash-max-listpack-value and zset-max-listpack-value.
 */
export const compactEntriesMax = 128;
/** hash-max-listpack-entries: Redis 7.0's default (built in, and in its redis.conf) is 512, not 128. */
export const hashListpackEntriesMax = 512;
export const compactValueBytesMax = 64;
/** set-max-intset-entries at Redis 7.0's default: a set of more members is no intset. */
export const intsetEntriesMax = 512;

/** Whether `count` values, all of at most compactValueBytesMax bytes, fit a compact encoding. */
export function isCompact(values: Iterable<string>, count: number): boolean {
  if (count > compactEntriesMax) return false;
  for (const v of values) if (v.length > compactValueBytesMax) return false;
  return true;
}

/**
 * The thresholds OBJECT ENCODING follows, as CONFIG SET leaves them (hash-max-listpack-entries
 * and -value, zset-max-listpack-entries and -value, set-max-intset-entries): the encoding Redis
 * would report with them.
 * svc's packed forms keep the fixed limits above whatever these say; only what is reported (and
 * what follows from it in replies: a listpack is scanned in one step) moves. One set per
 * process, as a server is one per process; CONFIG sets them (config-table.ts).
 */
export const encodingLimits = {
  hashEntries: hashListpackEntriesMax,
  hashValueBytes: compactValueBytesMax,
  zsetEntries: compactEntriesMax,
  zsetValueBytes: compactValueBytesMax,
  intsetEntries: intsetEntriesMax,
};
