/**
 * Sorted sets: members (latin1 byte strings) with a double score each, ordered by score and then
 * by member.
 *
 * Design. A small set is packed (packed-pairs.ts): its pairs in order in one byte array,
 * scanned to answer anything, as Redis's listpack is. Past what Redis
 * keeps in a listpack (128 members, or a member over 64 bytes) it moves, for good, to two indexes
 * over the same pairs, as Redis's dict + skiplist:
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
 * The encoding shows in replies as it does in Redis: ZSCAN returns a listpack whole and in
 * order, a listpack stores -0 as 0, and lex ranges over mixed scores (an unsupported use) are
 * answered by a linear scan there. A set built as a skiplist (ZUNIONSTORE's result) is packed
 * when it is small enough, as Redis converts it.
 *
 * The commands are in commands.ts, the range types and their parsing in ranges.ts.
 */
import { clampRankRange } from "../../text/args.ts";
import { compactEntriesMax, encodingLimits, isCompact } from "../compact.ts";
import { objectBytes } from "../memory-sizes.ts";
import { formatDouble } from "../../text/format-double.ts";
import { BTree, type FrozenRun } from "./btree.ts";
import { packable, packedItemBytesMax } from "../short-strings.ts";
import { PackedPairs } from "./packed-pairs.ts";
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

/** `entries` (distinct members) packed in one go. */
function packedPairs(entries: Iterable<ZEntry>): PackedPairs {
  const pairs = new PackedPairs();
  // A listpack keeps scores as text, where -0 is written "0".
  pairs.fill(Array.from(entries, ({ member, score }) => ({ member, score: score === 0 ? 0 : score })));
  return pairs;
}

export class ZSet {
  readonly kind = "zset";
  /** The pairs in order: packed while the set is compact (Redis's listpack), else the tree. */
  private order: PackedPairs | BTree;
  /** The member → score index; null while packed, whose pairs are scanned instead. */
  private index: ScoreIndex | null;
  /**
   * Redis would have moved this set out of its listpack by now, for good: it has had more
   * members than zset-max-listpack-entries, or one longer than zset-max-listpack-value
   * (encodingLimits), or it was made a skiplist. What OBJECT ENCODING reports; the pairs are
   * packed by svc's own fixed limits.
   */
  private leftListpack: boolean;

  /** `compact`: start as Redis's listpack encoding (as ZADD does) or as a skiplist. */
  constructor(compact = true) {
    this.order = compact ? new PackedPairs() : new BTree();
    this.index = compact ? null : new ScoreIndex();
    this.leftListpack = !compact;
  }

  /** Whether the pairs are packed (svc's form, by its own limits). */
  get packed(): boolean {
    return this.index === null;
  }

  /** A set filled one element at a time (as ZADD fills one), starting in the given form. */
  static of(entries: Iterable<ZEntry>, compact = true): ZSet {
    const zset = new ZSet(compact);
    for (const e of entries) zset.set(e.member, e.score);
    return zset;
  }

  /**
   * A new set holding `entries` (distinct members), built in one go, packed: the caller has
   * checked that Redis would hold it in a listpack (encoding.ts's isCompact).
   */
  static packedOf(entries: Iterable<ZEntry>): ZSet {
    const zset = new ZSet(true);
    zset.order = packedPairs(entries);
    zset.noteSize();
    return zset;
  }

  /**
   * After pairs were packed in one go (packedOf, repack): past encodingLimits, Redis would have
   * made or turned it a skiplist. Member lengths are checked only when the limit is below the
   * packing limit, which the caller has already checked them against.
   */
  private noteSize(): void {
    const limits = encodingLimits;
    if (this.size > limits.zsetEntries) this.leftListpack = true;
    else if (limits.zsetValueBytes < packedItemBytesMax) {
      for (const e of this.order.entries()) if (e.member.length > limits.zsetValueBytes) this.leftListpack = true;
    }
  }

  get size(): number {
    return this.order.length;
  }

  /** Estimated bytes (MEMORY USAGE), members held as strings sized from the first `samples` (0: all). */
  memoryBytes(samples: number): number {
    const order = this.order instanceof PackedPairs ? this.order.memoryBytes() : this.order.memoryBytes(samples);
    return objectBytes(3) + order + (this.index?.memoryBytes(samples) ?? 0);
  }

  /** The encoding Redis would report for this set (OBJECT ENCODING). */
  get encoding(): "listpack" | "skiplist" {
    return this.leftListpack ? "skiplist" : "listpack";
  }

  /**
   * Switches a set built in skiplist form to the listpack form if it is small enough — what Redis
   * does with ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE results.
   */
  compactIfSmall(): void {
    // Redis's zsetConvertToListpackIfNeeded, by the configured limits; the packing by svc's own.
    const limits = encodingLimits;
    if (this.size <= limits.zsetEntries) {
      let longest = 0;
      for (const e of this.order.entries()) longest = Math.max(longest, e.member.length);
      if (longest <= limits.zsetValueBytes) this.leftListpack = false;
    }
    if (this.packed || this.size > compactEntriesMax) return;
    const entries = [...this.order.entries()];
    if (
      !isCompact(
        entries.map((e) => e.member),
        this.size,
      )
    )
      return;
    this.order = packedPairs(entries);
    this.index = null;
  }

