/**
 * The sorted-set commands (ZSet in zset.ts).
 *
 * Commands follow Redis 7.0's t_zset.c in argument order, checks and replies: options are parsed
 * and validated before the key is looked up, scores are replied as doubles (%.17g text in RESP2)
 * with RESP3's nested [member, score] pairs where Redis nests them, an emptied sorted set deletes
 * its key, and an in-place change calls `db.modified` (WATCH, and waking clients blocked in
 * BZPOPMIN/BZMPOP).
 */
import { clampRankRange, int64Max, isKeyword, parseFloatArg, parseInteger, parseIntegerIn, parseMultiPop } from "../../text/args.ts";
import { runBlocking } from "../../kit/block.ts";
import { parseCursor, parseScanOptions, replyScan } from "../../kit/scan-args.ts";
import { afterRemoval, getZSet, storeResult } from "../../kit/lookup.ts";
import { type CommandSpec, countedKeys, type Exec } from "../../kit/spec.ts";
import { encodingLimits, isCompact } from "../../types/compact.ts";
import { KvError, mustBePositive, syntaxError } from "../../text/errors.ts";
import { globMatch } from "../../text/glob.ts";
import { scanStep, takeParked, walkTable } from "../../kit/scan-cursors.ts";
import { distinctIndexes, randomCountWith } from "../../types/sample.ts";
import { type LexRange, parseLexRange, parseScoreRange, type ScoreRange } from "../../types/zset/ranges.ts";
import { replyEntries, replyScore } from "./replies.ts";
import { type SetOp, setOp } from "./set-ops.ts";
import { formatScore, type ZEntry, ZSet } from "../../types/zset/zset.ts";

// ---- ZADD and ZINCRBY ---------------------------------------------------------------------------

interface ZAddOptions {
  nx: boolean;
  xx: boolean;
  gt: boolean;
  lt: boolean;
  ch: boolean;
  incr: boolean;
}

const nanScore = () => new KvError("ERR resulting score is not a number (NaN)");

/** The leading option words; returns the options and the index of the first score. */
function parseZAddOptions(argv: string[]): { options: ZAddOptions; next: number } {
  const options: ZAddOptions = { nx: false, xx: false, gt: false, lt: false, ch: false, incr: false };
  let i = 2;
  for (; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "NX") options.nx = true;
    else if (word === "XX") options.xx = true;
    else if (word === "GT") options.gt = true;
    else if (word === "LT") options.lt = true;
    else if (word === "CH") options.ch = true;
    else if (word === "INCR") options.incr = true;
    else break;
  }
  return { options, next: i };
}

