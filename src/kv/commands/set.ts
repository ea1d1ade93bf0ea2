/**
 * Sets: a MemberSet of byte strings (member-set.ts). Sets are unordered in Redis; the one visible
 * order it has — a small all-integer set (intset) lists its members in numeric order — is
 * reproduced for SMEMBERS and SSCAN so small integer sets answer exactly as in Redis.
 */
import { int64Max, isKeyword, parseIntegerIn } from "../text/args.ts";
import { parseCursor, parseScanOptions, replyScan } from "../kit/scan-args.ts";
import { afterRemoval, getSet, getValue, replyStrings, storeResult } from "../kit/lookup.ts";
import { type CommandSpec, countedKeys, type Exec } from "../kit/spec.ts";
import { isIntset } from "../types/encoding.ts";
import { KvError, mustBePositive, negativeLimit, syntaxError, wrongType } from "../text/errors.ts";
import { globMatch } from "../text/glob.ts";
import { takeParked, scanStep, walkTable } from "../kit/scan-cursors.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { type Drawable, randomCount, randomElements, randomSample } from "../types/sample.ts";

/** Members in the order Redis lists them: numeric for an intset, the set's own order otherwise. */
export function orderedMembers(set: MemberSet): string[] {
  const members = set.members();
  if (isIntset(set)) members.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  return members;
}

/** Members as a RESP3 set (an array in RESP2). */
function replySet(x: Exec, members: readonly string[]): void {
  x.reply.set(members.length);
  for (const member of members) x.reply.bulk(member);
}

const drawable = (set: MemberSet): Drawable<string> => ({ size: set.size, random: () => set.random(), all: () => set.members() });

function sadd(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const existing = getSet(x, key);
  const set = existing ?? new MemberSet();
  const added = set.addAll(argv, 2);
  if (existing === undefined) x.db.set(key, set);
  else if (added > 0) x.db.modified(key);
  if (added > 0) x.db.notify("sadd", key);
  x.reply.integer(added);
}

function srem(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const set = getSet(x, key);
  if (set === undefined) return x.reply.integer(0);
  let removed = 0;
  for (let i = 2; i < argv.length; i++) if (set.delete(argv[i]!)) removed++;
  if (removed > 0) afterRemoval(x, key, set, "srem");
  x.reply.integer(removed);
}

function spop(x: Exec, argv: string[]): void {
  if (argv.length > 3) throw syntaxError();
  const key = argv[1]!;
  if (argv.length === 2) {
    const set = getSet(x, key);
    if (set === undefined) return x.reply.bulk(null);
    const member = set.random();
    set.delete(member);
    afterRemoval(x, key, set, "spop");
    // A replay must remove the same member, not another random one.
    x.propagate = [["SREM", key, member]];
    return x.reply.bulk(member);
  }
  const count = parseIntegerIn(argv[2]!, 0, int64Max, mustBePositive);
  const set = getSet(x, key);
  if (set === undefined || count === 0) return replySet(x, []);
  const popped = randomSample(drawable(set), count);
  for (const member of popped) set.delete(member);
  afterRemoval(x, key, set, "spop");
  x.propagate = [["SREM", key, ...popped]];
  replySet(x, popped);
}

function srandmember(x: Exec, argv: string[]): void {
  if (argv.length > 3) throw syntaxError();
  if (argv.length === 2) {
    const set = getSet(x, argv[1]!);
    return x.reply.bulk(set === undefined ? null : set.random());
  }
  const count = randomCount(argv[2]!);
  const set = getSet(x, argv[1]!);
  if (set === undefined || count === 0) return x.reply.array(0);
  replyStrings(x, randomElements(drawable(set), count));
}

