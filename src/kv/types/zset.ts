/**
 * Sorted sets: members (latin1 byte strings) with a double score each, ordered by score and then
 * by member.
 *
 * Design. A ZSet keeps two indexes over the same pairs, as Redis does:
 *
 *   - a Map member → score, for the O(1) questions: does the member exist, what is its score
 *     (ZSCORE, ZADD's NX/XX/GT/LT checks, ZINTER probing other inputs);
 *   - a counted B+tree ordered by (score, member) (btree.ts), for everything about order: rank
 *     of a member, member at a rank, the ranks where a score or lex range starts and ends — each
 *     O(log n) — and then walking neighbours for ranges. (Redis uses a skip list here; in JS
 *     its per-node objects cost a cache miss per step, see btree.ts.)
 *
 * Either index alone makes some command linear; both together cost one Map entry per member
 * beyond the tree. The Map's insertion order also gives ZSCAN a cursor that survives changes
 * (scan.ts).
 *
 * Redis stores small sets as one flat "listpack" and converts them, for good, to dict + skiplist
 * once they outgrow it (129 members, or a member over 64 bytes). We always use the tree, but
 * remember which encoding Redis would be using, because it shows in replies: ZSCAN returns a
 * listpack whole and in order, a listpack stores -0 as 0, and lex ranges over mixed scores (an
 * unsupported use) are answered by a linear scan there.
 *
 * Commands follow Redis 7.0's t_zset.c in argument order, checks and replies: options are parsed
 * and validated before the key is looked up, scores are replied as doubles (%.17g text in RESP2)
 * with RESP3's nested [member, score] pairs where Redis nests them, an emptied sorted set deletes
 * its key, and an in-place change calls `db.modified` (WATCH, and waking clients blocked in
 * BZPOPMIN/BZMPOP).
 */
import { clampRankRange, int64Max, isKeyword, parseFloatArg, parseInteger, parseIntegerIn, parseMultiPop, strtod } from "../args.ts";
import { runBlocking } from "../commands/block.ts";
import { parseCursor, parseScanOptions, replyScan } from "../commands/keys.ts";
import { afterRemoval, getValue, getZSet, storeResult } from "../commands/lookup.ts";
import type { CommandSpec, Exec } from "../commands/spec.ts";
import { compactEntriesMax, compactValueBytesMax, isCompact } from "../encoding.ts";
import { KvError, mustBePositive, negativeLimit, syntaxError, wrongType } from "../errors.ts";
import { globMatch } from "../glob.ts";
import { formatDouble } from "../reply.ts";
import { resume, scanStep } from "../scan.ts";
import { BTree } from "./btree.ts";
import { distinctIndexes, randomCountWith } from "./sample.ts";

// Rank ranges are a sorted-set notion first; callers and tests find the clamp here too.
export { clampRankRange };

export interface ZEntry {
  readonly member: string;
  readonly score: number;
}

/** A score as text the way Redis writes it: %.17g, which writes negative zero as "-0". */
export const formatScore = (score: number) => (Object.is(score, -0) ? "-0" : formatDouble(score));

// ---- ranges -------------------------------------------------------------------------------------

/** An interval of scores; either end may be open (exclusive) and either may be infinite. */
export interface ScoreRange {
  min: number;
  max: number;
  minExclusive: boolean;
  maxExclusive: boolean;
}

/** One end of a lexicographic range: "-" (below everything), "+" (above everything) or a string. */
export type LexBound =
  | { kind: "-" }
  | { kind: "+" }
  | { kind: "value"; value: string; exclusive: boolean };

export interface LexRange {
  min: LexBound;
  max: LexBound;
}

export const scoreAboveMin = (score: number, range: ScoreRange) =>
  range.minExclusive ? score > range.min : score >= range.min;

export const scoreBelowMax = (score: number, range: ScoreRange) =>
  range.maxExclusive ? score < range.max : score <= range.max;

/** A range that can hold no score at all: min above max, or a point with an open end. */
export const scoreRangeIsEmpty = (range: ScoreRange) =>
  range.min > range.max || (range.min === range.max && (range.minExclusive || range.maxExclusive));

export function lexAboveMin(member: string, bound: LexBound): boolean {
  if (bound.kind === "-") return true;
  if (bound.kind === "+") return false;
  return bound.exclusive ? member > bound.value : member >= bound.value;
}

