/**
 * The ordered half of a sorted set: a counted B+tree of (score, member) pairs, ordered by score
 * and then by member (latin1 byte strings, so plain `<` is memcmp order; -0 and 0 are equal
 * scores, as `===` and `<` treat them).
 *
 * Why not a skip list. Redis uses one, and so did we, but in JS each skip-list node is a separate
 * heap object with its upper links in separate arrays, so every step of a search is a cache miss
 * — at 100k members a ZADD cost ~5 µs here against ~1 µs in Redis. A B+tree turns those steps
 * into binary searches over small contiguous arrays, a few cache lines per level instead of a miss
 * per step, and is only three levels deep at 100k members (about 1.3 µs per ZADD).
 *
 * Design. Every node, leaf or inner, is one `Node` shape (so property reads stay monomorphic)
 * holding parallel arrays: `scores` (a Float64Array, which keeps -0 apart from 0 as the skiplist
 * encoding must) and `members` (string[]).
 *
 *   - A leaf holds up to `leafEntriesMax` elements in order. Leaves are also chained both ways,
 *     so a range is one search followed by a walk along the chain.
 *   - An inner node holds up to `innerChildrenMax` children, and per child a separator key (in
 *     `scores`/`members`) and the number of elements under it (`counts`). Those counts make this
 *     an order-statistic tree: rank → element and element → rank are one descent each, adding
 *     or subtracting the counts of the children passed over.
 *
 * Separators are lower bounds, not copies of each child's first key: for child i ≥ 1 the
 * separator is ≤ every key under child i and > every key under child i - 1 (slot 0's is never
 * read). Removing a child's first element therefore changes no separator, and a search for
 * "the first element where a monotone predicate fails" can still be steered by them
 * (`countWhile`). Nodes other than the root stay at least half full: an underfull node merges
 * with a sibling when the two fit in one node and otherwise shares the sibling's entries evenly.
 *
 * Like the skip list it replaces, the tree knows nothing about members' scores by name; ZSet
 * pairs it with a Map for member → score, and passes the old score to `delete` and `updateScore`.
 */
import { arrayBytes, objectBytes, sampledBytes, stringBytes, typedArrayBytes } from "../memory-sizes.ts";

/**
 * Elements per leaf at most. Larger leaves mean fewer levels and fewer misses per search but
 * more entries shifted per insert or delete. For ZADD on 100k members 32 was slower (one level
 * more) and 48 to 128 measured alike; 64 keeps the shifts short.
 */
export const leafEntriesMax = 64;
/** Children per inner node at most; 64 keeps 100k members within three levels. */
export const innerChildrenMax = 64;
/** Node capacities below this would let non-root nodes fall to one entry (min = max / 2). */
const nodeSlotsMin = 4;
/**
 * Slots a new tree's root leaf starts with; it doubles up to a full leaf as it fills. Most sorted
 * sets are small, and a full leaf's two 65-slot arrays would cost them over 1 KiB each.
 */
const rootLeafSlotsInitial = 8;
/**
 * Levels the tree may reach. Non-root nodes are at least half full, so even at the smallest
 * capacity (tests use 4) this many levels hold far more elements than memory can.
 */
const heightMax = 48;

/** One element, as `at`, `first`, `last` and `entries` hand them out. */
export interface TreeEntry {
  readonly score: number;
  readonly member: string;
}

/** Node sizes, for tests that want small nodes so that a few hundred elements make a deep tree. */
export interface TreeShape {
  leafEntriesMax: number;
  innerChildrenMax: number;
}

const defaultShape: TreeShape = { leafEntriesMax, innerChildrenMax };

class Node {
  /** Leaf: the elements' scores. Inner: each child's separator's score. */
  scores: Float64Array;
  /** Leaf: the elements' members. Inner: each child's separator's member. Unused slots hold "". */
  members: string[];
  /** Inner nodes only: the children (unused slots null). */
  readonly children: (Node | null)[] | null;
  /** Inner nodes only: elements under each child. */
  readonly counts: Float64Array | null;
  /** Elements in a leaf, children in an inner node. */
  size = 0;
  /** Neighbouring leaves in key order (leaves only). */
  prev: Node | null = null;
  next: Node | null = null;
  /**
   * Leaves only: a FrozenRun holds this leaf's arrays as they are, so the tree copies them before
   * it next writes to them (writable). It stays set after the run is gone: one needless copy of a
   * leaf, at most, instead of telling the tree when a rewrite ends.
   */
  shared = false;