  /**
   * Makes a packed set hold exactly `entries` (distinct members), packed in one go: ZADD of many
   * pairs into a small set, which one insertion at a time would copy once per pair. The caller
   * has checked that Redis would still hold the result in a listpack (encoding.ts's isCompact).
   */
  repack(entries: Iterable<ZEntry>): void {
    if (!this.packed) throw new Error("zset: repack is for a packed set");
    this.order = packedPairs(entries);
    this.noteSize();
  }

  /** Leaves the packed form for the tree and the index, for good (as Redis leaves its listpack). */
  private unpack(): void {
    const tree = new BTree();
    const index = new ScoreIndex();
    for (const e of this.order.entries()) {
      tree.insert(e.score, e.member);
      index.set(e.member, e.score);
    }
    this.order = tree;
    this.index = index;
  }

  /**
   * For ZSCAN: a live iterator over the members while the index is small, in insertion order;
   * null once it is a table, to be walked with scanStep.
   */
  memberIterator(): Iterator<string> | null {
    if (this.index === null) return Array.from(this.order.entries(), (e) => e.member)[Symbol.iterator]();
    return this.index.iterator();
  }

  /** Whether the member index is a table: then warming members is worth it (warm.ts). */
  get hashed(): boolean {
    return this.index?.hashed ?? false;
  }

  /** Brings into cache where the first `count` of `members` are in a large set's index (warm.ts). */
  warm(members: readonly string[], count: number): void {
    this.index?.warm(members, count);
  }

  /** For ZSCAN over a large set: one step of the index table's cursor walk (KeyTable.scanStep). */
  scanStep(cursor: number, out: string[]): number {
    return this.index!.scanStep(cursor, out);
  }

  clone(): ZSet {
    const copy = ZSet.of(this.entries(), this.packed);
    copy.leftListpack = this.leftListpack;
    return copy;
  }

  score(member: string): number | undefined {
    return this.index !== null ? this.index.get(member) : (this.order as PackedPairs).scoreOf(member);
  }

  /** Adds the member or changes its score; returns true when the member is new. */
  set(member: string, score: number): boolean {
    return this.setFrom(this.score(member), member, score);
  }

  /**
   * As set, for a caller that has just read the member's score (`current`; undefined for a
   * non-member): ZADD, which saves a lookup.
   */
  setFrom(current: number | undefined, member: string, score: number): boolean {
    if (Number.isNaN(score)) throw new Error("zset: NaN score");
    if (current === undefined && this.packed && (this.size >= compactEntriesMax || !packable(member))) {
      this.unpack();
    }
    // Redis leaves its listpack before a member that would take it past the configured limits.
    if (current === undefined && !this.leftListpack && (this.size >= encodingLimits.zsetEntries || member.length > encodingLimits.zsetValueBytes)) {
      this.leftListpack = true;
    }
    // A listpack keeps scores as text, where -0 is written "0".
    if (this.packed && score === 0) score = 0;
    if (current === undefined) {
      this.order.insert(score, member);
      this.index?.set(member, score);
      return true;
    }
    // -0 and 0 compare equal, as in Redis: no update, the stored score stays.
    if (current !== score) {
      this.order.updateScore(member, current, score);
      this.index?.set(member, score);
    }
    return false;
  }

  /** Removes the member; returns whether it was there. */
  delete(member: string): boolean {
    const score = this.score(member);
    if (score === undefined) return false;
    this.index?.delete(member);
    this.order.delete(score, member);
    return true;
  }

  /** 0-based rank in ascending order (or descending when `reverse`); null for a non-member. */
  rank(member: string, reverse = false): number | null {
    const score = this.score(member);
    if (score === undefined) return null;
    const rank = this.order.rankOf(score, member);
    return reverse ? this.size - 1 - rank : rank;
  }

  /** The element at a 0-based rank in ascending order, or null out of range. */
  at(index: number): ZEntry | null {
    return this.order.at(index);
  }

  /** Elements in order (or reverse order). */
  entries(reverse = false): Generator<ZEntry> {
    return this.order.entries(reverse);
  }

  /** The elements from 0-based `rank` on, in ascending order, as they are now (BTree.freezeFrom). */
  freezeFrom(rank: number): FrozenRun {
    return this.order.freezeFrom(rank);
  }

  /**
   * Calls `visit` for the elements in ascending order from 0-based `rank`, until it returns false
   * or they run out; `visit` must not change the set.
   */
  walkFrom(rank: number, visit: (score: number, member: string) => boolean): void {
    this.order.walk(rank, false, visit);
  }

