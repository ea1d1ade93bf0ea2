// Retention under the delete policy: by age and by size, each at its limit and one past; the
// active segment never deleted however old or large; offsets, reads and produces after a
// deletion; a reopened partition (and a crash between a deletion's steps) agreeing with it; and
// POST /admin/run-retention against a real `svc broker`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Partition } from "../../src/broker/log/partition.ts";
import { applyRetention, type RetentionLimits } from "../../src/broker/log/retention.ts";
import { segmentFileName } from "../../src/broker/log/segment.ts";
import { RetentionScheduler, type RetentionSummary, retentionLimits } from "../../src/broker/retention-scheduler.ts";
import { createLogger } from "../../src/core/log.ts";
import { topicConfigDefaults } from "../../src/broker/topics/config.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { logSegmentBytesMin } from "../../src/core/limits.ts";
import { freshDir, plain, record } from "./log/support.ts";
import { type BrokerProcess, readAll, startBroker } from "./support/broker.ts";

/** No key and 200 bytes of value: 232-byte frames, four to a 1 KiB segment (a fifth would pass it). */
const valueBytes = 200;
const frameBytes = 232;
const recordsPerSegment = 4;
const segmentLogBytes = recordsPerSegment * frameBytes;

const noLimit = -1;
const byAge = (retentionMs: number): RetentionLimits => ({ retentionMs, retentionBytes: noLimit });
const bySize = (retentionBytes: number): RetentionLimits => ({ retentionMs: noLimit, retentionBytes });

/** A 1 KiB-segment partition on a manual clock. */
function openPartition(dir = freshDir(), clock = new ManualClock(), segmentMs?: number): { partition: Partition; clock: ManualClock; dir: string } {
  const partition = Partition.open(dir, { segmentBytes: logSegmentBytesMin, clock, segmentMs });
  return { partition, clock, dir };
}

/** Appends `count` records one produce at a time (names "r<offset>"), at the clock's current time. */
async function appendRecords(partition: Partition, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = `r${partition.highWatermark}`;
    await partition.append([{ ...record(name, valueBytes), key: null }]);
  }
}

