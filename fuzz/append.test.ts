// Segment append: the native path (writev + fdatasync on a worker thread) leaves exactly the
// bytes and length the node:fs reference does, for arbitrary sequences of batches.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendChunks, appendChunksReference } from "../src/native/append.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-append-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;

async function appendAll(impl: typeof appendChunks, batches: Uint8Array[][], sync: boolean): Promise<{ lengths: number[]; contents: Buffer }> {
  const path = join(dir, `${++fileCounter}.log`);
  const fd = openSync(path, "a");
  try {
    const lengths: number[] = [];
    for (const batch of batches) lengths.push(await impl(fd, batch, sync));
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
