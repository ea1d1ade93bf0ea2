/**
 * A produce request body, checked whole before anything is written: every record's fields, its
 * size, its partition. The result is a plan — the records' frames and each one's partition — that
 * produce.ts carries out; a request that fails here has changed nothing (not even the
 * round-robin cursor).
 */
import { SvcError } from "../../core/errors.ts";
import { badRequest, describeJson, integerIn, objectFields, textField } from "../requests/fields.ts";
import { type FrameRun, frameKey, frameKeyValueBytes, frameOverheadBytes, unstampedFrames } from "../log/record.ts";
import type { Topic } from "../topics/topic.ts";
import { partitionForKey, roundRobin } from "./partitioner.ts";

/** What a front decoded of a produce's records, before the checks every front shares. */
export interface DecodedRecords {
  /** Every record's frame, in request order. */
  run: FrameRun;
  /** Each record's partition as named; -1 routes by key, else round robin. */
  partitions: Float64Array;
  /** Each record's sequence; -1 for none. */
  sequences: Float64Array;
}

export interface ProducePlan {
  producerId: string | null;
  /** The request's records as frames, in request order. */
  run: FrameRun;
  /** Where each record's frame starts in run.frames. */
  starts: Uint32Array;
  /** Each record's partition, routed. */
  partitions: Float64Array;
  /** With producer_id, each record's sequence (-1 for none without one). */
  sequences: Float64Array;
  /** Bytes of all the records' keys and values: what quotas and metrics count. */
  keyValueBytes: number;
}

/** What a produce answers for one record, in the request's order. */
export interface ProduceResult {
  partition: number;
  offset: number;
  /** Present (true) only when a retried record was recognised and not written again. */
  duplicate?: true;
}

export interface ProduceLimits {
  /** Largest key plus value of one record, in bytes (--max-record-bytes). */
  recordBytesMax: number;
}

const bodyFields = ["producer_id", "records"] as const;
const recordFields = ["key", "value", "partition", "sequence"] as const;

/** A record's key and value as the JSON front decodes them. */
interface ProduceRecordBytes {
  key: Uint8Array | null;
  value: Uint8Array;
}

/** A produce body (JSON, from HTTP) as a plan; a 4xx naming the field at the first problem. */
export function planProduce(body: unknown, topic: Topic, limits: ProduceLimits): ProducePlan {
  const fields = objectFields(body, bodyFields, "the request body");
  const producerId = fields.producer_id === undefined || fields.producer_id === null ? null : textField(fields.producer_id, "producer_id");
  const list = fields.records;
  if (!Array.isArray(list)) throw badRequest(`'records' must be an array of record objects, not ${describeJson(list)}`);
  const records = new Array<ProduceRecordBytes>(list.length);
  const partitions = new Float64Array(list.length);
  const sequences = new Float64Array(list.length);
  for (let i = 0; i < list.length; i++) records[i] = decodeJsonRecord(list[i], i, partitions, sequences);
  // Measured before they are framed (a frame cannot hold what --max-record-bytes refuses), after
  // every record's fields are read, so a malformed field is named first as planRecords would.
  records.forEach((r, i) => checkRecordBytes(i, (r.key?.length ?? 0) + r.value.length, limits));
  const decoded: DecodedRecords = { run: unstampedFrames(records), partitions, sequences };
  return planRecords(producerId, decoded, topic, limits);
}

function checkRecordBytes(i: number, bytes: number, limits: ProduceLimits): void {
  if (bytes > limits.recordBytesMax) {
    throw new SvcError("body_too_large", `'records[${i}]' has ${bytes} bytes of key and value; the limit is ${limits.recordBytesMax} (--max-record-bytes)`);
  }
}

/**
 * The checks every front's produce passes, whole, before anything is written: at least one
 * record, each within --max-record-bytes and naming a partition the topic has, sequences exactly
 * when there is a producer id, and every record of an idempotent producer routed by partition or
 * key. Routes each record to its partition, in `decoded` itself: the front made it for this
 * request alone.
 */
export function planRecords(producerId: string | null, decoded: DecodedRecords, topic: Topic, limits: ProduceLimits): ProducePlan {
  if (producerId === "") throw badRequest("'producer_id' must not be empty");
  const { run, partitions, sequences } = decoded;
  const { count, frames } = run;
  if (count === 0) throw badRequest("'records' must hold at least one record");
  const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
  const starts = new Uint32Array(count);
  let keyValueBytes = 0;
  let sequenced = 0;
  // Messages are made only for a record that fails: this loop runs for every record produced.
  for (let i = 0, pos = 0; i < count; i++) {
    starts[i] = pos;
    const partition = partitions[i]!;
    if (partition !== -1 && !(partition >= 0 && partition < topic.partitionCount)) integerIn(partition, 0, topic.partitionCount - 1, `records[${i}].partition`);
    const bytes = frameKeyValueBytes(view, pos);
    if (bytes > limits.recordBytesMax) checkRecordBytes(i, bytes, limits);
    keyValueBytes += bytes;
    if (sequences[i] !== -1) sequenced++;
    pos += frameOverheadBytes + bytes;
  }
  if (producerId !== null && sequenced !== count) throw badRequest("with 'producer_id', every record needs a 'sequence'");
  if (producerId === null && sequenced > 0) throw badRequest("a record with 'sequence' needs the request's 'producer_id'");
  if (producerId !== null) {
    // Sequences count per partition, so the producer must know each record's partition, and a
    // retry must land where the original did: round robin would send it elsewhere.
    for (let i = 0; i < count; i++) {
      if (partitions[i] !== -1 || frameKey(frames, view, starts[i]!) !== null) continue;
      throw badRequest(
        `with 'producer_id', 'records[${i}]' needs a 'partition' or a 'key': its sequence counts per partition, and a retry must reach the same one`,
      );
    }
  }
  for (let i = 0; i < count; i++) {
    if (partitions[i] !== -1) continue;
    const key = frameKey(frames, view, starts[i]!);
    partitions[i] = key !== null ? partitionForKey(key, topic.partitionCount) : roundRobin(topic, topic.partitionCount);
  }
  return { producerId, run, starts, partitions, sequences, keyValueBytes };
}

/** Key plus value bytes of the plan's records at `positions`. */
export function keyValueBytesAt(plan: ProducePlan, positions: readonly number[]): number {
  const { frames } = plan.run;
  const view = new DataView(frames.buffer, frames.byteOffset, frames.byteLength);
  let bytes = 0;
  for (const p of positions) bytes += frameKeyValueBytes(view, plan.starts[p]!);
  return bytes;
}

const encoder = new TextEncoder();

/** Record `i` of a JSON body; its partition and sequence (-1: none) go to `partitions[i]` and `sequences[i]`. */
function decodeJsonRecord(item: unknown, i: number, partitions: Float64Array, sequences: Float64Array): ProduceRecordBytes {
  const where = `records[${i}]`;
  const fields = objectFields(item, recordFields, where);
  if (fields.value === undefined) throw badRequest(`'${where}.value' is required`);
  const value = textField(fields.value, `${where}.value`);
  const key = fields.key === undefined || fields.key === null ? null : textField(fields.key, `${where}.key`);
  const absent = (v: unknown) => v === undefined || v === null;
  partitions[i] = absent(fields.partition) ? -1 : integerIn(fields.partition, 0, Number.MAX_SAFE_INTEGER, `${where}.partition`);
  sequences[i] = absent(fields.sequence) ? -1 : integerIn(fields.sequence, 0, Number.MAX_SAFE_INTEGER, `${where}.sequence`);
  return { key: key === null ? null : encoder.encode(key), value: encoder.encode(value) };
}
