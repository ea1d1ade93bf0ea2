// Loading the append-only file streams it through the parser a chunk at a time (load.ts): split
// anywhere — inside a command's header, its arguments, a transaction, an annotation, a torn tail
// or the fill written ahead — it loads exactly what the whole file loads, and cuts the file back
// alike. Annotations load as nothing.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { isSvcError } from "../../../src/core/errors.ts";
import { createLogger } from "../../../src/core/log.ts";
import { CommandBuffer } from "../../../src/kv/aof/command-buffer.ts";
import { loadAppendLog, type LoadResult } from "../../../src/kv/aof/load.ts";
import { type Harness, harness } from "../harness.ts";
import { tempDir } from "../../support/temp-dir.ts";

const silent = createLogger({ level: "silent" });

const key = fc.constantFrom("a", "b", "list", "k\r\n*1", "");
const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer({ min: 0, max: 300 }).map((n) => "v".repeat(n)),
  fc.constantFrom("\0\0", "*3\r\n"),
);
/** Annotation lines as Redis 7 writes them (#TS:), and others it would skip alike. */
const annotation = fc.constantFrom("#TS:1700000000\r\n", "#\n", "# *3\r\n");
const command: fc.Arbitrary<string[][] | string> = fc.oneof(
  annotation,
  fc.tuple(key, value).map(([k, v]) => [["SET", k, v]]),
  fc.tuple(value, value).map(([a, b]) => [["RPUSH", "list", a, b]]),
  // A transaction: replayed whole, or dropped whole when the tail cuts it.
  fc.tuple(key, value).map(([k, v]) => [["MULTI"], ["SET", k, v], ["INCR", "counter"], ["EXEC"]]),
);

/**
 * A file of `commands` and annotations, then maybe a torn command (the first `torn` bytes of one),
 * then maybe `fill` bytes of `fillByte` ('#' as svc writes ahead now, or zeros as it did before).
 */
function file(commands: (string[][] | string)[], torn: number, fill: number, fillByte = 0x23): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const group of commands) {
    if (typeof group === "string") {
      parts.push(Buffer.from(group));
      continue;
    }
    const out = new CommandBuffer();
    for (const argv of group) out.push(argv);
    parts.push(out.take());
  }
  const extra = new CommandBuffer();
  extra.push(["MULTI"]);
  extra.push(["SET", "torn", "value"]);
  parts.push(extra.take().subarray(0, torn), new Uint8Array(fill).fill(fillByte));
  return Buffer.concat(parts);
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
  const path = join(tempDir("svc-aof-load-"), "appendonly.aof");
  writeFileSync(path, bytes);
  const h = harness();
  const result = loadAppendLog(h.engine, path, silent, { chunkBytes });
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
        fc.constantFrom(0x23, 0),
        (commands, torn, fill, chunkBytes, fillByte) => {
          const bytes = file(commands, torn, fill, fillByte);
          const whole = load(bytes);
          const split = load(bytes, chunkBytes);
          expect(split.result).toEqual(whole.result);
          expect(split.data).toEqual(whole.data);
          expect(Buffer.compare(split.after, whole.after)).toBe(0);
          // Either way the file is cut back to its complete commands: no torn tail, no fill.
          expect(whole.after.length).toBe(whole.result.sizeBytes);
          // The annotations load as nothing: the same commands without them load the same.
          const plain = load(
            file(
              commands.filter((g) => typeof g !== "string"),
              torn,
              fill,
              fillByte,
            ),
          );
          expect(whole.data).toEqual(plain.data);
          expect(whole.result.commands).toBe(plain.result.commands);
          // Nothing whole is cut: without a torn tail, the file keeps every command and annotation.
          if (torn === 0) expect(whole.result.sizeBytes).toBe(bytes.length - fill);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("any bytes either load or are refused as corrupt, never anything else; what a load leaves loads the same again, with nothing more cut", () => {
    const token = fc.oneof(
      fc.constantFrom("*", "$", "\r\n", "\n", "\r", "#", "\0", "0", "1", "3", "-1", "SET", "k", "v"),
      fc.constantFrom(
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
        "#TS:1\r\n",
        "*1\r\n$5\r\nMULTI\r\n",
        "*1\r\n$4\r\nEXEC\r\n",
        "*1\r\n$7\r\nDISCARD\r\n",
        "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n",
      ),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 30 }), fc.integer({ min: 1, max: 64 }), (tokens, chunkBytes) => {
        const bytes = Buffer.from(tokens.join(""), "latin1");
        let first: ReturnType<typeof load>;
        try {
          first = load(bytes, chunkBytes);
        } catch (error) {
          expect(isSvcError(error) && error.code === "data_corrupt").toBe(true);
          return;
        }
        expect(first.after.length).toBe(first.result.sizeBytes);
        const second = load(first.after);
        expect(second.data).toEqual(first.data);
        expect(second.result).toEqual(first.result);
        expect(Buffer.compare(second.after, first.after)).toBe(0);
      }),
      { numRuns: 1000 },
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
    const path = join(tempDir("svc-aof-load-"), "appendonly.aof");
    writeFileSync(path, bytes);
    expect(() => loadAppendLog(harness().engine, path, silent, { chunkBytes: 16 })).toThrow(`corrupt at byte ${bytes.length - 6}`);
  });
});

