/**
 * The payloads of the binary protocol's frames, byte for byte as the spec lays them out
 * (big-endian, wire.ts), both ways: the broker decodes requests and encodes responses, the client
 * library the other way round. A payload that ends early, runs on past its last field or holds a
 * value out of range is a 400 naming the field; nothing of it has been acted on.
 *
 *   produce request    topic_len u16 | topic | producer_id_len i32 (-1: none) | producer_id | count u32 |
 *                      count × (key_len i32 (-1: no key) | key | value_len u32 | value | partition i32 (-1: by key) | sequence i64 (i64 min: none))
 *   produce response   count u32 | count × (partition u32 | offset u64 | duplicate u8)
 *   consume request    topic_len u16 | topic | partition u32 | offset u64 | max_records u32 | max_bytes u32
 *   consume response   next_offset u64 | high_watermark u64 | count u32 |
 *                      count × (partition u32 | offset u64 | timestamp_ms i64 | key_len i32 | key | value_len u32 | value)
 */
import { AssertionError } from "../../core/assert.ts";
import { SvcError } from "../../core/errors.ts";
import { frameProduceRecords } from "../../native/frames.ts";
import { frameOverheadBytes, type LogRecord } from "../log/record.ts";
import type { DecodedRecords, ProduceResult } from "../produce/request.ts";
import { noSequence } from "./wire.ts";

const twoPow32 = 0x1_0000_0000;
/** The largest high half of a u64 that is still a safe integer. */
const safeHighWordMax = 0x1f_ffff;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();
/** Bytes of one produce record's fixed fields: key_len, value_len, partition, sequence. */
const produceRecordFixedBytes = 4 + 4 + 4 + 8;
/** Bytes of one consumed record's fixed fields. */
const consumeRecordFixedBytes = 4 + 8 + 8 + 4 + 4;

/** Reads a payload field by field; `what` names the payload in errors. */
class PayloadReader {
  private at = 0;
  private readonly view: DataView;

  constructor(
    private readonly payload: Uint8Array,
    private readonly what: string,
  ) {
    this.view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  }

  get remaining(): number {
    return this.payload.length - this.at;
  }

  fail(message: string): SvcError {
    return new SvcError("bad_request", `malformed ${this.what} payload: ${message}`);
  }

  private need(n: number, field: string): void {
    if (this.remaining < n) throw this.fail(`it ends inside ${field} (byte ${this.at}, ${n} needed, ${this.remaining} left)`);
  }

  u16(field: string): number {
    this.need(2, field);
    const v = this.view.getUint16(this.at);
    this.at += 2;
    return v;
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }

  i32(field: string): number {
    this.need(4, field);
    const v = this.view.getInt32(this.at);
    this.at += 4;
    return v;
  }

  /** A u64 that must fit a safe integer (offsets do); read as two halves, no BigInt per field. */
  u64(field: string): number {
    this.need(8, field);
    const high = this.view.getUint32(this.at);
    const low = this.view.getUint32(this.at + 4);
    this.at += 8;
    if (high > safeHighWordMax) throw this.fail(`${field} is ${(BigInt(high) << 32n) | BigInt(low)}; at most ${Number.MAX_SAFE_INTEGER}`);
    return high * twoPow32 + low;
  }

  i64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigInt64(this.at);
    this.at += 8;
    return v;
  }

  bytes(n: number, field: string): Uint8Array {
    this.need(n, field);
    const v = this.payload.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }

  text(n: number, field: string): string {
    try {
      return strictUtf8.decode(this.bytes(n, field));
    } catch (error) {
      if (error instanceof SvcError) throw error;
      throw this.fail(`${field} is not valid UTF-8`);
    }
  }

  end(): void {
    if (this.remaining !== 0) throw this.fail(`${this.remaining} bytes follow its last field`);
  }
}

/** Writes a payload of known size field by field. */
class PayloadWriter {
  readonly bytes: Uint8Array;
  private readonly view: DataView;
  private at = 0;

  /** `room` bytes are left free before the payload (a frame's header, written in place later). */
  constructor(size: number, room = 0) {
    this.bytes = new Uint8Array(room + size);
    this.view = new DataView(this.bytes.buffer);
    this.at = room;
  }

  u8(v: number): void {
    this.bytes[this.at++] = v;
  }
  u16(v: number): void {
    this.view.setUint16(this.at, v);
    this.at += 2;
  }
  u32(v: number): void {
    this.view.setUint32(this.at, v);
    this.at += 4;
  }
  i32(v: number): void {
    this.view.setInt32(this.at, v);
    this.at += 4;
  }
  /** A safe integer as a u64, written as two halves (no BigInt per field: a response writes thousands). */
  u64(v: number): void {
    this.view.setUint32(this.at, Math.floor(v / twoPow32));
    this.view.setUint32(this.at + 4, v >>> 0);
    this.at += 8;
  }
  i64(v: bigint): void {
    this.view.setBigInt64(this.at, v);
    this.at += 8;
  }
  raw(v: Uint8Array): void {
    this.bytes.set(v, this.at);
    this.at += v.length;
  }
}

