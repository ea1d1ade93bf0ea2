/**
 * The ordered half of a sorted set: a skip list of (score, member) pairs, ordered by score and
 * then by member (latin1 byte strings, so plain `<` is memcmp order).
 *
 * Design. A skip list (Pugh, 1990) keeps its nodes in one sorted linked list — level 0 — plus
 * sparser "express lanes" above it: each node gets a random height, P(height > k) = 1/4^k, so
 * searches skip most of the list and take O(log n) expected steps. Every link also records its
 * *span*, the number of level-0 steps it jumps over. Summing spans along a search path gives a
 * node's rank, and following spans finds the node at a rank, both in O(log n) — which is what
 * ZRANK, ZRANGE by index and ZCOUNT (rank of last minus rank of first) need. A `backward`
 * pointer on level 0 lets reverse ranges walk from the tail.
 *
 * Why a skip list rather than a balanced tree: range queries are a search followed by a plain
 * walk along level 0, insertion and deletion touch only the predecessors found by the search
 * (no rotations), and rank bookkeeping is a couple of additions per level. The list does not
 * know members' scores by name; ZSet pairs it with a Map for O(1) member → score.
 *
 * Span invariant: for a node x and level i with a successor y = x.forward[i], x.span[i] is
 * rank(y) - rank(x) (the head has rank 0). Spans of links to nothing are kept as
 * length - rank(x) so that inserting and deleting can update all levels uniformly; nothing
 * reads them.
 */

/** Enough levels for 4^32 elements: far beyond anything that fits in memory. */
const maxLevel = 32;
/** The chance that a node reaches one level higher; 1/4 gives ~1.33 links per node. */
const levelUpChance = 0.25;

/** The upper links of the three nodes in four that have none (never written to). */
const noLinks: (SkipNode | null)[] = [];
const noSpans: number[] = [];

/**
 * One element. Level 0 is kept in plain fields — every node is on it, its links always span one
 * step, and three nodes in four are on no other level — so most nodes need no arrays at all, and
 * a search's last, longest stretch reads only the nodes themselves. Levels 1 and up live in two
 * small arrays, indexed by level - 1.
 */
export class SkipNode {
  /** The previous node on level 0; null for the first node. */
  backward: SkipNode | null = null;
  /** The next node on level 0, or null at the end. */
  next: SkipNode | null = null;
  /** Successors on levels 1..height-1, at index level - 1. */
  readonly up: (SkipNode | null)[];
  /** Level-0 steps each upper link jumps (see the span invariant above). */
  readonly upSpan: number[];

  constructor(
    readonly member: string,
    /** Changed only by SkipList.updateScore, when the node keeps its place. */
    public score: number,
    height: number,
  ) {
    this.up = height > 1 ? new Array<SkipNode | null>(height - 1).fill(null) : noLinks;
    this.upSpan = height > 1 ? new Array<number>(height - 1).fill(0) : noSpans;
  }

  get height(): number {
    return this.up.length + 1;
  }

  /** The successor on a level, or null at the end (or above this node's height). */
  link(level: number): SkipNode | null {
    return level === 0 ? this.next : (this.up[level - 1] ?? null);
  }

  /** Level-0 steps the link on `level` jumps. */
  span(level: number): number {
    return level === 0 ? 1 : this.upSpan[level - 1]!;
  }

  setLink(level: number, node: SkipNode | null): void {
    if (level === 0) this.next = node;
    else this.up[level - 1] = node;
  }

  /** Sets an upper link's span; level 0 spans are always 1 and not stored. */
  setSpan(level: number, span: number): void {
    if (level > 0) this.upSpan[level - 1] = span;
  }
}

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

// ---- range predicates ---------------------------------------------------------------------------

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

// ---- the list -----------------------------------------------------------------------------------

/** Whether `node` sorts strictly before the pair (score, member). */
const before = (node: SkipNode, score: number, member: string) =>
  node.score < score || (node.score === score && node.member < member);

function randomHeight(): number {
  let height = 1;
  while (height < maxLevel && Math.random() < levelUpChance) height++;
  return height;
}