export function lexBelowMax(member: string, bound: LexBound): boolean {
  if (bound.kind === "-") return false;
  if (bound.kind === "+") return true;
  return bound.exclusive ? member < bound.value : member <= bound.value;
}

/** A lex range that can hold no string: its ends are crossed, or a point with an open end. */
export function lexRangeIsEmpty(range: LexRange): boolean {
  const { min, max } = range;
  if (min.kind === "+" || max.kind === "-") return true;
  if (min.kind === "-" || max.kind === "+") return false;
  if (min.value > max.value) return true;
  return min.value === max.value && (min.exclusive || max.exclusive);
}

/** Ranks below are 0-based; -1 stands for "no such element". */
const noRank = -1;

export class ZSet {
  readonly kind = "zset";
  private readonly scores = new Map<string, number>();
  private readonly tree = new BTree();

  /** `compact`: start as Redis's listpack encoding (as ZADD does) or as a skiplist. */
  constructor(private compact = true) {}

  /** A set filled one element at a time (as ZADD fills one), starting in the given form. */
  static of(entries: Iterable<ZEntry>, compact = true): ZSet {
    const zset = new ZSet(compact);
    for (const e of entries) zset.set(e.member, e.score);
    return zset;
  }

  get size(): number {
    return this.scores.size;
  }

  /** The encoding Redis would report for this set (OBJECT ENCODING). */
  get encoding(): "listpack" | "skiplist" {
    return this.compact ? "listpack" : "skiplist";
  }

  /**
   * Switches a set built in skiplist form to the listpack form if it is small enough — what Redis
   * does with ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE results.
   */
  compactIfSmall(): void {
    if (this.compact || !isCompact(this.scores.keys(), this.size)) return;
    this.compact = true;
    // set() would see no change from -0 to 0 (they compare equal), so rewrite them directly.
    for (const [member, score] of this.scores) {
      if (!Object.is(score, -0)) continue;
      this.tree.updateScore(member, score, 0);
      this.scores.set(member, 0);
    }
  }

  /** Members in insertion order of the Map (ZSCAN's iteration order), not in score order. */
  members(): IterableIterator<string> {
    return this.scores.keys();
  }

  clone(): ZSet {
    return ZSet.of(this.entries(), this.compact);
  }

  score(member: string): number | undefined {
    return this.scores.get(member);
  }

  /** Adds the member or changes its score; returns true when the member is new. */
  set(member: string, score: number): boolean {
    if (Number.isNaN(score)) throw new Error("zset: NaN score");
    const current = this.scores.get(member);
    if (current === undefined && this.compact && (this.size >= compactEntriesMax || member.length > compactValueBytesMax)) {
      this.compact = false;
    }
    // A listpack keeps scores as text, where -0 is written "0".
    if (this.compact && score === 0) score = 0;
    if (current === undefined) {
      this.tree.insert(score, member);
      this.scores.set(member, score);
      return true;
    }
    // -0 and 0 compare equal, as in Redis: no update, the stored score stays.
    if (current !== score) {
      this.tree.updateScore(member, current, score);
      this.scores.set(member, score);
    }
    return false;
  }

  /** Removes the member; returns whether it was there. */
  delete(member: string): boolean {
    const score = this.scores.get(member);
    if (score === undefined) return false;
    this.scores.delete(member);
    this.tree.delete(score, member);
    return true;
  }

  /** 0-based rank in ascending order (or descending when `reverse`); null for a non-member. */
  rank(member: string, reverse = false): number | null {
    const score = this.scores.get(member);
    if (score === undefined) return null;
    const rank = this.tree.rankOf(score, member);
    return reverse ? this.size - 1 - rank : rank;
  }

  /** The element at a 0-based rank in ascending order, or null out of range. */
  at(index: number): ZEntry | null {
    return this.tree.at(index);
  }

  /** Elements in order (or reverse order). */
  entries(reverse = false): Generator<ZEntry> {
    return this.tree.entries(reverse);
  }

  /**
   * Elements with 0-based ranks start..end inclusive, counted from the high end when `reverse`;
   * the caller has clamped the range (clampRankRange).
   */
  rangeByRank(start: number, end: number, reverse = false): ZEntry[] {
    const out: ZEntry[] = [];
    const count = end - start + 1;
    this.tree.walk(reverse ? this.size - 1 - start : start, reverse, (score, member) => {
      out.push({ member, score });
      return out.length < count;
    });
    return out;
  }

