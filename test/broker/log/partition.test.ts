// A partition's log: appends get consecutive offsets and survive rolls and reopening; concurrent
// produces share flushes (group commit) yet resolve in order; segments roll by size and by age;
// reads honour their record and byte budgets; bad produces and failed writes change nothing.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { type Partition, Partition as PartitionClass, type ProduceRecord } from "../../../src/broker/log/partition.ts";
import type { Appender } from "../../../src/broker/log/segment.ts";
import { ManualClock } from "../../../src/core/clock.ts";
import type { SvcError } from "../../../src/core/errors.ts";
import { brokerRecordBytesMax, logSegmentBytesMax, logSegmentBytesMin } from "../../../src/core/limits.ts";
import { appendChunks } from "../../../src/native/append.ts";
import { freshDir, plain, record } from "./support.ts";

function readAll(partition: Partition, from = 0, maxRecords = 7, maxBytes = 600) {
  const out = [];
  let offset = from;
  while (offset < partition.highWatermark) {
    const got = partition.read(offset, maxRecords, maxBytes);
    expect(got.records.length).toBeGreaterThan(0);
    out.push(...got.records);
    offset = got.nextOffset;
  }
  return plain(out);
}

describe("Partition", () => {
  test("appends many batches across several rolls, and a reopened partition reads them back with the same offsets", async () => {
    const dir = freshDir();
    const options = { segmentBytes: 1024, indexIntervalBytes: 100 };
    const partition = PartitionClass.open(dir, options);
    const expected: { offset: number; key: string | null; value: string }[] = [];
    for (let b = 0; b < 60; b++) {
      const batch = Array.from({ length: 1 + (b % 5) }, (_, i) => record(`b${b}r${i}`, (b * 7 + i * 13) % 90));
      const result = await partition.append(batch);
      expect(result.baseOffset).toBe(expected.length);
      expect(result.lastOffset).toBe(expected.length + batch.length - 1);
      expected.push(...plain(batch.map((r, i) => ({ ...r, offset: result.baseOffset + i, timestampMs: 0 }))));
    }
    expect(partition.segmentCount).toBeGreaterThan(5);
    expect(readAll(partition)).toEqual(expected);
    await partition.close();

    const logs = readdirSync(dir)
      .filter((n) => n.endsWith(".log"))
      .sort();
    expect(logs[0]).toBe("00000000000000000000.log");
    expect(logs.length).toBe(partition.segmentCount);
    const reopened = PartitionClass.open(dir, options);
    expect(reopened.highWatermark).toBe(expected.length);
    expect(reopened.recovery.segments.every((s) => s.truncatedBytes === 0)).toBe(true);
    expect(readAll(reopened)).toEqual(expected);
    // Reads that start mid-log, one record at a time, agree with the full read.
    for (let offset = 0; offset < expected.length; offset += 11) {
      expect(plain(reopened.read(offset, 1, 1).records)).toEqual([expected[offset]!]);
    }
    const next = await reopened.append([record("after-reopen")]);
    expect(next.baseOffset).toBe(expected.length);
    await reopened.close();
  });

  test("--flush-every-records: a sync once that many records are written since the last one, and on a roll", async () => {
    const syncs: boolean[] = [];
    const recording: Appender = (fd, chunks, sync, stamps) => {
      syncs.push(sync);
      return appendChunks(fd, chunks, sync, stamps);
    };
    const dir = freshDir();
    const partition = PartitionClass.open(dir, { appender: recording, flushEveryRecords: 3 });
    // Sequential produces of 1, 1, 1 (the third reaches 3: sync), 2, 2 (4 since: sync), 1.
    for (const n of [1, 1, 1, 2, 2, 1]) await partition.append(Array.from({ length: n }, (_, i) => record(`v${i}`)));
    expect(syncs).toEqual([false, false, true, false, true, false]);
    // The default syncs every flush.
    const everyOne: boolean[] = [];
    const strict = PartitionClass.open(freshDir(), { appender: (fd, chunks, sync, stamps) => (everyOne.push(sync), appendChunks(fd, chunks, sync, stamps)) });
    for (let i = 0; i < 3; i++) await strict.append([record("x")]);
    expect(everyOne).toEqual([true, true, true]);
    await Promise.all([partition.close(), strict.close()]);
    // What was written without a sync is still there after a reopen (close seals, which syncs).
    const reopened = PartitionClass.open(dir, {});
    expect(reopened.highWatermark).toBe(8);
    await reopened.close();
  });

  test("concurrent produces group-commit: fewer flushes than produces, all resolve in order with consecutive offsets", async () => {
    let flushes = 0;
    const slowAppender: Appender = async (fd, chunks, sync, stamps) => {
      flushes++;
      await Bun.sleep(2);
      return appendChunks(fd, chunks, sync, stamps);
    };
    const partition = PartitionClass.open(freshDir(), { appender: slowAppender });
    const produces = 200;
    const resolvedOrder: number[] = [];
    const results = await Promise.all(
      Array.from({ length: produces }, (_, i) => partition.append([record(`p${i}a`), record(`p${i}b`)]).then((r) => (resolvedOrder.push(i), r))),
    );
    expect(flushes).toBe(partition.flushCount);
    expect(flushes).toBeLessThan(produces);
    expect(resolvedOrder).toEqual([...resolvedOrder].sort((a, b) => a - b));
    results.forEach((r, i) => expect(r).toMatchObject({ baseOffset: 2 * i, lastOffset: 2 * i + 1 }));
    expect(readAll(partition, 0, 1000, 1 << 20).map((r) => r.value)).toEqual(Array.from({ length: produces }, (_, i) => [`p${i}a`, `p${i}b`]).flat());
    await partition.close();
  });

  test("a produce made while a flush is in flight is not visible, and resolves only after its own flush", async () => {
    let release: () => void = () => {};
    let calls = 0;
    const gatedAppender: Appender = async (fd, chunks, sync, stamps) => {
      calls++;
      if (calls === 1) await new Promise<void>((r) => (release = r));
      return appendChunks(fd, chunks, sync, stamps);
    };
    const partition = PartitionClass.open(freshDir(), { appender: gatedAppender });
    const first = partition.append([record("first")]);
    await Bun.sleep(5);
    const second = partition.append([record("second")]);
    const third = partition.append([record("third")]);
    expect(partition.highWatermark).toBe(0);
    expect(partition.read(0, 10, 1000).records).toEqual([]);
    release();
    expect((await first).baseOffset).toBe(0);
    expect([(await second).baseOffset, (await third).baseOffset]).toEqual([1, 2]);
    expect(calls).toBe(2); // second and third shared one flush
    await partition.close();
  });

  test("rolls by age with a manual clock: not before segmentMs, at segmentMs, and from rollIfAged", async () => {
    const clock = new ManualClock();
    const partition = PartitionClass.open(freshDir(), { clock, segmentMs: 1000 });
    await partition.append([record("a")]);
    clock.advance(999);
    await partition.append([record("b")]);
    expect(partition.segmentCount).toBe(1);
    clock.advance(1);
    const rolled = await partition.append([record("c")]);
    expect(partition.segmentCount).toBe(2);
    expect(partition.dump().segments[1]!.baseOffset).toBe(rolled.baseOffset);
    expect(await partition.rollIfAged()).toBe(false);
    clock.advance(1000);
    expect(await partition.rollIfAged()).toBe(true);
    expect(partition.dump().segments.map((s) => s.baseOffset)).toEqual([0, 2, 3]);
    expect(readAll(partition).map((r) => r.value)).toEqual(["a", "b", "c"]);
    await partition.close();
  });

  test("a new segmentBytes applies from the next roll, not to the active segment", async () => {
    const partition = PartitionClass.open(freshDir(), { segmentBytes: 1100 });
    await partition.append([record("x", 400)]);
    partition.setSegmentBytes(100_000);
    await partition.append([record("y", 400)]);
    await partition.append([record("z", 400)]); // would pass 1100: rolls under the old size
    expect(partition.segmentCount).toBe(2);
    for (let i = 0; i < 20; i++) await partition.append([record(`w${i}`, 400)]);
    expect(partition.segmentCount).toBe(2); // the new segment was created under 100 000
    await partition.close();
  });

  test("reads honour max records and max bytes, always return a first record, and stop at the high watermark", async () => {
    const partition = PartitionClass.open(freshDir());
    await partition.append(Array.from({ length: 10 }, (_, i) => record(`r${i}`, 100)));
    expect(partition.read(0, 3, 1 << 20).records.length).toBe(3);
    const oneOversize = partition.read(2, 100, 10);
    expect(oneOversize.records.length).toBe(1);
    expect(oneOversize.nextOffset).toBe(3);
    const twoFit = partition.read(0, 100, 2 * 132 + 131); // three frames need 3 * 132 bytes
    expect(twoFit.records.length).toBe(2);
    const atEnd = partition.read(10, 5, 1000);
    expect(atEnd).toMatchObject({ records: [], nextOffset: 10, highWatermark: 10, logStartOffset: 0 });
    expect(() => partition.read(11, 5, 1000)).toThrow(/past the high watermark 10/);
    await partition.close();
  });

  test("a record at the 8 MiB limit is written; one byte past it is refused and nothing is written", async () => {
    const partition = PartitionClass.open(freshDir());
    const atLimit: ProduceRecord = { key: new Uint8Array(10), value: new Uint8Array(brokerRecordBytesMax - 10) };
    const pastLimit: ProduceRecord = { key: new Uint8Array(11), value: new Uint8Array(brokerRecordBytesMax - 10) };
    const refused = partition.append([record("ok"), pastLimit]);
    await expect(refused).rejects.toThrow(/record 1 has 8388609 bytes/);
    await refused.catch((e) => expect((e as SvcError).status).toBe(413));
    expect(partition.highWatermark).toBe(0);
    expect((await partition.append([atLimit])).baseOffset).toBe(0);
    expect(partition.read(0, 1, 1).records[0]!.value.length).toBe(brokerRecordBytesMax - 10);
    await expect(partition.append([])).rejects.toThrow(/at least one record/);
    await partition.close();
  });

  test("a failed write rejects its produces, leaves no bytes behind, and the next produce reuses the offsets", async () => {
    let fail = false;
    const flaky: Appender = async (fd, chunks, sync, stamps) => {
      if (fail) {
        await appendChunks(fd, [chunks[0]!.subarray(0, 10)], false); // a partial write, then an error
        throw new Error("ENOSPC: no space left on device");
      }
      return appendChunks(fd, chunks, sync, stamps);
    };
    const dir = freshDir();
    const partition = PartitionClass.open(dir, { appender: flaky });
    await partition.append([record("kept")]);
    fail = true;
    await expect(partition.append([record("lost")])).rejects.toThrow(/ENOSPC/);
    fail = false;
    expect((await partition.append([record("next")])).baseOffset).toBe(1);
    expect(readAll(partition).map((r) => r.value)).toEqual(["kept", "next"]);
    await partition.close();
    const reopened = PartitionClass.open(dir);
    expect(reopened.recovery.segments[0]!.truncatedBytes).toBe(0);
    expect(readAll(reopened).map((r) => r.value)).toEqual(["kept", "next"]);
    await reopened.close();
  });

  test("offsetForTimestamp finds the first record at or after a time", async () => {
    const clock = new ManualClock(1_000);
    const partition = PartitionClass.open(freshDir(), { clock, indexIntervalBytes: 64, segmentBytes: 1024 });
    for (let i = 0; i < 40; i++) {
      await partition.append([record(`t${i}`, 30)]);
      clock.advance(10);
    }
    expect(partition.offsetForTimestamp(0)).toBe(0);
    expect(partition.offsetForTimestamp(1_000)).toBe(0);
    expect(partition.offsetForTimestamp(1_001)).toBe(1);
    expect(partition.offsetForTimestamp(1_250)).toBe(25);
    expect(partition.offsetForTimestamp(1_390)).toBe(39);
    expect(partition.offsetForTimestamp(1_391)).toBeNull();
    await partition.close();
  });

  test("segmentBytes is accepted at its bounds and refused one past either", async () => {
    for (const bytes of [logSegmentBytesMin, logSegmentBytesMax]) {
      const partition = PartitionClass.open(freshDir(), { segmentBytes: bytes });
      await partition.close();
    }
    for (const bytes of [logSegmentBytesMin - 1, logSegmentBytesMax + 1]) {
      expect(() => PartitionClass.open(freshDir(), { segmentBytes: bytes })).toThrow(/segment bytes/);
    }
  });

  test("a closed partition refuses appends", async () => {
    const partition = PartitionClass.open(freshDir());
    await partition.close();
    await expect(partition.append([record("late")])).rejects.toThrow(/closed/);
  });
});