describe("MSET read as bytes (the loader's path for a rewritten file's strings)", () => {
  const msetKey = fc.constantFrom("a", "b", "k\r\n*1", "", "list", "K".repeat(300), "\xff\0");
  const msetValue = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.integer({ min: 60, max: 70 }).map((n) => "v".repeat(n)),
    fc.constant("\0\xff"),
  );
  const pairs = fc.array(fc.tuple(msetKey, msetValue), { minLength: 1, maxLength: 5 }).map((ps) => ps.flat());
  const name = fc.constantFrom("MSET", "mset", "MsEt");
  const step: fc.Arbitrary<string[][]> = fc.oneof(
    fc.tuple(name, pairs).map(([n, args]) => [[n, ...args]]),
    // Not whole pairs: MSET's arity error, replayed as an error reply either way. (Fewer than
    // three arguments fail the command table's arity check, which the loader takes for damage.)
    fc.tuple(name, pairs, msetKey).map(([n, args, k]) => [[n, ...args, k]]),
    fc.tuple(msetKey, msetValue).map(([k, v]) => [["SET", k, v, "EX", "1000"]]),
    fc.tuple(msetKey, msetValue).map(([k, v]) => [["RPUSH", k, v]]),
    fc.constantFrom<string[][]>([["SELECT", "1"]], [["SELECT", "0"]]),
    // Queued in a transaction, it runs at EXEC, after the bytes it was read from are gone.
    fc.tuple(name, pairs).map(([n, args]) => [["MULTI"], [n, ...args], ["INCR", "counter"], ["EXEC"]]),
  );

  /** Every key of databases 0 and 1 with its type, value and time to live. */
  function dataset(h: Harness): unknown[] {
    const out: unknown[] = [];
    for (const db of ["0", "1"]) {
      h.run("SELECT", db);
      for (const k of (h.run("KEYS", "*") as string[]).sort()) {
        const type = h.run("TYPE", k);
        out.push([db, k, type, type === "list" ? h.run("LRANGE", k, 0, -1) : h.run("GET", k), h.run("PTTL", k)]);
      }
    }
    return out;
  }

  test("loads what the same commands make when clients send them, split anywhere", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 10 }), fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 64 })), (steps, chunkBytes) => {
        const live = harness();
        const out = new CommandBuffer();
        for (const argv of steps.flat()) {
          live.run(...argv);
          out.push(argv);
        }
        const path = join(tempDir("svc-aof-load-"), "appendonly.aof");
        writeFileSync(path, out.take());
        const loaded = harness();
        loadAppendLog(loaded.engine, path, silent, { chunkBytes });
        // Changes counted alike (INFO's rdb_changes_since_last_save), before the reads below.
        expect(loaded.engine.dirty).toBe(live.engine.dirty);
        expect(dataset(loaded)).toEqual(dataset(live));
      }),
      { numRuns: 400 },
    );
  });
});
