/**
 * Compaction, for one partition (spec: Cleanup policies, `compact`): in sealed segments keep only
 * the newest record of each key; a record with an empty value is a tombstone, kept for
 * tombstone_retention_ms after its timestamp and then dropped too.
 *
 * - "Newest" is judged over every segment, the active one included: a key written again since a
 *   segment was sealed loses its older records there, even though the newer one is not yet sealed.
 * - Records without a key are always kept: there is nothing to compare them with, and dropping
 *   them would make compaction a silent retention policy. (An empty value without a key is kept
 *   too; it deletes nothing.)
 * - The active segment is never touched: it is being written.
 * - Offsets never change. Dropped records leave gaps, which reads already step over.
 * - Each segment with something to drop is rewritten whole and swapped in (segment-rewrite.ts);
 *   one with nothing to drop is left alone. Empty rewritten segments stay as empty files: their
 *   base offset keeps the log start where it was, and retention (if the policy deletes) drops
 *   them.
 *
 * The whole partition is done under its write lock, so no flush, roll or retention step runs
 * meanwhile and the scan that decides and the rewrite that acts see the same log. Produces to the
 * partition wait for it; reads do not (they are synchronous and the swap is too).
 */
import type { Partition } from "./partition.ts";
import type { LogRecord } from "./record.ts";
import { rewriteSegment } from "./segment-rewrite.ts";
import type { Segment } from "./segment.ts";

export interface CompactionSettings {
  /** How long a tombstone outlives its timestamp (the topic's tombstone_retention_ms). */
  tombstoneRetentionMs: number;
}

export interface CompactionResult {
  segmentsRewritten: number;
  recordsDropped: number;
  /** Log bytes removed from the rewritten segments (index files are hints and not counted). */
  bytesReclaimed: number;
}

/** Compacts the sealed segments of `partition`. `nowMs` is the injected clock's time at the pass's start. */
export function compactPartition(partition: Partition, settings: CompactionSettings, nowMs: number): Promise<CompactionResult> {
  return partition.exclusive(() => {
    const result: CompactionResult = { segmentsRewritten: 0, recordsDropped: 0, bytesReclaimed: 0 };
    // The topic may have been deleted while this pass waited for the lock.
    if (partition.isClosed) return result;
    const segments = [...partition.listSegments()];
    const sealed = segments.slice(0, -1);
    if (sealed.length === 0) return result;
    const newest = newestOffsetPerKey(segments);
    const keep = (record: LogRecord) => isKept(record, newest, settings, nowMs);
    for (const segment of sealed) {
      const rewritten = rewriteSegment(segment, keep);
      if (rewritten === null) continue;
      partition.reopenSealedSegment(segment);
      result.segmentsRewritten++;
      result.recordsDropped += rewritten.recordsDropped;
      result.bytesReclaimed += rewritten.bytesBefore - rewritten.bytesAfter;
    }
    return result;
  });
}

/** Map keys are the key bytes as latin1 text: one character per byte, so distinct keys never collide. */
function keyText(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");
}

/** The newest (largest) offset of every key in `segments`, which are oldest first. */
function newestOffsetPerKey(segments: readonly Segment[]): Map<string, number> {
  const newest = new Map<string, number>();
  for (const segment of segments) {
    segment.scanRecords((record) => {
      if (record.key !== null) newest.set(keyText(record.key), record.offset);
    });
  }
  return newest;
}

function isKept(record: LogRecord, newest: ReadonlyMap<string, number>, settings: CompactionSettings, nowMs: number): boolean {
  if (record.key === null) return true;
  if (newest.get(keyText(record.key)) !== record.offset) return false;
  return !isExpiredTombstone(record, settings, nowMs);
}

/**
 * Strictly older than tombstone_retention_ms, as retention compares ages: a tombstone exactly that
 * old is still kept, so a consumer that reads within the window sees the delete.
 */
function isExpiredTombstone(record: LogRecord, settings: CompactionSettings, nowMs: number): boolean {
  return record.value.length === 0 && nowMs - record.timestampMs > settings.tombstoneRetentionMs;
}
