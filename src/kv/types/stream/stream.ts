/**
 * A stream: entries of field-value pairs in the order of their IDs, which only grow, plus the
 * consumer groups reading it (consumer-group.ts).
 *
 * Entries are kept in nodes of at most `stream-node-max-entries` slots, packed as Redis packs
 * them in listpacks (stream-node.ts): a deleted entry leaves its slot marked until its whole node
 * is empty, and the node is then dropped. The layout is kept because it is visible: MAXLEN and
 * MINID with `~` remove whole nodes only, so how many entries such a trim leaves is decided by
 * where the nodes begin,
 * and a client that reads XLEN after `XADD … MAXLEN ~ 1000` sees Redis's number. (Redis also ends
 * a node at stream-node-max-bytes, 4 KiB; entries of a few short fields, the usual kind, fill 100
 * slots well before that, and svc does not model the bytes.)
 *
 * Besides its entries a stream remembers the last ID it generated (which can be past its last
 * entry, after XDEL or XSETID), the largest ID XDEL deleted, and how many entries were ever
 * added: Redis 7's consumer group lag is computed from these.
 */
import type { ConsumerGroup } from "./consumer-group.ts";
import { formatId, type IdBound, idBound, idOf, msOf, seqOf, type StreamId, streamIdMax, streamIdMin } from "./stream-id.ts";
import { type NodeSlot, type StreamEntry, StreamNode } from "./stream-node.ts";

export type { StreamEntry };

/**
 * How XADD and XTRIM trim: to `maxlen` entries (a length past 2^53 is Infinity: no stream is
 * that long) or to entries from `minId` on; exactly or by whole nodes; removing at most `limit`
 * entries (0: no limit).
 */
export interface TrimSpec {
  strategy: "maxlen" | "minid";
  maxlen: number;
  minId: StreamId;
  approx: boolean;
  limit: number;
}

export class Stream {
  readonly kind = "stream";
  private nodes: StreamNode[] = [];
  /** Live entries. */
  length = 0;
  private last: StreamId = streamIdMin;
  /**
   * The last ID's halves as numbers, once asked for (exact below 2^53): XADD `*` makes the next
   * ID from them, and its text, without bigint arithmetic.
   */
  private lastMsNumber: number | undefined = 0;
  private lastSeqNumber: number | undefined = 0;
  maxDeletedId: StreamId = streamIdMin;
  entriesAdded = 0n;
  /** Consumer groups by name, in the order created (XINFO GROUPS lists them sorted, as Redis's radix tree does). */
  readonly groups = new Map<string, ConsumerGroup>();

  get size(): number {
    return this.length;
  }

  /** The last ID generated: its last entry's, or more after XDEL or XSETID. */
  get lastId(): StreamId {
    return this.last;
  }

  set lastId(id: StreamId) {
    this.last = id;
    this.lastMsNumber = undefined;
    this.lastSeqNumber = undefined;
  }

  get lastMs(): number {
    return (this.lastMsNumber ??= Number(msOf(this.last)));
  }

  get lastSeq(): number {
    return (this.lastSeqNumber ??= Number(seqOf(this.last)));
  }

  /** append for an ID given as numbers, both below 2^53 (XADD `*`); the caller writes the ID as it needs it. */
  appendAt(ms: number, seq: number, fields: readonly string[], nodeEntriesMax: number): void {
    // The next sequence number in the same ms is one step from the last ID: no bigint to build.
    const id = ms === this.lastMs && seq === this.lastSeq + 1 ? this.last + 1n : idOf(ms, seq);
    this.nodeWithRoom(nodeEntriesMax, id).push(null, fields, ms, seq);
    this.added(id);
    this.lastMsNumber = ms;
    this.lastSeqNumber = seq;
  }

  /**
   * Appends an entry with `id`, which the caller has checked is above lastId, in the last node if
   * it has a free slot, else in a new node.
   */
  append(id: StreamId, fields: readonly string[], nodeEntriesMax: number): string {
    this.nodeWithRoom(nodeEntriesMax, id).push(id, fields);
    this.added(id);
    return formatId(id);
  }

