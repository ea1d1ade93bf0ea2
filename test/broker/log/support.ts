// Helpers shared by the partition-log tests: temporary directories and record builders.
import { join } from "node:path";
import { tempDir } from "../../support/temp-dir.ts";
import type { ProduceRecord } from "../../../src/broker/log/partition.ts";
import type { LogRecord } from "../../../src/broker/log/record.ts";

// Removed once every test file has run: a support module is loaded once for all the files that
// use it, so an afterAll here would remove it after the first of them.
const root = tempDir("svc-broker-log-");
let dirs = 0;

/** A fresh directory under this test file's temporary root. */
export function freshDir(): string {
  return join(root, `p${++dirs}`);
}

const text = new TextEncoder();

/** A record whose key and value name it, so a read-back shows which one came back. */
export function record(name: string, valueBytes = 0): ProduceRecord {
  const value = text.encode(name.padEnd(valueBytes, "."));
  return { key: name.length % 3 === 0 ? null : text.encode(`k-${name}`), value };
}

/** Records as plain data for toEqual (views into read buffers compare poorly). */
export function plain(records: readonly LogRecord[]): { offset: number; key: string | null; value: string }[] {
  const d = new TextDecoder();
  return records.map((r) => ({ offset: r.offset, key: r.key === null ? null : d.decode(r.key), value: d.decode(r.value) }));
}
