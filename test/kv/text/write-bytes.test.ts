// The byte writers under every reply and every logged command (src/kv/text/write-bytes.ts), and the two
// encoders built on them, against the plain way of making the same bytes: a string of the number,
// Buffer.from(text, "latin1").
import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { CommandBuffer, msetPairsMax } from "../../../src/kv/aof/command-buffer.ts";
import { KeyTable, keyInlineBytesMax, valueInlineBytesMax } from "../../../src/kv/types/key-table.ts";
import { RespWriter } from "../../../src/kv/resp/writer.ts";
import { type Latin1Buffer, writeDecimal, writeLatin1 } from "../../../src/kv/text/write-bytes.ts";
import { tempDir } from "../../support/temp-dir.ts";

const latin1 = (text: string) => Buffer.from(text, "latin1");
/** Byte strings as the engine holds them: one char per byte, lengths on both sides of the char-by-char limit. */
const byteString = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString("latin1"));
/** A request as a client would send it, the reference encoding. */
const multibulk = (argv: string[]) => `*${argv.length}\r\n${argv.map((a) => `$${a.length}\r\n${a}\r\n`).join("")}`;

describe("writeDecimal", () => {
  test("writes the digits String(n) has, from 0 to 2^53 - 1, at the offset, and returns the end", () => {
    // Below 2^31 a fast path writes two digits a step; at and past it, the general one.
    const integer = fc.oneof(
      fc.integer({ min: 0, max: 1000 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.maxSafeNat(),
      fc.constantFrom(9, 10, 99, 100, 101, 99_999, 100_000, 999_999_999, 1_000_000_000, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1),
    );
    fc.assert(
      fc.property(integer, fc.nat(8), (n, at) => {
        const bytes = new Uint8Array(at + 20).fill(0xff);
        const end = writeDecimal(bytes, at, n);
        expect(latin1(String(n)).equals(bytes.subarray(at, end))).toBe(true);
        expect(bytes.subarray(0, at).every((b) => b === 0xff)).toBe(true);
        expect(bytes.subarray(end).every((b) => b === 0xff)).toBe(true);
      }),
    );
  });
});

describe("writeLatin1", () => {
  test("writes each char as its byte, short text char by char and long text natively alike", () => {
    fc.assert(
      fc.property(byteString, fc.nat(8), (text, at) => {
        const bytes = Buffer.alloc(at + text.length + 4, 0xff) as Latin1Buffer;
        const end = writeLatin1(bytes, at, text);
        expect(end).toBe(at + text.length);
        expect(latin1(text).equals(bytes.subarray(at, end))).toBe(true);
        expect(bytes.subarray(end).every((b) => b === 0xff)).toBe(true);
      }),
    );
  });
});

describe("encoders", () => {
  test("CommandBuffer logs each command as the multibulk request a client sends", () => {
    fc.assert(
      fc.property(fc.array(fc.array(byteString, { minLength: 1, maxLength: 6 }), { maxLength: 8 }), (commands) => {
        const buffer = new CommandBuffer();
        for (const argv of commands) buffer.push(argv);
        expect(Buffer.from(buffer.take()).toString("latin1")).toBe(commands.map(multibulk).join(""));
        expect(buffer.take().length).toBe(0);
      }),
    );
  });

  test("CommandBuffer grows for a command past its room: an argument larger than its first 64 KiB, then many small commands", () => {
    const buffer = new CommandBuffer();
    const large = "\u00ff\u0000x".repeat(40_000);
    const commands = [["SET", "k", large], ...Array.from({ length: 5000 }, (_, i) => ["HSET", `bull:q:${i}`, "data", large.slice(0, i % 90)])];
    for (const argv of commands) buffer.push(argv);
    expect(Buffer.from(buffer.take()).toString("latin1")).toBe(commands.map(multibulk).join(""));
  });

  test("SETs pushed back to back go out as MSETs of at most 64 pairs, a lone one as SET, in order with everything else", () => {
    // What a rewrite pushes: SETs from a key table's bytes or from strings, between SELECTs,
    // collection commands and annotations.
    const op = fc.oneof(
      { weight: 8, arbitrary: fc.record({ set: fc.tuple(byteString, byteString), fromTable: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ other: fc.array(byteString, { minLength: 1, maxLength: 4 }) }) },
      { weight: 1, arbitrary: fc.record({ note: fc.stringMatching(/^[A-Z0-9:]{0,12}$/) }) },
    );
    // Runs long enough to pass 64 pairs, and short ones.
    const ops = fc.oneof(fc.array(op, { maxLength: 12 }), fc.array(op, { minLength: 60, maxLength: 200 }));
    fc.assert(
      fc.property(ops, (sequence) => {
        const table = new KeyTable<string>();
        const buffer = new CommandBuffer();
        let expected = "";
        let run: string[] = [];
        const endRun = () => {
          if (run.length === 2) expected += multibulk(["SET", ...run]);
          else if (run.length > 0) expected += multibulk(["MSET", ...run]);
          run = [];
        };
        for (const o of sequence) {
          if ("set" in o) {
            const [key, value] = o.set;
            if (o.fromTable && key.length <= keyInlineBytesMax && value.length <= valueInlineBytesMax) {
              table.set(key, value);
              const ref = table.find(key);
              buffer.pushSet(table.bytesOf(ref), table.keyAt(ref), table.keyLength(ref), table.valueAt(ref), table.valueLength(ref));
            } else buffer.pushSetText(key, value);
            run.push(key, value);
            if (run.length === 2 * msetPairsMax) endRun();
          } else if ("other" in o) {
            endRun();
            buffer.push(o.other);
            expected += multibulk(o.other);
          } else {
            endRun();
            buffer.annotate(o.note);
            expected += `#${o.note}\r\n`;
          }
        }
        endRun();
        expect(Buffer.from(buffer.take()).toString("latin1")).toBe(expected);
        expect(buffer.take().length).toBe(0);
      }),
    );
  });

  test("an MSET still being gathered is ended by writeTo: the file gets it whole", () => {
    const path = join(tempDir("svc-mset-"), "out");
    const fd = openSync(path, "w");
    const buffer = new CommandBuffer();
    buffer.pushSetText("a", "1");
    buffer.pushSetText("b", "2");
    buffer.writeTo(fd);
    buffer.pushSetText("c", "3");
    buffer.writeTo(fd);
    closeSync(fd);
    expect(readFileSync(path, "latin1")).toBe(multibulk(["MSET", "a", "1", "b", "2"]) + multibulk(["SET", "c", "3"]));
  });

  test("pushItems writes what push writes for the same head and slice of items", () => {
    fc.assert(
      fc.property(fc.array(byteString, { maxLength: 70 }), fc.nat(), fc.nat(), (items, a, b) => {
        const from = items.length === 0 ? 0 : a % items.length;
        const count = items.length - from === 0 ? 0 : b % (items.length - from + 1);
        const direct = new CommandBuffer();
        const sliced = new CommandBuffer();
        direct.push(["RPUSH", "k", ...items.slice(from, from + count)]);
        sliced.pushItems(["RPUSH", "k"], items, from, count);
        expect(Buffer.from(sliced.take()).equals(Buffer.from(direct.take()))).toBe(true);
      }),
    );
  });

  test("a buffer that spills to a file leaves in it, with what it still holds, exactly what it was given", () => {
    const path = join(tempDir("svc-spill-"), "out");
    const fd = openSync(path, "w");
    const spilling = new CommandBuffer(fd);
    const whole = new CommandBuffer();
    const items = Array.from({ length: 300_000 }, (_, i) => `item${i % 977}`);
    for (let i = 0; i < items.length; i += 64) {
      spilling.pushItems(["RPUSH", "big"], items, i, Math.min(64, items.length - i));
      whole.pushItems(["RPUSH", "big"], items, i, Math.min(64, items.length - i));
      spilling.push(["SET", `k${i}`, "v"]);
      whole.push(["SET", `k${i}`, "v"]);
    }
    // Past a MiB it wrote itself out, and holds less than that plus one command.
    expect(statSync(path).size).toBeGreaterThan(0);
    expect(spilling.length).toBeLessThan(1024 * 1024 + 64 * 32);
    spilling.writeTo(fd);
    closeSync(fd);
    expect(readFileSync(path).equals(Buffer.from(whole.take()))).toBe(true);
  });

  test("RespWriter's bulk strings, integers and simple strings are the bytes RESP2 defines", () => {
    const reply = fc.oneof(
      byteString.map((s) => ({ kind: "bulk" as const, s })),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((n) => ({ kind: "integer" as const, n })),
      fc.constantFrom("OK", "PONG", "QUEUED").map((s) => ({ kind: "simple" as const, s })),
    );
    fc.assert(
      fc.property(fc.array(reply, { maxLength: 20 }), (replies) => {
        const writer = new RespWriter();
        let expected = "";
        for (const r of replies) {
          if (r.kind === "bulk") {
            writer.bulk(r.s);
            expected += `$${r.s.length}\r\n${r.s}\r\n`;
          } else if (r.kind === "integer") {
            writer.integer(r.n);
            expected += `:${r.n}\r\n`;
          } else {
            writer.simple(r.s);
            expected += `+${r.s}\r\n`;
          }
        }
        expect(writer.buffer.subarray(writer.start, writer.length).toString("latin1")).toBe(expected);
      }),
    );
  });
});
