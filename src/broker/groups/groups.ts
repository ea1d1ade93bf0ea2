/**
 * Consumer groups as the fronts use them (spec: Consumer groups): membership (coordinator.ts),
 * committed offsets (committed-offsets.ts), the group's owner, and reading from a committed
 * offset. Fronts decode their request and call these; nothing here knows HTTP.
 *
 * Ownership (spec: "A group belongs to the key that first joined it or committed to it; only that
 * key or a global admin may use it"): every call checks it first, and a join or commit that
 * succeeds claims a group no one owns — a refused one claims nothing.
 */
import type { Clock } from "../../core/clock.ts";
import { coordExpiryCheckIntervalMaxMs, groupCommitFlushIntervalMs } from "../../core/limits.ts";
import type { Logger } from "../../core/log.ts";
import { SvcError } from "../../core/errors.ts";
import type { Actor } from "../auth/principal.ts";
import type { ReadParams } from "../consume/consume.ts";
import type { TopicRegistry } from "../topics/registry.ts";
import { CommittedOffsets } from "./committed-offsets.ts";
import { GroupCoordinator, type HeartbeatStatus, type MemberAssignment } from "./coordinator.ts";

/** A commit as a front decoded it; member_id and generation together fence a stale member. */
export interface CommitRequest {
  topic: string;
  partition: number;
  offset: number;
  member?: { id: string; generation: number };
}

export class ConsumerGroups {
  readonly coordinator: GroupCoordinator;
  private readonly offsets: CommittedOffsets;
  private timers: ReturnType<typeof setInterval>[] = [];

  constructor(
    dataDir: string,
    clock: Clock,
    memberTimeoutMs: number,
    private readonly topics: TopicRegistry,
  ) {
    this.offsets = new CommittedOffsets(dataDir);
    this.coordinator = new GroupCoordinator(clock, memberTimeoutMs, (topic) => topics.find(topic)?.partitionCount ?? null);
  }

  /** Starts writing commits out once a second and removing silent members. */
  start(log: Logger): void {
    const flush = setInterval(() => {
      this.offsets.flush().catch((error: unknown) => log.error({ err: error }, "writing committed offsets failed; trying again in a second"));
    }, groupCommitFlushIntervalMs);
    const checkEveryMs = Math.min(coordExpiryCheckIntervalMaxMs, Math.ceil(this.coordinator.memberTimeoutMs / 10));
    const expire = setInterval(() => {
      const rebalanced = this.coordinator.expire();
      if (rebalanced.length > 0) log.info({ groups: rebalanced }, "removed members that stopped heartbeating; their groups rebalanced");
    }, checkEveryMs);
    this.timers = [flush, expire];
  }