  /**
   * Elements with scores in the range, ascending (or descending when `reverse`), skipping
   * `offset` and returning at most `limit` (negative: no limit). A negative offset selects
   * nothing, as in Redis.
   */
  rangeByScore(range: ScoreRange, reverse = false, offset = 0, limit = -1): ZEntry[] {
    const first = reverse ? this.lastInScoreRange(range) : this.firstInScoreRange(range);
    const inRange = reverse ? (score: number) => scoreAboveMin(score, range) : (score: number) => scoreBelowMax(score, range);
    return this.window(first, reverse, offset, limit, inRange);
  }

  /** As rangeByScore, for a lexicographic range (meaningful when all scores are equal). */
  rangeByLex(range: LexRange, reverse = false, offset = 0, limit = -1): ZEntry[] {
    const first = reverse ? this.lastInLex(range) : this.firstInLex(range);
    const inRange = reverse ? (member: string) => lexAboveMin(member, range.min) : (member: string) => lexBelowMax(member, range.max);
    return this.window(first, reverse, offset, limit, (_score, member) => inRange(member));
  }

  /** Walks from rank `first` while `inRange`, after jumping `offset` places (O(log n)). */
  private window(first: number, reverse: boolean, offset: number, limit: number, inRange: (score: number, member: string) => boolean): ZEntry[] {
    const out: ZEntry[] = [];
    if (first === noRank || offset < 0 || limit === 0) return out;
    this.tree.walk(reverse ? first - offset : first + offset, reverse, (score, member) => {
      if (!inRange(score, member)) return false;
      out.push({ member, score });
      return out.length !== limit;
    });
    return out;
  }

  /** How many scores fall in the range: rank of the last minus rank of the first, O(log n). */
  countByScore(range: ScoreRange): number {
    return this.countBetween(this.firstInScoreRange(range), () => this.lastInScoreRange(range));
  }

  countByLex(range: LexRange): number {
    if (!this.compact) return this.countBetween(this.firstInLexRange(range), () => this.lastInLexRange(range));
    const first = this.firstInLex(range);
    return first === noRank ? 0 : this.runLength(first, range);
  }

  private countBetween(first: number, last: () => number): number {
    if (first === noRank) return 0;
    const end = last();
    return end === noRank ? 0 : end - first + 1;
  }

  /** How many elements from rank `first` on stay below the lex range's max (a walk, O(k)). */
  private runLength(first: number, range: LexRange): number {
    let n = 0;
    this.tree.walk(first, false, (_score, member) => {
      if (!lexBelowMax(member, range.max)) return false;
      n++;
      return true;
    });
    return n;
  }

  // ---- where ranges start and end ---------------------------------------------------------------
  // Each is a tree search for the first element past one end of the range, then a look at that
  // element against the other end.

  /** Whether any element could fall in the range: a cheap test against the two ends. */
  private touchesScoreRange(range: ScoreRange): boolean {
    const first = this.tree.first;
    const last = this.tree.last;
    if (first === null || last === null || scoreRangeIsEmpty(range)) return false;
    return scoreAboveMin(last.score, range) && scoreBelowMax(first.score, range);
  }

  /** The rank of the first element whose score is in the range, or -1. */
  private firstInScoreRange(range: ScoreRange): number {
    if (!this.touchesScoreRange(range)) return noRank;
    const rank = this.tree.countWhile((score) => !scoreAboveMin(score, range));
    const e = this.tree.at(rank);
    return e !== null && scoreBelowMax(e.score, range) ? rank : noRank;
  }

  /** The rank of the last element whose score is in the range, or -1. */
  private lastInScoreRange(range: ScoreRange): number {
    if (!this.touchesScoreRange(range)) return noRank;
    const rank = this.tree.countWhile((score) => scoreBelowMax(score, range)) - 1;
    const e = this.tree.at(rank);
    return e !== null && scoreAboveMin(e.score, range) ? rank : noRank;
  }

  // Lex searches are meaningful when all scores are equal (then members are in order), as
  // ZRANGEBYLEX documents; with mixed scores they still terminate and answer something, as in
  // Redis. A listpack answers lex ranges by scanning from one end: when all scores are equal that
  // finds what the tree search finds, with mixed scores it does not, so small sets scan as
  // Redis's listpack does.

