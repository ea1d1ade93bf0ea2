/**
 * Dividing a group's partitions among its members (spec: Consumer group membership): sticky and
 * even. Every partition has exactly one owner; shares differ by at most one; and a rebalance keeps
 * as many partitions with their owner as any even assignment can — a member that joins takes only
 * what it must, and the partitions of one that leaves are spread over the others, nothing else
 * moving. This is Kafka's sticky assignor's aim for members of one subscription.
 *
 * Pure and deterministic (the same input, the same answer), so the coordinator can be replayed in
 * tests and, later, by Raft followers: ties go to the member that sorts first, partitions are
 * handed out in the order given.
 */

/** A partition of one of the group's topics, as `topic/partition` or any id the caller picks. */
export type PartitionId = string;

/**
 * The assignment of `partitions` to `members` that keeps the most of `previous` (each member's
 * partitions before; members and partitions gone from it are ignored), with every member's share
 * within one of the others'. Members in the result are in sorted order; each member's partitions
 * are in the order of `partitions`.
 */
export function assignPartitions(
  partitions: readonly PartitionId[],
  members: readonly string[],
  previous: ReadonlyMap<string, readonly PartitionId[]>,
): Map<string, PartitionId[]> {
  const sorted = [...new Set(members)].sort();
  const result = new Map<string, PartitionId[]>(sorted.map((member) => [member, []]));
  if (sorted.length === 0) return result;
  const unique = [...new Set(partitions)];
  const order = new Map(unique.map((partition, i) => [partition, i]));
  // What each member held that still exists and is not already claimed by one before it.
  const claimed = new Set<PartitionId>();
  const kept = new Map<string, PartitionId[]>();
  for (const member of sorted) {
    const held = (previous.get(member) ?? []).filter((p) => order.has(p) && !claimed.has(p));
    held.sort((a, b) => order.get(a)! - order.get(b)!);
    for (const p of held) claimed.add(p);
    kept.set(member, held);
  }
  // Shares: `base` each, one more for `extra` members — those that kept the most, so that as
  // few partitions as possible move (a member's extra slot keeps one more only if it held more
  // than `base`).
  const base = Math.floor(order.size / sorted.length);
  let extra = order.size % sorted.length;
  const byKept = [...sorted].sort((a, b) => kept.get(b)!.length - kept.get(a)!.length || (a < b ? -1 : 1));
  const share = new Map<string, number>();
  for (const member of byKept) {
    const more = extra > 0 ? 1 : 0;
    extra -= more;
    share.set(member, base + more);
  }
  // Each member keeps what it held, up to its share; the rest goes to the members with room.
  const free: PartitionId[] = [];
  for (const member of sorted) {
    const held = kept.get(member)!;
    const mine = share.get(member)!;
    result.get(member)!.push(...held.slice(0, mine));
    free.push(...held.slice(mine));
  }
  for (const p of unique) if (!claimed.has(p)) free.push(p);
  free.sort((a, b) => order.get(a)! - order.get(b)!);
  let next = 0;
  for (const member of sorted) {
    const owned = result.get(member)!;
    while (owned.length < share.get(member)! && next < free.length) owned.push(free[next++]!);
    owned.sort((a, b) => order.get(a)! - order.get(b)!);
  }
  return result;
}

/** How many partitions have another owner in `after` than in `before` (a new or orphaned one counts). */
export function movedPartitions(before: ReadonlyMap<string, readonly PartitionId[]>, after: ReadonlyMap<string, readonly PartitionId[]>): number {
  const ownerBefore = new Map<PartitionId, string>();
  for (const [member, owned] of before) for (const p of owned) ownerBefore.set(p, member);
  let moved = 0;
  for (const [member, owned] of after) for (const p of owned) if (ownerBefore.get(p) !== member) moved++;
  return moved;
}