  /**
   * The last node when it has a free slot for `id`, else a new one (the full one gives back its
   * spare room). A node's slots stay in ID order: after XDEL of the last entries and an XSETID
   * back below them, the next entry starts a new node rather than follow a deleted, higher ID
   * (Redis adds it to the same listpack; its layout differs from ours only then).
   */
  private nodeWithRoom(nodeEntriesMax: number, id: StreamId): StreamNode {
    const last = this.nodes.at(-1);
    if (last !== undefined && (nodeEntriesMax === 0 || last.slots < nodeEntriesMax) && !last.endsAbove(id)) return last;
    const node = last === undefined ? new StreamNode() : StreamNode.after(last);
    last?.compact();
    this.nodes.push(node);
    return node;
  }

  private added(id: StreamId): void {
    this.length++;
    this.lastId = id;
    this.entriesAdded++;
  }

  /** The entry with `id`, or undefined. */
  get(id: StreamId): StreamEntry | undefined {
    const [node, slot] = this.find(id);
    return node?.entry(slot);
  }

  /** The node that would hold `id`, and its slot there when it does. */
  private find(id: StreamId): [StreamNode | undefined, number] {
    const bound = idBound(id);
    const node = this.nodes[this.lastNodeFrom(id, bound)];
    if (node === undefined) return [undefined, -1];
    const slot = node.lowerBound(id, false, bound);
    return slot < node.slots && node.ids.compare(slot, id, bound) === 0 ? [node, slot] : [undefined, -1];
  }

  /** Deletes the entry with `id`; false when there is none. Does not touch maxDeletedId (XDEL does). */
  delete(id: StreamId): boolean {
    const [node, slot] = this.find(id);
    if (node === undefined || !node.deleteSlot(slot)) return false;
    this.length--;
    if (node.live === 0) this.nodes.splice(this.nodes.indexOf(node), 1);
    return true;
  }

  /** The first (or last) live entry, or undefined for an empty stream. */
  edgeEntry(first: boolean): StreamEntry | undefined {
    for (const entry of this.range(streamIdMin, streamIdMax, !first)) return entry;
    return undefined;
  }

  /** The first (or last) live entry's ID, or undefined for an empty stream. */
  edgeId(first: boolean): StreamId | undefined {
    return this.edgeEntry(first)?.id;
  }

  /** Live entries with from ≤ ID ≤ to, ascending, or descending when `reverse`. */
  *range(from: StreamId, to: StreamId, reverse = false): Generator<StreamEntry> {
    if (from > to) return;
    const nodes = this.nodes;
    const fromBound = idBound(from);
    const toBound = idBound(to);
    if (!reverse) {
      const start = this.lastNodeFrom(from, fromBound);
      for (let n = start; n < nodes.length; n++) {
        const node = nodes[n]!;
        for (let s = n === start ? node.lowerBound(from, false, fromBound) : 0; s < node.slots; s++) {
          // A deleted entry's ID decides nothing: one may be above the entries of the next node.
          const entry = node.entry(s);
          if (entry === undefined) continue;
          if (node.ids.compare(s, to, toBound) > 0) return;
          yield entry;
        }
      }
    } else {
      for (let n = Math.min(this.lastNodeFrom(to, toBound), nodes.length - 1); n >= 0; n--) {
        const node = nodes[n]!;
        for (let s = node.lowerBound(to, true, toBound) - 1; s >= 0; s--) {
          const entry = node.entry(s);
          if (entry === undefined) continue;
          if (node.ids.compare(s, from, fromBound) < 0) return;
          yield entry;
        }
      }
    }
  }