  private touchesLex(range: LexRange): boolean {
    const first = this.tree.first;
    const last = this.tree.last;
    if (first === null || last === null || lexRangeIsEmpty(range)) return false;
    return lexAboveMin(last.member, range.min) && lexBelowMax(first.member, range.max);
  }

  private firstInLexRange(range: LexRange): number {
    if (!this.touchesLex(range)) return noRank;
    const rank = this.tree.countWhile((_score, member) => !lexAboveMin(member, range.min));
    const e = this.tree.at(rank);
    return e !== null && lexBelowMax(e.member, range.max) ? rank : noRank;
  }

  private lastInLexRange(range: LexRange): number {
    if (!this.touchesLex(range)) return noRank;
    const rank = this.tree.countWhile((_score, member) => lexBelowMax(member, range.max)) - 1;
    const e = this.tree.at(rank);
    return e !== null && lexAboveMin(e.member, range.min) ? rank : noRank;
  }

  private firstInLex(range: LexRange): number {
    if (!this.compact) return this.firstInLexRange(range);
    if (!this.touchesLex(range)) return noRank;
    // The first element at or above min, in score order, decides.
    let rank = 0;
    let found = noRank;
    this.tree.walk(0, false, (_score, member) => {
      if (lexAboveMin(member, range.min)) {
        if (lexBelowMax(member, range.max)) found = rank;
        return false;
      }
      rank++;
      return true;
    });
    return found;
  }

  private lastInLex(range: LexRange): number {
    if (!this.compact) return this.lastInLexRange(range);
    if (!this.touchesLex(range)) return noRank;
    // The last element at or below max, in score order, decides.
    let rank = this.size - 1;
    let found = noRank;
    this.tree.walk(rank, true, (_score, member) => {
      if (lexBelowMax(member, range.max)) {
        if (lexAboveMin(member, range.min)) found = rank;
        return false;
      }
      rank--;
      return true;
    });
    return found;
  }

  // ---- removing ranges ----------------------------------------------------------------------------

  /** Removes the elements with 0-based ranks start..end inclusive; returns how many. */
  deleteRangeByRank(start: number, end: number): number {
    return this.tree.deleteRange(start, end - start + 1, (_score, member) => this.scores.delete(member));
  }

  deleteRangeByScore(range: ScoreRange): number {
    const first = this.firstInScoreRange(range);
    if (first === noRank) return 0;
    return this.deleteRangeByRank(first, this.lastInScoreRange(range));
  }

  deleteRangeByLex(range: LexRange): number {
    const first = this.firstInLex(range);
    if (first === noRank) return 0;
    if (!this.compact) return this.deleteRangeByRank(first, first + this.runLength(first, range) - 1);
    // A listpack deletes member by member (the run may hold mixed scores, see firstInLex).
    const doomed: string[] = [];
    this.tree.walk(first, false, (_score, member) => {
      if (!lexBelowMax(member, range.max)) return false;
      doomed.push(member);
      return true;
    });
    for (const member of doomed) this.delete(member);
    return doomed.length;
  }

  /** Removes and returns the lowest (or highest) element; null when empty. */
  pop(highest = false): ZEntry | null {
    const e = highest ? this.tree.last : this.tree.first;
    if (e === null) return null;
    this.delete(e.member);
    return e;
  }

  /** A uniformly random element; null when empty. */
  random(): ZEntry | null {
    return this.size === 0 ? null : this.at(Math.floor(Math.random() * this.size));
  }

  /** Checks that the two indexes agree and the tree is well formed (for tests). */
  validate(): void {
    this.tree.validate();
    if (this.tree.length !== this.scores.size) throw new Error("zset: index sizes differ");
    for (const e of this.tree.entries()) {
      if (!Object.is(this.scores.get(e.member), e.score)) throw new Error(`zset: ${JSON.stringify(e.member)} scores differ`);
    }
  }
}

// ---- range arguments ----------------------------------------------------------------------------

const notFloatRange = () => new KvError("ERR min or max is not a float");
const notLexRange = () => new KvError("ERR min or max not valid string range item");

/**
 * A range end as Redis reads it: plain strtod with only a full-consumption and NaN check. That is
 * laxer than score arguments — leading spaces, overflow to ±inf, and even the empty string (0)
 * are accepted — and Redis clients can observe it, so we follow.
 */
function parseRangeNumber(text: string): number | null {
  if (text === "") return 0;
  return strtod(text.replace(/^[ \t\n\v\f\r]+/, ""));
}

