/**
 * Hashes: a FieldMap from field to value, both byte strings (field-map.ts). A small one keeps
 * insertion order, which is the order Redis's compact (listpack) hashes reply in, so small hashes
 * answer HGETALL in the same order as Redis; large ones are unordered in Redis anyway.
 */
import { parseStep, sumWithInteger } from "../text/args.ts";
import { parseCursor, parseScanOptions, replyScan } from "../kit/scan-args.ts";
import { afterRemoval, getHash, replyStrings } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { arityError, KvError, notAFloat } from "../text/errors.ts";
import { globMatch } from "../text/glob.ts";
import type { KeyEvent } from "../keyspace/keyspace-events.ts";
import { parseLongDouble, sumText } from "../text/long-double.ts";
import { scanStep, takeParked, walkTable } from "../kit/scan-cursors.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { randomCountWith, randomElements } from "../types/sample.ts";

type Hash = FieldMap;

/**
 * After a write to `hash`: a new hash (`existing`, the lookup's result, is undefined) is stored
 * under the key ("new"), a changed one reports the change; then `event` is published.
 */
function store(x: Exec, key: string, hash: Hash, existing: Hash | undefined, event: KeyEvent): void {
  if (existing === undefined) x.db.set(key, hash);
  else x.db.modified(key);
  x.db.notify(event, key);
}

function hset(x: Exec, argv: string[], replyOk: boolean): void {
  if (argv.length % 2 !== 0) throw arityError(argv[0]!.toLowerCase());
  const existing = getHash(x, argv[1]!);
  const hash = existing ?? new FieldMap();
  const added = hash.setPairs(argv, 2);
  store(x, argv[1]!, hash, existing, "hset");
  if (replyOk) x.reply.simple("OK");
  else x.reply.integer(added);
}

function hsetnx(x: Exec, argv: string[]): void {
  const [, key, field, value] = argv as [string, string, string, string];
  const existing = getHash(x, key);
  if (existing?.has(field)) return x.reply.integer(0);
  const hash = existing ?? new FieldMap();
  hash.set(field, value);
  store(x, key, hash, existing, "hset");
  x.reply.integer(1);
}

function hdel(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const hash = getHash(x, key);
  if (hash === undefined) return x.reply.integer(0);
  let removed = 0;
  for (let i = 2; i < argv.length; i++) if (hash.delete(argv[i]!)) removed++;
  if (removed > 0) afterRemoval(x, key, hash, "hdel");
  x.reply.integer(removed);
}

function hincrby(x: Exec, argv: string[]): void {
  const [, key, field, byText] = argv as [string, string, string, string];
  // A small step stays a number: BigInt arithmetic made HINCRBY, which BullMQ runs twice a job,
  // allocate three BigInts a call.
  const by = parseStep(byText);
  const existing = getHash(x, key);
  const result = sumWithInteger(existing?.get(field), by, hashValueNotAnInteger);
  const hash = existing ?? new FieldMap();
  hash.set(field, String(result));
  store(x, key, hash, existing, "hincrby");
  x.reply.integer(result);
}

const hashValueNotAnInteger = () => new KvError("ERR hash value is not an integer");

/** A field's value as a bulk string (HGET, HMGET), null when the hash or the field is missing. */
function replyField(x: Exec, hash: Hash | undefined, field: string): void {
  if (hash === undefined) x.reply.bulk(null);
  else hash.writeValue(field, x.reply);
}

function hincrbyfloat(x: Exec, argv: string[]): void {
  const [, key, field, byText] = argv as [string, string, string, string];
  const by = parseLongDouble(byText);
  if (by === null) throw notAFloat();
  if (typeof by === "string") throw new KvError("ERR value is NaN or Infinity");
  const existing = getHash(x, key);
  const base = parseLongDouble(existing?.get(field) ?? "0");
  if (base === null) throw new KvError("ERR hash value is not a float");
  const result = sumText(base, by);
  const hash = existing ?? new FieldMap();
  hash.set(field, result);
  store(x, key, hash, existing, "hincrbyfloat");
  x.propagate = [["HSET", key, field, result]];
  x.reply.bulk(result);
}

function hrandfield(x: Exec, argv: string[]): void {
  if (argv.length === 2) {
    const hash = getHash(x, argv[1]!);
    return x.reply.bulk(hash === undefined ? null : hash.randomField());
  }
  const { count, withValues } = randomCountWith(argv, "WITHVALUES");
  const hash = getHash(x, argv[1]!);
  if (hash === undefined || count === 0) return x.reply.array(0);
  const picked = randomElements({ size: hash.size, random: () => hash.randomField(), all: () => hash.fields() }, count);
  if (!withValues) return replyStrings(x, picked);
  // RESP3 nests each field with its value; RESP2 lists them flat.
  const nested = x.reply.protocol === 3;
  x.reply.array(nested ? picked.length : picked.length * 2);
  for (const field of picked) {
    if (nested) x.reply.array(2);
    x.reply.bulk(field);
    x.reply.bulk(hash.get(field)!);
  }
}