/** A produce record's fields as the client sends them. */
export interface ProduceRecordFields {
  key: Uint8Array | null;
  value: Uint8Array;
  /** null routes by key, else round robin. */
  partition: number | null;
  sequence: number | null;
}

export interface ProduceRequest {
  topic: string;
  producerId: string | null;
  records: ProduceRecordFields[];
}

export interface ConsumeRequest {
  topic: string;
  partition: number;
  offset: number;
  maxRecords: number;
  maxBytes: number;
}

export interface ConsumeResponse {
  nextOffset: number;
  highWatermark: number;
  partition: number;
  records: LogRecord[];
}

/** The topic a produce or consume payload names, read before anything else (grants are checked on it first). */
export function payloadTopic(payload: Uint8Array, what: string): string {
  const reader = new PayloadReader(payload, what);
  return reader.text(reader.u16("topic_len"), "topic");
}

/** Reads a produce payload's fields up to its records: the topic, the producer id and the count. */
function produceHead(payload: Uint8Array): { r: PayloadReader; topic: string; producerId: string | null; count: number } {
  const r = new PayloadReader(payload, "produce");
  const topic = r.text(r.u16("topic_len"), "topic");
  const producerIdLength = r.i32("producer_id_len");
  if (producerIdLength < -1) throw r.fail(`producer_id_len is ${producerIdLength}; -1 means none`);
  const producerId = producerIdLength === -1 ? null : r.text(producerIdLength, "producer_id");
  const count = r.u32("count");
  // Each record takes at least its fixed fields: a count the payload cannot hold is refused
  // before anything is made for it.
  if (count * produceRecordFixedBytes > r.remaining) throw r.fail(`count is ${count}, more records than its ${r.remaining} remaining bytes can hold`);
  return { r, topic, producerId, count };
}

/** A produce payload with a record object per record: the reference decodeProduceFrames is tested against, and what says why a payload is refused. */
export function decodeProduceRequest(payload: Uint8Array): ProduceRequest {
  const { r, topic, producerId, count } = produceHead(payload);
  return { topic, producerId, records: decodeProduceRecords(payload, payload.length - r.remaining, count, r) };
}

/**
 * A produce payload as the broker runs it: the records laid out as log frames by one native call
 * (src/native/frames.ts), never an object per record. A payload it refuses is read again by the
 * reference decoder, whose 400 names the field.
 */
export function decodeProduceFrames(payload: Uint8Array): { topic: string; producerId: string | null; records: DecodedRecords } {
  const { r, topic, producerId, count } = produceHead(payload);
  const at = payload.length - r.remaining;
  const frames = new Uint8Array(r.remaining + (frameOverheadBytes - produceRecordFixedBytes) * count);
  const partitions = new Float64Array(count);
  const sequences = new Float64Array(count);
  if (!frameProduceRecords(payload, at, count, frames, partitions, sequences)) {
    decodeProduceRecords(payload, at, count, r);
    throw new AssertionError("the native produce decoder refused a payload its reference reads");
  }
  return { topic, producerId, records: { run: { frames, count }, partitions, sequences } };
}

/**
 * The records of a produce payload from byte `at`: the hot loop of a binary produce, so fields
 * are read in place and messages are made only for a record that is wrong. Keys and values are
 * views into the payload (the connection's own copy), copied once, into the log's frames.
 */
function decodeProduceRecords(payload: Uint8Array, at: number, count: number, r: PayloadReader): ProduceRecordFields[] {
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const end = payload.length;
  const records = new Array<ProduceRecordFields>(count);
  const cut = (i: number, field: string) => r.fail(`it ends inside records[${i}].${field}`);
  for (let i = 0; i < count; i++) {
    if (end - at < 4) throw cut(i, "key_len");
    const keyLength = view.getInt32(at);
    at += 4;
    if (keyLength < -1) throw r.fail(`records[${i}].key_len is ${keyLength}; -1 means no key`);
    let key: Uint8Array | null = null;
    if (keyLength >= 0) {
      if (end - at < keyLength) throw cut(i, "key");
      key = payload.subarray(at, at + keyLength);
      at += keyLength;
    }
    if (end - at < 4) throw cut(i, "value_len");
    const valueLength = view.getUint32(at);
    at += 4;
    if (end - at < valueLength) throw cut(i, "value");
    const value = payload.subarray(at, at + valueLength);
    at += valueLength;
    if (end - at < 12) throw cut(i, "partition and sequence");
    const partition = view.getInt32(at);
    if (partition < -1) throw r.fail(`records[${i}].partition is ${partition}; -1 routes by key`);
    const sequence = view.getBigInt64(at + 4);
    at += 12;
    if (sequence !== noSequence && (sequence < 0n || sequence > maxSafeBig)) {
      throw r.fail(`records[${i}].sequence is ${sequence}; from 0 to ${Number.MAX_SAFE_INTEGER}, or i64's least value for none`);
    }
    records[i] = { key, value, partition: partition === -1 ? null : partition, sequence: sequence === noSequence ? null : Number(sequence) };
  }
  if (at !== end) throw r.fail(`${end - at} bytes follow its last field`);
  return records;
}

