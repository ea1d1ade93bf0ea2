/**
 * Turning records read from a partition into the JSON a consumer gets. With encoding=utf8 (the
 * default) keys and values are strings; a key or value that is not valid UTF-8 (only the binary
 * protocol can produce one) is not patched with replacement characters, which would hand the
 * consumer different bytes than were produced: the read is refused with a 400 that names the
 * record and says to read it with encoding=base64.
 */
import { badRequest } from "../requests/fields.ts";
import type { LogRecord } from "../log/record.ts";
import type { PartitionRead } from "./consume.ts";
import type { Encoding } from "./params.ts";

export interface ConsumedRecord {
  partition: number;
  offset: number;
  timestamp_ms: number;
  key: string | null;
  value: string;
}

// ignoreBOM keeps a leading U+FEFF as part of the value instead of stripping it as a byte-order mark.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function asBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64");
}

function asUtf8(bytes: Uint8Array, partition: number, offset: number, what: "key" | "value"): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw badRequest(`the ${what} of the record at partition ${partition} offset ${offset} is not valid UTF-8; read it with encoding=base64`);
  }
}

export function consumedRecords(records: readonly LogRecord[], partition: number, encoding: Encoding): ConsumedRecord[] {
  const text =
    encoding === "base64"
      ? (bytes: Uint8Array) => asBase64(bytes)
      : (bytes: Uint8Array, offset: number, what: "key" | "value") => asUtf8(bytes, partition, offset, what);
  return records.map((r) => ({
    partition,
    offset: r.offset,
    timestamp_ms: r.timestampMs,
    key: r.key === null ? null : text(r.key, r.offset, "key"),
    value: text(r.value, r.offset, "value"),
  }));
}

/** The answer of a consume over HTTP (topic or group): the records encoded as asked, and where to go on. */
export function consumeAnswer(read: PartitionRead, partition: number, encoding: Encoding) {
  return { records: consumedRecords(read.records, partition, encoding), next_offset: read.nextOffset, high_watermark: read.highWatermark };
}
