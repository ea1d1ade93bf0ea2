/**
 * The retention pass over every topic, and the timer that runs it in the background.
 *
 * A pass visits each partition that holds data: it rolls the active segment if it has aged past
 * segment_ms (no produce may come to trigger that check, and only sealed segments can be
 * dropped), then, for topics whose cleanup_policy includes `delete`, applies retention
 * (log/retention.ts). Each step takes the partition's write lock on its own, so produces go on
 * between them. Time comes from the injected clock.
 */
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { applyRetention, type RetentionLimits } from "./log/retention.ts";
import { forEachPartition, type PartitionPlace, policyIncludes } from "./partition-pass.ts";
import type { TopicConfig } from "./topics/config.ts";
import type { TopicRegistry } from "./topics/registry.ts";

/** What one pass did: the body of POST /admin/run-retention. */
export interface RetentionSummary {
  segments_deleted: number;
  bytes_reclaimed: number;
  /** Active segments rolled because they had aged past segment_ms. */
  segments_rolled: number;
  /** Partitions where a step failed (logged with its error); the pass goes on past them. */
  partitions_failed: number;
}

/** The topic's retention limits, or null when its policy does not delete (`compact` alone). */
export function retentionLimits(config: Readonly<TopicConfig>): RetentionLimits | null {
  if (!policyIncludes(config, "delete")) return null;
  return { retentionMs: config.retention_ms, retentionBytes: config.retention_bytes };
}

/** What a retention pass reports per partition it deleted from (the broker's metrics). */
export type RetentionObserver = (place: PartitionPlace, segmentsDeleted: number, bytesReclaimed: number) => void;

/** One pass over every topic and partition; resolves when it is done. */
export async function runRetentionPass(topics: TopicRegistry, clock: Clock, log: Logger, observe: RetentionObserver = () => {}): Promise<RetentionSummary> {
  const summary: RetentionSummary = { segments_deleted: 0, bytes_reclaimed: 0, segments_rolled: 0, partitions_failed: 0 };
  summary.partitions_failed = await forEachPartition(topics, log, "retention", async (partitionLog, config, place) => {
    if (await partitionLog.rollIfAged()) summary.segments_rolled++;
    const limits = retentionLimits(config);
    if (limits === null) return;
    const result = await applyRetention(partitionLog, limits, clock.nowMs());
    summary.segments_deleted += result.segmentsDeleted;
    summary.bytes_reclaimed += result.bytesReclaimed;
    if (result.segmentsDeleted > 0) observe(place, result.segmentsDeleted, result.bytesReclaimed);
  });
  if (summary.segments_deleted > 0 || summary.partitions_failed > 0) log.info(summary, "retention pass done");
  return summary;
}

/**
 * Runs `pass` every `intervalMs`, counted from the end of the previous run (a timeout chain, not
 * an interval), so a slow pass never overlaps the next. Passes asked for on demand (`runNow`)
 * queue behind the one running, so two never interleave their deletions. `followUp` (compaction,
 * compaction-pass.ts) runs after each background pass, on the same queue; `runOther` queues it on
 * demand.
 */
export class RetentionScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private last: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<RetentionSummary>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    private readonly followUp: (() => Promise<unknown>) | null = null,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Runs a pass after any pass in progress; resolves with its summary. */
  runNow(): Promise<RetentionSummary> {
    return this.runOther(this.pass);
  }

  /** Runs another pass (compaction) on the same queue, after any pass in progress. */
  runOther<T>(pass: () => Promise<T>): Promise<T> {
    const run = this.last.then(pass);
    this.last = run.catch(() => undefined);
    return run;
  }

  /** No further passes start; resolves once the one in progress (if any) is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.last;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const followUp = this.followUp;
      const retention = this.runNow().catch((error) => this.log.error({ err: error }, "background retention pass failed"));
      const compaction =
        followUp === null ? Promise.resolve() : this.runOther(followUp).catch((error) => this.log.error({ err: error }, "background compaction pass failed"));
      void Promise.all([retention, compaction]).finally(() => this.schedule());
    }, this.intervalMs);
    // The timer alone must not keep the process alive at shutdown.
    this.timer.unref?.();
  }
}
