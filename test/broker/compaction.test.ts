// Compaction under the compact policy: newest record per key kept in sealed segments, offsets
// unchanged, records without a key kept, tombstones kept for tombstone_retention_ms (at the limit
// and one past), the active segment untouched, reads and a reopen agreeing, a crash mid-rewrite
// recovering to a consistent log; and POST /admin/run-compaction against a real `svc broker`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compactionSettings } from "../../src/broker/compaction-pass.ts";
import { RetentionScheduler } from "../../src/broker/retention-scheduler.ts";
import { createLogger } from "../../src/core/log.ts";
import { type CompactionSettings, compactPartition } from "../../src/broker/log/compaction.ts";
import { Partition } from "../../src/broker/log/partition.ts";
import { segmentFileName } from "../../src/broker/log/segment.ts";
import { topicConfigDefaults } from "../../src/broker/topics/config.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { compactionWriteChunkBytes, logSegmentBytesMin } from "../../src/core/limits.ts";
import { freshDir, plain } from "./log/support.ts";
import { type BrokerProcess, readAll, startBroker } from "./support/broker.ts";

/** Segments roll only when this old and asked (rollIfAged), so each test lays out its own segments. */
const segmentMs = 1000;
const tombstoneRetentionMs = 5000;
const settings: CompactionSettings = { tombstoneRetentionMs };
const text = new TextEncoder();

/** [key or null, value]; an empty value is a tombstone. */
type Entry = [string | null, string];

/**
 * A partition whose segments hold `layout`'s entries, one segment per inner array (the last is the
 * active one). Each segment is written at the clock's time, and the clock moves segmentMs before
 * the next, which is what rolls it.
 */
async function build(layout: Entry[][], dir = freshDir()) {
  const clock = new ManualClock();
  const partition = Partition.open(dir, { clock, segmentMs });
  const t0 = clock.nowMs();
  for (const [i, entries] of layout.entries()) {
    if (i > 0) {
      clock.advance(segmentMs);
      expect(await partition.rollIfAged()).toBe(true);
    }
    for (const [key, value] of entries) {
      await partition.append([{ key: key === null ? null : text.encode(key), value: text.encode(value) }]);
    }
  }
  expect(partition.segmentCount).toBe(layout.length);
  return { partition, clock, dir, t0 };
}

function readAllRecords(partition: Partition) {
  return plain(partition.read(0, 10_000, 8 << 20).records);
}

const entry = (offset: number, key: string | null, value: string) => ({ offset, key, value });

