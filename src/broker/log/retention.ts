/**
 * Retention under the delete policy, for one partition (spec: Cleanup policies, `delete`): drop
 * sealed segments whose newest record is older than retention_ms, and drop the oldest sealed
 * segments while the partition holds more than retention_bytes. The active segment is never
 * dropped, however old or large: it is the one being written.
 *
 * Only the oldest segment is ever dropped, one at a time, so the log stays one run of segments
 * from the log start to the high watermark and the log start is the only boundary a consumer
 * meets. A segment past its age whose elder is not (timestamps are the broker's clock at append,
 * which can step back) waits for the elder, as in Kafka.
 */
import type { Partition } from "./partition.ts";
import type { Segment } from "./segment.ts";

/** A topic's retention limits; -1 means no limit (the config's convention). */
export interface RetentionLimits {
  retentionMs: number;
  retentionBytes: number;
}

export interface RetentionResult {
  segmentsDeleted: number;
  /** Log bytes of the deleted segments (index files are not counted: they are hints). */
  bytesReclaimed: number;
}

/**
 * Drops what the limits say is due, under the partition's write lock so no flush, roll or other
 * pass runs meanwhile. `nowMs` is the injected clock's time when the pass started.
 */
export function applyRetention(partition: Partition, limits: RetentionLimits, nowMs: number): Promise<RetentionResult> {
  return partition.exclusive(() => {
    const result: RetentionResult = { segmentsDeleted: 0, bytesReclaimed: 0 };
    // The topic may have been deleted while this pass waited for the lock.
    if (partition.isClosed) return result;
    for (let oldest = partition.oldestSealedSegment(); oldest !== null; oldest = partition.oldestSealedSegment()) {
      if (!isExpired(oldest, limits, nowMs) && !isOverSize(partition, limits)) break;
      const bytes = oldest.sizeBytes;
      partition.dropOldestSegment();
      result.segmentsDeleted++;
      result.bytesReclaimed += bytes;
    }
    return result;
  });
}

/**
 * Strictly older than retention_ms, as Kafka compares: a segment whose newest record is exactly
 * retention_ms old is kept. An empty sealed segment (maxTimestampMs is -Infinity) holds nothing
 * and always goes.
 */
function isExpired(segment: Segment, limits: RetentionLimits, nowMs: number): boolean {
  return limits.retentionMs >= 0 && nowMs - segment.maxTimestampMs > limits.retentionMs;
}

/**
 * retention_bytes is a cap: segments go while the partition is larger, even when that leaves it
 * below the cap. (Kafka instead drops only segments that fit within the excess, keeping at least
 * retention.bytes; a cap is what an operator sizing a disk expects.) The active segment counts
 * toward the size but is never dropped, so a partition can stay over the cap until it rolls.
 */
function isOverSize(partition: Partition, limits: RetentionLimits): boolean {
  return limits.retentionBytes >= 0 && partition.sizeBytes > limits.retentionBytes;
}