function parseScoreBound(text: string): { value: number; exclusive: boolean } {
  const exclusive = text.startsWith("(");
  const value = parseRangeNumber(exclusive ? text.slice(1) : text);
  if (value === null || Number.isNaN(value)) throw notFloatRange();
  return { value, exclusive };
}

/** A score range from "1.5", "(1.5", "-inf", "+inf"; "ERR min or max is not a float" otherwise. */
export function parseScoreRange(minText: string, maxText: string): ScoreRange {
  const min = parseScoreBound(minText);
  const max = parseScoreBound(maxText);
  return { min: min.value, max: max.value, minExclusive: min.exclusive, maxExclusive: max.exclusive };
}

function parseLexBound(text: string): LexBound {
  if (text === "-") return { kind: "-" };
  if (text === "+") return { kind: "+" };
  if (text.startsWith("[")) return { kind: "value", value: text.slice(1), exclusive: false };
  if (text.startsWith("(")) return { kind: "value", value: text.slice(1), exclusive: true };
  throw notLexRange();
}

/** A lex range from "[a", "(a", "-", "+"; "ERR min or max not valid string range item" otherwise. */
export function parseLexRange(minText: string, maxText: string): LexRange {
  return { min: parseLexBound(minText), max: parseLexBound(maxText) };
}

// ---- shared helpers -----------------------------------------------------------------------------

/** A score reply: a RESP3 double, or its %.17g text in RESP2. */
function replyScore(x: Exec, score: number): void {
  // The writers' formatDouble prints -0 as "0" where Redis prints "-0"; RESP2 can carry the text.
  if (Object.is(score, -0) && x.reply.protocol === 2) x.reply.bulk("-0");
  else x.reply.double(score);
}

/**
 * Members, or members with scores: flat [m1, s1, m2, s2] in RESP2, [[m1, s1], [m2, s2]] in RESP3
 * (Redis nests them there rather than use a map, whose order a client could lose). `nest` false
 * keeps the flat shape in RESP3 too (ZPOPMIN without a count).
 */
function replyEntries(x: Exec, entries: readonly ZEntry[], withScores: boolean, nest = true): void {
  const pairs = withScores && nest && x.reply.protocol === 3;
  x.reply.array(withScores && !pairs ? entries.length * 2 : entries.length);
  for (const e of entries) {
    if (pairs) x.reply.array(2);
    x.reply.bulk(e.member);
    if (withScores) replyScore(x, e.score);
  }
}

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
    zset.set(member, score);
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
  zset.set(member, target);
  return "updated";
}

