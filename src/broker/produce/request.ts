/**
 * A produce request body, checked whole before anything is written: every record's fields, its
 * size, its partition. The result is a plan — each record's partition and bytes — that
 * produce.ts carries out; a request that fails here has changed nothing (not even the
 * round-robin cursor).
 */
import { SvcError } from "../../core/errors.ts";
import { badRequest, describeJson, integerIn, objectFields, textField } from "../requests/fields.ts";
import type { Topic } from "../topics/topic.ts";
import { partitionForKey, roundRobin } from "./partitioner.ts";

export interface PlannedRecord {
  partition: number;
  key: Uint8Array | null;
  value: Uint8Array;
  /** With producer_id: the record's sequence in its partition. */
  sequence: number | null;
}

export interface ProducePlan {
  producerId: string | null;
  records: PlannedRecord[];
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

/** A record as a front decoded it, before the checks every front shares. */
export interface DecodedRecord {
  key: Uint8Array | null;
  value: Uint8Array;
  /** The partition named; null routes by key, else round-robin. */
  partition: number | null;
  sequence: number | null;
}

/** A produce body (JSON, from HTTP) as a plan; a 4xx naming the field at the first problem. */
export function planProduce(body: unknown, topic: Topic, limits: ProduceLimits): ProducePlan {
  const fields = objectFields(body, bodyFields, "the request body");
  const producerId = fields.producer_id === undefined || fields.producer_id === null ? null : textField(fields.producer_id, "producer_id");
  const list = fields.records;
  if (!Array.isArray(list)) throw badRequest(`'records' must be an array of record objects, not ${describeJson(list)}`);
  return planRecords(
    producerId,
    list.map((item, i) => decodeJsonRecord(item, i)),
    topic,
    limits,
  );
}

/**
 * The checks every front's produce passes, whole, before anything is written: at least one
 * record, each within --max-record-bytes and naming a partition the topic has, sequences exactly
 * when there is a producer id, and every record of an idempotent producer routed by partition or
 * key. Answers each record's partition.
 */
export function planRecords(producerId: string | null, records: DecodedRecord[], topic: Topic, limits: ProduceLimits): ProducePlan {
  if (producerId === "") throw badRequest("'producer_id' must not be empty");
  if (records.length === 0) throw badRequest("'records' must hold at least one record");
  // Messages are made only for a record that fails: this loop runs for every record produced.
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r.partition !== null && !(r.partition >= 0 && r.partition < topic.partitionCount))
      integerIn(r.partition, 0, topic.partitionCount - 1, `records[${i}].partition`);
    const bytes = r.value.length + (r.key?.length ?? 0);
    if (bytes > limits.recordBytesMax) {
      throw new SvcError("body_too_large", `'records[${i}]' has ${bytes} bytes of key and value; the limit is ${limits.recordBytesMax} (--max-record-bytes)`);
    }
  }
  const sequenced = records.filter((r) => r.sequence !== null).length;
  if (producerId !== null && sequenced !== records.length) {
    throw badRequest("with 'producer_id', every record needs a 'sequence'");
  }
  if (producerId === null && sequenced > 0) throw badRequest("a record with 'sequence' needs the request's 'producer_id'");
  if (producerId !== null) {
    // Sequences count per partition, so the producer must know each record's partition, and a
    // retry must land where the original did: round robin would send it elsewhere.
    const unrouted = records.findIndex((r) => r.partition === null && r.key === null);
    if (unrouted >= 0) {
      throw badRequest(
        `with 'producer_id', 'records[${unrouted}]' needs a 'partition' or a 'key': its sequence counts per partition, and a retry must reach the same one`,
      );
    }
  }
  // The decoded records become the plan's, each given its partition in place: the front made
  // them for this request alone, and a produce of thousands of records need not copy them.
  for (const r of records) {
    r.partition ??= r.key !== null ? partitionForKey(r.key, topic.partitionCount) : roundRobin(topic, topic.partitionCount);
  }
  return { producerId, records: records as PlannedRecord[] };
}

const encoder = new TextEncoder();

function decodeJsonRecord(item: unknown, i: number): DecodedRecord {
  const where = `records[${i}]`;
  const fields = objectFields(item, recordFields, where);
  if (fields.value === undefined) throw badRequest(`'${where}.value' is required`);
  const value = textField(fields.value, `${where}.value`);
  const key = fields.key === undefined || fields.key === null ? null : textField(fields.key, `${where}.key`);
  const absent = (v: unknown) => v === undefined || v === null;
  const partition = absent(fields.partition) ? null : integerIn(fields.partition, 0, Number.MAX_SAFE_INTEGER, `${where}.partition`);
  const sequence = absent(fields.sequence) ? null : integerIn(fields.sequence, 0, Number.MAX_SAFE_INTEGER, `${where}.sequence`);
  return { key: key === null ? null : encoder.encode(key), value: encoder.encode(value), partition, sequence };
}
