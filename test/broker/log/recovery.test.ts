// Recovery on open: a torn or damaged tail is cut back to the last whole record, a missing or bad
// index is rebuilt by scanning, and reads after recovery are exactly the records that were whole.
import { describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Partition } from "../../../src/broker/log/partition.ts";
import { frameBytes } from "../../../src/broker/log/record.ts";
import { segmentFileName } from "../../../src/broker/log/segment.ts";
import { freshDir, plain, record } from "./support.ts";

const options = { segmentBytes: 2048, indexIntervalBytes: 128 };

/** A closed partition of `count` one-record produces; returns its directory and the records. */
async function written(count: number) {
  const dir = freshDir();
  const partition = Partition.open(dir, options);
  for (let i = 0; i < count; i++) await partition.append([record(`r${i}`, 20 + (i % 50))]);
  const all = readAll(partition);
  await partition.close();
  return {
    dir,
    all,
    lastLog: join(
      dir,
      readdirSync(dir)
        .filter((n) => n.endsWith(".log"))
        .sort()
        .at(-1)!,
    ),
  };
}

function readAll(partition: Partition) {
  const out = [];
  for (let offset = 0; offset < partition.highWatermark; ) {
    const got = partition.read(offset, 5, 400);
    out.push(...got.records);
    offset = got.nextOffset;
  }
  return plain(out);
}

function reopen(dir: string) {
  const partition = Partition.open(dir, options);
  return { partition, records: readAll(partition) };
}

describe("recovery", () => {
  test("a tail cut mid-record and followed by garbage recovers to the last whole record", async () => {
    const { dir, all, lastLog } = await written(60);
    const last = all.at(-1)!;
    const size = readFileSync(lastLog).length;
    const encode = (text: string) => new TextEncoder().encode(text);
    const lastFrame = frameBytes(last.key === null ? null : encode(last.key), encode(last.value));
    truncateSync(lastLog, size - 7);
    appendFileSync(lastLog, new Uint8Array(300).fill(0xab));
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all.slice(0, -1));
    const report = partition.recovery.segments.at(-1)!;
    expect(report.truncatedBytes).toBe(lastFrame - 7 + 300);
    expect(readFileSync(lastLog).length).toBe(size - lastFrame);
    // The partition carries on from the recovered end: the lost offset is given out again.
    expect((await partition.append([record("new")])).baseOffset).toBe(last.offset);
    await partition.close();
  });

  test("zeros past the end (a preallocated or half-flushed tail) are cut away", async () => {
    const { dir, all, lastLog } = await written(10);
    appendFileSync(lastLog, new Uint8Array(4096));
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    expect(partition.recovery.segments.at(-1)!.truncatedBytes).toBe(4096);
    await partition.close();
  });

  test("a flipped bit in the last record truncates from that record", async () => {
    const { dir, all, lastLog } = await written(40);
    const bytes = readFileSync(lastLog);
    bytes[bytes.length - 3]! ^= 0x10;
    writeFileSync(lastLog, bytes);
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all.slice(0, -1));
    expect(partition.recovery.segments.at(-1)!.truncateReason).toBe("CRC mismatch");
    await partition.close();
  });

  test("a flipped bit in a middle record of the active segment truncates from that record on", async () => {
    const { dir, all, lastLog } = await written(40);
    const partition0 = Partition.open(dir, options);
    const activeBase = partition0.dump().segments.at(-1)!.baseOffset;
    await partition0.close();
    const bytes = readFileSync(lastLog);
    bytes[40]! ^= 0x01; // inside the first record's body
    writeFileSync(lastLog, bytes);
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all.filter((r) => r.offset < activeBase));
    await partition.close();
  });

  test("a deleted index is rebuilt and reads are identical", async () => {
    const { dir, all } = await written(80);
    const sealed = readdirSync(dir)
      .filter((n) => n.endsWith(".index"))
      .sort()[0]!;
    rmSync(join(dir, sealed));
    rmSync(join(dir, sealed.replace(".index", ".timeindex")));
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    expect(partition.recovery.segments[0]!.indexRebuilt).toBe(true);
    expect(partition.recovery.segments[1]!.indexRebuilt).toBe(false);
    expect(existsSync(join(dir, sealed))).toBe(true); // written back
    await partition.close();
  });

  test("a garbage index file is rebuilt and reads are identical", async () => {
    const { dir, all } = await written(80);
    for (const name of readdirSync(dir).filter((n) => n.endsWith("index"))) {
      writeFileSync(join(dir, name), new Uint8Array(37).fill(0x5a));
    }
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    expect(partition.recovery.segments.every((s) => s.indexRebuilt)).toBe(true);
    await partition.close();
  });

  test("a well-formed index whose entries point at the wrong bytes is caught on read and rebuilt", async () => {
    const { dir, all } = await written(80);
    const name = join(dir, segmentFileName(0, ".index"));
    const index = readFileSync(name);
    expect(index.length).toBeGreaterThanOrEqual(16);
    // Shift the first entry's position by one byte: still increasing, still inside the log.
    const view = new DataView(index.buffer, index.byteOffset, index.byteLength);
    view.setUint32(4, view.getUint32(4, true) + 1, true);
    writeFileSync(name, index);
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    await partition.close();
  });

  test("leftover temporary and orphan index files are removed", async () => {
    const { dir, all } = await written(5);
    writeFileSync(join(dir, `${segmentFileName(0, ".index")}.tmp`), "half");
    writeFileSync(join(dir, segmentFileName(999, ".index")), "");
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    expect(partition.recovery.removedFiles.sort()).toEqual([`${segmentFileName(0, ".index")}.tmp`, segmentFileName(999, ".index")]);
    await partition.close();
  });

  test("an empty active segment left by a roll just before a crash opens as the active segment", async () => {
    const { dir, all } = await written(30);
    const partition0 = Partition.open(dir, options);
    const hw = partition0.highWatermark;
    await partition0.close();
    writeFileSync(join(dir, segmentFileName(hw, ".log")), "");
    const { partition, records } = reopen(dir);
    expect(records).toEqual(all);
    expect((await partition.append([record("next")])).baseOffset).toBe(hw);
    await partition.close();
  });
});
