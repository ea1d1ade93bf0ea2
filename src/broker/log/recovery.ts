/**
 * Opening a partition directory after a clean stop or a crash.
 *
 * - The last segment (the one being written) is scanned in full: every frame's CRC is checked and
 *   the log is cut back to its last whole, valid record. Records are acknowledged only after the
 *   write that holds them is fdatasynced, so anything past that point was never acknowledged —
 *   and everything before it was, and is kept.
 * - Sealed segments keep their index files when they are well-formed and agree with the log; a
 *   missing or bad index is rebuilt by scanning.
 * - Leftovers of interrupted work are removed: `*.tmp` (a half-written index) and index files
 *   whose log file is gone.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../../core/errors.ts";
import { parseSegmentFileName, Segment, type SegmentOpenReport, type SegmentOptions } from "./segment.ts";

export interface RecoveryReport {
  segments: SegmentOpenReport[];
  removedFiles: string[];
}

/** Opens (creating if needed) the segments of the partition in `dir`, oldest first. */
export function recoverSegments(dir: string, options: SegmentOptions): { segments: Segment[]; report: RecoveryReport } {
  mkdirSync(dir, { recursive: true });
  const names = readdirSync(dir);
  const bases = names
    .map(parseSegmentFileName)
    .filter((b): b is number => b !== null)
    .sort((a, b) => a - b);
  const removedFiles = removeLeftovers(dir, names, new Set(bases));
  const report: RecoveryReport = { segments: [], removedFiles };
  if (bases.length === 0) return { segments: [Segment.create(dir, 0, options)], report };
  const segments: Segment[] = [];
  try {
    bases.forEach((base, i) => {
      const opened = Segment.open(dir, base, i === bases.length - 1, options);
      segments.push(opened.segment);
      report.segments.push(opened.report);
    });
    checkOffsetsIncrease(segments);
  } catch (error) {
    for (const segment of segments) segment.close();
    throw error;
  }
  return { segments, report };
}

function removeLeftovers(dir: string, names: string[], bases: Set<number>): string[] {
  const removed: string[] = [];
  for (const name of names) {
    const index = /^(\d{20})\.(index|timeindex)$/.exec(name);
    const orphan = index !== null && !bases.has(Number(index[1]));
    if (name.endsWith(".tmp") || orphan) {
      rmSync(join(dir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}

/** A segment holding offsets at or past the next one's base can only come from damage. */
function checkOffsetsIncrease(segments: Segment[]): void {
  for (let i = 0; i + 1 < segments.length; i++) {
    const segment = segments[i]!;
    const next = segments[i + 1]!;
    if (segment.nextOffset > next.baseOffset) {
      throw new SvcError(
        "data_corrupt",
        `segment ${segment.path(".log")} holds offsets up to ${segment.nextOffset - 1}, past the next segment's base ${next.baseOffset}`,
      );
    }
  }
}