  /** The index of the last node whose first ID is ≤ id, or 0 when none is. */
  private lastNodeFrom(id: StreamId, bound: IdBound): number {
    const nodes = this.nodes;
    let lo = 0;
    let hi = nodes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (nodes[mid]!.ids.compare(0, id, bound) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(0, lo - 1);
  }

  /**
   * Removes entries from the head as `spec` asks and returns how many. Whole nodes go first; with
   * `approx` that is all (a node is the unit of `~`), else the first node left has its leading
   * entries marked deleted. `limit` stops before a node that would take the count past it.
   */
  trim(spec: TrimSpec): number {
    const byLength = spec.strategy === "maxlen";
    const { maxlen, minId } = spec;
    const minBound = idBound(minId);
    let deleted = 0;
    while (this.nodes.length > 0) {
      if (byLength && this.length <= maxlen) break;
      const node = this.nodes[0]!;
      if (spec.limit > 0 && deleted + node.live > spec.limit) break;
      const removeNode = byLength ? this.length - node.live >= maxlen : node.ids.compare(node.slots - 1, minId, minBound) < 0;
      if (removeNode) {
        this.nodes.shift();
        this.length -= node.live;
        deleted += node.live;
        continue;
      }
      if (spec.approx) break;
      // A deleted entry's ID stops MINID too, as in Redis (after XSETID moved the last ID back,
      // one may be above live entries after it).
      for (let s = 0; s < node.slots; s++) {
        if (byLength ? this.length <= maxlen : node.ids.compare(s, minId, minBound) >= 0) break;
        if (!node.deleteSlot(s)) continue;
        this.length--;
        deleted++;
      }
      break;
    }
    return deleted;
  }

  /** Whether an entry deleted by XDEL may lie between `from` and the end (Redis's streamRangeHasTombstones). */
  hasTombstonesFrom(from: StreamId): boolean {
    if (this.length === 0 || this.maxDeletedId === streamIdMin) return false;
    if (this.edgeId(true)! > this.maxDeletedId) return false;
    return from <= this.maxDeletedId;
  }

  /**
   * How many entries were added up to and including `id` (the entries-read count a group at
   * `id` has), or null where that cannot be known: Redis's streamEstimateDistanceFromFirstEverEntry.
   */
  entriesReadAt(id: StreamId): bigint | null {
    if (this.entriesAdded === 0n) return 0n;
    if (this.length === 0 && id <= this.lastId) return this.entriesAdded;
    if (id === this.lastId) return this.entriesAdded;
    if (id > this.lastId) return null;
    const first = this.edgeId(true)!;
    if (this.maxDeletedId === streamIdMin || this.maxDeletedId < first) {
      if (id < first) return this.entriesAdded - BigInt(this.length);
      if (id === first) return this.entriesAdded - BigInt(this.length) + 1n;
    }
    return null;
  }

  /** The group's lag (XINFO): entries added it has not read, or null when that cannot be known. */
  lag(group: ConsumerGroup): bigint | null {
    if (this.entriesAdded === 0n) return 0n;
    if (group.entriesRead !== null && !this.hasTombstonesFrom(group.lastId)) return this.entriesAdded - group.entriesRead;
    const read = this.entriesReadAt(group.lastId);
    return read === null ? null : this.entriesAdded - read;
  }

  /** Each node's master field names and slots, in order (DUMP). */
  nodesView(): { names: readonly string[]; slots: NodeSlot[] }[] {
    return this.nodes.map((node) => ({ names: node.masterNames, slots: node.slotsView() }));
  }

  /**
   * Adds a node holding `slots` as they were dumped (RESTORE): a deleted one keeps its slot, with
   * `names` and empty values. The caller sets the last ID and the counters after.
   */
  restoreNode(names: readonly string[], slots: readonly NodeSlot[]): void {
    // Redis's listpack may hold a deleted entry above the entries after it (XSETID moved the last
    // ID back): it is split there, as svc would have started a new node, and a run of deleted
    // entries alone is dropped.
    let run: NodeSlot[] = [];
    for (const slot of slots) {
      if (run.length > 0 && slot.id <= run.at(-1)!.id) {
        this.restoreRun(names, run);
        run = [];
      }
      run.push(slot);
    }
    this.restoreRun(names, run);
  }

  private restoreRun(names: readonly string[], slots: readonly NodeSlot[]): void {
    if (!slots.some((slot) => slot.fields !== null)) return;
    const node = new StreamNode(Math.max(1, slots.length));
    for (const [slot, { id, fields }] of slots.entries()) {
      node.push(id, fields ?? names.flatMap((name) => [name, ""]));
      if (fields === null) node.deleteSlot(slot);
    }
    this.nodes.push(node);
    this.length += node.live;
  }

  /** Node count (XINFO STREAM's radix-tree-keys). */
  get nodeCount(): number {
    return this.nodes.length;
  }

  /** Bytes this stream holds, estimated (MEMORY USAGE). */
  memoryBytes(): number {
    let bytes = 96;
    for (const node of this.nodes) bytes += node.memoryBytes();
    for (const group of this.groups.values()) bytes += group.memoryBytes();
    return bytes;
  }

  /** A copy sharing nothing that changes (COPY). */
  clone(): Stream {
    const copy = new Stream();
    copy.nodes = this.nodes.map((node) => node.copy());
    copy.length = this.length;
    copy.lastId = this.last;
    copy.maxDeletedId = this.maxDeletedId;
    copy.entriesAdded = this.entriesAdded;
    for (const [name, group] of this.groups) copy.groups.set(name, group.clone());
    return copy;
  }
}
