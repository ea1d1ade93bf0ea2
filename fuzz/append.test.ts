// Segment append: the native path (writev + fdatasync on a worker thread) leaves exactly the
// bytes and length the node:fs reference does, for arbitrary sequences of batches — and so does a
// flush of unstamped frames that the native path stamps on its thread.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeRecords, frameBodyBytesMax, unstampedFrames } from "../src/broker/log/record.ts";
import { appendChunks, appendChunksReference, type ChunkStamps } from "../src/native/append.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-append-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;

async function appendAll(
  impl: typeof appendChunks,
  batches: Uint8Array[][],
  sync: boolean,
  stamps: (ChunkStamps | undefined)[] = [],
): Promise<{ lengths: number[]; contents: Buffer }> {
  const path = join(dir, `${++fileCounter}.log`);
  const fd = openSync(path, "a");
  try {
    const lengths: number[] = [];
    for (const [i, batch] of batches.entries()) lengths.push(await impl(fd, batch, sync, stamps[i]));
    return { lengths, contents: readFileSync(path) };
  } finally {
    closeSync(fd);
  }
}

describe("appendChunks", () => {
  test("native and reference write the same bytes and report the same lengths", async () => {
    const batches = fc.array(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), { maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(batches, fc.boolean(), async (input, sync) => {
        const native = await appendAll(appendChunks, input, sync);
        const reference = await appendAll(appendChunksReference, input, sync);
        expect(native.lengths).toEqual(reference.lengths);
        expect(native.contents.equals(reference.contents)).toBe(true);
        expect(native.contents.equals(Buffer.concat(input.flat()))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  test("stamped on the way: native and reference write the same frames, each at its offset and time", async () => {
    const records = fc.array(fc.record({ key: fc.option(fc.uint8Array({ maxLength: 10 }), { nil: null }), value: fc.uint8Array({ maxLength: 80 }) }), {
      minLength: 1,
      maxLength: 6,
    });
    const flushes = fc.array(fc.array(records, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(flushes, fc.integer({ min: 0, max: 2 ** 45 }), async (input, timestampMs) => {
        // Each run is framed anew for each side: stamping writes into the chunks.
        const chunksOf = () => input.map((flush) => flush.map((produce) => unstampedFrames(produce).frames));
        let next = 0;
        const stamps = input.map((flush) => ({
          baseOffsets: flush.map((produce) => ((next += produce.length), next - produce.length)),
          timestampMs,
          bodyBytesMax: frameBodyBytesMax,
        }));
        const native = await appendAll(appendChunks, chunksOf(), true, stamps);
        const reference = await appendAll(appendChunksReference, chunksOf(), true, stamps);
        expect(native.lengths).toEqual(reference.lengths);
        expect(native.contents.equals(reference.contents)).toBe(true);
        const read = decodeRecords(new Uint8Array(native.contents));
        expect(read.stop).toBe("end");
        expect(read.records.map((r) => [r.offset, r.timestampMs, r.key, r.value])).toEqual(
          input.flat(2).map((r, offset) => [offset, timestampMs, r.key, r.value]),
        );
      }),
      { numRuns: 60 },
    );
    const frames = unstampedFrames([{ key: null, value: new Uint8Array(3) }]).frames;
    for (const append of [appendChunks, appendChunksReference]) {
      await expect(append(0, [frames], false, { baseOffsets: [], timestampMs: 0, bodyBytesMax: frameBodyBytesMax })).rejects.toThrow(/one safe/);
      await expect(append(0, [frames], false, { baseOffsets: [2 ** 53], timestampMs: 0, bodyBytesMax: frameBodyBytesMax })).rejects.toThrow(/safe/);
    }
  });

  test("a batch of more chunks than one writev takes (IOV_MAX 1024) is written whole", async () => {
    const chunks = Array.from({ length: 3000 }, (_, i) => new Uint8Array([i & 0xff, i >> 8]));
    const { lengths, contents } = await appendAll(appendChunks, [chunks], true);
    expect(lengths).toEqual([6000]);
    expect(contents.equals(Buffer.concat(chunks))).toBe(true);
  });

  test("a descriptor that is not writable rejects with the OS error and writes nothing", async () => {
    const path = join(dir, "readonly.log");
    closeSync(openSync(path, "w"));
    const fd = openSync(path, "r");
    try {
      await expect(appendChunks(fd, [new Uint8Array([1, 2, 3])], true)).rejects.toThrow(/Bad file descriptor/);
    } finally {
      closeSync(fd);
    }
    expect(readFileSync(path).length).toBe(0);
  });
});
