/**
 * A small sorted set's (score, member) pairs packed, as Redis packs a small sorted set into a
 * listpack: the scores in one Float64Array, the members in one byte array (short-strings.ts),
 * both in the set's order, by score and then by member's bytes. A set stays packed
 * while Redis would keep its listpack: at most compactEntriesMax members, none longer than
 * packedMemberBytesMax bytes (zset.ts moves it to the tree and index past either).
 *
 * It answers what the tree answers (btree.ts), by scanning: there are at most 128 pairs, and
 * Redis's listpack scans too. Why (2026-11-26, 100k sets of ten short members): as tree + index
 * each set grew RSS by 2,547 bytes (a tree's root leaf, a Map, a string for every member),
 * packed by 680, Redis's by 155; and ZSCORE, ZADD, ZRANGE and ZINCRBY on them at -P 16 ran
 * 1.4–2.1× as fast packed (fewer cache misses).
 *
 * The arrays are exactly as long as their pairs: adding or removing a pair makes new ones (a
 * listpack reallocates too); a new score for a member moves pairs within them.
 */
import { compactValueBytesMax } from "../../encoding.ts";
import { compareShort, shortAt, shortEquals, skipShort, writeShort } from "../short-strings.ts";
import { FrozenRun, type TreeEntry } from "./btree.ts";

/** The longest member a packed set holds: Redis's zset-max-listpack-value. */
export const packedMemberBytesMax = compactValueBytesMax;

const noScores = new Float64Array(0);
const noMembers = new Uint8Array(0);

/** Whether the pair (score, member at `at`) sorts before (score2, member2). */
function sortsBefore(score: number, bytes: Uint8Array, at: number, score2: number, member2: string): boolean {
  return score < score2 || (score === score2 && compareShort(bytes, at, member2) < 0);
}

export class PackedPairs {
  private scores: Float64Array = noScores;
  private members: Uint8Array = noMembers;

  get length(): number {
    return this.scores.length;
  }

  get first(): TreeEntry | null {
    return this.length === 0 ? null : { score: this.scores[0]!, member: this.memberAt(0) };
  }

  get last(): TreeEntry | null {
    const n = this.length;
    return n === 0 ? null : { score: this.scores[n - 1]!, member: this.memberAt(this.offsetOf(n - 1)) };
  }

  /** The member whose length byte is at `at`. */
  private memberAt(at: number): string {
    return shortAt(this.members, at);
  }

  /** Where the member of 0-based rank `rank` starts (its length byte); members.length past the last. */
  private offsetOf(rank: number): number {
    let at = 0;
    for (let i = 0; i < rank; i++) at = skipShort(this.members, at);
    return at;
  }

  /** The score of `member`, or undefined: the lookup an index would answer, by scanning. */
  scoreOf(member: string): number | undefined {
    const bytes = this.members;
    for (let i = 0, at = 0; i < this.scores.length; i++, at += 1 + bytes[at]!) {
      if (shortEquals(bytes, at, member)) return this.scores[i]!;
    }
    return undefined;
  }

  /**
   * The rank of the first pair at or after (score, member), and where its member starts; parked
   * in `found` to spare an allocation.
   */
  private lowerBound(score: number, member: string): void {
    const { scores, members } = this;
    let i = 0;
    let at = 0;
    for (; i < scores.length && sortsBefore(scores[i]!, members, at, score, member); i++) at = skipShort(members, at);
    found.rank = i;
    found.at = at;
  }

  /** Whether the pair at the last lowerBound is exactly (score, member). */
  private holdsFound(score: number, member: string): boolean {
    return found.rank < this.length && this.scores[found.rank] === score && shortEquals(this.members, found.at, member);
  }

  insert(score: number, member: string): void {
    this.lowerBound(score, member);
    const { rank, at } = found;
    const n = this.length;
    const scores = new Float64Array(n + 1);
    scores.set(this.scores.subarray(0, rank));
    scores[rank] = score;
    scores.set(this.scores.subarray(rank), rank + 1);
    const members = new Uint8Array(this.members.length + 1 + member.length);
    members.set(this.members.subarray(0, at));
    members[at] = member.length;
    writeShort(members, at, member);
    members.set(this.members.subarray(at), at + 1 + member.length);
    this.scores = scores;
    this.members = members;
  }

  /** Removes the pair; returns whether it was there. */
  delete(score: number, member: string): boolean {
    this.lowerBound(score, member);
    if (!this.holdsFound(score, member)) return false;
    this.cut(found.rank, found.at, 1);
    return true;
  }

  /** Removes `n` pairs from rank `rank`, whose first member starts at `at`. */
  private cut(rank: number, at: number, n: number): void {
    let end = at;
    for (let i = 0; i < n; i++) end = skipShort(this.members, end);
    const scores = new Float64Array(this.length - n);
    scores.set(this.scores.subarray(0, rank));
    scores.set(this.scores.subarray(rank + n), rank);
    const members = new Uint8Array(this.members.length - (end - at));
    members.set(this.members.subarray(0, at));
    members.set(this.members.subarray(end), at);
    this.scores = scores;
    this.members = members;
  }

