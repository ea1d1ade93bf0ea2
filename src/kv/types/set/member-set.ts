/**
 * A set's members (latin1 byte strings), in one of three forms:
 * - packed: one byte array, the members back to back in insertion order, each after its length
 *   byte (short-strings.ts), while the set has at most smallMembersMax members and none longer
 *   than packedItemBytesMax bytes — most small sets. Redis 7.0 holds such a set in a hash table
 *   (or an intset); packed, ten short members cost ~460 bytes of RSS a set instead of ~1,250 as
 *   a JavaScript Set, and Redis's ~810 (100k sets, 2026-11-26);
 * - a JavaScript Set, for a small set that once held a longer member;
 * - once it has more than smallMembersMax members, for good, a KeyTable (key-table.ts) whose
 *   keys are the members — as Redis moves a set from its compact encoding to a hash table and
 *   never back.
 *
 * Why not a table from the start. A Set lookup over many members chases the hash bucket, the
 * stored string's cell and its characters; the key table reads a slot pair and one entry, and
 * measured 2.4× faster for SADD's pattern (random members of a 100k set). But a table starts
 * with a 4 KiB slab, which would make a million small sets cost gigabytes.
 *
 * Order: a small set iterates in insertion order, a large one in table order. Redis's sets are
 * unordered either way (its intsets, which are ordered, are reproduced by set.ts).
 */
import { parseInt64 } from "../../text/args.ts";
import { encodingLimits } from "../compact.ts";
import { KeyTable } from "../key-table.ts";
import { objectBytes, sampledBytes, setBytes, stringBytes, typedArrayBytes } from "../memory-sizes.ts";
import { randomElement } from "../sample.ts";
import { allShorts, findShort, insertShort, noShorts, packable, removeShort, shortAt, shortOffset, withShorts } from "../short-strings.ts";

/** Members a set keeps in its small forms; one more moves them into a table (Redis's listpack limit). */
export const smallMembersMax = 128;

/** The members from argv[from] on that `packed` lacks, each once; null if one is too long to pack. */
function missingMembers(packed: Uint8Array, argv: readonly string[], from: number): string[] | null {
  const fresh: string[] = [];
  for (let i = from; i < argv.length; i++) {
    const member = argv[i]!;
    if (!packable(member)) return null;
    if (findShort(packed, member) === -1 && !fresh.includes(member)) fresh.push(member);
  }
  return fresh;
}

export class MemberSet implements Iterable<string> {
  readonly kind = "set";
  /** The packed form's members (null once it has left that form) and how many there are. */
  private packed: Uint8Array | null = noShorts;
  private packedCount = 0;
  private small: Set<string> | null = null;
  private table: KeyTable<string> | null = null;
  /**
   * Whether the set has lost a member while it held one that is not an integer, or more members
   * than an intset takes: Redis moved it to a hash table then, for good, so it is no intset again
   * even once only integers are left (encoding.ts). Worked out as members go rather than as they
   * come, so SADD pays nothing for it: while such a member is still there, isIntset sees it.
   */
  leftIntset = false;

  constructor(members: Iterable<string> = []) {
    for (const member of members) this.add(member);
  }

  get size(): number {
    if (this.packed !== null) return this.packedCount;
    return this.small !== null ? this.small.size : this.table!.size;
  }

  /** Whether the members are in a table (Redis's "hashtable" encoding, unless it is an intset). */
  get hashed(): boolean {
    return this.table !== null;
  }

  /**
   * The table of a large set, which an append-only file rewrite reads in slot order and copies
   * to go on reading while the set changes (collection-parts.ts); null while it is small.
   */
  get memberTable(): KeyTable<string> | null {
    return this.table;
  }

  has(member: string): boolean {
    if (this.packed !== null) return findShort(this.packed, member) !== -1;
    return this.small !== null ? this.small.has(member) : this.table!.find(member) !== -1;
  }

  /** Adds the member; returns whether it was new. */
  add(member: string): boolean {
    const packed = this.packed;
    if (packed !== null) {
      if (!packable(member)) this.unpack(packed);
      else {
        if (findShort(packed, member) !== -1) return false;
        if (this.packedCount === smallMembersMax) this.unpack(packed);
        else {
          this.packed = insertShort(packed, packed.length, member);
          this.packedCount++;
          return true;
        }
      }
    }
    const small = this.small;
    // findOrAdd: a member already there is left as it is (set() would rewrite its empty value).
    if (small === null) return this.table!.findOrAdd(member, "") < 0;
    const before = small.size;
    small.add(member);
    if (small.size === before) return false;
    if (small.size > smallMembersMax) this.moveToTable(small);
    return true;
  }