  /**
   * Elements with 0-based ranks start..end inclusive, counted from the high end when `reverse`;
   * the caller has clamped the range (clampRankRange).
   */
  rangeByRank(start: number, end: number, reverse = false): ZEntry[] {
    const out: ZEntry[] = [];
    const count = end - start + 1;
    this.order.walk(reverse ? this.size - 1 - start : start, reverse, (score, member) => {
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
    this.order.walk(reverse ? first - offset : first + offset, reverse, (score, member) => {
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
    if (!this.packed) return this.countBetween(this.firstInLexRange(range), () => this.lastInLexRange(range));
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
    this.order.walk(first, false, (_score, member) => {
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
    const first = this.order.first;
    const last = this.order.last;
    if (first === null || last === null || scoreRangeIsEmpty(range)) return false;
    return scoreAboveMin(last.score, range) && scoreBelowMax(first.score, range);
  }

  /** The rank of the first element whose score is in the range, or -1. */
  private firstInScoreRange(range: ScoreRange): number {
    if (!this.touchesScoreRange(range)) return noRank;
    const rank = this.order.countWhile((score) => !scoreAboveMin(score, range));
    const e = this.order.at(rank);
    return e !== null && scoreBelowMax(e.score, range) ? rank : noRank;
  }

  /** The rank of the last element whose score is in the range, or -1. */
  private lastInScoreRange(range: ScoreRange): number {
    if (!this.touchesScoreRange(range)) return noRank;
    const rank = this.order.countWhile((score) => scoreBelowMax(score, range)) - 1;
    const e = this.order.at(rank);
    return e !== null && scoreAboveMin(e.score, range) ? rank : noRank;
  }

  // Lex searches are meaningful when all scores are equal (then members are in order), as
  // ZRANGEBYLEX documents; with mixed scores they still terminate and answer something, as in
  // Redis. A listpack answers lex ranges by scanning from one end: when all scores are equal that
  // finds what the tree search finds, with mixed scores it does not, so small sets scan as
  // Redis's listpack does.

  private touchesLex(range: LexRange): boolean {
    const first = this.order.first;
    const last = this.order.last;
    if (first === null || last === null || lexRangeIsEmpty(range)) return false;
    return lexAboveMin(last.member, range.min) && lexBelowMax(first.member, range.max);
  }

  private firstInLexRange(range: LexRange): number {
    if (!this.touchesLex(range)) return noRank;
    const rank = this.order.countWhile((_score, member) => !lexAboveMin(member, range.min));
    const e = this.order.at(rank);
    return e !== null && lexBelowMax(e.member, range.max) ? rank : noRank;
  }

  private lastInLexRange(range: LexRange): number {
    if (!this.touchesLex(range)) return noRank;
    const rank = this.order.countWhile((_score, member) => lexBelowMax(member, range.max)) - 1;
    const e = this.order.at(rank);
    return e !== null && lexAboveMin(e.member, range.min) ? rank : noRank;
  }

  private firstInLex(range: LexRange): number {
    if (!this.packed) return this.firstInLexRange(range);
    if (!this.touchesLex(range)) return noRank;
    // The first element at or above min, in score order, decides.
    let rank = 0;
    let found = noRank;
    this.order.walk(0, false, (_score, member) => {
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
    if (!this.packed) return this.lastInLexRange(range);
    if (!this.touchesLex(range)) return noRank;
    // The last element at or below max, in score order, decides.
    let rank = this.size - 1;
    let found = noRank;
    this.order.walk(rank, true, (_score, member) => {
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
    return this.order.deleteRange(start, end - start + 1, (_score, member) => this.index?.delete(member));
  }

  deleteRangeByScore(range: ScoreRange): number {
    const first = this.firstInScoreRange(range);
    if (first === noRank) return 0;
    return this.deleteRangeByRank(first, this.lastInScoreRange(range));
  }

  deleteRangeByLex(range: LexRange): number {
    const first = this.firstInLex(range);
    if (first === noRank) return 0;
    if (!this.packed) return this.deleteRangeByRank(first, first + this.runLength(first, range) - 1);
    // A listpack deletes member by member (the run may hold mixed scores, see firstInLex).
    const doomed: string[] = [];
    this.order.walk(first, false, (_score, member) => {
      if (!lexBelowMax(member, range.max)) return false;
      doomed.push(member);
      return true;
    });
    for (const member of doomed) this.delete(member);
    return doomed.length;
  }

  /** Removes and returns the lowest (or highest) element; null when empty. */
  pop(highest = false): ZEntry | null {
    const e = highest ? this.order.last : this.order.first;
    if (e === null) return null;
    this.delete(e.member);
    return e;
  }

  /** A uniformly random element; null when empty. */
  random(): ZEntry | null {
    return this.size === 0 ? null : this.at(Math.floor(Math.random() * this.size));
  }

  /** Checks that the order is well formed and the index, if any, agrees with it (for tests). */
  validate(): void {
    this.order.validate();
    const index = this.index;
    if (index === null) return;
    if (this.order.length !== index.size) throw new Error("zset: index sizes differ");
    for (const e of this.order.entries()) {
      if (!Object.is(index.get(e.member), e.score)) throw new Error(`zset: ${JSON.stringify(e.member)} scores differ`);
    }
  }
}