describe("compaction of sealed segments", () => {
  test("keeps the newest record per key, records without a key, and every offset as it was", async () => {
    const { partition, clock } = await build([
      [
        ["a", "a1"],
        ["b", "b1"],
        [null, "x"],
        ["a", "a2"],
      ], // 0-3
      [
        ["b", "b2"],
        ["c", "c1"],
      ], // 4-5
      [["d", "d1"]], // 6, active
    ]);
    const result = await compactPartition(partition, settings, clock.nowMs());
    // Only segment 0 had anything to drop; segment 4-5 holds the newest b and c and is left alone.
    expect(result).toEqual({ segmentsRewritten: 1, recordsDropped: 2, bytesReclaimed: 2 * (32 + 1 + 2) });
    expect(readAllRecords(partition)).toEqual([entry(2, null, "x"), entry(3, "a", "a2"), entry(4, "b", "b2"), entry(5, "c", "c1"), entry(6, "d", "d1")]);
    expect([partition.logStartOffset, partition.highWatermark, partition.segmentCount]).toEqual([0, 7, 3]);
    // Reads from inside a gap start at the next record; reads past it carry on.
    expect(plain(partition.read(1, 1, 1 << 20).records)).toEqual([entry(2, null, "x")]);
    expect(partition.read(2, 2, 1 << 20).nextOffset).toBe(4);
    // A second pass finds nothing to do and rewrites nothing.
    expect(await compactPartition(partition, settings, clock.nowMs())).toEqual({ segmentsRewritten: 0, recordsDropped: 0, bytesReclaimed: 0 });
    await partition.close();
  });

  test("a key whose newest record is in the active segment loses its older records in sealed ones", async () => {
    const { partition, clock } = await build([
      [
        ["a", "a1"],
        ["b", "b1"],
      ], // 0-1
      [["a", "a2"]], // 2
      [
        ["a", "a3"],
        ["b", "b2"],
      ], // 3-4, active
    ]);
    const result = await compactPartition(partition, settings, clock.nowMs());
    expect(result).toMatchObject({ segmentsRewritten: 2, recordsDropped: 3 });
    expect(readAllRecords(partition)).toEqual([entry(3, "a", "a3"), entry(4, "b", "b2")]);
    // Emptied sealed segments stay as empty files: the log start does not move.
    expect(partition.dump().segments.map((s) => [s.baseOffset, s.sizeBytes])).toEqual([
      [0, 0],
      [2, 0],
      [3, 2 * (32 + 1 + 2)],
    ]);
    expect(partition.logStartOffset).toBe(0);
    await partition.close();
  });

  test("the active segment is never touched, even when it repeats a key", async () => {
    const { partition, clock, dir } = await build([
      [["a", "a1"]], // 0
      [
        ["a", "a2"],
        ["a", "a3"],
        ["a", ""],
      ], // 1-3, active: older a's and a tombstone long expired below
    ]);
    const activeLog = join(dir, segmentFileName(1, ".log"));
    const before = readFileSync(activeLog);
    clock.advance(100 * tombstoneRetentionMs);
    expect(await compactPartition(partition, settings, clock.nowMs())).toMatchObject({ segmentsRewritten: 1, recordsDropped: 1 });
    expect(readFileSync(activeLog)).toEqual(before);
    expect(readAllRecords(partition)).toEqual([entry(1, "a", "a2"), entry(2, "a", "a3"), entry(3, "a", "")]);
    // Appends go on at the high watermark, into the same active segment.
    expect((await partition.append([{ key: text.encode("a"), value: text.encode("a4") }])).baseOffset).toBe(4);
    await partition.close();
  });

  test("a segment whose kept records pass compactionWriteChunkBytes is written in several runs, intact", async () => {
    // Three keyless values of 0.6 MiB: one run is written once x and y are pending, the rest at the end.
    const big = (c: string) => c.repeat(Math.ceil(compactionWriteChunkBytes * 0.6));
    const { partition, clock } = await build([
      [
        ["a", "a1"],
        [null, big("x")],
        [null, big("y")],
        ["a", "a2"],
        [null, big("z")],
      ], // 0-4
      [["b", "b1"]], // 5, active
    ]);
    expect(await compactPartition(partition, settings, clock.nowMs())).toMatchObject({ segmentsRewritten: 1, recordsDropped: 1 });
    expect(readAllRecords(partition)).toEqual([
      entry(1, null, big("x")),
      entry(2, null, big("y")),
      entry(3, "a", "a2"),
      entry(4, null, big("z")),
      entry(5, "b", "b1"),
    ]);
    await partition.close();
  });

  test("a partition with only its active segment is left alone", async () => {
    const { partition, clock } = await build([
      [
        ["a", "a1"],
        ["a", "a2"],
      ],
    ]);
    expect(await compactPartition(partition, settings, clock.nowMs())).toEqual({ segmentsRewritten: 0, recordsDropped: 0, bytesReclaimed: 0 });
    expect(readAllRecords(partition).map((r) => r.offset)).toEqual([0, 1]);
    await partition.close();
  });
});

describe("tombstones", () => {
  /** A tombstone for `a` at t0 (offset 2), after two values of `a`; a keyless empty value at 3. */
  const layout: Entry[][] = [
    [
      ["a", "a1"],
      ["a", "a2"],
      ["a", ""],
      [null, ""],
    ], // 0-3
    [["b", "b1"]], // 4, active
  ];

  test("kept exactly tombstone_retention_ms after its timestamp, dropped one ms later", async () => {
    const { partition, t0 } = await build(layout);
    const atLimit = await compactPartition(partition, settings, t0 + tombstoneRetentionMs);
    // The older values of `a` go at once; the tombstone stays so a consumer can see the delete.
    expect(atLimit.recordsDropped).toBe(2);
    expect(readAllRecords(partition)).toEqual([entry(2, "a", ""), entry(3, null, ""), entry(4, "b", "b1")]);

    const onePast = await compactPartition(partition, settings, t0 + tombstoneRetentionMs + 1);
    expect(onePast).toEqual({ segmentsRewritten: 1, recordsDropped: 1, bytesReclaimed: 32 + 1 });
    // An empty value without a key deletes nothing and is kept like any keyless record.
    expect(readAllRecords(partition)).toEqual([entry(3, null, ""), entry(4, "b", "b1")]);
    await partition.close();
  });

  test("a tombstone that is not the newest record of its key goes with the other old records", async () => {
    const { partition, t0 } = await build([
      [
        ["a", "a1"],
        ["a", ""],
      ], // 0-1
      [["a", "a2"]], // 2, active: `a` was written again after its delete
    ]);
    expect(await compactPartition(partition, settings, t0)).toMatchObject({ recordsDropped: 2 });
    expect(readAllRecords(partition)).toEqual([entry(2, "a", "a2")]);
    await partition.close();
  });
});

