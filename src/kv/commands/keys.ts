/**
 * Commands on keys of any type: existence, deletion, renaming, copying, expiry, iteration.
 */
import { isInt64, parseInt64 } from "../text/args.ts";
import { KvError, noSuchKey, notAnInteger, syntaxError } from "../text/errors.ts";
import { globMatch } from "../text/glob.ts";
import type { Keyspace } from "../keyspace/keyspace.ts";
import { type Value, typeOf } from "../types/value.ts";
import { encodingOf, refcountOf } from "../types/encoding.ts";
import { walkTable } from "../kit/scan-cursors.ts";
import { countLookup, deleteKey, replyStrings } from "../kit/lookup.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { parseCursor, parseScanOptions, replyScan } from "../kit/scan-args.ts";
import { helpReply } from "../kit/help.ts";
import { expireAtOrDelete, dbIndex } from "../kit/lookup.ts";

// ---- existence and deletion --------------------------------------------------------------------

/** DEL, EXISTS and friends: answers how many of the keys in argv `act` returned true for. */
function countKeys(x: Exec, argv: string[], act: (db: Keyspace, key: string, atMs: number) => boolean): void {
  let n = 0;
  for (let i = 1; i < argv.length; i++) {
    const found = act(x.db, argv[i]!, x.timeMs);
    // EXISTS and TOUCH read their keys (a hit or miss each); DEL and UNLINK do not count.
    countLookup(x, argv[i]!, found);
    if (found) n++;
  }
  x.reply.integer(n);
}

/** UNLINK's deletion (DEL's too under lazyfree-lazy-user-del): a large value is counted as freed the lazy way (lazy-free.ts). */
const unlinkKey =
  (x: Exec) =>
  (db: Keyspace, key: string): boolean => {
    const value = db.get(key);
    if (value === undefined || !deleteKey(db, key)) return false;
    x.engine.stats.lazyFree.valueDropped(value);
    return true;
  };

const keyExists = (db: Keyspace, key: string) => db.has(key);
/** TOUCH reads the key, which records the access time OBJECT IDLETIME reports. */
const touchKey = (db: Keyspace, key: string, atMs: number) => db.read(key, atMs) !== undefined;

// ---- expiry -----------------------------------------------------------------------------------

type ExpireUnit = "s" | "ms";

/**
 * EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT with NX/XX/GT/LT, as Redis's expireGenericCommand:
 * a key without a time to live counts as infinite for GT and LT, and a time already past
 * deletes the key.
 */
function expireGeneric(x: Exec, argv: string[], unit: ExpireUnit, absolute: boolean): void {
  const [name, key, amountText] = argv as [string, string, string];
  let nx = false;
  let xx = false;
  let gt = false;
  let lt = false;
  for (let i = 3; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "NX") nx = true;
    else if (word === "XX") xx = true;
    else if (word === "GT") gt = true;
    else if (word === "LT") lt = true;
    else throw new KvError(`ERR Unsupported option ${argv[i]}`);
  }
  if (nx && (xx || gt || lt)) throw new KvError("ERR NX and XX, GT or LT options at the same time are not compatible");
  if (gt && lt) throw new KvError("ERR GT and LT options at the same time are not compatible");
  const amount = parseInt64(amountText);
  if (amount === null) throw notAnInteger();
  // One clock reading for the whole command, as Redis's command time snapshot.
  const now = x.engine.clock.nowMs();
  const ms = unit === "s" ? amount * 1000n : amount;
  const at = absolute ? ms : ms + BigInt(now);
  if (!isInt64(ms) || !isInt64(at)) throw new KvError(`ERR invalid expire time in '${name.toLowerCase()}' command`);
  if (!x.db.has(key)) return x.reply.integer(0);
  const current = x.db.expiryOf(key);
  const when = Number(at);
  const refused =
    (nx && current !== undefined) ||
    (xx && current === undefined) ||
    (gt && (current === undefined || when <= current)) ||
    (lt && current !== undefined && when >= current);
  if (refused) return x.reply.integer(0);
  expireAtOrDelete(x, key, when, now);
  x.reply.integer(1);
}

