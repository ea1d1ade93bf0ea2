// The native file writers (src/native/append.ts) against their node:fs references: any sequence of
// appends (of zeros too, as the append-only file writes them ahead) and positional writes leaves
// both files byte for byte the same.
import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { appendChunks, appendChunksReference, writeChunksAt, writeChunksAtReference } from "../../src/native/append.ts";
import { tempDir } from "../support/temp-dir.ts";

type Op = { kind: "at"; chunks: Uint8Array[]; back: number; sync: boolean } | { kind: "append"; chunks: Uint8Array[]; sync: boolean };

const chunks = fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 4 });
/** Positions are given as a distance back from the file's end, so they fall inside it or at its end. */
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("at" as const), chunks, back: fc.nat(400), sync: fc.boolean() }),
  fc.record({ kind: fc.constant("append" as const), chunks, sync: fc.boolean() }),
  fc.record({ kind: fc.constant("append" as const), chunks: fc.nat(70_000).map((n) => [new Uint8Array(n)]), sync: fc.boolean() }),
);

interface Writers {
  at(fd: number, chunks: Uint8Array[], position: number, sync: boolean): Promise<void>;
  append(fd: number, chunks: Uint8Array[], sync: boolean): Promise<number>;
}

const native: Writers = { at: writeChunksAt, append: appendChunks };
const reference: Writers = { at: writeChunksAtReference, append: appendChunksReference };

/** Runs `ops` on a new file with `writers`; returns its bytes. */
async function written(dir: string, name: string, writers: Writers, ops: Op[]): Promise<Uint8Array> {
  const path = join(dir, name);
  let length = 0;
  for (const step of ops) {
    // appendChunks needs a descriptor opened for appending, the positional writers one that is not.
    const fd = openSync(path, step.kind === "append" ? "a" : length === 0 ? "w" : "r+");
    try {
      if (step.kind === "at") await writers.at(fd, step.chunks, Math.max(0, length - step.back), step.sync);
      else expect(await writers.append(fd, step.chunks, step.sync)).toBe(length + step.chunks.reduce((n, c) => n + c.length, 0));
    } finally {
      closeSync(fd);
    }
    length = readFileSync(path).length;
  }
  return readFileSync(path);
}

describe("native file writers", () => {
  test("leave the same bytes as their references, whatever the sequence of writes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
        const dir = tempDir("svc-append-");
        const fast = await written(dir, "native", native, ops);
        const slow = await written(dir, "reference", reference, ops);
        expect(fast.length).toBe(slow.length);
        expect(Buffer.compare(fast, slow)).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  test("a positional write inside zeros appended ahead leaves the file's length as it was", async () => {
    const dir = tempDir("svc-append-");
    const appendFd = openSync(join(dir, "aof"), "a");
    const fd = openSync(join(dir, "aof"), "r+");
    try {
      expect(await appendChunks(appendFd, [new Uint8Array(4096)], true)).toBe(4096);
      await writeChunksAt(fd, [new TextEncoder().encode("*1\r\n$4\r\nPING\r\n")], 0, true);
    } finally {
      closeSync(fd);
      closeSync(appendFd);
    }
    const bytes = readFileSync(join(dir, "aof"));
    expect(bytes.length).toBe(4096);
    expect(bytes.subarray(0, 14).toString()).toBe("*1\r\n$4\r\nPING\r\n");
    expect(bytes.subarray(14).every((b) => b === 0)).toBe(true);
  });

  test("positions that are not byte offsets are refused before anything is written", () => {
    expect(() => writeChunksAt(0, [], -1, false)).toThrow(/not a byte offset/);
    expect(() => writeChunksAt(0, [], 1.5, false)).toThrow(/not a byte offset/);
  });
});