const maxSafeBig = BigInt(Number.MAX_SAFE_INTEGER);

/** A produce request; `room` bytes are left before it (a frame's header, written in place). */
export function encodeProduceRequest(request: ProduceRequest, room = 0): Uint8Array {
  const topic = encoder.encode(request.topic);
  const producerId = request.producerId === null ? null : encoder.encode(request.producerId);
  let size = 2 + topic.length + 4 + (producerId?.length ?? 0) + 4;
  for (const record of request.records) size += produceRecordFixedBytes + (record.key?.length ?? 0) + record.value.length;
  const w = new PayloadWriter(size, room);
  w.u16(topic.length);
  w.raw(topic);
  w.i32(producerId === null ? -1 : producerId.length);
  if (producerId !== null) w.raw(producerId);
  w.u32(request.records.length);
  for (const record of request.records) {
    w.i32(record.key === null ? -1 : record.key.length);
    if (record.key !== null) w.raw(record.key);
    w.u32(record.value.length);
    w.raw(record.value);
    w.i32(record.partition ?? -1);
    w.i64(record.sequence === null ? noSequence : BigInt(record.sequence));
  }
  return w.bytes;
}

/** A produce response; `room` bytes are left before it (a response frame's header, so it is not copied again). */
export function encodeProduceResponse(results: readonly ProduceResult[], room = 0): Uint8Array {
  const w = new PayloadWriter(4 + results.length * 13, room);
  w.u32(results.length);
  for (const result of results) {
    w.u32(result.partition);
    w.u64(result.offset);
    w.u8(result.duplicate === true ? 1 : 0);
  }
  return w.bytes;
}

export function decodeProduceResponse(payload: Uint8Array): ProduceResult[] {
  const r = new PayloadReader(payload, "produce response");
  const count = r.u32("count");
  if (count * 13 > r.remaining) throw r.fail(`count is ${count}, more results than the payload holds`);
  const results: ProduceResult[] = [];
  for (let i = 0; i < count; i++) {
    const partition = r.u32("partition");
    const offset = r.u64("offset");
    const duplicate = r.bytes(1, "duplicate")[0] === 1;
    results.push(duplicate ? { partition, offset, duplicate: true } : { partition, offset });
  }
  r.end();
  return results;
}

export function decodeConsumeRequest(payload: Uint8Array): ConsumeRequest {
  const r = new PayloadReader(payload, "consume");
  const topic = r.text(r.u16("topic_len"), "topic");
  const request = { topic, partition: r.u32("partition"), offset: r.u64("offset"), maxRecords: r.u32("max_records"), maxBytes: r.u32("max_bytes") };
  r.end();
  return request;
}

export function encodeConsumeRequest(request: ConsumeRequest): Uint8Array {
  const topic = encoder.encode(request.topic);
  const w = new PayloadWriter(2 + topic.length + 4 + 8 + 4 + 4);
  w.u16(topic.length);
  w.raw(topic);
  w.u32(request.partition);
  w.u64(request.offset);
  w.u32(request.maxRecords);
  w.u32(request.maxBytes);
  return w.bytes;
}

/** A consume response (up to 8 MiB of records); `room` bytes are left before it, as for a produce response. */
export function encodeConsumeResponse(response: ConsumeResponse, room = 0): Uint8Array {
  let size = 8 + 8 + 4;
  for (const record of response.records) size += consumeRecordFixedBytes + (record.key?.length ?? 0) + record.value.length;
  const w = new PayloadWriter(size, room);
  w.u64(response.nextOffset);
  w.u64(response.highWatermark);
  w.u32(response.records.length);
  for (const record of response.records) {
    w.u32(response.partition);
    w.u64(record.offset);
    w.i64(BigInt(record.timestampMs));
    w.i32(record.key === null ? -1 : record.key.length);
    if (record.key !== null) w.raw(record.key);
    w.u32(record.value.length);
    w.raw(record.value);
  }
  return w.bytes;
}

export function decodeConsumeResponse(payload: Uint8Array): ConsumeResponse {
  const r = new PayloadReader(payload, "consume response");
  const nextOffset = r.u64("next_offset");
  const highWatermark = r.u64("high_watermark");
  const count = r.u32("count");
  if (count * consumeRecordFixedBytes > r.remaining) throw r.fail(`count is ${count}, more records than the payload holds`);
  const records: LogRecord[] = [];
  let partition = 0;
  for (let i = 0; i < count; i++) {
    partition = r.u32("partition");
    const offset = r.u64("offset");
    const timestampMs = Number(r.i64("timestamp_ms"));
    const keyLength = r.i32("key_len");
    const key = keyLength === -1 ? null : r.bytes(keyLength, "key").slice();
    const value = r.bytes(r.u32("value_len"), "value").slice();
    records.push({ offset, timestampMs, key, value });
  }
  r.end();
  return { nextOffset, highWatermark, partition, records };
}