/** What Keyspace.expiryTime answers for a missing key (TTL's -2). */
const noKeyTime = -2;

function ttlGeneric(x: Exec, key: string, unit: ExpireUnit, absolute: boolean): void {
  const at = x.db.expiryTime(key);
  countLookup(x, key, at !== noKeyTime);
  if (at < 0) return x.reply.integer(at);
  if (absolute) return x.reply.integer(unit === "s" ? Math.floor(at / 1000) : at);
  const pttl = Math.max(0, at - x.engine.clock.nowMs());
  x.reply.integer(unit === "s" ? Math.floor((pttl + 500) / 1000) : pttl);
}

function persist(x: Exec, argv: string[]): void {
  const removed = x.db.persist(argv[1]!);
  if (removed) x.db.notify("persist", argv[1]!);
  x.reply.integer(removed ? 1 : 0);
}

// ---- copying and moving -----------------------------------------------------------------------

/** A deep copy of a value: COPY must not share containers between keys. */
export function cloneValue(value: Value): Value {
  if (typeof value === "string") return value;
  return value.clone();
}

const dbArg = (x: Exec, text: string): Keyspace => x.engine.dbs[dbIndex(x, text)]!;

function renameGeneric(x: Exec, argv: string[], onlyIfAbsent: boolean): void {
  const [, from, to] = argv as [string, string, string];
  const value = x.db.get(from);
  if (value === undefined) throw noSuchKey();
  if (from === to) return onlyIfAbsent ? x.reply.integer(0) : x.reply.simple("OK");
  if (onlyIfAbsent && x.db.has(to)) return x.reply.integer(0);
  const expiry = x.db.expiryOf(from);
  // The source's change first, then the destination's, as Redis signals them (client-side caches
  // are told in that order).
  x.db.delete(from);
  x.db.delete(to);
  x.db.set(to, value);
  if (expiry !== undefined) x.db.setExpire(to, expiry);
  x.db.notify("rename_from", from);
  x.db.notify("rename_to", to);
  if (onlyIfAbsent) x.reply.integer(1);
  else x.reply.simple("OK");
}

function move(x: Exec, argv: string[]): void {
  const [, key, dbText] = argv as [string, string, string];
  const target = dbArg(x, dbText);
  if (target === x.db) throw new KvError("ERR source and destination objects are the same");
  const value = x.db.get(key);
  if (value === undefined || target.has(key)) return x.reply.integer(0);
  const expiry = x.db.expiryOf(key);
  x.db.delete(key);
  target.set(key, value);
  if (expiry !== undefined) target.setExpire(key, expiry);
  x.db.notify("move_from", key);
  target.notify("move_to", key);
  x.reply.integer(1);
}

function copy(x: Exec, argv: string[]): void {
  const [, from, to] = argv as [string, string, string];
  let target = x.db;
  let replace = false;
  for (let i = 3; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "REPLACE") replace = true;
    else if (word === "DB" && i + 1 < argv.length) target = dbArg(x, argv[++i]!);
    else throw syntaxError();
  }
  if (from === to && target === x.db) throw new KvError("ERR source and destination objects are the same");
  const value = x.db.get(from);
  countLookup(x, from, value !== undefined);
  if (value === undefined) return x.reply.integer(0);
  if (target.has(to)) {
    if (!replace) return x.reply.integer(0);
    target.delete(to);
  }
  const expiry = x.db.expiryOf(from);
  target.set(to, cloneValue(value));
  if (expiry !== undefined) target.setExpire(to, expiry);
  target.notify("copy_to", to);
  x.reply.integer(1);
}

// ---- iteration --------------------------------------------------------------------------------