  /**
   * SADD's members, argv[from] on; returns how many were new. A set that stays packed takes them
   * in one new array, not one per member.
   */
  addAll(argv: readonly string[], from: number): number {
    const packed = this.packed;
    const fresh = packed === null ? null : missingMembers(packed, argv, from);
    if (fresh !== null && this.packedCount + fresh.length <= smallMembersMax) {
      if (fresh.length > 0) this.packed = withShorts(packed!, fresh);
      this.packedCount += fresh.length;
      return fresh.length;
    }
    let added = 0;
    for (let i = from; i < argv.length; i++) if (this.add(argv[i]!)) added++;
    return added;
  }

  delete(member: string): boolean {
    const removed = this.remove(member);
    // A set that was past the intset's size, or that held this member, no integer, had left it.
    if (removed && !this.leftIntset && (this.size >= encodingLimits.intsetEntries || parseInt64(member) === null)) this.leftIntset = true;
    return removed;
  }

  private remove(member: string): boolean {
    const packed = this.packed;
    if (packed !== null) {
      const at = findShort(packed, member);
      if (at === -1) return false;
      this.packed = removeShort(packed, at);
      this.packedCount--;
      return true;
    }
    return this.small !== null ? this.small.delete(member) : this.table!.delete(member);
  }

  /** The members, as a snapshot the caller may keep while the set changes. */
  members(): string[] {
    if (this.packed !== null) return allShorts(this.packed);
    return this.small !== null ? [...this.small] : this.table!.keys();
  }

  /** Estimated bytes of the set (MEMORY USAGE), members held as strings sized from the first `samples` (0: all). */
  memoryBytes(samples: number): number {
    const own = objectBytes(5);
    if (this.packed !== null) return own + typedArrayBytes(this.packed.byteLength);
    const memberBytes = (member: unknown) => stringBytes((member as string).length);
    if (this.small !== null) return own + setBytes(this.small.size) + sampledBytes(this.small, this.small.size, samples, memberBytes);
    return own + this.table!.memoryBytes(samples, memberBytes);
  }

  /**
   * The members without members()'s copy of a large set (a small one's are copied, or live):
   * nothing may change the set until the caller is done with them.
   */
  values(): Iterable<string> {
    if (this.packed !== null) return allShorts(this.packed);
    return this.small !== null ? this.small.values() : this.table!.walkKeys();
  }

  [Symbol.iterator](): Iterator<string> {
    return this.small !== null ? this.small.values() : this.members()[Symbol.iterator]();
  }

  /** One uniformly random member; the set must not be empty. */
  random(): string {
    if (this.packed !== null) return shortAt(this.packed, shortOffset(this.packed, Math.floor(Math.random() * this.packedCount)));
    if (this.small !== null) return randomElement(this.small, this.small.size);
    return this.table!.randomKey()!;
  }

  /**
   * A small set: an iterator that stays valid while the set changes, which SSCAN's parked cursors
   * rely on — over a packed set's members as they are now (every member there throughout a scan
   * is among them, which is what SSCAN promises), over a Set's live. A large one: null — scan it
   * with scanStep.
   */
  iterator(): Iterator<string> | null {
    if (this.packed !== null) return allShorts(this.packed)[Symbol.iterator]();
    return this.small !== null ? this.small.values() : null;
  }

  /**
   * One step of a cursor walk over a large set (see KeyTable.scanStep for the guarantee): adds the
   * members of `cursor`'s slot to `out` and returns the next cursor, 0 when done.
   */
  scanStep(cursor: number, out: string[]): number {
    return this.table!.scanStep(cursor, out);
  }

  /** Brings into cache where the first `count` of `members` are, in a large one's table (warm.ts). */
  warm(members: readonly string[], count: number): void {
    this.table?.warm(members, count);
  }

  clone(): MemberSet {
    let copy: MemberSet;
    if (this.packed === null) copy = new MemberSet(this.members());
    else {
      copy = new MemberSet();
      copy.packed = this.packed.slice();
      copy.packedCount = this.packedCount;
    }
    copy.leftIntset = this.leftIntset;
    return copy;
  }

  /** Leaves the packed form for a Set, for good. */
  private unpack(packed: Uint8Array): void {
    this.small = new Set(allShorts(packed));
    this.packed = null;
    this.packedCount = 0;
  }

  private moveToTable(small: Set<string>): void {
    const table = new KeyTable<string>();
    for (const member of small) table.set(member, "");
    this.table = table;
    this.small = null;
  }
}
