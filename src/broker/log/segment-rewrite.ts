/**
 * Rewriting a sealed segment's log file with only some of its records (compaction), crash-safely.
 *
 * The kept records go to `<base>.log.compact.tmp`, which is fsynced; then the segment's index
 * files are removed and the directory fsynced; then the temporary file is renamed over the .log
 * and the directory fsynced again. A crash at any point leaves either the original log or the
 * rewritten one, each whole:
 *
 * - before the rename: the original .log, perhaps without index files (they are hints, rebuilt by
 *   scanning on open) and perhaps a leftover temporary file, which recovery removes (`*.tmp`);
 * - after it: the rewritten .log, whose bytes were synced before it took the name.
 *
 * The index files go before the rename so a rewritten log is never opened with the original's
 * index, whose positions no longer point at the records they name.
 *
 * Offsets are copied as they are: a rewritten segment has gaps where records were dropped.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import { compactionWriteChunkBytes } from "../../core/limits.ts";
import { encodeRecords, frameBytes, type LogRecord } from "./record.ts";
import { fsyncDir } from "../../core/atomic-file.ts";
import { writeAll } from "../../core/write-all.ts";
import type { Segment } from "./segment.ts";

/** Ends in `.tmp`, so recovery (recovery.ts) removes a leftover; never parsed as a segment. */
const rewriteSuffix = ".compact.tmp";

export function rewriteTempPath(segment: Segment): string {
  return segment.path(".log") + rewriteSuffix;
}

export interface RewriteResult {
  recordsDropped: number;
  bytesBefore: number;
  bytesAfter: number;
}

/**
 * Rewrites `segment`'s log with the records `keep` accepts, in order. Returns null, touching no
 * file, when it accepts them all (most passes over a settled log). `keep` must answer the same for
 * a record every time it is asked: the segment is scanned twice, once to count and once to copy.
 * The caller holds the partition's write lock and reopens the segment afterwards
 * (Partition.reopenSealedSegment): until then the old Segment still reads the original file.
 */
export function rewriteSegment(segment: Segment, keep: (record: LogRecord) => boolean): RewriteResult | null {
  let recordsDropped = 0;
  segment.scanRecords((record) => {
    if (!keep(record)) recordsDropped++;
  });
  if (recordsDropped === 0) return null;
  const temp = rewriteTempPath(segment);
  const bytesAfter = writeKept(segment, keep, temp);
  rmSync(segment.path(".index"), { force: true });
  rmSync(segment.path(".timeindex"), { force: true });
  fsyncDir(segment.dir);
  renameSync(temp, segment.path(".log"));
  fsyncDir(segment.dir);
  return { recordsDropped, bytesBefore: segment.sizeBytes, bytesAfter };
}

/** Writes the kept records to `temp` and fsyncs it; removes it on failure. Returns its size. */
function writeKept(segment: Segment, keep: (record: LogRecord) => boolean, temp: string): number {
  const fd = openSync(temp, "w");
  let written = 0;
  try {
    let pending: LogRecord[] = [];
    let pendingBytes = 0;
    const writePending = () => {
      if (pending.length === 0) return;
      written += writeAll(fd, encodeRecords(pending));
      pending = [];
      pendingBytes = 0;
    };
    segment.scanRecords((record) => {
      if (!keep(record)) return;
      pending.push(record);
      pendingBytes += frameBytes(record.key, record.value);
      if (pendingBytes >= compactionWriteChunkBytes) writePending();
    });
    writePending();
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  return written;
}