function scan(x: Exec, argv: string[]): void {
  const start = parseCursor(argv[1]!);
  const options = parseScanOptions(argv, 2, true);
  const db = x.db;
  const found: string[] = [];
  const cursor = walkTable((at, out) => db.table.scanStep(at, out), start, options.count, found);
  // In Redis's order: a key the pattern passes over is not looked up, so it is not expired
  // either (DBSIZE still counts it until something meets it); the others are, then typed.
  const keys = found.filter((key) => {
    if (options.match !== null && !globMatch(options.match, key)) return false;
    const ref = db.ref(key);
    // TYPE's check is a read of the key, which Redis counts as a hit or miss.
    if (options.type !== null) countLookup(x, key, ref !== -1);
    if (ref === -1) return false;
    // Redis compares type names ignoring case; only a module type name ("MBbloom--") has capitals.
    return options.type === null || typeOf(db.table.valueOf(ref)).toLowerCase() === options.type;
  });
  replyScan(x, cursor, keys);
}

function randomKey(x: Exec): void {
  // A random slot's key; an expired key found there is removed and we try again, as Redis does.
  for (let attempt = 0; attempt < 100 && x.db.size > 0; attempt++) {
    const key = x.db.table.randomKey()!;
    if (x.db.has(key)) return x.reply.bulk(key);
  }
  x.reply.bulk(null);
}

// ---- OBJECT -----------------------------------------------------------------------------------

const policySwitchNote = " Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