  /**
   * Full nodes get capacity + 1 slots: an insert lands first and the node splits after, when it
   * overflows. Only a lone root leaf is made smaller (see `grow`).
   */
  constructor(leaf: boolean, slots: number) {
    this.scores = new Float64Array(slots);
    this.members = new Array<string>(slots).fill("");
    this.children = leaf ? null : new Array<Node | null>(slots).fill(null);
    this.counts = leaf ? null : new Float64Array(slots);
  }
}

/** Gives a small root leaf twice the slots, up to a full leaf's. */
function grow(leaf: Node, slotsMax: number): void {
  const slots = Math.min(leaf.scores.length * 2, slotsMax);
  const scores = new Float64Array(slots);
  scores.set(leaf.scores);
  const members = new Array<string>(slots).fill("");
  for (let i = 0; i < leaf.size; i++) members[i] = leaf.members[i]!;
  leaf.scores = scores;
  leaf.members = members;
  leaf.shared = false;
}

/** Gives a leaf a FrozenRun holds copies of its arrays to write to; the run keeps the old ones. */
function writable(node: Node): void {
  if (!node.shared) return;
  node.scores = node.scores.slice();
  node.members = node.members.slice();
  node.shared = false;
}

// ---- slot helpers -------------------------------------------------------------------------------
// Each moves whole slots (key, and for inner nodes child and count) so leaves and inner nodes
// share them.

/** Whether (s1, m1) sorts before (s2, m2). */
const keyBefore = (s1: number, m1: string, s2: number, m2: string) => s1 < s2 || (s1 === s2 && m1 < m2);

/** Moves slots [at, size) right by `n`, leaving slots [at, at + n) for the caller to fill. */
function openGap(node: Node, at: number, n: number): void {
  writable(node);
  const { scores, members, children, counts } = node;
  const size = node.size;
  // Plain loops: for the few dozen slots of a node they beat copyWithin's native call.
  for (let i = size - 1; i >= at; i--) {
    scores[i + n] = scores[i]!;
    members[i + n] = members[i]!;
  }
  if (children !== null) {
    for (let i = size - 1; i >= at; i--) {
      counts![i + n] = counts![i]!;
      children[i + n] = children[i]!;
    }
  }
  node.size = size + n;
}

/** Removes slots [at, at + n), moving the rest left; vacated slots are cleared (no leaks). */
function closeGap(node: Node, at: number, n: number): void {
  writable(node);
  const { scores, members, children, counts } = node;
  const size = node.size;
  for (let i = at + n; i < size; i++) {
    scores[i - n] = scores[i]!;
    members[i - n] = members[i]!;
  }
  for (let i = size - n; i < size; i++) members[i] = "";
  if (children !== null) {
    for (let i = at + n; i < size; i++) {
      counts![i - n] = counts![i]!;
      children[i - n] = children[i]!;
    }
    for (let i = size - n; i < size; i++) children[i] = null;
  }
  node.size = size - n;
}

/** Copies `n` slots from src[from..] over dst[at..]; sizes are the caller's business. */
function copySlots(src: Node, from: number, dst: Node, at: number, n: number): void {
  writable(dst);
  for (let i = 0; i < n; i++) {
    dst.scores[at + i] = src.scores[from + i]!;
    dst.members[at + i] = src.members[from + i]!;
  }
  if (src.children !== null) {
    for (let i = 0; i < n; i++) {
      dst.children![at + i] = src.children[from + i]!;
      dst.counts![at + i] = src.counts![from + i]!;
    }
  }
}

/** Elements under slots [from, to) of an inner node, or in them for a leaf. */
function countSlots(node: Node, from: number, to: number): number {
  if (node.counts === null) return to - from;
  let n = 0;
  for (let i = from; i < to; i++) n += node.counts[i]!;
  return n;
}