export class SkipList {
  /** A sentinel before the first node, as tall as any node can be; its own fields are unused. */
  private readonly head = new SkipNode("", -Infinity, maxLevel);
  private tail: SkipNode | null = null;
  /** Levels in use: the height of the tallest node (at least 1). */
  private levels = 1;
  private count = 0;

  get length(): number {
    return this.count;
  }

  get first(): SkipNode | null {
    return this.head.next;
  }

  get last(): SkipNode | null {
    return this.tail;
  }

  /**
   * The last node on each level that sorts before (score, member), found top-down, with each
   * one's rank; the node for (score, member) itself, if present, is `update[0].next`.
   */
  private predecessors(score: number, member: string): { update: SkipNode[]; rank: number[] } {
    const update = new Array<SkipNode>(this.levels);
    const rank = new Array<number>(this.levels);
    let x = this.head;
    let traversed = 0;
    for (let i = this.levels - 1; i >= 0; i--) {
      let next = x.link(i);
      while (next !== null && before(next, score, member)) {
        traversed += x.span(i);
        x = next;
        next = x.link(i);
      }
      update[i] = x;
      rank[i] = traversed;
    }
    return { update, rank };
  }

  /** Adds a pair; the caller guarantees the member is not in the list already. */
  insert(score: number, member: string): SkipNode {
    const { update, rank } = this.predecessors(score, member);
    const height = randomHeight();
    // New levels start at the head, which spans the whole list on them.
    for (let i = this.levels; i < height; i++) {
      update[i] = this.head;
      rank[i] = 0;
      this.head.setSpan(i, this.count);
    }
    if (height > this.levels) this.levels = height;

    const node = new SkipNode(member, score, height);
    const newRank = rank[0]! + 1;
    for (let i = 0; i < height; i++) {
      const prev = update[i]!;
      node.setLink(i, prev.link(i));
      prev.setLink(i, node);
      // prev used to jump span(i) steps; the node now sits (newRank - rank[i]) steps after
      // prev, and the old target is one step further away than before.
      node.setSpan(i, prev.span(i) - (newRank - rank[i]!) + 1);
      prev.setSpan(i, newRank - rank[i]!);
    }
    // Links above the new node's height now jump over one more node.
    for (let i = height; i < this.levels; i++) update[i]!.setSpan(i, update[i]!.span(i) + 1);

    node.backward = update[0] === this.head ? null : update[0]!;
    if (node.next !== null) node.next.backward = node;
    else this.tail = node;
    this.count++;
    return node;
  }

  /** Unlinks `node`, given its predecessors on every level in use. */
  private unlink(node: SkipNode, update: SkipNode[]): void {
    for (let i = 0; i < this.levels; i++) {
      const prev = update[i]!;
      if (prev.link(i) === node) {
        prev.setSpan(i, prev.span(i) + node.span(i) - 1);
        prev.setLink(i, node.link(i));
      } else {
        prev.setSpan(i, prev.span(i) - 1);
      }
    }
    if (node.next !== null) node.next.backward = node.backward;
    else this.tail = node.backward;
    while (this.levels > 1 && this.head.link(this.levels - 1) === null) this.levels--;
    this.count--;
  }

  /** Removes the pair; returns whether it was there. */
  delete(score: number, member: string): boolean {
    const { update } = this.predecessors(score, member);
    const node = update[0]!.next;
    if (node === null || node.score !== score || node.member !== member) return false;
    this.unlink(node, update);
    return true;
  }

  /**
   * Moves a member from `oldScore` to `newScore`. When the new score keeps the node between its
   * neighbours the score is changed in place — the common case for small increments — otherwise
   * the node is unlinked and inserted afresh.
   */
  updateScore(member: string, oldScore: number, newScore: number): SkipNode {
    const { update } = this.predecessors(oldScore, member);
    const node = update[0]!.next;
    if (node === null || node.score !== oldScore || node.member !== member) {
      throw new Error(`skiplist: no element ${JSON.stringify(member)} with score ${oldScore}`);
    }
    const prev = node.backward;
    const next = node.next;
    const afterPrev = prev === null || before(prev, newScore, member);
    const beforeNext = next === null || newScore < next.score || (newScore === next.score && member < next.member);
    if (afterPrev && beforeNext) {
      node.score = newScore;
      return node;
    }
    this.unlink(node, update);
    return this.insert(newScore, member);
  }