function object(x: Exec, argv: string[]): void {
  const sub = argv[1]!.toLowerCase();
  const value = x.db.get(argv[2]!);
  countLookup(x, argv[2]!, value !== undefined, false);
  if (value === undefined) return x.reply.bulk(null);
  if (sub === "encoding") return x.reply.bulk(encodingOf(value));
  if (sub === "refcount") return x.reply.integer(refcountOf(value));
  // Each policy keeps one of the two in the key's field, as Redis does.
  const lfu = x.db.frequency !== null;
  if (sub === "idletime") {
    if (lfu) throw new KvError(`ERR An LFU maxmemory policy is selected, idle time not tracked.${policySwitchNote}`);
    return x.reply.integer(Math.floor(x.db.idleMs(argv[2]!) / 1000));
  }
  if (!lfu) throw new KvError(`ERR An LFU maxmemory policy is not selected, access frequency not tracked.${policySwitchNote}`);
  x.reply.integer(x.db.accessCounter(argv[2]!)!);
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const all: readonly [number, number, number] = [1, -1, 1];

const objectSub = (name: string, summary: string): CommandSpec => ({
  name: `object|${name}`,
  arity: 3,
  flags: ["readonly"],
  group: "generic",
  summary,
  keys: [2, 2, 1],
  run: object,
});

export const keyCommands: readonly CommandSpec[] = [
  {
    name: "del",
    arity: -2,
    flags: ["write"],
    group: "generic",
    summary: "Deletes keys.",
    keys: all,
    run: (x, argv) => countKeys(x, argv, x.engine.config.get("lazyfree-lazy-user-del")?.toLowerCase() === "yes" ? unlinkKey(x) : deleteKey),
  },
  {
    name: "unlink",
    arity: -2,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Deletes keys, large values freed the lazy way.",
    keys: all,
    run: (x, argv) => countKeys(x, argv, unlinkKey(x)),
  },
  {
    name: "exists",
    arity: -2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Counts how many of the keys exist.",
    keys: all,
    run: (x, argv) => countKeys(x, argv, keyExists),
  },
  {
    name: "touch",
    arity: -2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Updates keys' last access time.",
    keys: all,
    run: (x, argv) => countKeys(x, argv, touchKey),
  },
  {
    name: "type",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Returns the type of a key's value.",
    keys: one,
    run: (x, argv) => {
      const value = x.db.get(argv[1]!);
      countLookup(x, argv[1]!, value !== undefined);
      x.reply.simple(value === undefined ? "none" : typeOf(value));
    },
  },
  {
    name: "keys",
    arity: 2,
    flags: ["readonly"],
    group: "generic",
    summary: "Returns the keys matching a pattern.",
    run: (x, argv) => {
      const pattern = argv[1]!;
      const keys: string[] = [];
      // "*" alone takes every key without matching, as in Redis: the empty key too.
      for (const k of x.db.liveKeys()) if (pattern === "*" || globMatch(pattern, k)) keys.push(k);
      replyStrings(x, keys);
    },
  },
  { name: "scan", arity: -2, flags: ["readonly"], group: "generic", summary: "Iterates over the keys of the database.", run: scan },
  { name: "randomkey", arity: 1, flags: ["readonly"], group: "generic", summary: "Returns a random key.", run: randomKey },
  {
    name: "rename",
    arity: 3,
    flags: ["write"],
    group: "generic",
    summary: "Renames a key, replacing the destination.",
    keys: [1, 2, 1],
    run: (x, argv) => renameGeneric(x, argv, false),
  },
  {
    name: "renamenx",
    arity: 3,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Renames a key if the new name is free.",
    keys: [1, 2, 1],
    run: (x, argv) => renameGeneric(x, argv, true),
  },
  { name: "move", arity: 3, flags: ["write", "fast"], group: "generic", summary: "Moves a key to another database.", keys: one, run: move },
  { name: "copy", arity: -3, flags: ["write", "denyoom"], group: "generic", summary: "Copies a key's value to another key.", keys: [1, 2, 1], run: copy },
  {
    name: "expire",
    arity: -3,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Sets a time to live in seconds.",
    keys: one,
    run: (x, argv) => expireGeneric(x, argv, "s", false),
  },
  {
    name: "pexpire",
    arity: -3,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Sets a time to live in milliseconds.",
    keys: one,
    run: (x, argv) => expireGeneric(x, argv, "ms", false),
  },
  {
    name: "expireat",
    arity: -3,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Sets an expiry time as a Unix time in seconds.",
    keys: one,
    run: (x, argv) => expireGeneric(x, argv, "s", true),
  },
  {
    name: "pexpireat",
    arity: -3,
    flags: ["write", "fast"],
    group: "generic",
    summary: "Sets an expiry time as a Unix time in milliseconds.",
    keys: one,
    run: (x, argv) => expireGeneric(x, argv, "ms", true),
  },
  {
    name: "ttl",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Returns the time to live in seconds.",
    keys: one,
    run: (x, argv) => ttlGeneric(x, argv[1]!, "s", false),
  },
  {
    name: "pttl",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Returns the time to live in milliseconds.",
    keys: one,
    run: (x, argv) => ttlGeneric(x, argv[1]!, "ms", false),
  },
  {
    name: "expiretime",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Returns the expiry time as a Unix time in seconds.",
    keys: one,
    run: (x, argv) => ttlGeneric(x, argv[1]!, "s", true),
  },
  {
    name: "pexpiretime",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "generic",
    summary: "Returns the expiry time as a Unix time in milliseconds.",
    keys: one,
    run: (x, argv) => ttlGeneric(x, argv[1]!, "ms", true),
  },
  { name: "persist", arity: 2, flags: ["write", "fast"], group: "generic", summary: "Removes a key's time to live.", keys: one, run: persist },
  {
    name: "object",
    arity: -2,
    flags: [],
    group: "generic",
    summary: "Inspects the internals of a value.",
    subcommands: [
      objectSub("encoding", "Returns the internal encoding of a value."),
      objectSub("refcount", "Returns the reference count of a value."),
      objectSub("idletime", "Returns the seconds since a key was last accessed."),
      objectSub("freq", "Returns the access frequency of a key (LFU policies only)."),
      {
        name: "object|help",
        arity: 2,
        flags: ["loading", "stale"],
        group: "generic",
        summary: "Shows OBJECT's subcommands.",
        run: (x) => helpReply(x, "OBJECT", ["ENCODING <key>", "FREQ <key>", "IDLETIME <key>", "REFCOUNT <key>"]),
      },
    ],
  },
];
