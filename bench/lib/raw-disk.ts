/**
 * The disk's own limit for a produce, as the broker benchmarks measure it beside the broker: a
 * loop of one writev + fdatasync of exactly one request's worth of record frames (the native
 * appendChunks the broker itself uses, sync=true), one batch at a time.
 */
import { closeSync, openSync, rmSync } from "node:fs";
import { encodeRecords, type LogRecord } from "../../src/broker/log/record.ts";
import { appendChunks } from "../../src/native/append.ts";

/** Batches per second of one writev + fdatasync of `frames` each, for `seconds`; the file is removed after. */
export async function rawDisk(path: string, frames: Uint8Array, seconds: number): Promise<number> {
  const fd = openSync(path, "a");
  try {
    let batches = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    while (performance.now() < end) {
      await appendChunks(fd, [frames], true);
      batches++;
    }
    return batches / ((performance.now() - start) / 1000);
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

/** One request's worth of frames, as the broker would write them: keyless records of `valueBytes`. */
export function requestFrames(valueBytes: number, batch: number): Uint8Array {
  const value = new Uint8Array(valueBytes).fill("x".charCodeAt(0));
  const now = Date.now();
  const records: LogRecord[] = Array.from({ length: batch }, (_, offset) => ({ offset, timestampMs: now, key: null, value }));
  return encodeRecords(records);
}
