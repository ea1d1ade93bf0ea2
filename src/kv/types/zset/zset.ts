/**
 * Sorted sets: members (latin1 byte strings) with a double score each, ordered by score and then
 * by member.
 *
 * Design. A ZSet keeps two indexes over the same pairs, as Redis does:
 *
 *   - a member → score index (score-index.ts: a Map while small, a key table past 128 members),
 *     for the O(1) questions: does the member exist, what is its score
 *     (ZSCORE, ZADD's NX/XX/GT/LT checks, ZINTER probing other inputs);
 *   - a counted B+tree ordered by (score, member) (btree.ts), for everything about order: rank
 *     of a member, member at a rank, the ranks where a score or lex range starts and ends — each
 *     O(log n) — and then walking neighbours for ranges. (Redis uses a skip list here; in JS
 *     its per-node objects cost a cache miss per step, see btree.ts.)
 *
 * Either index alone makes some command linear; both together cost one index entry per member
 * beyond the tree. ZSCAN walks the index: a small one by a parked Map iterator, a large one by the
 * table's slot cursor (scan.ts); both survive changes.
 *
 * Redis stores small sets as one flat "listpack" and converts them, for good, to dict + skiplist
 * once they outgrow it (129 members, or a member over 64 bytes). We always use the tree, but
 * remember which encoding Redis would be using, because it shows in replies: ZSCAN returns a
 * listpack whole and in order, a listpack stores -0 as 0, and lex ranges over mixed scores (an
 * unsupported use) are answered by a linear scan there.
 *
 * The commands are in commands.ts, the range types and their parsing in ranges.ts.
 */
import { clampRankRange } from "../../args.ts";
import { compactEntriesMax, compactValueBytesMax, isCompact } from "../../encoding.ts";
import { formatDouble } from "../../reply.ts";
import { BTree, type FrozenRun } from "./btree.ts";
import { ScoreIndex } from "./score-index.ts";
import { lexAboveMin, lexBelowMax, type LexRange, lexRangeIsEmpty, scoreAboveMin, scoreBelowMax, type ScoreRange, scoreRangeIsEmpty } from "./ranges.ts";

// Rank ranges are a sorted-set notion first; callers and tests find the clamp here too.
export { clampRankRange };

export interface ZEntry {
  readonly member: string;
  readonly score: number;
}

/** A score as text the way Redis writes it: %.17g, which writes negative zero as "-0". */
export const formatScore = (score: number) => (Object.is(score, -0) ? "-0" : formatDouble(score));

/** Ranks below are 0-based; -1 stands for "no such element". */
const noRank = -1;

export class ZSet {
  readonly kind = "zset";
  private readonly scores = new ScoreIndex();
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
    if (this.compact || this.size > compactEntriesMax) return;
    const entries = this.scores.entries();
    if (!isCompact(entries.map(([member]) => member), this.size)) return;
    this.compact = true;
    // set() would see no change from -0 to 0 (they compare equal), so rewrite them directly.
    for (const [member, score] of entries) {
      if (!Object.is(score, -0)) continue;
      this.tree.updateScore(member, score, 0);
      this.scores.set(member, 0);
    }
  }

  /**
   * For ZSCAN: a live iterator over the members while the index is small, in insertion order;
   * null once it is a table, to be walked with scanStep.
   */
  memberIterator(): Iterator<string> | null {
    return this.scores.iterator();
  }

  /** Whether the member index is a table: then warming members is worth it (warm.ts). */
  get hashed(): boolean {
    return this.scores.hashed;
  }

  /** Brings into cache where the first `count` of `members` are in a large set's index (warm.ts). */
  warm(members: readonly string[], count: number): void {
    this.scores.warm(members, count);
  }

  /** For ZSCAN over a large set: one step of the index table's cursor walk (KeyTable.scanStep). */
  scanStep(cursor: number, out: string[]): number {
    return this.scores.scanStep(cursor, out);
  }

  clone(): ZSet {
    return ZSet.of(this.entries(), this.compact);
  }

  score(member: string): number | undefined {
    return this.scores.get(member);
  }

  /** Adds the member or changes its score; returns true when the member is new. */
  set(member: string, score: number): boolean {
    return this.setFrom(this.scores.get(member), member, score);
  }

  /**
   * As set, for a caller that has just read the member's score (`current`; undefined for a
   * non-member): ZADD, which saves a lookup.
   */
  setFrom(current: number | undefined, member: string, score: number): boolean {
    if (Number.isNaN(score)) throw new Error("zset: NaN score");
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

  /** The elements from 0-based `rank` on, in ascending order, as they are now (BTree.freezeFrom). */
  freezeFrom(rank: number): FrozenRun {
    return this.tree.freezeFrom(rank);
  }

  /**
   * Calls `visit` for the elements in ascending order from 0-based `rank`, until it returns false
   * or they run out; `visit` must not change the set.
   */
  walkFrom(rank: number, visit: (score: number, member: string) => boolean): void {
    this.tree.walk(rank, false, visit);
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