  /** The 1-based rank of the pair, or 0 when it is not in the list. */
  rankOf(score: number, member: string): number {
    let x = this.head;
    let rank = 0;
    for (let i = this.levels - 1; i >= 0; i--) {
      let next = x.link(i);
      while (next !== null && (before(next, score, member) || (next.score === score && next.member === member))) {
        rank += x.span(i);
        x = next;
        next = x.link(i);
      }
      if (x !== this.head && x.member === member && x.score === score) return rank;
    }
    return 0;
  }

  /** The node at a 1-based rank, or null outside 1..length. */
  nodeAt(rank: number): SkipNode | null {
    if (rank < 1 || rank > this.count) return null;
    let x = this.head;
    let traversed = 0;
    for (let i = this.levels - 1; i >= 0; i--) {
      let next = x.link(i);
      while (next !== null && traversed + x.span(i) <= rank) {
        traversed += x.span(i);
        x = next;
        next = x.link(i);
      }
      if (traversed === rank) return x;
    }
    return null;
  }

  /**
   * The last node on each level for which `stop` is false for its successor, top-down: the
   * predecessors of the first node where `stop` holds, given that it holds from there on.
   */
  private walk(stop: (node: SkipNode) => boolean): SkipNode[] {
    const update = new Array<SkipNode>(this.levels);
    let x = this.head;
    for (let i = this.levels - 1; i >= 0; i--) {
      let next = x.link(i);
      while (next !== null && !stop(next)) {
        x = next;
        next = x.link(i);
      }
      update[i] = x;
    }
    return update;
  }

  // ---- score ranges ---------------------------------------------------------------------------

  /** Whether any element could fall in the range: a cheap test against the two ends. */
  private touchesScoreRange(range: ScoreRange): boolean {
    if (scoreRangeIsEmpty(range) || this.tail === null) return false;
    return scoreAboveMin(this.tail.score, range) && scoreBelowMax(this.first!.score, range);
  }

  /** The first node whose score is in the range, or null. */
  firstInScoreRange(range: ScoreRange): SkipNode | null {
    if (!this.touchesScoreRange(range)) return null;
    const node = this.walk((n) => scoreAboveMin(n.score, range))[0]!.next;
    return node !== null && scoreBelowMax(node.score, range) ? node : null;
  }

  /** The last node whose score is in the range, or null. */
  lastInScoreRange(range: ScoreRange): SkipNode | null {
    if (!this.touchesScoreRange(range)) return null;
    const x = this.walk((n) => !scoreBelowMax(n.score, range))[0]!;
    return x !== this.head && scoreAboveMin(x.score, range) ? x : null;
  }

  // ---- lex ranges -----------------------------------------------------------------------------
  // Meaningful when all scores are equal (then members are in order), as ZRANGEBYLEX documents;
  // with mixed scores the searches still terminate and answer something, as in Redis.

  private touchesLexRange(range: LexRange): boolean {
    if (lexRangeIsEmpty(range) || this.tail === null) return false;
    return lexAboveMin(this.tail.member, range.min) && lexBelowMax(this.first!.member, range.max);
  }

  firstInLexRange(range: LexRange): SkipNode | null {
    if (!this.touchesLexRange(range)) return null;
    const node = this.walk((n) => lexAboveMin(n.member, range.min))[0]!.next;
    return node !== null && lexBelowMax(node.member, range.max) ? node : null;
  }

  lastInLexRange(range: LexRange): SkipNode | null {
    if (!this.touchesLexRange(range)) return null;
    const x = this.walk((n) => !lexBelowMax(n.member, range.max))[0]!;
    return x !== this.head && lexAboveMin(x.member, range.min) ? x : null;
  }

  // ---- bulk removal ---------------------------------------------------------------------------
  // Each finds the predecessors of the first victim once, then unlinks victims one after another:
  // after an unlink the same predecessors precede the next victim, so no further searching.