  /** Stops the timers and writes out what is left (at shutdown). */
  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.offsets.flush();
  }

  join(group: string, caller: Actor, memberId: string | null, topics: readonly string[]): MemberAssignment {
    this.checkOwner(group, caller);
    const answer = this.coordinator.join(group, caller, memberId, topics);
    this.offsets.claim(group, caller.key);
    return answer;
  }

  heartbeat(group: string, caller: Actor, memberId: string, generation: number): { status: HeartbeatStatus; generation: number } {
    this.checkOwner(group, caller);
    return this.coordinator.heartbeat(group, caller, memberId, generation);
  }

  assignment(group: string, caller: Actor, memberId: string): MemberAssignment {
    this.checkOwner(group, caller);
    return this.coordinator.assignment(group, caller, memberId);
  }

  leave(group: string, caller: Actor, memberId: string): { generation: number } {
    this.checkOwner(group, caller);
    return this.coordinator.leave(group, caller, memberId);
  }

  /** Records the next offset the group reads; the topic and partition must exist and the offset be at most the high watermark. */
  commit(group: string, caller: Actor, request: CommitRequest): void {
    this.checkOwner(group, caller);
    const { topic, partition, offset } = request;
    const summary = this.partitionSummary(topic, partition);
    if (offset > summary.high_watermark) {
      throw new SvcError("bad_request", `offset ${offset} is past the high watermark ${summary.high_watermark} of ${topic} partition ${partition}`);
    }
    if (request.member !== undefined) this.coordinator.checkCommitter(group, caller, request.member.id, request.member.generation, topic, partition);
    this.offsets.claim(group, caller.key);
    this.offsets.commit(group, topic, partition, offset);
  }

  /** The group's committed offsets of the topics `visible` lets through; 404 for a group never joined or committed to. */
  committedOffsets(group: string, caller: Actor, visible: (topic: string) => boolean): Record<string, Record<string, number>> {
    this.checkOwner(group, caller);
    if (!this.offsets.has(group)) throw new SvcError("not_found", `group '${group}' does not exist (no member has joined it and nothing was committed to it)`);
    const answer: Record<string, Record<string, number>> = {};
    for (const [topic, partitions] of this.offsets.offsets(group)) {
      if (visible(topic)) answer[topic] = Object.fromEntries([...partitions].sort((a, b) => a[0] - b[0]));
    }
    return answer;
  }

  /**
   * Where the group reads the partition from: its committed offset, without committing (spec:
   * Consume rule 2). With nothing committed it reads from the partition's first offset: through
   * HTTP a client polls, so Kafka's default of starting at the end would skip whatever arrives
   * between a first poll and the first commit.
   */
  readParams(group: string, caller: Actor, topic: string, params: Omit<ReadParams, "offset">): ReadParams {
    this.checkOwner(group, caller);
    const summary = this.partitionSummary(topic, params.partition);
    const committed = this.offsets.committed(group, topic, params.partition) ?? summary.start_offset;
    // Retention may have dropped what the group had not read yet: read from what is left.
    const offset = Math.min(Math.max(committed, summary.start_offset), summary.high_watermark);
    return { ...params, offset };
  }

  /**
   * POST /admin/reset-offsets: every group with commits on `topic` goes back to the first offset
   * still in each partition it committed. Answers the groups moved.
   */
  resetToStart(topic: string): string[] {
    const t = this.topics.get(topic);
    const moved: string[] = [];
    for (const { group, partitions } of this.offsets.groupsOn(topic)) {
      for (const partition of partitions) {
        if (partition < t.partitionCount) this.offsets.commit(group, topic, partition, t.summary(partition).start_offset);
      }
      moved.push(group);
    }
    return moved.sort();
  }

  /** Each committed offset with the group's lag behind the partition's high watermark (for /metrics). */
  *lag(): Generator<{ group: string; topic: string; partition: number; offset: number; lag: number }> {
    for (const entry of this.offsets.entries()) {
      const topic = this.topics.find(entry.topic);
      if (topic === undefined || entry.partition >= topic.partitionCount) continue;
      yield { ...entry, lag: Math.max(0, topic.summary(entry.partition).high_watermark - entry.offset) };
    }
  }

  /** Whether `caller` sees the group in /metrics: its owner, or a global admin (everyone while authentication is off). */
  isVisibleTo(group: string, caller: Actor): boolean {
    const owner = this.offsets.owner(group);
    return caller.actsForAnyKey || (owner !== null && owner === caller.key);
  }

  /** A topic was deleted: its offsets go, and groups reading it rebalance. */
  topicDeleted(topic: string): void {
    this.offsets.dropTopic(topic);
    this.coordinator.topicRemoved(topic);
  }

  private checkOwner(group: string, caller: Actor): void {
    const owner = this.offsets.owner(group);
    if (owner !== null && owner !== caller.key && !caller.actsForAnyKey) {
      throw new SvcError("forbidden", `group '${group}' belongs to another key`);
    }
  }

  private partitionSummary(topic: string, partition: number) {
    const t = this.topics.get(topic);
    if (partition >= t.partitionCount) {
      throw new SvcError("not_found", `topic '${topic}' has no partition ${partition}; it has ${t.partitionCount} (0 to ${t.partitionCount - 1})`);
    }
    return t.summary(partition);
  }
}