/** In a leaf: how many elements sort before (score, member) — where it is, or would go. */
function lowerBound(node: Node, score: number, member: string): number {
  const { scores, members } = node;
  let lo = 0;
  let hi = node.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = scores[mid]!;
    if (s < score || (s === score && members[mid]! < member)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether slot `at` of a leaf (a lowerBound result) holds exactly (score, member). */
const holdsAt = (leaf: Node, at: number, score: number, member: string) => at < leaf.size && leaf.scores[at] === score && leaf.members[at] === member;

/** In an inner node: the child whose keys' interval holds (score, member). */
function route(node: Node, score: number, member: string): number {
  const { scores, members } = node;
  // The last separator at or below the key; slot 0's is not a separator.
  let lo = 1;
  let hi = node.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = scores[mid]!;
    if (s < score || (s === score && members[mid]! <= member)) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The number of leading slots of `node`, from `from` on, whose keys satisfy `holds` — a
 * predicate that is true for a prefix of the key order and false after it.
 */
function prefixWhile(node: Node, from: number, holds: (score: number, member: string) => boolean): number {
  let lo = from;
  let hi = node.size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(node.scores[mid]!, node.members[mid]!)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---- the tree -----------------------------------------------------------------------------------

/**
 * Where the last rank descent ended, within its leaf: a second return value, read straight after
 * the call (JS runs one call at a time), without allocating a pair.
 */
let foundIndex = 0;

/** One leaf's elements as a FrozenRun holds them. */
interface FrozenLeaf {
  readonly scores: Float64Array;
  readonly members: readonly string[];
  readonly size: number;
}

/** Elements as they were when BTree.freezeFrom made this, read in order a few at a time. */
export class FrozenRun {
  private leaf = 0;

  constructor(
    private readonly leaves: readonly FrozenLeaf[],
    /** Where the next element is in the current leaf. */
    private at: number,
  ) {}

  /** Calls `visit` for up to `max` more elements; returns whether none are left after them. */
  read(max: number, visit: (score: number, member: string) => void): boolean {
    for (let left = max; left > 0 && this.leaf < this.leaves.length; ) {
      const { scores, members, size } = this.leaves[this.leaf]!;
      const end = Math.min(size, this.at + left);
      for (let i = this.at; i < end; i++) visit(scores[i]!, members[i]!);
      left -= end - this.at;
      this.at = end;
      if (end === size) {
        this.leaf++;
        this.at = 0;
      }
    }
    return this.leaf === this.leaves.length;
  }
}

export class BTree {
  private readonly leafMax: number;
  private readonly leafMin: number;
  private readonly innerMax: number;
  private readonly innerMin: number;
  private root: Node;
  /** The first and last leaves: the ends of the leaf chain. */
  private head: Node;
  private tail: Node;
  private count = 0;
  /** Levels, counting the leaves: 1 while the root is a leaf. */
  private height = 1;
  /**
   * The inner nodes and child slots of the last descent, root first: inserts, deletes and
   * rebalancing read them back instead of keeping parent pointers in every node. They grow on
   * first use, so a tree that is one leaf (most sorted sets) carries two empty arrays.
   */
  private readonly pathNodes: Node[] = [];
  private readonly pathSlots: number[] = [];

  constructor(shape: TreeShape = defaultShape) {
    if (shape.leafEntriesMax < nodeSlotsMin || shape.innerChildrenMax < nodeSlotsMin) {
      throw new Error(`btree: nodes need at least ${nodeSlotsMin} slots`);
    }
    this.leafMax = shape.leafEntriesMax;
    this.leafMin = shape.leafEntriesMax >>> 1;
    this.innerMax = shape.innerChildrenMax;
    this.innerMin = shape.innerChildrenMax >>> 1;
    this.root = new Node(true, Math.min(rootLeafSlotsInitial, this.leafMax + 1));
    this.head = this.root;
    this.tail = this.root;
  }

  get length(): number {
    return this.count;
  }

  get first(): TreeEntry | null {
    return this.count === 0 ? null : { score: this.head.scores[0]!, member: this.head.members[0]! };
  }

  get last(): TreeEntry | null {
    const leaf = this.tail;
    return this.count === 0 ? null : { score: leaf.scores[leaf.size - 1]!, member: leaf.members[leaf.size - 1]! };
  }

  // ---- descents -------------------------------------------------------------------------------

  /** Walks to the leaf where (score, member) is or belongs, recording the path. */
  private descend(score: number, member: string): Node {
    let node = this.root;
    for (let depth = 0; node.children !== null; depth++) {
      const slot = route(node, score, member);
      this.pathNodes[depth] = node;
      this.pathSlots[depth] = slot;
      node = node.children[slot]!;
    }
    return node;
  }

  /** Walks to the leaf holding the element at 0-based `rank` (< length), recording the path. */
  private descendToRank(rank: number): Node {
    let node = this.root;
    for (let depth = 0; node.children !== null; depth++) {
      const counts = node.counts!;
      let slot = 0;
      while (slot < node.size - 1 && rank >= counts[slot]!) rank -= counts[slot++]!;
      this.pathNodes[depth] = node;
      this.pathSlots[depth] = slot;
      node = node.children[slot]!;
    }
    foundIndex = rank;
    return node;
  }

  /** Adds `delta` to the counts along the recorded path to a leaf. */
  private adjustPathCounts(delta: number): void {
    for (let depth = 0; depth < this.height - 1; depth++) this.pathNodes[depth]!.counts![this.pathSlots[depth]!]! += delta;
  }

  // ---- single elements ------------------------------------------------------------------------

  /** Adds a pair; the caller guarantees the member is not in the tree already. */
  insert(score: number, member: string): void {
    // NaN has no place in the order: it would corrupt every search after it.
    if (Number.isNaN(score)) throw new Error("btree: NaN score");
    const leaf = this.descend(score, member);
    const at = lowerBound(leaf, score, member);
    if (leaf.size === leaf.scores.length) grow(leaf, this.leafMax + 1);
    openGap(leaf, at, 1);
    leaf.scores[at] = score;
    leaf.members[at] = member;
    this.adjustPathCounts(1);
    this.count++;
    if (leaf.size > this.leafMax) this.split(leaf, this.height - 1);
  }

  /** Removes the pair; returns whether it was there. */
  delete(score: number, member: string): boolean {
    const leaf = this.descend(score, member);
    const at = lowerBound(leaf, score, member);
    if (!holdsAt(leaf, at, score, member)) return false;
    this.removeFrom(leaf, at, 1);
    return true;
  }

  /**
   * Moves a member from `oldScore` to `newScore`. When the new key stays inside the same leaf
   * (always so for equal scores, such as -0 → 0, and often for small increments) the entry moves
   * within the leaf and no count changes; otherwise it is removed and inserted afresh.
   */
  updateScore(member: string, oldScore: number, newScore: number): void {
    if (Number.isNaN(newScore)) throw new Error("btree: NaN score");
    const leaf = this.descend(oldScore, member);
    const at = lowerBound(leaf, oldScore, member);
    if (!holdsAt(leaf, at, oldScore, member)) {
      throw new Error(`btree: no element ${JSON.stringify(member)} with score ${oldScore}`);
    }
    if (newScore === oldScore) {
      writable(leaf);
      leaf.scores[at] = newScore;
      return;
    }
    // The string the tree holds goes on, not the caller's equal one: it was allocated with its
    // neighbours, so later searches find it in cache more often, and the caller's (freshly
    // parsed) string dies young instead of leaving an old one behind for a full collection.
    // ZADD updates on 100k members: ~1.8 → ~1.5 µs per updateScore.
    const stored = leaf.members[at]!;
    if (this.fitsInside(leaf, at, newScore, stored)) {
      this.moveWithin(leaf, at, newScore, stored);
      return;
    }
    this.removeFrom(leaf, at, 1);
    this.insert(newScore, stored);
  }

  /**
   * Whether a key strictly between the leaf's other first and last keys: putting it there
   * changes neither the leaf's ends nor any separator above it.
   */
  private fitsInside(leaf: Node, at: number, score: number, member: string): boolean {
    const lo = at === 0 ? 1 : 0;
    const hi = at === leaf.size - 1 ? leaf.size - 2 : leaf.size - 1;
    if (lo >= hi) return false;
    return keyBefore(leaf.scores[lo]!, leaf.members[lo]!, score, member) && keyBefore(score, member, leaf.scores[hi]!, leaf.members[hi]!);
  }

  /** Moves the entry at `at` to its new key's place in the same leaf. */
  private moveWithin(leaf: Node, at: number, score: number, member: string): void {
    writable(leaf);
    const { scores, members } = leaf;
    // Where the key goes while the old entry is still counted in.
    const to = lowerBound(leaf, score, member);
    if (to > at) {
      scores.copyWithin(at, at + 1, to);
      for (let i = at; i < to - 1; i++) members[i] = members[i + 1]!;
      scores[to - 1] = score;
      members[to - 1] = member;
    } else {
      scores.copyWithin(to + 1, to, at);
      for (let i = at; i > to; i--) members[i] = members[i - 1]!;
      scores[to] = score;
      members[to] = member;
    }
  }

  /** Removes `n` elements from slot `at` of the leaf the last descent reached, then rebalances. */
  private removeFrom(leaf: Node, at: number, n: number): void {
    closeGap(leaf, at, n);
    this.adjustPathCounts(-n);
    this.count -= n;
    this.rebalance(leaf, this.height - 1);
  }

  // ---- splitting and rebalancing --------------------------------------------------------------

  /** Splits an overflowing node (at `depth` on the recorded path) and links the new half in. */
  private split(node: Node, depth: number): void {
    const leaf = node.children === null;
    const right = new Node(leaf, (leaf ? this.leafMax : this.innerMax) + 1);
    const mid = node.size >>> 1;
    const moved = node.size - mid;
    copySlots(node, mid, right, 0, moved);
    right.size = moved;
    closeGap(node, mid, moved);
    if (leaf) this.linkAfter(node, right);
    const rightCount = countSlots(right, 0, right.size);
    if (depth === 0) {
      this.growRoot(node, right, rightCount);
      return;
    }
    const parent = this.pathNodes[depth - 1]!;
    const slot = this.pathSlots[depth - 1]!;
    // The right half's first separator (or first key) bounds it from below.
    openGap(parent, slot + 1, 1);
    parent.scores[slot + 1] = right.scores[0]!;
    parent.members[slot + 1] = right.members[0]!;
    parent.children![slot + 1] = right;
    parent.counts![slot + 1] = rightCount;
    parent.counts![slot]! -= rightCount;
    if (parent.size > this.innerMax) this.split(parent, depth - 1);
  }

  private growRoot(left: Node, right: Node, rightCount: number): void {
    if (this.height >= heightMax) throw new Error(`btree: height would exceed ${heightMax}`);
    const root = new Node(false, this.innerMax + 1);
    root.size = 2;
    root.scores[0] = left.scores[0]!;
    root.members[0] = left.members[0]!;
    root.scores[1] = right.scores[0]!;
    root.members[1] = right.members[0]!;
    root.children![0] = left;
    root.children![1] = right;
    root.counts![0] = this.count - rightCount;
    root.counts![1] = rightCount;
    this.root = root;
    this.height++;
  }

  private linkAfter(leaf: Node, right: Node): void {
    right.prev = leaf;
    right.next = leaf.next;
    if (leaf.next !== null) leaf.next.prev = right;
    else this.tail = right;
    leaf.next = right;
  }

  /**
   * After a removal from `node` (at `depth` on the recorded path): an underfull node merges with
   * a sibling when both fit in one node, or else takes half the difference from it; a merge may
   * leave the parent underfull in turn. A root left with one child hands the root to it.
   */
  private rebalance(node: Node, depth: number): void {
    if (depth === 0) {
      if (node.children !== null && node.size === 1) {
        this.root = node.children[0]!;
        this.height--;
      }
      return;
    }
    const leaf = node.children === null;
    if (node.size >= (leaf ? this.leafMin : this.innerMin)) return;
    const parent = this.pathNodes[depth - 1]!;
    const slot = this.pathSlots[depth - 1]!;
    // Pair with the right sibling, or with the left one for the last child.
    const leftSlot = slot + 1 < parent.size ? slot : slot - 1;
    const left = parent.children![leftSlot]!;
    const right = parent.children![leftSlot + 1]!;
    if (left.size + right.size <= (leaf ? this.leafMax : this.innerMax)) {
      this.merge(parent, leftSlot, left, right);
      this.rebalance(parent, depth - 1);
    } else {
      this.share(parent, leftSlot, left, right);
    }
  }

  /** Moves all of `right` into `left` (children leftSlot and leftSlot + 1 of parent). */
  private merge(parent: Node, leftSlot: number, left: Node, right: Node): void {
    const at = left.size;
    copySlots(right, 0, left, at, right.size);
    left.size += right.size;
    // right's first child now needs a real separator: the one the parent had for right.
    if (left.children !== null) {
      left.scores[at] = parent.scores[leftSlot + 1]!;
      left.members[at] = parent.members[leftSlot + 1]!;
    } else {
      left.next = right.next;
      if (right.next !== null) right.next.prev = left;
      else this.tail = left;
    }
    parent.counts![leftSlot]! += parent.counts![leftSlot + 1]!;
    closeGap(parent, leftSlot + 1, 1);
  }

  /** Evens out two siblings that together are too many for one node. */
  private share(parent: Node, leftSlot: number, left: Node, right: Node): void {
    const target = (left.size + right.size) >>> 1;
    const oldSeparator = { score: parent.scores[leftSlot + 1]!, member: parent.members[leftSlot + 1]! };
    let moved: number;
    if (left.size > target) {
      // left's tail goes to the front of right.
      const n = left.size - target;
      moved = countSlots(left, target, left.size);
      openGap(right, 0, n);
      copySlots(left, target, right, 0, n);
      if (right.children !== null) {
        right.scores[n] = oldSeparator.score;
        right.members[n] = oldSeparator.member;
      }
      closeGap(left, target, n);
      moved = -moved;
    } else {
      // right's head goes to the end of left.
      const n = target - left.size;
      const at = left.size;
      moved = countSlots(right, 0, n);
      copySlots(right, 0, left, at, n);
      left.size += n;
      if (left.children !== null) {
        left.scores[at] = oldSeparator.score;
        left.members[at] = oldSeparator.member;
      }
      closeGap(right, 0, n);
    }
    // right's first slot now bounds it from below: its first key, or its first child's separator.
    parent.scores[leftSlot + 1] = right.scores[0]!;
    parent.members[leftSlot + 1] = right.members[0]!;
    parent.counts![leftSlot]! += moved;
    parent.counts![leftSlot + 1]! -= moved;
  }

  // ---- ranks and searches ---------------------------------------------------------------------

  /** The 0-based rank of the pair, or -1 when it is not in the tree. */
  rankOf(score: number, member: string): number {
    let node = this.root;
    let rank = 0;
    while (node.children !== null) {
      const slot = route(node, score, member);
      rank += countSlots(node, 0, slot);
      node = node.children[slot]!;
    }
    const at = lowerBound(node, score, member);
    if (!holdsAt(node, at, score, member)) return -1;
    return rank + at;
  }

  /** The element at a 0-based rank, or null outside 0..length-1. */
  at(rank: number): TreeEntry | null {
    if (!(rank >= 0 && rank < this.count)) return null;
    const leaf = this.descendToRank(rank);
    return { score: leaf.scores[foundIndex]!, member: leaf.members[foundIndex]! };
  }

  /**
   * How many elements, from the first, satisfy `holds`: the rank of the first one that does not.
   * `holds` must be true for a prefix of the order and false after it (such as "score below
   * min"); otherwise the answer is some rank, not a meaningful one. O(log n) calls.
   */
  countWhile(holds: (score: number, member: string) => boolean): number {
    let node = this.root;
    let rank = 0;
    while (node.children !== null) {
      // Children before the last separator that holds lie wholly in the prefix; children after
      // it wholly outside.
      const slot = Math.max(0, prefixWhile(node, 1, holds) - 1);
      rank += countSlots(node, 0, slot);
      node = node.children[slot]!;
    }
    return rank + prefixWhile(node, 0, holds);
  }

  // ---- walking --------------------------------------------------------------------------------

  /**
   * Calls `visit` for the elements from 0-based `rank` on, ascending (or descending when
   * `reverse`), until it returns false or the elements run out. `visit` must not change the tree.
   */
  walk(rank: number, reverse: boolean, visit: (score: number, member: string) => boolean): void {
    if (!(rank >= 0 && rank < this.count)) return;
    let leaf: Node | null = this.descendToRank(rank);
    let i = foundIndex;
    while (leaf !== null) {
      const { scores, members } = leaf;
      if (reverse) {
        for (; i >= 0; i--) if (!visit(scores[i]!, members[i]!)) return;
        leaf = leaf.prev;
        i = leaf === null ? 0 : leaf.size - 1;
      } else {
        for (; i < leaf.size; i++) if (!visit(scores[i]!, members[i]!)) return;
        leaf = leaf.next;
        i = 0;
      }
    }
  }

  /**
   * The elements from 0-based `rank` on, in order, as they are now, however the tree changes
   * after: the run holds each leaf's arrays, and the tree copies a leaf's arrays before it next
   * writes to them (writable), so freezing costs a reference per leaf, and each later write at
   * most one leaf's copy. An append-only file rewrite freezes what is left of a sorted set so;
   * copying the elements out took 16–40 ms for 860k, most of it the allocation's garbage collection.
   */
  freezeFrom(rank: number): FrozenRun {
    const leaves: FrozenLeaf[] = [];
    if (rank >= this.count) return new FrozenRun(leaves, 0);
    let leaf: Node | null = this.descendToRank(Math.max(0, rank));
    const first = foundIndex;
    for (; leaf !== null; leaf = leaf.next) {
      leaf.shared = true;
      leaves.push({ scores: leaf.scores, members: leaf.members, size: leaf.size });
    }
    return new FrozenRun(leaves, first);
  }

  /**
   * Estimated bytes (MEMORY USAGE): every node's arrays, read by a walk over the nodes (one per
   * ~48 elements), and the members' strings sized from the first `samples` (0: all).
   */
  memoryBytes(samples: number): number {
    let bytes = objectBytes(12);
    const nodes: Node[] = [this.root];
    while (nodes.length > 0) {
      const node = nodes.pop()!;
      bytes += objectBytes(8) + typedArrayBytes(node.scores.byteLength) + arrayBytes(node.members.length);
      if (node.children !== null) {
        bytes += arrayBytes(node.children.length) + typedArrayBytes(node.counts!.byteLength);
        for (let i = 0; i < node.size; i++) nodes.push(node.children[i]!);
      }
    }
    return bytes + sampledBytes(this.entries(), this.count, samples, (e) => stringBytes(e.member.length));
  }

  /** Elements in order (or reverse order). The tree must not change while this is iterated. */
  *entries(reverse = false): Generator<TreeEntry> {
    if (reverse) {
      for (let leaf: Node | null = this.tail; leaf !== null; leaf = leaf.prev) {
        for (let i = leaf.size - 1; i >= 0; i--) yield { score: leaf.scores[i]!, member: leaf.members[i]! };
      }
    } else {
      for (let leaf: Node | null = this.head; leaf !== null; leaf = leaf.next) {
        for (let i = 0; i < leaf.size; i++) yield { score: leaf.scores[i]!, member: leaf.members[i]! };
      }
    }
  }

  // ---- bulk removal ---------------------------------------------------------------------------

  /**
   * Removes `n` elements starting at 0-based rank `start` (clamped to the tree), calling
   * `removed` (which must not change this tree) for each before it goes; returns how many went. Each round removes the rest of
   * one leaf at once, so this costs one descent per leaf, not per element.
   */
  deleteRange(start: number, n: number, removed: (score: number, member: string) => void): number {
    if (start < 0) start = 0;
    const total = Math.max(0, Math.min(n, this.count - start));
    let left = total;
    while (left > 0) {
      const leaf = this.descendToRank(start);
      const at = foundIndex;
      const k = Math.min(left, leaf.size - at);
      // Counts that disagree with the leaves would stall this loop: fail loudly instead.
      if (k <= 0) throw new Error("btree: counts disagree with the leaves");
      for (let i = at; i < at + k; i++) removed(leaf.scores[i]!, leaf.members[i]!);
      this.removeFrom(leaf, at, k);
      left -= k;
    }
    return total;
  }

  // ---- checking -------------------------------------------------------------------------------

  /** Levels and node sizes, for tests and debugging. */
  dump(): { length: number; height: number; leafSizes: number[] } {
    const leafSizes: number[] = [];
    for (let leaf: Node | null = this.head; leaf !== null; leaf = leaf.next) leafSizes.push(leaf.size);
    return { length: this.count, height: this.height, leafSizes };
  }

  /**
   * Checks every invariant (order, separators, counts, fill, leaf chain, cleared slots); throws
   * on the first broken one. For tests: it visits every node, O(n).
   */
  validate(): void {
    const leaves: Node[] = [];
    const total = this.validateNode(this.root, 0, null, null, leaves);
    if (total !== this.count) throw new Error(`btree: length ${this.count} but ${total} elements`);
    if (leaves[0] !== this.head || leaves.at(-1) !== this.tail) throw new Error("btree: bad head or tail");
    for (let i = 0; i < leaves.length; i++) {
      if (leaves[i]!.prev !== (leaves[i - 1] ?? null) || leaves[i]!.next !== (leaves[i + 1] ?? null)) {
        throw new Error(`btree: bad leaf chain at leaf ${i}`);
      }
    }
  }

  /**
   * Checks a subtree whose keys must be at or above `low` and below `high` (null: unbounded);
   * returns its element count and appends its leaves in order.
   */
  private validateNode(node: Node, depth: number, low: TreeEntry | null, high: TreeEntry | null, leaves: Node[]): number {
    const leaf = node.children === null;
    const max = leaf ? this.leafMax : this.innerMax;
    const min = depth === 0 ? (leaf ? 0 : 2) : leaf ? this.leafMin : this.innerMin;
    if (node.size < min || node.size > max) throw new Error(`btree: node of ${node.size} at depth ${depth}`);
    if (leaf !== (depth === this.height - 1)) throw new Error(`btree: leaf at depth ${depth} of ${this.height}`);
    for (let i = node.size; i < node.members.length; i++) {
      if (node.members[i] !== "" || (node.children !== null && node.children[i] !== null)) throw new Error("btree: unused slot not cleared");
    }
    const keyAt = (i: number): TreeEntry => ({ score: node.scores[i]!, member: node.members[i]! });
    const below = (a: TreeEntry, b: TreeEntry) => keyBefore(a.score, a.member, b.score, b.member);
    // Leaves: every key; inner nodes: separators from slot 1 on.
    for (let i = leaf ? 0 : 1; i < node.size; i++) {
      const key = keyAt(i);
      if (Number.isNaN(key.score)) throw new Error("btree: NaN score");
      if (low !== null && below(key, low)) throw new Error(`btree: key below its lower bound at depth ${depth}`);
      if (high !== null && !below(key, high)) throw new Error(`btree: key not below its upper bound at depth ${depth}`);
      if (i > (leaf ? 0 : 1) && !below(keyAt(i - 1), key)) throw new Error(`btree: keys out of order at depth ${depth}`);
    }
    if (leaf) {
      leaves.push(node);
      return node.size;
    }
    let total = 0;
    for (let i = 0; i < node.size; i++) {
      const child = node.children![i]!;
      const n = this.validateNode(child, depth + 1, i === 0 ? low : keyAt(i), i === node.size - 1 ? high : keyAt(i + 1), leaves);
      if (n !== node.counts![i]) throw new Error(`btree: count ${node.counts![i]} for a child of ${n} at depth ${depth}`);
      total += n;
    }
    return total;
  }
}