/** Every record from `from` to the high watermark. */
function readFrom(partition: Partition, from: number) {
  const got = partition.read(from, 10_000, 1 << 20);
  return plain(got.records).map((r) => r.offset);
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/**
 * Three segments: offsets 0-3 written at t0, 4-7 at t0+1000, and the active one holding 8,
 * written at t0+2000, which is also the clock's time at return.
 */
async function threeSegments() {
  const opened = openPartition();
  const t0 = opened.clock.nowMs();
  await appendRecords(opened.partition, recordsPerSegment);
  opened.clock.advance(1000);
  await appendRecords(opened.partition, recordsPerSegment);
  opened.clock.advance(1000);
  await appendRecords(opened.partition, 1);
  expect(opened.partition.dump().segments.map((s) => [s.baseOffset, s.sizeBytes])).toEqual([
    [0, segmentLogBytes],
    [4, segmentLogBytes],
    [8, frameBytes],
  ]);
  return { ...opened, t0 };
}

describe("retention by age", () => {
  test("a segment whose newest record is exactly retention_ms old stays; one ms past, it goes", async () => {
    const { partition, clock } = await threeSegments();
    expect(await applyRetention(partition, byAge(2000), clock.nowMs())).toEqual({ segmentsDeleted: 0, bytesReclaimed: 0 });
    expect(partition.logStartOffset).toBe(0);
    expect(await applyRetention(partition, byAge(1999), clock.nowMs())).toEqual({ segmentsDeleted: 1, bytesReclaimed: segmentLogBytes });
    expect(partition.logStartOffset).toBe(4);
    expect(partition.segmentCount).toBe(2);
    await partition.close();
  });

  test("when every record is old, every sealed segment goes and the active one stays", async () => {
    const { partition, clock, dir } = await threeSegments();
    clock.advance(365 * 24 * 60 * 60 * 1000);
    const result = await applyRetention(partition, byAge(0), clock.nowMs());
    expect(result).toEqual({ segmentsDeleted: 2, bytesReclaimed: 2 * segmentLogBytes });
    expect(partition.dump().segments.map((s) => s.baseOffset)).toEqual([8]);
    expect(partition.highWatermark).toBe(9);
    // Nothing is left of the deleted segments on disk, index files included.
    expect(
      readdirSync(dir)
        .filter((n) => !n.startsWith("producers"))
        .sort(),
    ).toEqual([segmentFileName(8, ".log")]);
    // A second pass finds nothing more to do: the active segment is never a candidate.
    expect(await applyRetention(partition, byAge(0), clock.nowMs())).toEqual({ segmentsDeleted: 0, bytesReclaimed: 0 });
    await partition.close();
  });

  test("the active segment goes only once it has aged past segment_ms and rolled", async () => {
    const segmentMs = 10_000;
    const { partition, clock } = openPartition(undefined, undefined, segmentMs);
    await appendRecords(partition, 2);
    clock.advance(segmentMs - 1);
    expect(await partition.rollIfAged()).toBe(false);
    expect(await applyRetention(partition, byAge(0), clock.nowMs())).toEqual({ segmentsDeleted: 0, bytesReclaimed: 0 });
    clock.advance(1);
    expect(await partition.rollIfAged()).toBe(true);
    expect(await applyRetention(partition, byAge(0), clock.nowMs())).toEqual({ segmentsDeleted: 1, bytesReclaimed: 2 * frameBytes });
    expect([partition.logStartOffset, partition.highWatermark, partition.sizeBytes]).toEqual([2, 2, 0]);
    await partition.close();
  });

  test("only the oldest segments go: a younger-looking segment behind an unexpired one waits", async () => {
    // The clock steps back between segments (timestamps are the broker's clock at append).
    const dir = freshDir();
    const late = new ManualClock(2_000_000);
    const first = openPartition(dir, late);
    await appendRecords(first.partition, recordsPerSegment);
    await first.partition.close();
    const early = new ManualClock(1_000_000);
    const second = openPartition(dir, early);
    await appendRecords(second.partition, recordsPerSegment + 1);
    // Segment 4-7 is 1,000,000 ms older than segment 0-3, yet segment 0-3 is not expired.
    expect(await applyRetention(second.partition, byAge(500_000), 2_000_000)).toEqual({ segmentsDeleted: 0, bytesReclaimed: 0 });
    expect(second.partition.logStartOffset).toBe(0);
    await second.partition.close();
  });
});

describe("retention by size", () => {
  test("a partition exactly at retention_bytes keeps everything; one byte over drops the oldest segment", async () => {
    const { partition, clock } = await threeSegments();
    const total = 2 * segmentLogBytes + frameBytes;
    expect(partition.sizeBytes).toBe(total);
    expect(await applyRetention(partition, bySize(total), clock.nowMs())).toEqual({ segmentsDeleted: 0, bytesReclaimed: 0 });
    expect(await applyRetention(partition, bySize(total - 1), clock.nowMs())).toEqual({ segmentsDeleted: 1, bytesReclaimed: segmentLogBytes });
    expect(partition.sizeBytes).toBe(segmentLogBytes + frameBytes);
    expect(partition.logStartOffset).toBe(4);
    await partition.close();
  });

  test("segments go oldest first until the partition fits, and the active segment stays even over the cap", async () => {
    const { partition, clock } = await threeSegments();
    await appendRecords(partition, recordsPerSegment); // 8-11 sealed, 12 active
    expect(partition.segmentCount).toBe(4);
    // Room for the active segment plus one sealed one: the two oldest go.
    const fitsTwo = segmentLogBytes + frameBytes;
    expect(await applyRetention(partition, bySize(fitsTwo), clock.nowMs())).toEqual({ segmentsDeleted: 2, bytesReclaimed: 2 * segmentLogBytes });
    expect(partition.logStartOffset).toBe(8);
    expect(await applyRetention(partition, bySize(0), clock.nowMs())).toEqual({ segmentsDeleted: 1, bytesReclaimed: segmentLogBytes });
    expect([partition.logStartOffset, partition.highWatermark, partition.sizeBytes]).toEqual([12, 13, frameBytes]);
    await partition.close();
  });

  test("no limit (-1) on both keeps everything", async () => {
    const { partition, clock } = await threeSegments();
    clock.advance(1e12);
    expect(await applyRetention(partition, { retentionMs: noLimit, retentionBytes: noLimit }, clock.nowMs())).toEqual({
      segmentsDeleted: 0,
      bytesReclaimed: 0,
    });
    await partition.close();
  });
});

describe("after a deletion", () => {
  test("reads below the log start start at the log start, offsets go on, and a reopen agrees", async () => {
    const { partition, clock, dir } = await threeSegments();
    await applyRetention(partition, bySize(0), clock.nowMs());
    expect(readFrom(partition, 0)).toEqual([8]);
    expect(partition.read(3, 10, 1 << 20).nextOffset).toBe(9);
    expect(() => partition.read(10, 10, 1 << 20)).toThrow(/past the high watermark/);
    await appendRecords(partition, 6);
    expect(readFrom(partition, 0)).toEqual(range(8, 15));
    expect(plain(partition.read(8, 1, 1 << 20).records)[0]!.value).toStartWith("r8");
    await partition.close();

    const reopened = Partition.open(dir, { segmentBytes: logSegmentBytesMin, clock });
    expect(reopened.recovery.removedFiles).toEqual([]);
    expect([reopened.logStartOffset, reopened.highWatermark]).toEqual([8, 15]);
    expect(readFrom(reopened, 0)).toEqual(range(8, 15));
    await reopened.close();
  });

  test("appends waiting on the lock while retention runs all land, in order", async () => {
    const { partition, clock } = await threeSegments();
    const appends = Array.from({ length: 20 }, (_, i) => partition.append([{ key: null, value: new TextEncoder().encode(`c${i}`) }]));
    const retention = applyRetention(partition, bySize(0), clock.nowMs());
    const results = await Promise.all(appends);
    await retention;
    expect(results.map((r) => r.baseOffset)).toEqual(range(9, 29));
    expect(readFrom(partition, partition.logStartOffset).at(-1)).toBe(28);
    await partition.close();
  });

  test("a crash after a segment's .log is gone but before its index files are leaves a consistent log", async () => {
    const { partition, dir } = await threeSegments();
    await partition.close();
    // The state a crash between deleteFiles' steps leaves: the log file gone, its indexes not.
    rmSync(join(dir, segmentFileName(0, ".log")));
    expect(existsSync(join(dir, segmentFileName(0, ".index")))).toBe(true);
    const reopened = Partition.open(dir, { segmentBytes: logSegmentBytesMin, clock: new ManualClock() });
    expect(reopened.recovery.removedFiles.sort()).toEqual([segmentFileName(0, ".index"), segmentFileName(0, ".timeindex")]);
    expect([reopened.logStartOffset, reopened.highWatermark]).toEqual([4, 9]);
    expect(readFrom(reopened, 0)).toEqual(range(4, 9));
    await reopened.close();
  });
});

describe("cleanup_policy", () => {
  test("delete and compact,delete apply retention; compact alone does not", () => {
    const limits = { retentionMs: topicConfigDefaults.retention_ms, retentionBytes: topicConfigDefaults.retention_bytes };
    expect(retentionLimits({ ...topicConfigDefaults, cleanup_policy: "delete" })).toEqual(limits);
    expect(retentionLimits({ ...topicConfigDefaults, cleanup_policy: "compact,delete" })).toEqual(limits);
    expect(retentionLimits({ ...topicConfigDefaults, cleanup_policy: "compact" })).toBeNull();
  });
});

describe("RetentionScheduler", () => {
  const summary: RetentionSummary = { segments_deleted: 0, bytes_reclaimed: 0, segments_rolled: 0, partitions_failed: 0 };

  test("a pass asked for while one runs waits for it, and stop waits for the pass in progress", async () => {
    const events: string[] = [];
    let release = () => {};
    let calls = 0;
    const pass = async () => {
      const n = ++calls;
      events.push(`start ${n}`);
      if (n === 1) await new Promise<void>((resolve) => (release = resolve));
      events.push(`end ${n}`);
      return summary;
    };
    // An hour: the timer never fires during the test; only runNow starts passes.
    const scheduler = new RetentionScheduler(pass, 60 * 60 * 1000, createLogger({ level: "silent" }));
    scheduler.start();
    const first = scheduler.runNow();
    const second = scheduler.runNow();
    await Bun.sleep(0);
    expect(events).toEqual(["start 1"]);
    const stopped = scheduler.stop();
    release();
    await Promise.all([first, second, stopped]);
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2"]);
  });
});

describe("POST /admin/run-retention (real process)", () => {
  let broker: BrokerProcess;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker.stop());

  const value = "v".repeat(valueBytes);
  async function fill(topic: string, config: Record<string, unknown>, records: number): Promise<void> {
    expect((await broker.call("POST", "/topics", { name: topic, partitions: 1, config: { segment_bytes: logSegmentBytesMin, ...config } })).status).toBe(201);
    // One request per record, so segments roll between them; values "<i>:" + 200 bytes make 234-byte frames.
    for (let i = 0; i < records; i++) {
      const { status } = await broker.call("POST", `/topics/${topic}/produce`, { records: [{ value: `${i}:${value}` }] });
      expect(status).toBe(200);
    }
  }
  const details = async (topic: string) => (await broker.call("GET", `/topics/${topic}`)).body.partition_details[0];

  test("drops sealed segments past retention_bytes, keeps compact-only topics, and the result survives a restart", async () => {
    await fill("sized", { retention_bytes: 0 }, 10); // segments 0-3, 4-7 sealed; 8-9 active
    await fill("compacted", { retention_bytes: 0, cleanup_policy: "compact" }, 10);
    expect((await details("sized")).segment_count).toBe(3);

    const run = await broker.call("POST", "/admin/run-retention");
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ segments_deleted: 2, bytes_reclaimed: 8 * (frameBytes + 2), segments_rolled: 0, partitions_failed: 0 });
    expect(await details("sized")).toMatchObject({ start_offset: 8, high_watermark: 10, segment_count: 1 });
    expect(await details("compacted")).toMatchObject({ start_offset: 0, segment_count: 3 });

    // A consume below the log start reads from the log start; produces go on from the high watermark.
    const below = await broker.call("GET", "/topics/sized/consume?partition=0&offset=0");
    expect(below.body.records.map((r: { offset: number }) => r.offset)).toEqual([8, 9]);
    const produced = await broker.call("POST", "/topics/sized/produce", { records: [{ value: "after" }] });
    expect(produced.body.results).toEqual([{ partition: 0, offset: 10 }]);

    // Nothing left to do: a second pass (with an explicit empty body) deletes nothing.
    expect((await broker.call("POST", "/admin/run-retention", {})).body.segments_deleted).toBe(0);

    await broker.stop();
    broker = await startBroker(broker.dataDir);
    expect(await details("sized")).toMatchObject({ start_offset: 8, high_watermark: 11, segment_count: 1 });
    expect((await readAll(broker, "sized", 0)).map((r) => r.offset)).toEqual([8, 9, 10]);
  });

  test("a body with parameters is refused", async () => {
    const { status, body } = await broker.call("POST", "/admin/run-retention", { topic: "sized" });
    expect(status).toBe(400);
    expect(body.error).toContain("takes no parameters");
  });
});
