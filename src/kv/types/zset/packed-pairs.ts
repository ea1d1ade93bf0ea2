/**
 * A small sorted set's (score, member) pairs packed into one byte array, as Redis packs a small
 * sorted set into a listpack: pair after pair in the set's order (by score, then by member's
 * bytes), each the member after its length byte (short-strings.ts) and then the score's 8 bytes.
 * A set stays packed while Redis would keep its listpack: at most compactEntriesMax members, none
 * longer than packedItemBytesMax bytes (zset.ts moves it to the tree and index past either).
 *
 * It answers what the tree answers (btree.ts), by scanning: there are at most 128 pairs, and
 * Redis's listpack scans too. Why (2026-11-26, 100k sets of ten short members): as tree + index
 * each set grew RSS by 2,547 bytes (a tree's root leaf, a Map, a string for every member), with
 * its scores and members in two packed arrays by 680, in one by 644 (Redis's: 151); ZSCORE,
 * ZADD, ZRANGE and ZINCRBY on them at -P 16 ran 1.4–2.1× as fast packed (fewer cache misses).
 *
 * The array is exactly as long as its pairs: adding or removing a pair makes a new one (a
 * listpack reallocates too); a new score for a member moves pairs within it.
 */
import { compareShort, noShorts, shortAt, shortEquals, spliceBytes, writeShort } from "../short-strings.ts";
import { objectBytes, typedArrayBytes } from "../memory-sizes.ts";
import { FrozenRun, type TreeEntry } from "./btree.ts";

/** A score's bytes after its member: a double as this machine stores it (never leaves the process). */
const scoreBytes = 8;
const scratch = new Float64Array(1);
const scratchBytes = new Uint8Array(scratch.buffer);

/** Where the pair after the one at `at` starts. */
const skipPair = (bytes: Uint8Array, at: number): number => at + 1 + bytes[at]! + scoreBytes;

/** The score of the pair at `at`. */
function scoreAt(bytes: Uint8Array, at: number): number {
  const from = at + 1 + bytes[at]!;
  for (let i = 0; i < scoreBytes; i++) scratchBytes[i] = bytes[from + i]!;
  return scratch[0]!;
}

/** Writes the pair (score, member) at `at`; returns the offset after it. */
function writePair(bytes: Uint8Array, at: number, score: number, member: string): number {
  const from = writeShort(bytes, at, member);
  scratch[0] = score;
  for (let i = 0; i < scoreBytes; i++) bytes[from + i] = scratchBytes[i]!;
  return from + scoreBytes;
}

/** Whether the pair at `at` sorts before (score, member). */
function sortsBefore(bytes: Uint8Array, at: number, score: number, member: string): boolean {
  const s = scoreAt(bytes, at);
  return s < score || (s === score && compareShort(bytes, at, member) < 0);
}

/** Where the last lowerBound stopped: a rank and where its pair starts. */
const found = { rank: 0, at: 0 };

export class PackedPairs {
  private bytes: Uint8Array = noShorts;
  private count = 0;

  /** Estimated bytes (MEMORY USAGE). */
  memoryBytes(): number {
    return objectBytes(2) + typedArrayBytes(this.bytes.byteLength);
  }

  get length(): number {
    return this.count;
  }

  get first(): TreeEntry | null {
    return this.count === 0 ? null : this.pairAt(0);
  }

  get last(): TreeEntry | null {
    return this.count === 0 ? null : this.pairAt(this.offsetOf(this.count - 1));
  }

  private pairAt(at: number): TreeEntry {
    return { score: scoreAt(this.bytes, at), member: shortAt(this.bytes, at) };
  }

  /** Where the pair of 0-based rank `rank` starts; bytes.length past the last. */
  private offsetOf(rank: number): number {
    let at = 0;
    for (let i = 0; i < rank; i++) at = skipPair(this.bytes, at);
    return at;
  }

  /** The score of `member`, or undefined: the lookup an index would answer, by scanning. */
  scoreOf(member: string): number | undefined {
    const bytes = this.bytes;
    for (let at = 0; at < bytes.length; at = skipPair(bytes, at)) if (shortEquals(bytes, at, member)) return scoreAt(bytes, at);
    return undefined;
  }

  /** The rank of the first pair at or after (score, member), and where it starts: into `found`. */
  private lowerBound(score: number, member: string): void {
    const bytes = this.bytes;
    let rank = 0;
    let at = 0;
    for (; rank < this.count && sortsBefore(bytes, at, score, member); rank++) at = skipPair(bytes, at);
    found.rank = rank;
    found.at = at;
  }

  /** Whether the pair at the last lowerBound is exactly (score, member). */
  private holdsFound(score: number, member: string): boolean {
    return found.rank < this.count && scoreAt(this.bytes, found.at) === score && shortEquals(this.bytes, found.at, member);
  }

  insert(score: number, member: string): void {
    this.lowerBound(score, member);
    const at = found.at;
    this.bytes = spliceBytes(this.bytes, at, at, 1 + member.length + scoreBytes);
    writePair(this.bytes, at, score, member);
    this.count++;
  }

  /** Fills an empty set with `pairs` (distinct members) in one new array. */
  fill(pairs: readonly TreeEntry[]): void {
    if (this.count !== 0) throw new Error("packed zset: fill is for an empty set");
    const sorted = [...pairs].sort((a, b) => a.score - b.score || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
    let length = 0;
    for (const pair of sorted) length += 1 + pair.member.length + scoreBytes;
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const pair of sorted) at = writePair(bytes, at, pair.score, pair.member);
    this.bytes = bytes;
    this.count = sorted.length;
  }