function smove(x: Exec, argv: string[]): void {
  const [, source, destination, member] = argv as [string, string, string, string];
  // Redis looks both keys up (expiring them) before anything else, then answers 0 for a missing
  // source before it type-checks either.
  const from = getValue(x, source);
  const to = getValue(x, destination);
  if (from === undefined) return x.reply.integer(0);
  if (!(from instanceof MemberSet) || (to !== undefined && !(to instanceof MemberSet))) throw wrongType();
  if (source === destination) return x.reply.integer(from.has(member) ? 1 : 0);
  if (!from.delete(member)) return x.reply.integer(0);
  // The source's "srem" (and "del" if it emptied) goes out before the destination's events.
  afterRemoval(x, source, from, "srem");
  if (to === undefined) x.db.set(destination, new MemberSet([member]));
  else if (to.add(member)) x.db.modified(destination);
  else return x.reply.integer(1);
  x.db.notify("sadd", destination);
  x.reply.integer(1);
}

// ---- algebra ----------------------------------------------------------------------------------

/** The sets at `keys`; a missing key is an empty set. Every key is type-checked. */
function setsAt(x: Exec, keys: readonly string[]): MemberSet[] {
  return keys.map((key) => getSet(x, key) ?? new MemberSet());
}

/**
 * The intersection, smallest set first so the work is bounded by it. As in Redis 7.0, every key is
 * type-checked before a missing one makes the answer empty.
 */
function intersect(x: Exec, keys: readonly string[], limit = Infinity): MemberSet {
  const sets: MemberSet[] = [];
  let anyMissing = false;
  for (const key of keys) {
    const set = getSet(x, key);
    if (set === undefined) anyMissing = true;
    else sets.push(set);
  }
  if (anyMissing) return new MemberSet();
  sets.sort((a, b) => a.size - b.size);
  const result = new MemberSet();
  for (const member of sets[0]!.values()) {
    if (sets.every((s) => s.has(member))) result.add(member);
    if (result.size >= limit) break;
  }
  return result;
}

function union(x: Exec, keys: readonly string[]): MemberSet {
  const result = new MemberSet();
  for (const set of setsAt(x, keys)) for (const member of set.values()) result.add(member);
  return result;
}

function difference(x: Exec, keys: readonly string[]): MemberSet {
  const [first, ...rest] = setsAt(x, keys);
  const result = new MemberSet();
  for (const member of first!.values()) if (!rest.some((s) => s.has(member))) result.add(member);
  return result;
}

type Algebra = (x: Exec, keys: readonly string[]) => MemberSet;

function sintercard(x: Exec, argv: string[]): void {
  const numKeys = parseIntegerIn(argv[1]!, 1, int64Max, () => new KvError("ERR numkeys should be greater than 0"));
  if (numKeys > argv.length - 2) throw new KvError("ERR Number of keys can't be greater than number of args");
  let limit = 0;
  for (let i = 2 + numKeys; i < argv.length; i++) {
    if (isKeyword(argv[i]!, "LIMIT") && i + 1 < argv.length) limit = parseIntegerIn(argv[++i]!, 0, int64Max, negativeLimit);
    else throw syntaxError();
  }
  x.reply.integer(intersect(x, argv.slice(2, 2 + numKeys), limit === 0 ? Infinity : limit).size);
}