function checkZAddOptions(o: ZAddOptions, pairs: number): void {
  if (o.nx && o.xx) throw new KvError("ERR XX and NX options at the same time are not compatible");
  if ((o.gt && o.nx) || (o.lt && o.nx) || (o.gt && o.lt)) {
    throw new KvError("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (o.incr && pairs > 1) throw new KvError("ERR INCR option supports a single increment-element pair");
}

type AddResult = "added" | "updated" | "unchanged" | "skipped";

/** One score/member pair under ZADD's options; the resulting score goes to `out.score`. */
function addOne(zset: ZSet, member: string, score: number, o: Readonly<ZAddOptions>, out: { score: number }): AddResult {
  const current = zset.score(member);
  if (current === undefined) {
    if (o.xx) return "skipped";
    zset.setFrom(undefined, member, score);
    out.score = score;
    return "added";
  }
  if (o.nx) return "skipped";
  const target = o.incr ? current + score : score;
  // inf + -inf: refuse rather than store a score that cannot be ordered.
  if (Number.isNaN(target)) throw nanScore();
  if ((o.lt && target >= current) || (o.gt && target <= current)) return "skipped";
  out.score = target;
  if (target === current) return "unchanged";
  zset.setFrom(current, member, target);
  return "updated";
}

/**
 * Inserting m pairs one at a time into a packed set of n copies about (n + m/2) · m pairs' bytes;
 * repacking gathers and sorts the n + m pairs once, at about this many times the cost per pair
 * (measured 2026-11-26 on sets of 100 short members: 1.1 µs a pair inserted, 19 µs a repack).
 */
const repackCostPerPair = 17;

/** Whether m pairs go into a packed set of n faster repacked than one insertion at a time. */
const repackPays = (n: number, m: number) => (n + m / 2) * m > repackCostPerPair * (n + m);

/**
 * ZADD with no option that weighs a score against one already there (XX, GT, LT, INCR), making a
 * new key or adding many pairs to a small one: the set's pairs and the new ones alone decide the
 * result, which a small set then gets in one packed array instead of one insertion per pair (an
 * append-only file's rewrite writes a set of more than 64 members as several ZADDs). Null when
 * that does not apply or the result is not small (the caller adds the pairs one by one).
 */
function packedZAdd(
  existing: ZSet | undefined,
  pairs: readonly ZEntry[],
  o: Readonly<ZAddOptions>,
): { entries: ZEntry[]; added: number; updated: number } | null {
  if (o.xx || o.gt || o.lt || o.incr) return null;
  if (existing !== undefined && (!existing.packed || !repackPays(existing.size, pairs.length))) return null;
  // A new key from one pair: inserted, it is one array all the same, without the Map, array and
  // sort of a repack (ZADD marker 0 "0", as BullMQ makes its marker key on every add: 0.87–1.0 →
  // 0.50 µs in process, 2026-11-29). From more, one array rather than one left behind per pair.
  if (existing === undefined && pairs.length === 1) return null;
  const scores = new Map<string, number>();
  if (existing !== undefined) for (const { member, score } of existing.entries()) scores.set(member, score);
  let added = 0;
  let updated = 0;
  for (const { member, score } of pairs) {
    const current = scores.get(member);
    if (current === undefined) {
      scores.set(member, score);
      added++;
    }
    // A member already there: NX keeps its score, otherwise the last one named wins.
    else if (!o.nx && current !== score) {
      scores.set(member, score);
      updated++;
    }
  }
  if (!isCompact(scores.keys(), scores.size)) return null;
  return { entries: Array.from(scores, ([member, score]) => ({ member, score })), added, updated };
}

function zaddApply(x: Exec, key: string, o: Readonly<ZAddOptions>, pairs: readonly ZEntry[]): void {
  const existing = getZSet(x, key);
  let added = 0;
  let updated = 0;
  let processed = 0;
  const out = { score: 0 };
  const packed = packedZAdd(existing, pairs, o);
  if (packed !== null) {
    ({ added, updated } = packed);
    if (existing === undefined) x.db.set(key, ZSet.packedOf(packed.entries));
    else if (added + updated > 0) {
      existing.repack(packed.entries);
      x.db.modified(key);
    }
  } else if (existing !== undefined || !o.xx) {
    const zset = existing ?? new ZSet();
    for (const { member, score } of pairs) {
      const result = addOne(zset, member, score, o, out);
      if (result === "added") added++;
      else if (result === "updated") updated++;
      if (result !== "skipped") processed++;
    }
    if (existing === undefined) {
      if (zset.size > 0) x.db.set(key, zset);
    } else if (added + updated > 0) x.db.modified(key);
  }
  // ZADD … INCR publishes ZINCRBY's event, as in Redis.
  if (added + updated > 0) x.db.notify(o.incr ? "zincr" : "zadd", key);
  if (!o.incr) x.reply.integer(o.ch ? added + updated : added);
  else if (processed > 0) replyScore(x, out.score);
  else x.reply.bulk(null);
}

function zadd(x: Exec, argv: string[]): void {
  const { options, next } = parseZAddOptions(argv);
  const rest = argv.length - next;
  if (rest === 0 || rest % 2 !== 0) throw syntaxError();
  checkZAddOptions(options, rest / 2);
  // Every score is parsed before anything changes, so a bad one leaves the set untouched.
  const pairs: ZEntry[] = [];
  for (let i = next; i < argv.length; i += 2) pairs.push({ score: parseFloatArg(argv[i]!), member: argv[i + 1]! });
  zaddApply(x, argv[1]!, options, pairs);
}

const zincrbyOptions: Readonly<ZAddOptions> = { nx: false, xx: false, gt: false, lt: false, ch: false, incr: true };

function zincrby(x: Exec, argv: string[]): void {
  zaddApply(x, argv[1]!, zincrbyOptions, [{ score: parseFloatArg(argv[2]!), member: argv[3]! }]);
}

// ---- single-key reads and removal ---------------------------------------------------------------

function zrem(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const zset = getZSet(x, key);
  let removed = 0;
  if (zset !== undefined) {
    for (let i = 2; i < argv.length; i++) if (zset.delete(argv[i]!)) removed++;
    if (removed > 0) afterRemoval(x, key, zset, "zrem");
  }
  x.reply.integer(removed);
}

function zscore(x: Exec, argv: string[]): void {
  const score = getZSet(x, argv[1]!)?.score(argv[2]!);
  if (score === undefined) x.reply.bulk(null);
  else replyScore(x, score);
}

function zmscore(x: Exec, argv: string[]): void {
  const zset = getZSet(x, argv[1]!);
  x.reply.array(argv.length - 2);
  for (let i = 2; i < argv.length; i++) {
    const score = zset?.score(argv[i]!);
    if (score === undefined) x.reply.bulk(null);
    else replyScore(x, score);
  }
}

function zrank(x: Exec, argv: string[], reverse: boolean): void {
  const rank = getZSet(x, argv[1]!)?.rank(argv[2]!, reverse) ?? null;
  if (rank === null) x.reply.bulk(null);
  else x.reply.integer(rank);
}

function zcount(x: Exec, argv: string[]): void {
  const range = parseScoreRange(argv[2]!, argv[3]!);
  x.reply.integer(getZSet(x, argv[1]!)?.countByScore(range) ?? 0);
}

function zlexcount(x: Exec, argv: string[]): void {
  const range = parseLexRange(argv[2]!, argv[3]!);
  x.reply.integer(getZSet(x, argv[1]!)?.countByLex(range) ?? 0);
}

// ---- ZRANGE and its family ----------------------------------------------------------------------

type RangeBy = "rank" | "score" | "lex";

type RangeSpec = { by: "rank"; start: number; end: number } | { by: "score"; range: ScoreRange } | { by: "lex"; range: LexRange };

interface RangeRequest {
  spec: RangeSpec;
  reverse: boolean;
  withScores: boolean;
  offset: number;
  /** Negative: no limit. */
  limit: number;
}

/**
 * ZRANGE's arguments after `<key> <min> <max>` (key at `keyIndex`), as Redis's
 * zrangeGenericCommand reads them. The older commands fix `by` and `reverse`, which makes the
 * BYSCORE/BYLEX/REV words syntax errors for them; ZRANGESTORE (`store`) refuses WITHSCORES.
 */
function parseRangeRequest(argv: string[], keyIndex: number, store: boolean, fixedBy: RangeBy | null, fixedReverse: boolean | null): RangeRequest {
  let by = fixedBy;
  let reverse = fixedReverse;
  let withScores = false;
  let offset = 0;
  let limit = -1;
  for (let i = keyIndex + 3; i < argv.length; i++) {
    const word = argv[i]!;
    const left = argv.length - i - 1;
    if (!store && isKeyword(word, "WITHSCORES")) withScores = true;
    else if (isKeyword(word, "LIMIT") && left >= 2) {
      offset = parseInteger(argv[i + 1]!);
      limit = parseInteger(argv[i + 2]!);
      i += 2;
    } else if (reverse === null && isKeyword(word, "REV")) reverse = true;
    else if (by === null && isKeyword(word, "BYSCORE")) by = "score";
    else if (by === null && isKeyword(word, "BYLEX")) by = "lex";
    else throw syntaxError();
  }
  by ??= "rank";
  reverse ??= false;
  // Redis tests the limit's value, not its presence: "LIMIT 0 -1" passes with a rank range.
  if (limit !== -1 && by === "rank") {
    throw new KvError("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (withScores && by === "lex") throw new KvError("ERR syntax error, WITHSCORES not supported in combination with BYLEX");

  // Reversed score and lex ranges are written max first.
  let low = argv[keyIndex + 1]!;
  let high = argv[keyIndex + 2]!;
  if (reverse && by !== "rank") [low, high] = [high, low];
  let spec: RangeSpec;
  if (by === "rank") spec = { by, start: parseInteger(low), end: parseInteger(high) };
  else if (by === "score") spec = { by, range: parseScoreRange(low, high) };
  else spec = { by, range: parseLexRange(low, high) };
  return { spec, reverse, withScores, offset, limit };
}

function collectRange(zset: ZSet, request: RangeRequest): ZEntry[] {
  const { spec, reverse, offset, limit } = request;
  if (spec.by === "score") return zset.rangeByScore(spec.range, reverse, offset, limit);
  if (spec.by === "lex") return zset.rangeByLex(spec.range, reverse, offset, limit);
  const clamped = clampRankRange(spec.start, spec.end, zset.size);
  return clamped === null ? [] : zset.rangeByRank(clamped[0], clamped[1], reverse);
}

function zrange(x: Exec, argv: string[], by: RangeBy | null, reverse: boolean | null): void {
  const request = parseRangeRequest(argv, 1, false, by, reverse);
  const zset = getZSet(x, argv[1]!);
  replyEntries(x, zset === undefined ? [] : collectRange(zset, request), request.withScores);
}

function zrangestore(x: Exec, argv: string[]): void {
  const request = parseRangeRequest(argv, 2, true, null, null);
  const source = getZSet(x, argv[2]!);
  const entries = source === undefined ? [] : collectRange(source, request);
  // Redis sizes the destination up front when it knows the count (a rank range): too many for a
  // listpack and it starts as a skiplist; otherwise it starts small and converts as it grows.
  const compact = request.spec.by !== "rank" || entries.length <= encodingLimits.zsetEntries;
  storeResult(x, argv[1]!, ZSet.of(entries, compact), "zrangestore");
}

// ---- removing ranges ----------------------------------------------------------------------------

function zremrange(x: Exec, argv: string[], event: "zremrangebyrank" | "zremrangebyscore" | "zremrangebylex", remove: (zset: ZSet) => number): void {
  const key = argv[1]!;
  const zset = getZSet(x, key);
  const removed = zset === undefined ? 0 : remove(zset);
  if (removed > 0) afterRemoval(x, key, zset!, event);
  x.reply.integer(removed);
}

function zremrangebyrank(x: Exec, argv: string[]): void {
  const start = parseInteger(argv[2]!);
  const end = parseInteger(argv[3]!);
  zremrange(x, argv, "zremrangebyrank", (zset) => {
    const clamped = clampRankRange(start, end, zset.size);
    return clamped === null ? 0 : zset.deleteRangeByRank(clamped[0], clamped[1]);
  });
}

function zremrangebyscore(x: Exec, argv: string[]): void {
  const range = parseScoreRange(argv[2]!, argv[3]!);
  zremrange(x, argv, "zremrangebyscore", (zset) => zset.deleteRangeByScore(range));
}

function zremrangebylex(x: Exec, argv: string[]): void {
  const range = parseLexRange(argv[2]!, argv[3]!);
  zremrange(x, argv, "zremrangebylex", (zset) => zset.deleteRangeByLex(range));
}

// ---- popping ------------------------------------------------------------------------------------

/** Pops up to `count` elements from the low (or high) end and settles the key. */
function popFrom(x: Exec, key: string, zset: ZSet, count: number, highest: boolean): ZEntry[] {
  const popped: ZEntry[] = [];
  while (popped.length < count) {
    const e = zset.pop(highest);
    if (e === null) break;
    popped.push(e);
  }
  if (popped.length > 0) afterRemoval(x, key, zset, highest ? "zpopmax" : "zpopmin");
  return popped;
}

/** The first of `keys` holding a sorted set; WRONGTYPE for another type met before it. */
function firstZSet(x: Exec, keys: readonly string[]): { key: string; zset: ZSet } | null {
  for (const key of keys) {
    const zset = getZSet(x, key);
    if (zset !== undefined) return { key, zset };
  }
  return null;
}

function zpop(x: Exec, argv: string[], highest: boolean): void {
  if (argv.length > 3) throw syntaxError();
  // Redis's getPositiveLong: text that is not a number gets the same "must be positive".
  const count = argv.length === 3 ? parseIntegerIn(argv[2]!, 0, int64Max, mustBePositive) : 1;
  const key = argv[1]!;
  const zset = getZSet(x, key);
  // Without a count the reply stays flat in RESP3 too: one member and its score.
  replyEntries(x, zset === undefined || count === 0 ? [] : popFrom(x, key, zset, count, highest), true, argv.length === 3);
}

/** [key, [[member, score], ...]]: ZMPOP's and BZMPOP's reply. */
function replyKeyAndPairs(x: Exec, key: string, entries: readonly ZEntry[]): void {
  x.reply.array(2);
  x.reply.bulk(key);
  x.reply.array(entries.length);
  for (const e of entries) {
    x.reply.array(2);
    x.reply.bulk(e.member);
    replyScore(x, e.score);
  }
}

const ends = ["MIN", "MAX"] as const;

function zmpop(x: Exec, argv: string[]): void {
  const { keys, end, count } = parseMultiPop(argv, 1, ends);
  const found = firstZSet(x, keys);
  if (found === null) return x.reply.array(null);
  replyKeyAndPairs(x, found.key, popFrom(x, found.key, found.zset, count, end === 1));
}

// The blocking pops. Redis reads the timeout, then looks at the keys in order and answers
// WRONGTYPE for a wrong-typed key before the first sorted set; once blocked, a key that turns
// into another type is simply not served (block.ts).

function bzpop(x: Exec, argv: string[], highest: boolean): void {
  runBlocking(x, {
    type: "zset",
    keys: argv.slice(1, -1),
    timeoutText: argv.at(-1)!,
    timedOut: (reply) => reply.array(null),
    serve: (y, key, zset) => {
      const [e] = popFrom(y, key, zset, 1, highest);
      y.propagate = [[highest ? "ZPOPMAX" : "ZPOPMIN", key]];
      y.reply.array(3);
      y.reply.bulk(key);
      y.reply.bulk(e!.member);
      replyScore(y, e!.score);
    },
  });
}

function bzmpop(x: Exec, argv: string[]): void {
  const { keys, end, count } = parseMultiPop(argv, 2, ends);
  runBlocking(x, {
    type: "zset",
    keys,
    timeoutText: argv[1]!,
    timedOut: (reply) => reply.array(null),
    serve: (y, key, zset) => {
      replyKeyAndPairs(y, key, popFrom(y, key, zset, count, end === 1));
      y.propagate = [[end === 1 ? "ZPOPMAX" : "ZPOPMIN", key, String(count)]];
    },
  });
}

// ---- ZRANDMEMBER --------------------------------------------------------------------------------

function randomEntries(zset: ZSet, count: number): ZEntry[] {
  if (count < 0) return Array.from({ length: -count }, () => zset.random()!);
  // Redis 7.0 answers the whole set highest first when asked for at least all of it.
  if (count >= zset.size) return [...zset.entries(true)];
  return distinctIndexes(count, zset.size).map((rank) => zset.at(rank)!);
}

function zrandmember(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  if (argv.length === 2) {
    x.reply.bulk(getZSet(x, key)?.random()?.member ?? null);
    return;
  }
  const { count, withValues } = randomCountWith(argv, "WITHSCORES");
  const zset = getZSet(x, key);
  replyEntries(x, zset === undefined || count === 0 ? [] : randomEntries(zset, count), withValues);
}

// ---- ZSCAN --------------------------------------------------------------------------------------

function zscan(x: Exec, argv: string[]): void {
  const cursor = parseCursor(argv[2]!);
  const zset = getZSet(x, argv[1]!);
  if (zset === undefined) return replyScan(x, 0, []);
  const options = parseScanOptions(argv, 3, false);
  const matches = (member: string) => options.match === null || globMatch(options.match, member);
  const items: string[] = [];
  const add = (member: string, score: number) => items.push(member, formatScore(score));
  if (zset.encoding === "listpack") {
    // A listpack is scanned whole in one call, in order, whatever the cursor and COUNT.
    for (const e of zset.entries()) if (matches(e.member)) add(e.member, e.score);
    return replyScan(x, 0, items);
  }
  let next: number;
  const members: string[] = [];
  const it = takeParked<string>(cursor) ?? zset.memberIterator();
  if (it !== null) {
    const step = scanStep(it, options.count);
    members.push(...step.items);
    next = step.cursor;
  } else next = walkTable((at, out) => zset.scanStep(at, out), cursor, options.count, members);
  for (const member of members) {
    // A parked cursor may outlive this value (the key was replaced): skip what is not in it.
    const score = zset.score(member);
    if (score !== undefined && matches(member)) add(member, score);
  }
  replyScan(x, next, items);
}

// ---- declarations -------------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const none: readonly [number, number, number] = [0, 0, 0];
const read = ["readonly", "fast"] as const;
const group = "sorted_set" as const;

const setOpSpec = (name: string, op: SetOp, store: boolean, summary: string): CommandSpec => ({
  name,
  arity: store ? -4 : -3,
  flags: store ? ["write", "denyoom", "movablekeys"] : ["readonly", "movablekeys"],
  group,
  summary,
  keys: store ? one : none,
  movableKeys: store ? countedKeys(2, 1) : countedKeys(1),
  run: (x, argv) => setOp(x, argv, { name, op, numkeysIndex: store ? 2 : 1, store, cardinality: false }),
});

export const zsetCommands: readonly CommandSpec[] = [
  {
    name: "zadd",
    arity: -4,
    flags: ["write", "denyoom", "fast"],
    group,
    summary: "Adds members to a sorted set, or updates their scores.",
    keys: one,
    run: zadd,
  },
  {
    name: "zincrby",
    arity: 4,
    flags: ["write", "denyoom", "fast"],
    group,
    summary: "Increments the score of a member of a sorted set.",
    keys: one,
    run: zincrby,
  },
  { name: "zrem", arity: -3, flags: ["write", "fast"], group, summary: "Removes members from a sorted set.", keys: one, run: zrem },
  {
    name: "zcard",
    arity: 2,
    flags: read,
    group,
    summary: "Returns the number of members in a sorted set.",
    keys: one,
    run: (x, argv) => x.reply.integer(getZSet(x, argv[1]!)?.size ?? 0),
  },
  { name: "zcount", arity: 4, flags: read, group, summary: "Counts the members of a sorted set within a range of scores.", keys: one, run: zcount },
  { name: "zlexcount", arity: 4, flags: read, group, summary: "Counts the members of a sorted set within a lexicographical range.", keys: one, run: zlexcount },
  { name: "zscore", arity: 3, flags: read, group, summary: "Returns the score of a member of a sorted set.", keys: one, run: zscore },
  { name: "zmscore", arity: -3, flags: read, group, summary: "Returns the scores of several members of a sorted set.", keys: one, run: zmscore },
  {
    name: "zrank",
    arity: 3,
    flags: read,
    group,
    summary: "Returns the index of a member in a sorted set ordered by ascending scores.",
    keys: one,
    run: (x, argv) => zrank(x, argv, false),
  },
  {
    name: "zrevrank",
    arity: 3,
    flags: read,
    group,
    summary: "Returns the index of a member in a sorted set ordered by descending scores.",
    keys: one,
    run: (x, argv) => zrank(x, argv, true),
  },
  {
    name: "zrange",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a range of indexes, scores or strings.",
    keys: one,
    run: (x, argv) => zrange(x, argv, null, null),
  },
  {
    name: "zrevrange",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a range of indexes, highest score first.",
    keys: one,
    run: (x, argv) => zrange(x, argv, "rank", true),
  },
  {
    name: "zrangebyscore",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a range of scores.",
    keys: one,
    run: (x, argv) => zrange(x, argv, "score", false),
  },
  {
    name: "zrevrangebyscore",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a range of scores, highest first.",
    keys: one,
    run: (x, argv) => zrange(x, argv, "score", true),
  },
  {
    name: "zrangebylex",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a lexicographical range.",
    keys: one,
    run: (x, argv) => zrange(x, argv, "lex", false),
  },
  {
    name: "zrevrangebylex",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns members of a sorted set within a lexicographical range, in reverse order.",
    keys: one,
    run: (x, argv) => zrange(x, argv, "lex", true),
  },
  {
    name: "zrangestore",
    arity: -5,
    flags: ["write", "denyoom"],
    group,
    summary: "Stores a range of members of a sorted set in another key.",
    keys: [1, 2, 1],
    run: zrangestore,
  },
  {
    name: "zremrangebyrank",
    arity: 4,
    flags: ["write"],
    group,
    summary: "Removes the members of a sorted set within a range of indexes.",
    keys: one,
    run: zremrangebyrank,
  },
  {
    name: "zremrangebyscore",
    arity: 4,
    flags: ["write"],
    group,
    summary: "Removes the members of a sorted set within a range of scores.",
    keys: one,
    run: zremrangebyscore,
  },
  {
    name: "zremrangebylex",
    arity: 4,
    flags: ["write"],
    group,
    summary: "Removes the members of a sorted set within a lexicographical range.",
    keys: one,
    run: zremrangebylex,
  },
  {
    name: "zpopmin",
    arity: -2,
    flags: ["write", "fast"],
    group,
    summary: "Removes and returns the members with the lowest scores.",
    keys: one,
    run: (x, argv) => zpop(x, argv, false),
  },
  {
    name: "zpopmax",
    arity: -2,
    flags: ["write", "fast"],
    group,
    summary: "Removes and returns the members with the highest scores.",
    keys: one,
    run: (x, argv) => zpop(x, argv, true),
  },
  {
    name: "bzpopmin",
    arity: -3,
    flags: ["write", "noscript", "blocking", "fast"],
    group,
    summary: "Removes and returns the member with the lowest score, blocking until one is available.",
    keys: [1, -2, 1],
    run: (x, argv) => bzpop(x, argv, false),
  },
  {
    name: "bzpopmax",
    arity: -3,
    flags: ["write", "noscript", "blocking", "fast"],
    group,
    summary: "Removes and returns the member with the highest score, blocking until one is available.",
    keys: [1, -2, 1],
    run: (x, argv) => bzpop(x, argv, true),
  },
  {
    name: "zmpop",
    arity: -4,
    flags: ["write", "movablekeys"],
    group,
    summary: "Removes and returns members from the first non-empty sorted set.",
    keys: none,
    movableKeys: countedKeys(1),
    run: zmpop,
  },
  {
    name: "bzmpop",
    arity: -5,
    flags: ["write", "blocking", "movablekeys"],
    group,
    summary: "Removes and returns members from the first non-empty sorted set, blocking until one is available.",
    keys: none,
    movableKeys: countedKeys(2),
    run: bzmpop,
  },
  { name: "zrandmember", arity: -2, flags: ["readonly"], group, summary: "Returns random members of a sorted set.", keys: one, run: zrandmember },
  setOpSpec("zunion", "union", false, "Returns the union of sorted sets."),
  setOpSpec("zinter", "inter", false, "Returns the intersection of sorted sets."),
  setOpSpec("zdiff", "diff", false, "Returns the difference between sorted sets."),
  setOpSpec("zunionstore", "union", true, "Stores the union of sorted sets in a key."),
  setOpSpec("zinterstore", "inter", true, "Stores the intersection of sorted sets in a key."),
  setOpSpec("zdiffstore", "diff", true, "Stores the difference between sorted sets in a key."),
  {
    name: "zintercard",
    arity: -3,
    flags: ["readonly", "movablekeys"],
    group,
    summary: "Counts the members of the intersection of sorted sets.",
    keys: none,
    movableKeys: countedKeys(1),
    run: (x, argv) => setOp(x, argv, { name: "zintercard", op: "inter", numkeysIndex: 1, store: false, cardinality: true }),
  },
  { name: "zscan", arity: -3, flags: ["readonly"], group, summary: "Iterates over the members and scores of a sorted set.", keys: one, run: zscan },
];