describe("after compaction", () => {
  test("a reopened partition reads what the compacted one read, and appends go on", async () => {
    const { partition, clock, dir } = await build([
      [
        ["a", "a1"],
        ["b", "b1"],
        [null, "x"],
      ], // 0-2
      [
        ["a", "a2"],
        ["c", ""],
      ], // 3-4
      [["b", "b2"]], // 5, active
    ]);
    await compactPartition(partition, settings, clock.nowMs());
    const compacted = readAllRecords(partition);
    expect(compacted).toEqual([entry(2, null, "x"), entry(3, "a", "a2"), entry(4, "c", ""), entry(5, "b", "b2")]);
    await partition.close();

    const reopened = Partition.open(dir, { clock, segmentMs });
    expect(reopened.recovery.removedFiles).toEqual([]);
    expect([reopened.logStartOffset, reopened.highWatermark]).toEqual([0, 6]);
    expect(readAllRecords(reopened)).toEqual(compacted);
    expect(reopened.offsetForTimestamp(0)).toBe(2);
    expect((await reopened.append([{ key: null, value: text.encode("y") }])).baseOffset).toBe(6);
    await reopened.close();
  });

  test("a crash mid-rewrite (a leftover temporary file, index files already gone) recovers the original log", async () => {
    const layout: Entry[][] = [
      [
        ["a", "a1"],
        ["b", "b1"],
        ["a", "a2"],
      ], // 0-2
      [["b", "b2"]], // 3, active
    ];
    const { partition, dir } = await build(layout);
    const before = readAllRecords(partition);
    await partition.close();
    // What a crash between writing the rewrite and renaming it leaves: a partial temporary file
    // next to the original log, whose index files were already removed.
    const temp = join(dir, `${segmentFileName(0, ".log")}.compact.tmp`);
    writeFileSync(temp, readFileSync(join(dir, segmentFileName(0, ".log"))).subarray(0, 50));
    rmSync(join(dir, segmentFileName(0, ".index")));
    rmSync(join(dir, segmentFileName(0, ".timeindex")));

    const clock = new ManualClock();
    const reopened = Partition.open(dir, { clock, segmentMs });
    expect(reopened.recovery.removedFiles).toEqual([`${segmentFileName(0, ".log")}.compact.tmp`]);
    expect(existsSync(temp)).toBe(false);
    expect(reopened.recovery.segments[0]).toMatchObject({ baseOffset: 0, truncatedBytes: 0, indexRebuilt: true });
    expect(readAllRecords(reopened)).toEqual(before);

    // The next pass does the work the crash interrupted.
    expect(await compactPartition(reopened, settings, clock.nowMs())).toMatchObject({ segmentsRewritten: 1, recordsDropped: 2 });
    expect(readAllRecords(reopened)).toEqual([entry(2, "a", "a2"), entry(3, "b", "b2")]);
    await reopened.close();
  });

  test("a crash after the rename (the rewritten log without index files) opens as the compacted log", async () => {
    const { partition, clock, dir } = await build([
      [
        ["a", "a1"],
        ["a", "a2"],
        [null, "x"],
      ], // 0-2
      [["b", "b1"]], // 3, active
    ]);
    await compactPartition(partition, settings, clock.nowMs());
    const compacted = readAllRecords(partition);
    await partition.close();
    rmSync(join(dir, segmentFileName(0, ".index")));
    rmSync(join(dir, segmentFileName(0, ".timeindex")));
    const reopened = Partition.open(dir, { clock, segmentMs });
    expect(reopened.recovery.segments[0]).toMatchObject({ truncatedBytes: 0, indexRebuilt: true });
    expect(readAllRecords(reopened)).toEqual(compacted);
    expect(compacted.map((r) => r.offset)).toEqual([1, 2, 3]);
    await reopened.close();
  });

  test("produces waiting on the lock while compaction runs all land, in order", async () => {
    const { partition, clock } = await build([
      [
        ["a", "a1"],
        ["a", "a2"],
      ],
      [["b", "b1"]],
    ]);
    const compaction = compactPartition(partition, settings, clock.nowMs());
    const appends = Array.from({ length: 10 }, (_, i) => partition.append([{ key: text.encode("a"), value: text.encode(`n${i}`) }]));
    const results = await Promise.all(appends);
    // The pass took the lock first, so it judged the log before these appends: a2 was newest.
    expect((await compaction).recordsDropped).toBe(1);
    expect(results.map((r) => r.baseOffset)).toEqual(Array.from({ length: 10 }, (_, i) => 3 + i));
    expect(readAllRecords(partition).map((r) => r.offset)).toEqual([1, 2, ...results.map((r) => r.baseOffset)]);
    await partition.close();
  });
});