function zaddApply(x: Exec, key: string, o: Readonly<ZAddOptions>, pairs: readonly ZEntry[]): void {
  const existing = getZSet(x, key);
  let added = 0;
  let updated = 0;
  let processed = 0;
  const out = { score: 0 };
  if (existing !== undefined || !o.xx) {
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
    if (removed > 0) afterRemoval(x, key, zset);
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

type RangeSpec =
  | { by: "rank"; start: number; end: number }
  | { by: "score"; range: ScoreRange }
  | { by: "lex"; range: LexRange };

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
  const compact = request.spec.by !== "rank" || entries.length <= compactEntriesMax;
  storeResult(x, argv[1]!, ZSet.of(entries, compact));
}

// ---- removing ranges ----------------------------------------------------------------------------

function zremrange(x: Exec, argv: string[], remove: (zset: ZSet) => number): void {
  const key = argv[1]!;
  const zset = getZSet(x, key);
  const removed = zset === undefined ? 0 : remove(zset);
  if (removed > 0) afterRemoval(x, key, zset!);
  x.reply.integer(removed);
}

function zremrangebyrank(x: Exec, argv: string[]): void {
  const start = parseInteger(argv[2]!);
  const end = parseInteger(argv[3]!);
  zremrange(x, argv, (zset) => {
    const clamped = clampRankRange(start, end, zset.size);
    return clamped === null ? 0 : zset.deleteRangeByRank(clamped[0], clamped[1]);
  });
}

function zremrangebyscore(x: Exec, argv: string[]): void {
  const range = parseScoreRange(argv[2]!, argv[3]!);
  zremrange(x, argv, (zset) => zset.deleteRangeByScore(range));
}

function zremrangebylex(x: Exec, argv: string[]): void {
  const range = parseLexRange(argv[2]!, argv[3]!);
  zremrange(x, argv, (zset) => zset.deleteRangeByLex(range));
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
  if (popped.length > 0) afterRemoval(x, key, zset);
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

// ---- ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD -------------------------------------

type SetOp = "union" | "inter" | "diff";
type Aggregate = "sum" | "min" | "max";

/** An input: a sorted set, or a plain set whose members all score 1 (as in Redis). */
interface Source {
  value: ZSet | Set<string> | undefined;
  weight: number;
}

const sourceSize = (s: Source) => s.value?.size ?? 0;

function* sourceEntries(s: Source): Generator<ZEntry> {
  if (s.value instanceof ZSet) yield* s.value.entries();
  else if (s.value !== undefined) for (const member of s.value) yield { member, score: 1 };
}

function sourceScore(s: Source, member: string): number | undefined {
  if (s.value instanceof ZSet) return s.value.score(member);
  return s.value?.has(member) ? 1 : undefined;
}

/** Reads an input key: a sorted set or a set; anything else is WRONGTYPE. */
function readSource(x: Exec, key: string): Source {
  const value = getValue(x, key);
  if (value !== undefined && !(value instanceof Set) && !(value instanceof ZSet)) throw wrongType();
  return { value, weight: 1 };
}

/** Folds `value` into `target`. A sum of +inf and -inf is NaN; Redis makes it 0. */
function aggregate(target: number, value: number, how: Aggregate): number {
  if (how === "min") return value < target ? value : target;
  if (how === "max") return value > target ? value : target;
  const sum = target + value;
  return Number.isNaN(sum) ? 0 : sum;
}

interface SetOpCommand {
  name: string;
  op: SetOp;
  /** Index of numkeys in argv (2 for the STORE forms, whose argv[1] is the destination). */
  numkeysIndex: number;
  store: boolean;
  /** ZINTERCARD: count the intersection instead of building it. */
  cardinality: boolean;
}

interface SetOpArgs {
  sources: Source[];
  how: Aggregate;
  withScores: boolean;
  limit: number;
}

/** As Redis's zunionInterDiffGenericCommand: numkeys, then the keys' types, then the options. */
function parseSetOp(x: Exec, argv: string[], c: SetOpCommand): SetOpArgs {
  const numkeys = parseInteger(argv[c.numkeysIndex]!);
  if (numkeys < 1) throw new KvError(`ERR at least 1 input key is needed for '${c.name}' command`);
  if (numkeys > argv.length - c.numkeysIndex - 1) throw syntaxError();
  const sources: Source[] = [];
  for (let i = 0; i < numkeys; i++) sources.push(readSource(x, argv[c.numkeysIndex + 1 + i]!));
  const args: SetOpArgs = { sources, how: "sum", withScores: false, limit: 0 };
  const weighted = c.op !== "diff" && !c.cardinality;
  for (let j = c.numkeysIndex + 1 + numkeys; j < argv.length; j++) {
    const word = argv[j]!;
    const left = argv.length - j - 1;
    if (weighted && left >= numkeys && isKeyword(word, "WEIGHTS")) {
      for (const source of sources) {
        try {
          source.weight = parseFloatArg(argv[++j]!);
        } catch {
          throw new KvError("ERR weight value is not a float");
        }
      }
    } else if (weighted && left >= 1 && isKeyword(word, "AGGREGATE")) {
      const how = argv[++j]!.toLowerCase();
      if (how !== "sum" && how !== "min" && how !== "max") throw syntaxError();
      args.how = how;
    } else if (!c.store && !c.cardinality && isKeyword(word, "WITHSCORES")) {
      args.withScores = true;
    } else if (c.cardinality && left >= 1 && isKeyword(word, "LIMIT")) {
      args.limit = parseIntegerIn(argv[++j]!, 0, int64Max, negativeLimit);
    } else throw syntaxError();
  }
  return args;
}

/** Smallest input first: fewer probes for ZINTER, and the order Redis adds ZUNION's scores in. */
const bySize = (sources: Source[]) => [...sources].sort((a, b) => sourceSize(a) - sourceSize(b));

// Results are built in skiplist form, as in Redis (where it shows: a -0 score survives in ZUNION's
// reply); the STORE forms then compact small results.

function union(sources: Source[], how: Aggregate): ZSet {
  const scores = new Map<string, number>();
  for (const source of bySize(sources)) {
    for (const { member, score } of sourceEntries(source)) {
      let weighted = source.weight * score;
      if (Number.isNaN(weighted)) weighted = 0; // 0 * ±inf
      const current = scores.get(member);
      scores.set(member, current === undefined ? weighted : aggregate(current, weighted, how));
    }
  }
  const result = new ZSet(false);
  for (const [member, score] of scores) result.set(member, score);
  return result;
}

/**
 * Members of every input, probing the larger inputs for each member of the smallest. With
 * `limit` > 0 it stops counting there (ZINTERCARD); `onMatch` gets each member and its score.
 */
function intersect(sources: Source[], how: Aggregate, limit: number, onMatch: (member: string, score: number) => void): number {
  const [smallest, ...others] = bySize(sources);
  let found = 0;
  for (const { member, score: own } of sourceEntries(smallest!)) {
    let score = smallest!.weight * own;
    if (Number.isNaN(score)) score = 0;
    let everywhere = true;
    for (const other of others) {
      const value = sourceScore(other, member);
      if (value === undefined) {
        everywhere = false;
        break;
      }
      score = aggregate(score, value * other.weight, how);
    }
    if (!everywhere) continue;
    onMatch(member, score);
    found++;
    if (limit > 0 && found >= limit) break;
  }
  return found;
}

/** Members of the first input in none of the others, with their own (unweighted) scores. */
function difference(sources: Source[]): ZSet {
  const [first, ...others] = sources;
  const result = new ZSet(false);
  for (const { member, score } of sourceEntries(first!)) {
    if (others.every((other) => sourceScore(other, member) === undefined)) result.set(member, score);
  }
  return result;
}

function setOp(x: Exec, argv: string[], c: SetOpCommand): void {
  const args = parseSetOp(x, argv, c);
  if (c.cardinality) {
    x.reply.integer(intersect(args.sources, "sum", args.limit, () => {}));
    return;
  }
  let result: ZSet;
  if (c.op === "union") result = union(args.sources, args.how);
  else if (c.op === "diff") result = difference(args.sources);
  else {
    result = new ZSet(false);
    const target = result;
    intersect(args.sources, args.how, 0, (member, score) => target.set(member, score));
  }
  if (c.store) {
    result.compactIfSmall();
    storeResult(x, argv[1]!, result);
  } else replyEntries(x, [...result.entries()], args.withScores);
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
  const step = scanStep(resume(cursor, () => zset.members()), options.count);
  for (const member of step.items) {
    // A parked cursor may outlive this value (the key was replaced): skip what is not in it.
    const score = zset.score(member);
    if (score !== undefined && matches(member)) add(member, score);
  }
  replyScan(x, step.cursor, items);
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
  run: (x, argv) => setOp(x, argv, { name, op, numkeysIndex: store ? 2 : 1, store, cardinality: false }),
});

export const zsetCommands: readonly CommandSpec[] = [
  { name: "zadd", arity: -4, flags: ["write", "denyoom", "fast"], group, summary: "Adds members to a sorted set, or updates their scores.", keys: one, run: zadd },
  { name: "zincrby", arity: 4, flags: ["write", "denyoom", "fast"], group, summary: "Increments the score of a member of a sorted set.", keys: one, run: zincrby },
  { name: "zrem", arity: -3, flags: ["write", "fast"], group, summary: "Removes members from a sorted set.", keys: one, run: zrem },
  { name: "zcard", arity: 2, flags: read, group, summary: "Returns the number of members in a sorted set.", keys: one, run: (x, argv) => x.reply.integer(getZSet(x, argv[1]!)?.size ?? 0) },
  { name: "zcount", arity: 4, flags: read, group, summary: "Counts the members of a sorted set within a range of scores.", keys: one, run: zcount },
  { name: "zlexcount", arity: 4, flags: read, group, summary: "Counts the members of a sorted set within a lexicographical range.", keys: one, run: zlexcount },
  { name: "zscore", arity: 3, flags: read, group, summary: "Returns the score of a member of a sorted set.", keys: one, run: zscore },
  { name: "zmscore", arity: -3, flags: read, group, summary: "Returns the scores of several members of a sorted set.", keys: one, run: zmscore },
  { name: "zrank", arity: 3, flags: read, group, summary: "Returns the index of a member in a sorted set ordered by ascending scores.", keys: one, run: (x, argv) => zrank(x, argv, false) },
  { name: "zrevrank", arity: 3, flags: read, group, summary: "Returns the index of a member in a sorted set ordered by descending scores.", keys: one, run: (x, argv) => zrank(x, argv, true) },
  { name: "zrange", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a range of indexes, scores or strings.", keys: one, run: (x, argv) => zrange(x, argv, null, null) },
  { name: "zrevrange", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a range of indexes, highest score first.", keys: one, run: (x, argv) => zrange(x, argv, "rank", true) },
  { name: "zrangebyscore", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a range of scores.", keys: one, run: (x, argv) => zrange(x, argv, "score", false) },
  { name: "zrevrangebyscore", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a range of scores, highest first.", keys: one, run: (x, argv) => zrange(x, argv, "score", true) },
  { name: "zrangebylex", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a lexicographical range.", keys: one, run: (x, argv) => zrange(x, argv, "lex", false) },
  { name: "zrevrangebylex", arity: -4, flags: ["readonly"], group, summary: "Returns members of a sorted set within a lexicographical range, in reverse order.", keys: one, run: (x, argv) => zrange(x, argv, "lex", true) },
  { name: "zrangestore", arity: -5, flags: ["write", "denyoom"], group, summary: "Stores a range of members of a sorted set in another key.", keys: [1, 2, 1], run: zrangestore },
  { name: "zremrangebyrank", arity: 4, flags: ["write"], group, summary: "Removes the members of a sorted set within a range of indexes.", keys: one, run: zremrangebyrank },
  { name: "zremrangebyscore", arity: 4, flags: ["write"], group, summary: "Removes the members of a sorted set within a range of scores.", keys: one, run: zremrangebyscore },
  { name: "zremrangebylex", arity: 4, flags: ["write"], group, summary: "Removes the members of a sorted set within a lexicographical range.", keys: one, run: zremrangebylex },
  { name: "zpopmin", arity: -2, flags: ["write", "fast"], group, summary: "Removes and returns the members with the lowest scores.", keys: one, run: (x, argv) => zpop(x, argv, false) },
  { name: "zpopmax", arity: -2, flags: ["write", "fast"], group, summary: "Removes and returns the members with the highest scores.", keys: one, run: (x, argv) => zpop(x, argv, true) },
  {
    name: "bzpopmin", arity: -3, flags: ["write", "noscript", "blocking", "fast"], group, summary: "Removes and returns the member with the lowest score, blocking until one is available.",
    keys: [1, -2, 1], run: (x, argv) => bzpop(x, argv, false),
  },
  {
    name: "bzpopmax", arity: -3, flags: ["write", "noscript", "blocking", "fast"], group, summary: "Removes and returns the member with the highest score, blocking until one is available.",
    keys: [1, -2, 1], run: (x, argv) => bzpop(x, argv, true),
  },
  { name: "zmpop", arity: -4, flags: ["write", "movablekeys"], group, summary: "Removes and returns members from the first non-empty sorted set.", keys: none, run: zmpop },
  {
    name: "bzmpop", arity: -5, flags: ["write", "blocking", "movablekeys"], group, summary: "Removes and returns members from the first non-empty sorted set, blocking until one is available.",
    keys: none, run: bzmpop,
  },
  { name: "zrandmember", arity: -2, flags: ["readonly"], group, summary: "Returns random members of a sorted set.", keys: one, run: zrandmember },
  setOpSpec("zunion", "union", false, "Returns the union of sorted sets."),
  setOpSpec("zinter", "inter", false, "Returns the intersection of sorted sets."),
  setOpSpec("zdiff", "diff", false, "Returns the difference between sorted sets."),
  setOpSpec("zunionstore", "union", true, "Stores the union of sorted sets in a key."),
  setOpSpec("zinterstore", "inter", true, "Stores the intersection of sorted sets in a key."),
  setOpSpec("zdiffstore", "diff", true, "Stores the difference between sorted sets in a key."),
  {
    name: "zintercard", arity: -3, flags: ["readonly", "movablekeys"], group, summary: "Counts the members of the intersection of sorted sets.", keys: none,
    run: (x, argv) => setOp(x, argv, { name: "zintercard", op: "inter", numkeysIndex: 1, store: false, cardinality: true }),
  },
  { name: "zscan", arity: -3, flags: ["readonly"], group, summary: "Iterates over the members and scores of a sorted set.", keys: one, run: zscan },
];