  /** Removes the pair; returns whether it was there. */
  delete(score: number, member: string): boolean {
    this.lowerBound(score, member);
    if (!this.holdsFound(score, member)) return false;
    this.cut(found.at, 1);
    return true;
  }

  /** Removes `n` pairs from the one starting at `at`. */
  private cut(at: number, n: number): void {
    let end = at;
    for (let i = 0; i < n; i++) end = skipPair(this.bytes, end);
    this.bytes = spliceBytes(this.bytes, at, end, 0);
    this.count -= n;
  }

  /**
   * Gives `member` its new score, in place: the pairs between its old and new places move over
   * by one pair's width (ZINCRBY on a small set reallocates nothing).
   */
  updateScore(member: string, oldScore: number, newScore: number): void {
    this.lowerBound(oldScore, member);
    if (!this.holdsFound(oldScore, member)) throw new Error("packed zset: no such pair to update");
    const bytes = this.bytes;
    const from = found.rank;
    const fromAt = found.at;
    const width = 1 + member.length + scoreBytes;
    // Moving up: past the pairs after it that now sort before it.
    let to = from;
    let end = fromAt + width;
    while (to + 1 < this.count && sortsBefore(bytes, end, newScore, member)) {
      to++;
      end = skipPair(bytes, end);
    }
    if (to > from) {
      bytes.copyWithin(fromAt, fromAt + width, end);
      writePair(bytes, end - width, newScore, member);
      return;
    }
    // Moving down: before the first pair that sorts after it.
    let at = 0;
    for (let rank = 0; rank < from && sortsBefore(bytes, at, newScore, member); rank++) at = skipPair(bytes, at);
    bytes.copyWithin(at + width, at, fromAt);
    writePair(bytes, at, newScore, member);
  }

  /** The 0-based rank of the pair, or -1 when it is not here. */
  rankOf(score: number, member: string): number {
    this.lowerBound(score, member);
    return this.holdsFound(score, member) ? found.rank : -1;
  }

  /** The pair at a 0-based rank, or null outside 0..length-1. */
  at(rank: number): TreeEntry | null {
    if (!(rank >= 0 && rank < this.count)) return null;
    return this.pairAt(this.offsetOf(rank));
  }

  /** How many pairs, from the first, satisfy `holds` (see BTree.countWhile). */
  countWhile(holds: (score: number, member: string) => boolean): number {
    const bytes = this.bytes;
    let rank = 0;
    for (let at = 0; rank < this.count; rank++, at = skipPair(bytes, at)) {
      if (!holds(scoreAt(bytes, at), shortAt(bytes, at))) break;
    }
    return rank;
  }

  /** As BTree.walk: `visit` from 0-based `rank` on, ascending or descending, until it returns false. */
  walk(rank: number, reverse: boolean, visit: (score: number, member: string) => boolean): void {
    if (!(rank >= 0 && rank < this.count)) return;
    const bytes = this.bytes;
    if (!reverse) {
      for (let i = rank, at = this.offsetOf(rank); i < this.count; i++, at = skipPair(bytes, at)) {
        if (!visit(scoreAt(bytes, at), shortAt(bytes, at))) return;
      }
      return;
    }
    // Pairs are read front to back: going down, find where each starts first.
    const starts: number[] = [];
    for (let i = 0, at = 0; i <= rank; i++, at = skipPair(bytes, at)) starts.push(at);
    for (let i = rank; i >= 0; i--) if (!visit(scoreAt(bytes, starts[i]!), shortAt(bytes, starts[i]!))) return;
  }

  /** The pairs from 0-based `rank` on, as they are now (copied out). */
  freezeFrom(rank: number): FrozenRun {
    if (rank >= this.count) return new FrozenRun([], 0);
    const scores = new Float64Array(this.count);
    const members: string[] = [];
    for (let i = 0, at = 0; i < this.count; i++, at = skipPair(this.bytes, at)) {
      scores[i] = scoreAt(this.bytes, at);
      members.push(shortAt(this.bytes, at));
    }
    return new FrozenRun([{ scores, members, size: this.count }], Math.max(0, rank));
  }

  /** The pairs in order (or reverse order). */
  *entries(reverse = false): Generator<TreeEntry> {
    const pairs: TreeEntry[] = [];
    for (let at = 0; at < this.bytes.length; at = skipPair(this.bytes, at)) pairs.push(this.pairAt(at));
    if (reverse) pairs.reverse();
    yield* pairs;
  }

  /** As BTree.deleteRange: removes `n` pairs from rank `start`, calling `removed` for each first. */
  deleteRange(start: number, n: number, removed: (score: number, member: string) => void): number {
    if (start < 0) start = 0;
    const total = Math.max(0, Math.min(n, this.count - start));
    if (total === 0) return 0;
    const at = this.offsetOf(start);
    for (let i = 0, p = at; i < total; i++, p = skipPair(this.bytes, p)) removed(scoreAt(this.bytes, p), shortAt(this.bytes, p));
    this.cut(at, total);
    return total;
  }

  /** Checks the order and the bytes (for tests). */
  validate(): void {
    let at = 0;
    let previous: TreeEntry | null = null;
    for (let i = 0; i < this.count; i++) {
      if (at >= this.bytes.length) throw new Error("packed zset: fewer pairs than counted");
      const pair = this.pairAt(at);
      if (previous !== null && (previous.score > pair.score || (previous.score === pair.score && previous.member >= pair.member))) {
        throw new Error(`packed zset: out of order at rank ${i}`);
      }
      previous = pair;
      at = skipPair(this.bytes, at);
    }
    if (at !== this.bytes.length) throw new Error("packed zset: more bytes than pairs");
  }
}