function sscan(x: Exec, argv: string[]): void {
  const cursor = parseCursor(argv[2]!);
  // As in Redis, a missing key answers an empty scan before the options are looked at.
  const set = getSet(x, argv[1]!);
  if (set === undefined) return replyScan(x, 0, []);
  const options = parseScanOptions(argv, 3, false);
  const keep = (members: string[]) => members.filter((m) => options.match === null || globMatch(options.match, m));
  // Redis answers an intset whole, in numeric order, with cursor 0.
  if (isIntset(set)) return replyScan(x, 0, keep(orderedMembers(set)));
  const it = takeParked<string>(cursor) ?? set.iterator();
  if (it !== null) {
    const step = scanStep(it, options.count);
    return replyScan(x, step.cursor, keep(step.items));
  }
  const found: string[] = [];
  const next = walkTable((at, out) => set.scanStep(at, out), cursor, options.count, found);
  replyScan(x, next, keep(found));
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const all: readonly [number, number, number] = [1, -1, 1];
const read = ["readonly", "fast"] as const;

const algebraRead = (name: string, summary: string, op: Algebra): CommandSpec => ({
  name,
  arity: -2,
  flags: ["readonly"],
  group: "set",
  summary,
  keys: all,
  run: (x, argv) => replySet(x, orderedMembers(op(x, argv.slice(1)))),
});

/** A *STORE command of sets; its name is also its keyspace event's. */
const algebraStore = (name: "sinterstore" | "sunionstore" | "sdiffstore", summary: string, op: Algebra): CommandSpec => ({
  name,
  arity: -3,
  flags: ["write", "denyoom"],
  group: "set",
  summary,
  keys: [1, -1, 1],
  run: (x, argv) => storeResult(x, argv[1]!, op(x, argv.slice(2)), name),
});

export const setCommands: readonly CommandSpec[] = [
  { name: "sadd", arity: -3, flags: ["write", "denyoom", "fast"], group: "set", summary: "Adds members to a set.", keys: one, run: sadd },
  { name: "srem", arity: -3, flags: ["write", "fast"], group: "set", summary: "Removes members from a set.", keys: one, run: srem },
  {
    name: "smembers",
    arity: 2,
    flags: ["readonly"],
    group: "set",
    summary: "Returns every member.",
    keys: one,
    run: (x, argv) => replySet(x, orderedMembers(getSet(x, argv[1]!) ?? new MemberSet())),
  },
  {
    name: "sismember",
    arity: 3,
    flags: read,
    group: "set",
    summary: "Whether a value is a member.",
    keys: one,
    run: (x, argv) => x.reply.integer(getSet(x, argv[1]!)?.has(argv[2]!) ? 1 : 0),
  },
  {
    name: "smismember",
    arity: -3,
    flags: read,
    group: "set",
    summary: "Whether each value is a member.",
    keys: one,
    run: (x, argv) => {
      const set = getSet(x, argv[1]!);
      x.reply.array(argv.length - 2);
      for (let i = 2; i < argv.length; i++) x.reply.integer(set?.has(argv[i]!) ? 1 : 0);
    },
  },
  {
    name: "scard",
    arity: 2,
    flags: read,
    group: "set",
    summary: "Returns the number of members.",
    keys: one,
    run: (x, argv) => x.reply.integer(getSet(x, argv[1]!)?.size ?? 0),
  },
  { name: "spop", arity: -2, flags: ["write", "fast"], group: "set", summary: "Removes and returns random members.", keys: one, run: spop },
  { name: "srandmember", arity: -2, flags: ["readonly"], group: "set", summary: "Returns random members.", keys: one, run: srandmember },
  { name: "smove", arity: 4, flags: ["write", "fast"], group: "set", summary: "Moves a member to another set.", keys: [1, 2, 1], run: smove },
  algebraRead("sinter", "Returns the intersection of sets.", (x, keys) => intersect(x, keys)),
  algebraRead("sunion", "Returns the union of sets.", union),
  algebraRead("sdiff", "Returns the difference of the first set and the others.", difference),
  algebraStore("sinterstore", "Stores the intersection of sets.", (x, keys) => intersect(x, keys)),
  algebraStore("sunionstore", "Stores the union of sets.", union),
  algebraStore("sdiffstore", "Stores the difference of the first set and the others.", difference),
  {
    name: "sintercard",
    arity: -3,
    flags: ["readonly", "movablekeys"],
    group: "set",
    summary: "Counts the intersection of sets.",
    // No fixed positions (COMMAND INFO's 0 0 0, as Redis's): the keys follow their count.
    keys: [0, 0, 0],
    movableKeys: countedKeys(1),
    run: sintercard,
  },
  { name: "sscan", arity: -3, flags: ["readonly"], group: "set", summary: "Iterates over members.", keys: one, run: sscan },
];