function hscan(x: Exec, argv: string[]): void {
  const cursor = parseCursor(argv[2]!);
  // As in Redis, a missing key answers an empty scan before the options are looked at.
  const hash = getHash(x, argv[1]!);
  if (hash === undefined) return replyScan(x, 0, []);
  const options = parseScanOptions(argv, 3, false);
  const keep = (field: string) => options.match === null || globMatch(options.match, field);
  const items: string[] = [];
  const it = takeParked<[string, string]>(cursor) ?? hash.iterator();
  if (it !== null) {
    // Redis answers a compact (listpack) hash whole, with cursor 0, whatever COUNT says.
    const step = scanStep(it, hash.compact ? Infinity : options.count);
    for (const [field, value] of step.items) if (keep(field)) items.push(field, value);
    return replyScan(x, step.cursor, items);
  }
  const fields: string[] = [];
  // A table Redis would still hold as a listpack is answered whole too.
  const next = walkTable((at, out) => hash.scanStep(at, out), cursor, hash.compact ? Infinity : options.count, fields);
  for (const field of fields) if (keep(field)) items.push(field, hash.get(field)!);
  replyScan(x, next, items);
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const read = ["readonly", "fast"] as const;
const write = ["write", "denyoom", "fast"] as const;

export const hashCommands: readonly CommandSpec[] = [
  { name: "hset", arity: -4, flags: write, group: "hash", summary: "Sets fields of a hash.", keys: one, run: (x, argv) => hset(x, argv, false) },
  { name: "hmset", arity: -4, flags: write, group: "hash", summary: "Sets fields of a hash (replies OK).", keys: one, run: (x, argv) => hset(x, argv, true) },
  { name: "hsetnx", arity: 4, flags: write, group: "hash", summary: "Sets a field only if it does not exist.", keys: one, run: hsetnx },
  {
    name: "hget",
    arity: 3,
    flags: read,
    group: "hash",
    summary: "Returns a field's value.",
    keys: one,
    run: (x, argv) => replyField(x, getHash(x, argv[1]!), argv[2]!),
  },
  {
    name: "hmget",
    arity: -3,
    flags: read,
    group: "hash",
    summary: "Returns the values of several fields.",
    keys: one,
    run: (x, argv) => {
      const hash = getHash(x, argv[1]!);
      x.reply.array(argv.length - 2);
      for (let i = 2; i < argv.length; i++) replyField(x, hash, argv[i]!);
    },
  },
  {
    name: "hgetall",
    arity: 2,
    flags: ["readonly"],
    group: "hash",
    summary: "Returns every field and value.",
    keys: one,
    run: (x, argv) => {
      const hash = getHash(x, argv[1]!);
      x.reply.map(hash?.size ?? 0);
      hash?.writeEntries(x.reply);
    },
  },
  { name: "hdel", arity: -3, flags: ["write", "fast"], group: "hash", summary: "Deletes fields.", keys: one, run: hdel },
  {
    name: "hexists",
    arity: 3,
    flags: read,
    group: "hash",
    summary: "Whether a field exists.",
    keys: one,
    run: (x, argv) => x.reply.integer(getHash(x, argv[1]!)?.has(argv[2]!) ? 1 : 0),
  },
  {
    name: "hlen",
    arity: 2,
    flags: read,
    group: "hash",
    summary: "Returns the number of fields.",
    keys: one,
    run: (x, argv) => x.reply.integer(getHash(x, argv[1]!)?.size ?? 0),
  },
  {
    name: "hkeys",
    arity: 2,
    flags: ["readonly"],
    group: "hash",
    summary: "Returns every field.",
    keys: one,
    run: (x, argv) => replyStrings(x, getHash(x, argv[1]!)?.fields() ?? []),
  },
  {
    name: "hvals",
    arity: 2,
    flags: ["readonly"],
    group: "hash",
    summary: "Returns every value.",
    keys: one,
    run: (x, argv) => replyStrings(x, getHash(x, argv[1]!)?.values() ?? []),
  },
  { name: "hincrby", arity: 4, flags: write, group: "hash", summary: "Adds an integer to a field's value.", keys: one, run: hincrby },
  { name: "hincrbyfloat", arity: 4, flags: write, group: "hash", summary: "Adds a float to a field's value.", keys: one, run: hincrbyfloat },
  {
    name: "hstrlen",
    arity: 3,
    flags: read,
    group: "hash",
    summary: "Returns the length of a field's value.",
    keys: one,
    run: (x, argv) => x.reply.integer(getHash(x, argv[1]!)?.get(argv[2]!)?.length ?? 0),
  },
  { name: "hrandfield", arity: -2, flags: ["readonly"], group: "hash", summary: "Returns random fields.", keys: one, run: hrandfield },
  { name: "hscan", arity: -3, flags: ["readonly"], group: "hash", summary: "Iterates over fields and values.", keys: one, run: hscan },
];