  /**
   * Gives `member` its new score, in place: the pairs between its old and new places move over
   * by one (ZINCRBY on a small set reallocates nothing).
   */
  updateScore(member: string, oldScore: number, newScore: number): void {
    this.lowerBound(oldScore, member);
    if (!this.holdsFound(oldScore, member)) throw new Error("packed zset: no such pair to update");
    const { scores, members } = this;
    const from = found.rank;
    const fromAt = found.at;
    const width = 1 + member.length;
    // Moving up: past the pairs after it that now sort before it.
    let to = from;
    let end = fromAt + width;
    while (to + 1 < scores.length && sortsBefore(scores[to + 1]!, members, end, newScore, member)) {
      to++;
      end = skipShort(members, end);
    }
    if (to > from) {
      scores.copyWithin(from, from + 1, to + 1);
      scores[to] = newScore;
      members.copyWithin(fromAt, fromAt + width, end);
      writeShort(members, end - width, member);
      return;
    }
    // Moving down: before the first pair that sorts after it.
    let at = 0;
    let rank = 0;
    for (; rank < from && sortsBefore(scores[rank]!, members, at, newScore, member); rank++) at = skipShort(members, at);
    scores.copyWithin(rank + 1, rank, from);
    scores[rank] = newScore;
    if (rank < from) {
      members.copyWithin(at + width, at, fromAt);
      writeShort(members, at, member);
    }
  }

  /** The 0-based rank of the pair, or -1 when it is not here. */
  rankOf(score: number, member: string): number {
    this.lowerBound(score, member);
    return this.holdsFound(score, member) ? found.rank : -1;
  }

  /** The pair at a 0-based rank, or null outside 0..length-1. */
  at(rank: number): TreeEntry | null {
    if (!(rank >= 0 && rank < this.length)) return null;
    return { score: this.scores[rank]!, member: this.memberAt(this.offsetOf(rank)) };
  }

  /** How many pairs, from the first, satisfy `holds` (see BTree.countWhile). */
  countWhile(holds: (score: number, member: string) => boolean): number {
    let i = 0;
    for (let at = 0; i < this.length; i++, at = skipShort(this.members, at)) {
      if (!holds(this.scores[i]!, this.memberAt(at))) break;
    }
    return i;
  }

  /** As BTree.walk: `visit` from 0-based `rank` on, ascending or descending, until it returns false. */
  walk(rank: number, reverse: boolean, visit: (score: number, member: string) => boolean): void {
    if (!(rank >= 0 && rank < this.length)) return;
    // Members are read front to back: going down, find where each starts first.
    const starts = reverse ? this.starts(rank + 1) : null;
    let at = reverse ? 0 : this.offsetOf(rank);
    for (let i = rank; reverse ? i >= 0 : i < this.length; reverse ? i-- : i++) {
      if (reverse) at = starts![i]!;
      if (!visit(this.scores[i]!, this.memberAt(at))) return;
      if (!reverse) at = skipShort(this.members, at);
    }
  }

  /** Where each of the first `n` members starts. */
  private starts(n: number): number[] {
    const out: number[] = [];
    for (let i = 0, at = 0; i < n; i++, at = skipShort(this.members, at)) out.push(at);
    return out;
  }

  /** The pairs from 0-based `rank` on, as they are now: copied (updateScore writes in place). */
  freezeFrom(rank: number): FrozenRun {
    if (rank >= this.length) return new FrozenRun([], 0);
    const members: string[] = [];
    for (let i = 0, at = 0; i < this.length; i++, at = skipShort(this.members, at)) members.push(this.memberAt(at));
    return new FrozenRun([{ scores: this.scores.slice(), members, size: this.length }], Math.max(0, rank));
  }

  /** The pairs in order (or reverse order). */
  *entries(reverse = false): Generator<TreeEntry> {
    const pairs: TreeEntry[] = [];
    this.walk(0, false, (score, member) => {
      pairs.push({ score, member });
      return true;
    });
    if (reverse) pairs.reverse();
    yield* pairs;
  }

  /** As BTree.deleteRange: removes `n` pairs from rank `start`, calling `removed` for each first. */
  deleteRange(start: number, n: number, removed: (score: number, member: string) => void): number {
    if (start < 0) start = 0;
    const total = Math.max(0, Math.min(n, this.length - start));
    if (total === 0) return 0;
    const at = this.offsetOf(start);
    for (let i = start, m = at; i < start + total; i++, m = skipShort(this.members, m)) removed(this.scores[i]!, this.memberAt(m));
    this.cut(start, at, total);
    return total;
  }

  /** Checks the order and the member bytes (for tests). */
  validate(): void {
    let at = 0;
    let previous: TreeEntry | null = null;
    for (let i = 0; i < this.length; i++) {
      if (at >= this.members.length) throw new Error("packed zset: fewer members than scores");
      const entry = { score: this.scores[i]!, member: this.memberAt(at) };
      if (previous !== null && (previous.score > entry.score || (previous.score === entry.score && previous.member >= entry.member))) {
        throw new Error(`packed zset: out of order at rank ${i}`);
      }
      previous = entry;
      at = skipShort(this.members, at);
    }
    if (at !== this.members.length) throw new Error("packed zset: more member bytes than scores");
  }
}

/** Where the last lowerBound stopped: a rank and its member's offset. */
const found = { rank: 0, at: 0 };