describe("cleanup_policy", () => {
  test("compact and compact,delete compact; delete alone does not", () => {
    const expected = { tombstoneRetentionMs: topicConfigDefaults.tombstone_retention_ms };
    expect(compactionSettings({ ...topicConfigDefaults, cleanup_policy: "compact" })).toEqual(expected);
    expect(compactionSettings({ ...topicConfigDefaults, cleanup_policy: "compact,delete" })).toEqual(expected);
    expect(compactionSettings({ ...topicConfigDefaults, cleanup_policy: "delete" })).toBeNull();
  });
});

describe("background pass", () => {
  test("compaction runs after each background retention pass, on the same queue", async () => {
    const events: string[] = [];
    let compactions = 0;
    const retention = async () => (events.push("retention"), { segments_deleted: 0, bytes_reclaimed: 0, segments_rolled: 0, partitions_failed: 0 });
    const compaction = async () => (events.push("compaction"), ++compactions);
    // A 1 ms interval so the timer fires at once; the wait below is a bound, not a timing claim.
    const scheduler = new RetentionScheduler(retention, 1, createLogger({ level: "silent" }), compaction);
    scheduler.start();
    for (let waited = 0; compactions < 2 && waited < 10_000; waited += 5) await Bun.sleep(5);
    await scheduler.stop();
    expect(events.slice(0, 4)).toEqual(["retention", "compaction", "retention", "compaction"]);
  });
});

describe("POST /admin/run-compaction (real process)", () => {
  let broker: BrokerProcess;
  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(() => broker.stop());

  const value = "v".repeat(200);
  /**
   * 12 records, one request each so segments roll between them: keys k0, k1, none, repeating.
   * Keyed frames are 32 + 2 + 202 = 236 bytes, four to a 1 KiB segment: 0-3 and 4-7 sealed, 8-11 active.
   */
  async function fill(topic: string, policy: string): Promise<void> {
    const created = await broker.call("POST", "/topics", { name: topic, partitions: 1, config: { segment_bytes: logSegmentBytesMin, cleanup_policy: policy } });
    expect(created.status).toBe(201);
    for (let i = 0; i < 12; i++) {
      const record = i % 3 === 2 ? { value: `${i}:${value}` } : { key: `k${i % 3}`, value: `${i}:${value}` };
      expect((await broker.call("POST", `/topics/${topic}/produce`, { records: [record] })).status).toBe(200);
    }
  }
  const offsets = async (topic: string) => (await readAll(broker, topic, 0)).map((r) => r.offset);

  test("compacts compact topics only, and the result survives a restart", async () => {
    await fill("table", "compact");
    await fill("stream", "delete");
    expect((await broker.call("GET", "/topics/table")).body.partition_details[0].segment_count).toBe(3);

    const run = await broker.call("POST", "/admin/run-compaction");
    expect(run.status).toBe(200);
    // Newest k0 is 9 and newest k1 is 10, both in the active segment: sealed keyed records all go.
    expect(run.body).toEqual({ partitions_checked: 1, segments_rewritten: 2, records_dropped: 6, bytes_reclaimed: 6 * 236, partitions_failed: 0 });
    expect(await offsets("table")).toEqual([2, 5, 8, 9, 10, 11]);
    expect(await offsets("stream")).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const tableRecords = await readAll(broker, "table", 0);
    expect(tableRecords.map((r) => r.key)).toEqual([null, null, null, "k0", "k1", null]);

    // Nothing left to do: a second pass (with an explicit empty body) drops nothing.
    expect((await broker.call("POST", "/admin/run-compaction", {})).body.records_dropped).toBe(0);
    const produced = await broker.call("POST", "/topics/table/produce", { records: [{ key: "k0", value: "after" }] });
    expect(produced.body.results).toEqual([{ partition: 0, offset: 12 }]);

    await broker.stop();
    broker = await startBroker(broker.dataDir);
    expect(await offsets("table")).toEqual([2, 5, 8, 9, 10, 11, 12]);
    expect((await readAll(broker, "table", 0)).slice(0, 6)).toEqual(tableRecords);
  });

  test("a body with parameters is refused", async () => {
    const { status, body } = await broker.call("POST", "/admin/run-compaction", { topic: "table" });
    expect(status).toBe(400);
    expect(body.error).toContain("takes no parameters");
  });
});
