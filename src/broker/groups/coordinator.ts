/**
 * Consumer group membership (spec: Consumer group membership): who is in each group, the
 * generation, and which partitions each member reads. Free of HTTP and of the clock's source —
 * the HTTP routes drive it today, a Kafka wire-protocol front end will drive the same groups later,
 * and tests move a ManualClock.
 *
 * The rebalance is eager and done by the coordinator itself: a join, a leave or a member's
 * timeout assigns every partition at once (groups/assignment.ts, sticky and even) and moves the
 * group to a new generation. The member that joined gets its share in the join's answer; the
 * others learn of the change at their next heartbeat (`rebalance_required`) and fetch their
 * assignment. Until they do, a partition that moved may still be read by its previous owner:
 * delivery through a group is at least once, as with Kafka's consumers.
 *
 * Membership is not stored: after a restart every member's heartbeat answers `unknown_member`
 * and the member joins again (committed offsets are stored, groups/committed-offsets.ts).
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../../core/clock.ts";
import { SvcError } from "../../core/errors.ts";
import type { Actor } from "../auth/principal.ts";
import { assignPartitions, type PartitionId } from "./assignment.ts";

/** A topic and partition a member reads. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/** What join and GET assignment answer. */
export interface MemberAssignment {
  member_id: string;
  generation: number;
  assignment: TopicPartition[];
}

/** The heartbeat's answer (spec: ok, rebalance_required, unknown_member). */
export type HeartbeatStatus = "ok" | "rebalance_required" | "unknown_member";

/** How many partitions a topic has now; null when it does not exist. */
export type PartitionCounts = (topic: string) => number | null;

interface Member {
  readonly id: string;
  /** The key that created the member: only it (or a global admin) may act as the member. */
  readonly key: string | null;
  lastSeenMs: number;
}

interface Group {
  readonly name: string;
  generation: number;
  /** The topics every member reads, sorted; set by the first member to join. */
  topics: readonly string[];
  readonly members: Map<string, Member>;
  /** Each member's partitions as `topic/partition`, in the order assignPartitions gives them. */
  assignment: Map<string, PartitionId[]>;
}

const partitionId = (topic: string, partition: number): PartitionId => `${topic}/${partition}`;

function topicPartitionOf(id: PartitionId): TopicPartition {
  // Topic names hold no '/' (topics/names.ts), so the last one splits.
  const slash = id.lastIndexOf("/");
  return { topic: id.slice(0, slash), partition: Number(id.slice(slash + 1)) };
}