  private removeRun(update: SkipNode[], keep: (node: SkipNode) => boolean, removed: (node: SkipNode) => void): number {
    let n = 0;
    let node = update[0]!.next;
    while (node !== null && keep(node)) {
      const next = node.next;
      this.unlink(node, update);
      removed(node);
      n++;
      node = next;
    }
    return n;
  }

  /** Removes every node with a score in the range, calling `removed` for each; returns the count. */
  deleteScoreRange(range: ScoreRange, removed: (node: SkipNode) => void): number {
    if (!this.touchesScoreRange(range)) return 0;
    const update = this.walk((node) => scoreAboveMin(node.score, range));
    return this.removeRun(update, (node) => scoreBelowMax(node.score, range), removed);
  }

  deleteLexRange(range: LexRange, removed: (node: SkipNode) => void): number {
    if (!this.touchesLexRange(range)) return 0;
    const update = this.walk((node) => lexAboveMin(node.member, range.min));
    return this.removeRun(update, (node) => lexBelowMax(node.member, range.max), removed);
  }

  /** Removes the nodes with 1-based ranks start..end inclusive; returns the count. */
  deleteRankRange(start: number, end: number, removed: (node: SkipNode) => void): number {
    if (start < 1) start = 1;
    if (end > this.count) end = this.count;
    if (start > end) return 0;
    const update = new Array<SkipNode>(this.levels);
    let x = this.head;
    let traversed = 0;
    for (let i = this.levels - 1; i >= 0; i--) {
      let next = x.link(i);
      while (next !== null && traversed + x.span(i) < start) {
        traversed += x.span(i);
        x = next;
        next = x.link(i);
      }
      update[i] = x;
    }
    let rank = traversed + 1;
    return this.removeRun(update, () => rank++ <= end, removed);
  }

  // ---- walking --------------------------------------------------------------------------------

  /** Nodes in order (or reverse order) starting at `from` (default: the first, or the last). */
  *nodes(reverse = false, from: SkipNode | null = reverse ? this.tail : this.first): Generator<SkipNode> {
    for (let node = from; node !== null; node = reverse ? node.backward : node.next) yield node;
  }

  /**
   * Checks the structure (order, spans, backward links, tail, length); throws on the first
   * inconsistency. For tests: it walks every level, O(n log n).
   */
  validate(): void {
    const rankOf = new Map<SkipNode, number>([[this.head, 0]]);
    let prev: SkipNode | null = null;
    let rank = 0;
    for (let node = this.first; node !== null; node = node.next) {
      rank++;
      rankOf.set(node, rank);
      if (node.backward !== prev) throw new Error(`skiplist: bad backward link at rank ${rank}`);
      if (prev !== null && !before(prev, node.score, node.member)) throw new Error(`skiplist: out of order at rank ${rank}`);
      if (Number.isNaN(node.score)) throw new Error(`skiplist: NaN score at rank ${rank}`);
      if (node.up.length !== node.upSpan.length || node.height > maxLevel) throw new Error(`skiplist: bad height at rank ${rank}`);
      prev = node;
    }
    if (rank !== this.count) throw new Error(`skiplist: length ${this.count} but ${rank} nodes`);
    if (this.tail !== prev) throw new Error("skiplist: bad tail");
    if (noLinks.length !== 0 || noSpans.length !== 0) throw new Error("skiplist: shared empty links written to");
    for (let i = 0; i < maxLevel; i++) {
      if (i >= this.levels) {
        if (this.head.link(i) !== null) throw new Error(`skiplist: link above the level count at ${i}`);
        continue;
      }
      for (let x: SkipNode | null = this.head; x !== null; x = x.link(i)) {
        const next: SkipNode | null = x.link(i);
        if (next === null) break;
        if (next.height <= i) throw new Error(`skiplist: node linked above its height at level ${i}`);
        if (x.span(i) !== rankOf.get(next)! - rankOf.get(x)!) throw new Error(`skiplist: bad span at level ${i}, rank ${rankOf.get(x)}`);
      }
    }
    if (this.levels > 1 && this.head.link(this.levels - 1) === null) throw new Error("skiplist: empty top level");
  }
}
