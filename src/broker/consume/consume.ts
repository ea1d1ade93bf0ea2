/**
 * A consume (spec: Consume): the records of one partition from an offset, at most the request's
 * count and bytes, with the offset to read next and the partition's high watermark. The read is
 * front-neutral — raw keys and values, as the binary protocol sends them; records.ts encodes
 * them for HTTP.
 */
import { SvcError } from "../../core/errors.ts";
import { keyValueBytes, type LogRecord } from "../log/record.ts";
import type { Topic } from "../topics/topic.ts";
import type { ConsumeParams } from "./params.ts";

export interface PartitionRead {
  records: LogRecord[];
  nextOffset: number;
  highWatermark: number;
}

/** What a read needs: the partition, where to start, and its bounds. */
export type ReadParams = Omit<ConsumeParams, "encoding">;

/** Reads as `p` says; `onRead` is told the records and bytes of keys and values read (quota, metrics). */
export function readPartition(topic: Topic, p: ReadParams, onRead: (records: number, bytes: number) => void): PartitionRead {
  if (p.partition >= topic.partitionCount) {
    throw new SvcError("not_found", `topic '${topic.name}' has no partition ${p.partition}; it has ${topic.partitionCount} (0 to ${topic.partitionCount - 1})`);
  }
  const log = topic.existingLog(p.partition);
  if (log === null) {
    // Never written: an empty log whose high watermark is 0.
    if (p.offset > 0) throw new SvcError("bad_request", `offset ${p.offset} is past the high watermark 0`);
    return { records: [], nextOffset: 0, highWatermark: 0 };
  }
  const read = log.read(p.offset, p.maxRecords, p.maxBytes);
  onRead(read.records.length, keyValueBytes(read.records));
  return { records: read.records, nextOffset: read.nextOffset, highWatermark: read.highWatermark };
}
