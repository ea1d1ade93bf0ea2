/**
 * A sorted set's member → score index: a JavaScript Map while the set is small, then, for good,
 * a KeyTable (key-table.ts) keyed by member whose values are the scores' 8 bytes — the same two
 * forms, for the same reasons, as sets and hashes (member-set.ts). A ZADD over 100k members looks
 * its member up here before it touches the tree; in a Map that lookup chased the bucket, the
 * stored string and its characters, here it reads a slot pair and one entry.
 *
 * Scores are kept bit for bit: -0 stays -0 (the skiplist encoding keeps it; see zset.ts).
 */
import { KeyTable } from "../key-table.ts";
import { mapBytes, objectBytes, stringBytes } from "../memory-sizes.ts";

/** Members the Map form holds; one more moves the index into a table (Redis's listpack limit). */
export const smallScoresMax = 128;
/** The inline value a new member's entry starts with: 8 bytes, which its score then overwrites. */
const scoreBytes = "\0".repeat(8);

export class ScoreIndex {
  private small: Map<string, number> | null = new Map();
  private table: KeyTable<string> | null = null;

  get size(): number {
    return this.small !== null ? this.small.size : this.table!.size;
  }

  /** Whether the index is in its table form (then ZSCAN walks it with scanStep). */
  get hashed(): boolean {
    return this.table !== null;
  }

  get(member: string): number | undefined {
    if (this.small !== null) return this.small.get(member);
    const ref = this.table!.find(member);
    return ref === -1 ? undefined : this.table!.floatAt(ref);
  }

  set(member: string, score: number): void {
    const small = this.small;
    if (small !== null) {
      small.set(member, score);
      if (small.size > smallScoresMax) this.moveToTable(small);
      return;
    }
    const found = this.table!.findOrAdd(member, scoreBytes);
    this.table!.setFloatAt(found < 0 ? -1 - found : found, score);
  }

  delete(member: string): boolean {
    return this.small !== null ? this.small.delete(member) : this.table!.delete(member);
  }

  /**
   * Estimated bytes (MEMORY USAGE). The Map form's member strings are the tree's, counted there; a
   * table copies the members into its slabs, and holds the longest as strings of their own.
   */
  memoryBytes(samples: number): number {
    if (this.small !== null) return objectBytes(2) + mapBytes(this.small.size);
    return objectBytes(2) + this.table!.memoryBytes(samples, (held) => stringBytes((held as string).length));
  }

  /** Member and score pairs, as a snapshot. */
  entries(): [string, number][] {
    if (this.small !== null) return [...this.small];
    const table = this.table!;
    return table.keys().map((member) => [member, table.floatAt(table.find(member))]);
  }

  /**
   * The Map form: a live iterator over the members (valid while the index changes, which
   * ZSCAN's parked cursors rely on). The table form: null — scan it with scanStep.
   */
  iterator(): Iterator<string> | null {
    return this.small !== null ? this.small.keys() : null;
  }

  /** Brings into cache where the first `count` of `members` are, in the table form (warm.ts). */
  warm(members: readonly string[], count: number): void {
    this.table?.warm(members, count);
  }

  /** One step of a cursor walk over the table form (see KeyTable.scanStep). */
  scanStep(cursor: number, out: string[]): number {
    return this.table!.scanStep(cursor, out);
  }

  private moveToTable(small: Map<string, number>): void {
    const table = new KeyTable<string>();
    for (const [member, score] of small) table.setFloatAt(-1 - table.findOrAdd(member, scoreBytes), score);
    this.table = table;
    this.small = null;
  }
}
