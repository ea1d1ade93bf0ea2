/**
 * The compaction pass over every topic whose cleanup_policy includes `compact`
 * (log/compaction.ts does one partition). It runs in the background right after the retention
 * pass, on the same scheduler (retention-scheduler.ts), and on demand through
 * POST /admin/run-compaction. Each partition takes its write lock on its own, so produces to
 * other partitions go on meanwhile. Time comes from the injected clock.
 */
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { type CompactionSettings, compactPartition } from "./log/compaction.ts";
import { forEachPartition, type PartitionPlace, policyIncludes } from "./partition-pass.ts";
import type { TopicConfig } from "./topics/config.ts";
import type { TopicRegistry } from "./topics/registry.ts";

/** What one pass did: the body of POST /admin/run-compaction. */
export interface CompactionSummary {
  /** Partitions of compacted topics that were visited (those that hold data). */
  partitions_checked: number;
  segments_rewritten: number;
  records_dropped: number;
  bytes_reclaimed: number;
  /** Partitions where compaction failed (logged with its error); the pass goes on past them. */
  partitions_failed: number;
}

/** The topic's compaction settings, or null when its policy does not compact (`delete` alone). */
export function compactionSettings(config: Readonly<TopicConfig>): CompactionSettings | null {
  if (!policyIncludes(config, "compact")) return null;
  return { tombstoneRetentionMs: config.tombstone_retention_ms };
}

/** What a compaction pass reports per partition it compacted (the broker's metrics). */
export type CompactionObserver = (place: PartitionPlace, recordsDropped: number) => void;

/** One pass over every topic and partition; resolves when it is done. */
export async function runCompactionPass(topics: TopicRegistry, clock: Clock, log: Logger, observe: CompactionObserver = () => {}): Promise<CompactionSummary> {
  const summary: CompactionSummary = { partitions_checked: 0, segments_rewritten: 0, records_dropped: 0, bytes_reclaimed: 0, partitions_failed: 0 };
  summary.partitions_failed = await forEachPartition(topics, log, "compaction", async (partitionLog, config, place) => {
    const settings = compactionSettings(config);
    if (settings === null) return;
    summary.partitions_checked++;
    const result = await compactPartition(partitionLog, settings, clock.nowMs());
    summary.segments_rewritten += result.segmentsRewritten;
    summary.records_dropped += result.recordsDropped;
    summary.bytes_reclaimed += result.bytesReclaimed;
    observe(place, result.recordsDropped);
  });
  if (summary.segments_rewritten > 0 || summary.partitions_failed > 0) log.info(summary, "compaction pass done");
  return summary;
}