function unknownMember(group: string, memberId: string): SvcError {
  return new SvcError(
    "not_found",
    `member '${memberId}' is not in group '${group}' (it left, timed out, or the broker restarted): join again with member_id null`,
  );
}

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly clock: Clock,
    /** --coord-member-timeout: a member heard from less recently than this is removed. */
    readonly memberTimeoutMs: number,
    private readonly partitionCounts: PartitionCounts,
  ) {}

  /**
   * Adds a member (memberId null) or re-joins a known one, and answers its assignment. `topics`
   * are checked by the caller (1 to 100, each readable); a topic that does not exist is a 404.
   * Every member of a group reads the same topics — the only way every share can be even — so
   * joining with other topics than the group's is a 409 unless the joiner is its only member.
   */
  join(groupName: string, caller: Actor, memberId: string | null, topics: readonly string[]): MemberAssignment {
    const wanted = [...new Set(topics)].sort();
    for (const topic of wanted) {
      if (this.partitionCounts(topic) === null) throw new SvcError("not_found", `topic '${topic}' does not exist`);
    }
    const group = this.groups.get(groupName);
    const member = memberId === null ? null : this.memberFor(group, groupName, caller, memberId);
    if (group !== undefined) {
      const others = group.members.size - (member === null ? 0 : 1);
      if (others > 0 && !sameTopics(group.topics, wanted)) {
        throw new SvcError(
          "conflict",
          `group '${groupName}' reads ${group.topics.join(", ")}; a member joining it must name the same topics (or wait until the other members leave)`,
        );
      }
    }
    const now = this.clock.monotonicMs();
    if (member !== null && group !== undefined) {
      member.lastSeenMs = now;
      if (!sameTopics(group.topics, wanted)) {
        group.topics = wanted;
        this.rebalance(group);
      }
      return this.answer(group, member.id);
    }
    const joined = group ?? this.newGroup(groupName, wanted);
    joined.topics = wanted;
    const id = randomUUID();
    joined.members.set(id, { id, key: caller.key, lastSeenMs: now });
    this.rebalance(joined);
    return this.answer(joined, id);
  }

  /** A member's sign of life: whether its generation is still the group's. */
  heartbeat(groupName: string, caller: Actor, memberId: string, generation: number): { status: HeartbeatStatus; generation: number } {
    const group = this.groups.get(groupName);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return { status: "unknown_member", generation: group?.generation ?? 0 };
    checkBound(member, groupName, caller);
    if (generation > group.generation) {
      throw new SvcError("bad_request", `generation ${generation} was never given out; group '${groupName}' is at generation ${group.generation}`);
    }
    member.lastSeenMs = this.clock.monotonicMs();
    return { status: generation === group.generation ? "ok" : "rebalance_required", generation: group.generation };
  }

  /** The member's partitions in the group's current generation (counts as a sign of life). */
  assignment(groupName: string, caller: Actor, memberId: string): MemberAssignment {
    const group = this.groups.get(groupName);
    const member = this.memberFor(group, groupName, caller, memberId);
    member.lastSeenMs = this.clock.monotonicMs();
    return this.answer(group!, memberId);
  }

  /** Removes a member; the others share its partitions. */
  leave(groupName: string, caller: Actor, memberId: string): { generation: number } {
    const group = this.groups.get(groupName);
    this.memberFor(group, groupName, caller, memberId);
    group!.members.delete(memberId);
    this.rebalance(group!);
    return { generation: group!.generation };
  }

  /**
   * Checks a commit that names its member (Kafka's fencing of a stale member): the member must be
   * known, at the group's generation, and own the partition.
   */
  checkCommitter(groupName: string, caller: Actor, memberId: string, generation: number, topic: string, partition: number): void {
    const group = this.groups.get(groupName);
    const member = this.memberFor(group, groupName, caller, memberId);
    if (generation !== group!.generation) {
      throw new SvcError("conflict", `generation ${generation} is stale; group '${groupName}' is at generation ${group!.generation}: fetch the assignment`);
    }
    if (!group!.assignment.get(member.id)!.includes(partitionId(topic, partition))) {
      throw new SvcError("conflict", `member '${memberId}' is not assigned ${topic} partition ${partition} in generation ${group!.generation}`);
    }
  }

  /** Removes every member not heard from within the timeout; answers the groups that rebalanced. */
  expire(): string[] {
    const deadline = this.clock.monotonicMs() - this.memberTimeoutMs;
    const changed: string[] = [];
    for (const group of this.groups.values()) {
      let removed = false;
      for (const member of group.members.values()) {
        if (member.lastSeenMs <= deadline) {
          group.members.delete(member.id);
          removed = true;
        }
      }
      if (removed) {
        this.rebalance(group);
        changed.push(group.name);
      }
    }
    return changed;
  }

  /** A topic was deleted: the groups reading it share what is left. */
  topicRemoved(topic: string): void {
    for (const group of this.groups.values()) if (group.topics.includes(topic)) this.rebalance(group);
  }

  /** Whether the group has members now. */
  hasMembers(groupName: string): boolean {
    return (this.groups.get(groupName)?.members.size ?? 0) > 0;
  }

  /** The group's generation and members' ids (for tests and, later, metrics). */
  describe(groupName: string): { generation: number; members: string[]; topics: readonly string[] } | null {
    const group = this.groups.get(groupName);
    if (group === undefined) return null;
    return { generation: group.generation, members: [...group.members.keys()].sort(), topics: group.topics };
  }

  private newGroup(name: string, topics: readonly string[]): Group {
    const group: Group = { name, generation: 0, topics, members: new Map(), assignment: new Map() };
    this.groups.set(name, group);
    return group;
  }

  /** The known member `memberId`, bound to the caller's key; a 404 or 403 otherwise. */
  private memberFor(group: Group | undefined, groupName: string, caller: Actor, memberId: string): Member {
    const member = group?.members.get(memberId);
    if (member === undefined) throw unknownMember(groupName, memberId);
    checkBound(member, groupName, caller);
    return member;
  }

  /** Assigns every partition of the group's topics to its members, in a new generation. */
  private rebalance(group: Group): void {
    const partitions: PartitionId[] = [];
    for (const topic of group.topics) {
      const count = this.partitionCounts(topic) ?? 0;
      for (let p = 0; p < count; p++) partitions.push(partitionId(topic, p));
    }
    group.assignment = assignPartitions(partitions, [...group.members.keys()], group.assignment);
    group.generation++;
    // An empty group is forgotten (its offsets and owner are kept elsewhere), so groups that
    // come and go do not pile up. If it fills again it starts at generation 1: no old member can
    // mistake it for its own, since member ids are never reused.
    if (group.members.size === 0) this.groups.delete(group.name);
  }

  private answer(group: Group, memberId: string): MemberAssignment {
    return { member_id: memberId, generation: group.generation, assignment: (group.assignment.get(memberId) ?? []).map(topicPartitionOf) };
  }
}

function sameTopics(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((topic, i) => topic === b[i]);
}

function checkBound(member: Member, groupName: string, caller: Actor): void {
  if (member.key !== caller.key && !caller.actsForAnyKey) {
    throw new SvcError("forbidden", `member '${member.id}' of group '${groupName}' belongs to another key`);
  }
}
