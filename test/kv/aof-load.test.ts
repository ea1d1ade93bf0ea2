// Loading the append-only file streams it through the parser a chunk at a time (load.ts): split
// anywhere — inside a command's header, its arguments, a transaction, a torn tail or the zeros
// written ahead — it loads exactly what the whole file loads, and cuts the file back alike.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { createLogger } from "../../src/core/log.ts";
import { CommandBuffer } from "../../src/kv/aof/command-buffer.ts";
import { loadAppendLog, type LoadResult } from "../../src/kv/aof/load.ts";
import { type Harness, harness } from "./harness.ts";

const silent = createLogger({ level: "silent" });

const key = fc.constantFrom("a", "b", "list", "k\r\n*1", "");
const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 300 }).map((n) => "v".repeat(n)), fc.constantFrom("\0\0", "*3\r\n"));
const command: fc.Arbitrary<string[][]> = fc.oneof(
  fc.tuple(key, value).map(([k, v]) => [["SET", k, v]]),
  fc.tuple(value, value).map(([a, b]) => [["RPUSH", "list", a, b]]),
  // A transaction: replayed whole, or dropped whole when the tail cuts it.
  fc.tuple(key, value).map(([k, v]) => [["MULTI"], ["SET", k, v], ["INCR", "counter"], ["EXEC"]]),
);

/** A file of `commands`, then maybe a torn command (the first `torn` bytes of one), then maybe zeros. */
function file(commands: string[][][], torn: number, zeros: number): Uint8Array {
  const out = new CommandBuffer();
  for (const group of commands) for (const argv of group) out.push(argv);
  const whole = out.take();
  const extra = new CommandBuffer();
  extra.push(["MULTI"]);
  extra.push(["SET", "torn", "value"]);
  const tail = extra.take().subarray(0, torn);
  return Buffer.concat([whole, tail, new Uint8Array(zeros)]);
}

/** What a harness holds: every key with its value. */
function contents(h: Harness): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of (h.run("KEYS", "*") as string[]).sort()) {
    out[k] = h.run("TYPE", k) === "list" ? h.run("LRANGE", k, 0, -1) : h.run("GET", k);
  }
  return out;
}

function load(bytes: Uint8Array, chunkBytes?: number): { result: LoadResult; data: Record<string, unknown>; after: Uint8Array } {
  const path = join(mkdtempSync(join(tmpdir(), "svc-aof-load-")), "appendonly.aof");
  writeFileSync(path, bytes);
  const h = harness();
  const result = loadAppendLog(h.engine, path, silent, chunkBytes);
  return { result, data: contents(h), after: readFileSync(path) };
}

describe("loading the append-only file a chunk at a time", () => {
  test("split anywhere, it loads what the whole file loads and cuts it back alike", () => {
    fc.assert(
      fc.property(
        fc.array(command, { maxLength: 12 }),
        fc.integer({ min: 0, max: 40 }),
        fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 700 })),
        fc.integer({ min: 1, max: 64 }),
        (commands, torn, zeros, chunkBytes) => {
          const bytes = file(commands, torn, zeros);
          const whole = load(bytes);
          const split = load(bytes, chunkBytes);
          expect(split.result).toEqual(whole.result);
          expect(split.data).toEqual(whole.data);
          expect(Buffer.compare(split.after, whole.after)).toBe(0);
          // Either way the file is cut back to its complete commands: no torn tail, no zeros.
          expect(whole.after.length).toBe(whole.result.sizeBytes);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("a value longer than a chunk loads whole", () => {
    const big = "x".repeat(10_000);
    const { result, data } = load(file([[["SET", "big", big]], [["SET", "after", "1"]]], 0, 3000), 1000);
    expect(data).toEqual({ big, after: "1" });
    expect(result.commands).toBe(2);
  });

  test("corruption past the first chunk names its byte offset in the file", () => {
    const bytes = Buffer.concat([file([[["SET", "a", "1".repeat(100)]]], 0, 0), Buffer.from("?bad\r\n")]);
    const path = join(mkdtempSync(join(tmpdir(), "svc-aof-load-")), "appendonly.aof");
    writeFileSync(path, bytes);
    expect(() => loadAppendLog(harness().engine, path, silent, 16)).toThrow(`corrupt at byte ${bytes.length - 6}`);
  });
});
