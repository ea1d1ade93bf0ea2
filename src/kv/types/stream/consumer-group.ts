/**
 * A consumer group of a stream: the last ID delivered to it, how many entries it has read (for
 * Redis 7's lag), its consumers, and its pending entries list (PEL) — the entries delivered to a
 * consumer and not yet acknowledged, each with its owner, when it was last delivered and how many
 * times. The PEL is ordered by ID, because XPENDING and XAUTOCLAIM walk it as a range.
 */
import type { StreamId } from "./stream-id.ts";

/** Items in name order (byte order: names are latin1 strings), as Redis's radix trees list them. */
export const byName = <T extends { name: string }>(items: Iterable<T>): T[] => [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

export interface Consumer {
  readonly name: string;
  /** Unix ms of the consumer's last XREADGROUP, XCLAIM or XAUTOCLAIM (XINFO's idle). */
  seenMs: number;
  /** The IDs of its pending entries. */
  readonly pending: Set<StreamId>;
}

export interface PendingEntry {
  readonly id: StreamId;
  consumer: Consumer;
  /** Unix ms of the last delivery (XPENDING's idle time). */
  deliveredMs: number;
  deliveries: bigint;
}

export class ConsumerGroup {
  /** By name; XINFO lists them in name order. */
  readonly consumers = new Map<string, Consumer>();
  /** Pending entries by ID, and their IDs ascending. */
  private readonly pendingById = new Map<StreamId, PendingEntry>();
  private readonly pendingIds: StreamId[] = [];

  constructor(
    public lastId: StreamId,
    /** Entries read so far, counting from the stream's first ever; null when that is not known. */
    public entriesRead: bigint | null,
  ) {}

  /** The consumer called `name`, seen now; made (and said to be new) when missing. */
  consumer(name: string, nowMs: number): { consumer: Consumer; created: boolean } {
    const known = this.consumers.get(name);
    if (known !== undefined) {
      known.seenMs = nowMs;
      return { consumer: known, created: false };
    }
    const consumer: Consumer = { name, seenMs: nowMs, pending: new Set() };
    this.consumers.set(name, consumer);
    return { consumer, created: true };
  }

  /** Removes a consumer and its pending entries; returns how many it had. */
  deleteConsumer(name: string): number {
    const consumer = this.consumers.get(name);
    if (consumer === undefined) return 0;
    const count = consumer.pending.size;
    for (const id of consumer.pending) this.removePending(id);
    this.consumers.delete(name);
    return count;
  }

  get pendingCount(): number {
    return this.pendingIds.length;
  }

  pendingEntry(id: StreamId): PendingEntry | undefined {
    return this.pendingById.get(id);
  }

  /**
   * Records a delivery of `id` to `consumer` at `nowMs`: a new pending entry, or one that changes
   * owner and counts another delivery when `countDelivery`.
   */
  deliver(id: StreamId, consumer: Consumer, nowMs: number, countDelivery = true): PendingEntry {
    let entry = this.pendingById.get(id);
    if (entry === undefined) {
      entry = { id, consumer, deliveredMs: nowMs, deliveries: 1n };
      this.pendingById.set(id, entry);
      this.insertId(id);
    } else {
      entry.consumer.pending.delete(id);
      entry.consumer = consumer;
      entry.deliveredMs = nowMs;
      if (countDelivery) entry.deliveries++;
    }
    consumer.pending.add(id);
    return entry;
  }

  /** Acknowledges `id`: removes it from the PEL; false when it was not pending. */
  acknowledge(id: StreamId): boolean {
    const entry = this.pendingById.get(id);
    if (entry === undefined) return false;
    entry.consumer.pending.delete(id);
    this.removePending(id);
    return true;
  }

  /** Pending entries with from ≤ ID ≤ to, ascending. */
  *pendingRange(from: StreamId, to: StreamId): Generator<PendingEntry> {
    const ids = this.pendingIds;
    for (let i = this.indexFrom(from); i < ids.length && ids[i]! <= to; i++) yield this.pendingById.get(ids[i]!)!;
  }

  /** Lowest and highest pending IDs, or undefined when none. */
  pendingBounds(): [StreamId, StreamId] | undefined {
    const ids = this.pendingIds;
    return ids.length === 0 ? undefined : [ids[0]!, ids.at(-1)!];
  }

  private removePending(id: StreamId): void {
    this.pendingById.delete(id);
    this.pendingIds.splice(this.indexFrom(id), 1);
  }

  private insertId(id: StreamId): void {
    const ids = this.pendingIds;
    if (ids.length === 0 || ids.at(-1)! < id) ids.push(id);
    else ids.splice(this.indexFrom(id), 0, id);
  }

  /** The index of the first pending ID ≥ id. */
  private indexFrom(id: StreamId): number {
    const ids = this.pendingIds;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  memoryBytes(): number {
    let bytes = 64 + this.pendingIds.length * 80;
    for (const consumer of this.consumers.values()) bytes += 64 + consumer.name.length;
    return bytes;
  }

  clone(): ConsumerGroup {
    const copy = new ConsumerGroup(this.lastId, this.entriesRead);
    for (const consumer of this.consumers.values()) copy.consumers.set(consumer.name, { name: consumer.name, seenMs: consumer.seenMs, pending: new Set() });
    for (const id of this.pendingIds) {
      const entry = this.pendingById.get(id)!;
      const owner = copy.consumers.get(entry.consumer.name)!;
      copy.deliver(id, owner, entry.deliveredMs).deliveries = entry.deliveries;
    }
    return copy;
  }
}
