/**
 * Warming a batch of pipelined commands before it runs: the keys they name, and the members or
 * fields they name in large sets and hashes, are read into the CPU's cache all together.
 *
 * Why: with 100k keys, a lookup costs about two cache misses (the slot, then the entry), and a
 * command waits for each. Reading the slots of a whole batch first, then the entries, makes the
 * loads independent of each other, so the CPU overlaps their misses; the commands then find what
 * they need in cache. In process, batches of 16 over 100k keys: GET 450 → 335 ns, SET 500 → 335
 * ns. Redis 8 does the same for its I/O threads' batches (memory prefetching).
 *
 * Nothing here knows the commands: the first argument is taken as a key, and when that key holds
 * a large set or hash, the second as a member or field (as in SADD, SISMEMBER, SREM, HSET, HGET,
 * HINCRBY, HDEL). For a command where that guess is wrong it costs a wasted load, and nothing is
 * ever changed.
 */
import type { Keyspace, Value } from "./keyspace.ts";
import { type KeyTable, warmKeysMax } from "./key-table.ts";
import { FieldMap } from "./types/field-map.ts";
import { MemberSet } from "./types/member-set.ts";

const keys: string[] = [];
const members: string[] = [];

/** Warms `db`'s entries for the commands' keys, and their members in large sets and hashes. */
export function warmBatch(db: Keyspace, commands: readonly (readonly string[])[]): void {
  const table = db.table;
  let n = 0;
  for (let i = 0; i < commands.length && n < warmKeysMax; i++) {
    const argv = commands[i]!;
    if (argv.length > 1) keys[n++] = argv[1]!;
  }
  const objects = table.warm(keys, n);
  keys.fill("", 0, n); // hold no client's strings past the batch
  if (!objects) return;
  // Some key holds an object: warm each large collection's table for the members named in it,
  // a run of commands on the same collection at a time.
  let collection: MemberSet | FieldMap | null = null;
  let m = 0;
  // A batch usually names one key many times (a client filling a list, a set): looked up once.
  let lastKey: string | null = null;
  let last: MemberSet | FieldMap | null = null;
  for (const argv of commands) {
    if (argv.length < 3) continue;
    if (argv[1] !== lastKey) {
      lastKey = argv[1]!;
      last = largeCollection(table, lastKey);
    }
    const value = last;
    if (value === null) continue;
    if (value !== collection) {
      collection?.warm(members, m);
      collection = value;
      m = 0;
    }
    if (m < warmKeysMax) members[m++] = argv[2]!;
  }
  collection?.warm(members, m);
  members.fill("", 0, members.length);
}

/** The large set or hash `key` holds, if it holds one. */
function largeCollection(table: KeyTable<Value>, key: string): MemberSet | FieldMap | null {
  const ref = table.find(key);
  if (ref === -1 || table.valueLength(ref) !== -1) return null;
  const value = table.valueOf(ref);
  return (value instanceof MemberSet || value instanceof FieldMap) && value.hashed ? value : null;
}
