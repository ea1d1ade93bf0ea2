// NativeRespParser (the native scanner behind RespParser's interface) against RespParser, its
// TypeScript reference: on any bytes, split anywhere, both return the same commands and the same
// protocol errors and hold the same pendingBytes after every feed — also when fed on after an
// error. Then the limits at their edges, the paths a small test rarely reaches (a full records
// array, a bulk arriving in many reads), and proof that the scanning really happens natively.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { NativeRespParser } from "../../src/kv/resp/native-parser.ts";
import { inlineBytesMax, multibulkArgsMax, type ParseOutput, RespParser, type RequestParser } from "../../src/kv/resp/parser.ts";
import { nativeAddon } from "../../src/native/addon.ts";
import { respScan, respScanArrays, slotBulkLength, slotEnd, slotPos, statusNeedMore } from "../../src/native/resp-scan.ts";

const latin1 = (s: string) => Buffer.from(s, "latin1");
const encode = (argv: string[]) => `*${argv.length}\r\n${argv.map((a) => `$${a.length}\r\n${a}\r\n`).join("")}`;

type ParseOutcome = ParseOutput & { pendingBytes: number };

/** What one feed did: its output and the pending bytes after it. Neither parser may throw. */
function outcome(parser: RequestParser, piece: Uint8Array): ParseOutcome {
  return { ...parser.feed(piece), pendingBytes: parser.pendingBytes };
}

/** Cuts `bytes` at `cuts` (taken modulo its length + 1) into the pieces of successive reads. */
function pieces(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    out.push(bytes.subarray(from, to));
    from = to;
  }
  return out;
}

/**
 * Feeds both parsers the same reads and requires the same outcome after each; returns them.
 * `limits[i]`, when given, is set as both parsers' bulkBytesMax before read i, as CONFIG SET would.
 */
function expectSameFeeds(reads: Uint8Array[], bulkBytesMax = 1024, limits: number[] = []) {
  const reference = new RespParser(bulkBytesMax);
  const native = new NativeRespParser(bulkBytesMax);
  return reads.map((piece, i) => {
    if (limits[i] !== undefined) reference.bulkBytesMax = native.bulkBytesMax = limits[i];
    const expected = outcome(reference, piece);
    expect(outcome(native, piece)).toEqual(expected);
    return expected;
  });
}

const byte = fc.integer({ min: 0, max: 255 });
const byteString = fc.string({ unit: byte.map((c) => String.fromCharCode(c)), maxLength: 40 });
const digits = fc.stringMatching(/^-?[0-9]{1,21}$/);

/** Fragments of framing, numbers near every boundary, and bytes that end or hide a line. */
const respish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        ...["*", "$", "\r\n", "\r", "\n", "\0", "*1\r\n", "*2\r\n", "*3\r\n", "$3\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "$0\r\n"],
        ...["*-0\r\n", "$-0\r\n", "*01\r\n", "$01\r\n", "*+1\r\n", "$1\n", "*1\n", "*1\r\0", "$1\0\r\n", "GET", " ", '"', "'"],
        ...["\\x41", "PING\r\n", "$1024\r\n", "$1025\r\n", "$2000\r\n", `*${multibulkArgsMax}\r\n`, `*${multibulkArgsMax + 1}\r\n`],
        ...["*9223372036854775807\r\n", "*-9223372036854775808\r\n", "*-9223372036854775799\r\n", "$9223372036854774899\r\n"],
      ),
      digits.map((d) => `*${d}\r\n`),
      digits.map((d) => `$${d}\r\n`),
      byteString,
      fc.array(byteString, { minLength: 1, maxLength: 3 }).map(encode),
    ),
    { maxLength: 20 },
  )
  .map((parts) => latin1(parts.join("")));

/** Valid pipelines with a few bytes overwritten, removed or inserted. */
const corrupted = fc
  .tuple(
    fc.array(fc.array(byteString, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
    fc.array(fc.tuple(fc.constantFrom("set", "delete", "insert"), fc.nat(), fc.oneof(byte, fc.constantFrom(0x0d, 0x0a, 0x2a, 0x24, 0x2d, 0x30, 0x00))), {
      maxLength: 4,
    }),
  )
  .map(([commands, edits]) => {
    const bytes = [...latin1(commands.map(encode).join(""))];
    for (const [kind, at, value] of edits) {
      const i = at % (bytes.length + 1);
      if (kind === "insert") bytes.splice(i, 0, value);
      else if (i < bytes.length) kind === "set" ? (bytes[i] = value) : bytes.splice(i, 1);
    }
    return Uint8Array.from(bytes);
  });

const cuts = fc.array(fc.nat(), { maxLength: 10 });

describe("NativeRespParser against RespParser", () => {
  test("arbitrary bytes, split anywhere, give the same outcome after every feed", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), cuts, (bytes, at) => {
        expectSameFeeds(pieces(bytes, at));
      }),
      { numRuns: 2000 },
    );
  });

  test("RESP-like fragments, split anywhere, with any bulk limit, give the same outcome", () => {
    const limits = fc.oneof(fc.constant(1024), fc.nat(64), fc.double({ min: -2, max: 64 }), fc.constant(Number.NaN));
    fc.assert(
      fc.property(respish, cuts, limits, (bytes, at, bulkBytesMax) => {
        expectSameFeeds(pieces(bytes, at), bulkBytesMax);
      }),
      { numRuns: 5000 },
    );
  });

  test("a bulk limit changed between reads applies from the next read on, in both", () => {
    fc.assert(
      fc.property(respish, cuts, fc.array(fc.nat(40), { maxLength: 10 }), (bytes, at, limits) => {
        expectSameFeeds(pieces(bytes, at), 1024, limits);
      }),
      { numRuns: 1000 },
    );
  });

  test("valid pipelines with corrupted bytes give the same outcome", () => {
    fc.assert(
      fc.property(corrupted, cuts, (bytes, at) => {
        expectSameFeeds(pieces(bytes, at));
      }),
      { numRuns: 3000 },
    );
  });

  test("lines near inlineBytesMax without their end give the same outcome", () => {
    // A header or inline line of about inlineBytesMax bytes, in which a CR, LF or NUL may appear.
    const prefix = fc.constantFrom("*", "*1\r\n$", "*2\r\n$1\r\nx\r\n$", "GET ", "");
    const filler = fc.constantFrom("1", "9", "a", " ");
    const stray = fc.array(fc.tuple(fc.nat(), fc.constantFrom("\r", "\n", "\0", "\r\n")), { maxLength: 2 });
    fc.assert(
      fc.property(prefix, filler, fc.integer({ min: -3, max: 3 }), stray, cuts, (head, fill, extra, strays, at) => {
        const body = [...fill.repeat(inlineBytesMax + extra - head.length)];
        for (const [i, s] of strays) body.splice(i % (body.length + 1), 0, s);
        expectSameFeeds(
          pieces(
            latin1(head + body.join("")),
            at.map((c) => c * 997),
          ),
        );
      }),
      { numRuns: 200 },
    );
  });

  test("encoded commands come back intact, byte by byte and whole", () => {
    fc.assert(
      fc.property(fc.array(fc.array(byteString, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }), (commands) => {
        const bytes = latin1(commands.map(encode).join(""));
        const whole = expectSameFeeds([bytes]);
        expect(whole).toEqual([{ commands, error: null, pendingBytes: 0 }]);
        const oneByOne = expectSameFeeds(pieces(bytes, [...bytes.keys()]));
        expect(oneByOne.flatMap((o) => o.commands)).toEqual(commands);
      }),
      { numRuns: 300 },
    );
  });
});

describe("arguments repeated from the last command", () => {
  // RespParser reuses the last command's string at a position when the bytes are the same: words
  // from a small pool, near misses among them (same length, differing in the first, middle or
  // last byte), at the 64-byte limit of that reuse and one past it, in commands long enough to
  // pass the 32 positions it covers.
  const near = ["key:1", "key:2", "kez:1", "Key:1", "xey:1", "k".repeat(64), `${"k".repeat(63)}j`, `j${"k".repeat(63)}`, "k".repeat(65), "", "v"];
  test("come back as their own bytes, whole and split anywhere", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...near), { minLength: 1, maxLength: 36 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (commands, cuts) => {
          const named = commands.map((argv) => ["SET", ...argv]);
          const bytes = latin1(named.map(encode).join(""));
          expect(expectSameFeeds([bytes])).toEqual([{ commands: named, error: null, pendingBytes: 0 }]);
          const split = expectSameFeeds(
            pieces(
              bytes,
              cuts.map((c) => c % (bytes.length + 1)),
            ),
          );
          expect(split.flatMap((o) => o.commands)).toEqual(named);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("limits at the edge and one past", () => {
  const waits = (pendingBytes = 0) => ({ commands: [], error: null, pendingBytes });
  const fails = (detail: string, pendingBytes = 0) => ({ commands: [], error: `ERR Protocol error: ${detail}`, pendingBytes });
  const mib512 = 512 * 1024 * 1024;
  const cases: [string, string, ParseOutcome, number?][] = [
    ["a bulk length at the limit parses", `*1\r\n$1024\r\n${"x".repeat(1024)}\r\n`, { commands: [["x".repeat(1024)]], error: null, pendingBytes: 0 }],
    ["a bulk length one past the limit is invalid", "*1\r\n$1025\r\n", fails("invalid bulk length")],
    ["a bulk length at the default limit waits for its bytes", `*1\r\n$${mib512}\r\n`, waits(), mib512],
    ["a bulk length one past the default limit is invalid", `*1\r\n$${mib512 + 1}\r\n`, fails("invalid bulk length"), mib512],
    ["a count at multibulkArgsMax waits for its arguments", `*${multibulkArgsMax}\r\n$1\r\nx\r\n`, waits()],
    ["a count one past multibulkArgsMax is invalid", `*${multibulkArgsMax + 1}\r\n`, fails("invalid multibulk length")],
    ["a count line of inlineBytesMax bytes without its CR waits", `*${"1".repeat(inlineBytesMax - 1)}`, waits(inlineBytesMax)],
    ["a count line one byte longer is too big", `*${"1".repeat(inlineBytesMax)}`, fails("too big mbulk count string", inlineBytesMax + 1)],
    ["a bulk line of inlineBytesMax bytes without its CR waits", `*1\r\n$${"1".repeat(inlineBytesMax - 1)}`, waits(inlineBytesMax)],
    ["a bulk line one byte longer is too big", `*1\r\n$${"1".repeat(inlineBytesMax)}`, fails("too big bulk count string", inlineBytesMax + 1)],
    ["an inline line of inlineBytesMax bytes without its LF waits", "A".repeat(inlineBytesMax), waits(inlineBytesMax)],
    ["an inline line one byte longer is too big", "A".repeat(inlineBytesMax + 1), fails("too big inline request", inlineBytesMax + 1)],
  ];
  for (const [name, text, expected, bulkBytesMax] of cases) {
    test(name, () => {
      expect(expectSameFeeds([latin1(text)], bulkBytesMax)).toEqual([expected]);
      // Read in 4 KiB pieces, the same bytes end in the same place.
      const reads = pieces(
        latin1(text),
        Array.from({ length: text.length >> 12 }, (_, k) => (k + 1) << 12),
      );
      const chunked = expectSameFeeds(reads, bulkBytesMax);
      const last = chunked.at(-1)!;
      expect({ commands: chunked.flatMap((o) => o.commands), error: last.error, pendingBytes: last.pendingBytes }).toEqual(expected);
    });
  }
});

describe("paths small inputs rarely reach", () => {
  test("a read holding more records than the records array continues across scans", () => {
    const many = latin1("*1\r\n$0\r\n\r\n".repeat(30_000) + encode(Array.from({ length: 40_000 }, (_, i) => `${i}`)));
    const [whole] = expectSameFeeds([many]);
    expect(whole).toMatchObject({ error: null, pendingBytes: 0 });
    expect(whole!.commands.length).toBe(30_001);
    expectSameFeeds(pieces(many, [100_000, 300_000, 300_001]));
  });

  test("a bulk arriving in many reads is not scanned again until it is whole", () => {
    const header = latin1("*2\r\n$3\r\nSET\r\n$100000\r\n");
    const reads = [
      header,
      ...pieces(
        latin1(`${"v".repeat(100_000)}\r\n`),
        Array.from({ length: 99 }, (_, k) => (k + 1) * 1000),
      ),
    ];
    const calls = countScans(() => {
      const outcomes = expectSameFeeds(reads, 100_000);
      expect(outcomes.slice(0, 3).map((o) => o.pendingBytes)).toEqual([0, 1000, 2000]);
      expect(outcomes.at(-1)).toMatchObject({ commands: [["SET", "v".repeat(100_000)]], error: null, pendingBytes: 0 });
    });
    // One scan reads the header, one the completed bulk; the 98 reads between are not scanned.
    expect(calls).toBe(2);
  });

  test("inline and multibulk commands interleave", () => {
    const mixed = latin1(`PING\r\n${encode(["GET", "k"])}set k "v w"\n\r\n${encode(["DEL", "k"])}  \r\nECHO 'x\r\n`);
    const [whole] = expectSameFeeds([mixed]);
    expect(whole).toEqual({
      commands: [["PING"], ["GET", "k"], ["set", "k", "v w"], ["DEL", "k"]],
      error: "ERR Protocol error: unbalanced quotes in request",
      pendingBytes: 0,
    });
  });
});

/** Runs `body` and returns how many times it called the native scanner. */
function countScans(body: () => void): number {
  const addon = nativeAddon as { respScan: typeof nativeAddon.respScan };
  const original = addon.respScan;
  let calls = 0;
  addon.respScan = (...args) => (calls++, original(...args));
  try {
    body();
  } finally {
    addon.respScan = original;
  }
  return calls;
}

describe("the native scanner", () => {
  test("is a function of the compiled addon", () => {
    for (const fn of [nativeAddon.respScan, nativeAddon.respScanBind]) {
      expect(Function.prototype.toString.call(fn)).toContain("[native code]");
    }
  });

  test("a read of many commands costs NativeRespParser one native call", () => {
    const pipeline = latin1(Array.from({ length: 500 }, (_, i) => encode(["SET", `key:${i}`, "value"])).join(""));
    let commands = 0;
    const calls = countScans(() => {
      commands = new NativeRespParser().feed(pipeline).commands.length;
    });
    expect({ commands, calls }).toEqual({ commands: 500, calls: 1 });
  });

  test("reports offsets into the buffer it was given and the progress it made", () => {
    const { state, out } = respScanArrays;
    const saved = state.slice();
    try {
      const buf = latin1("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPI");
      state.set([inlineBytesMax, multibulkArgsMax, 1024, buf.length, 0, 0, -1, 0]);
      expect(respScan(buf)).toBe(statusNeedMore);
      // pos, argsLeft, bulkLength, words: the second command waits for "NG\r\n".
      expect([...state.subarray(slotPos)]).toEqual([28, 1, 4, 6]);
      expect([...out.subarray(0, 6)]).toEqual([2, 8, 11, 17, 18, 0]);
    } finally {
      state.set(saved);
    }
  });

  test("rejects state a caller could only get wrong by a bug", () => {
    const { state, out } = respScanArrays;
    const saved = state.slice();
    const buf = latin1("*1\r\n");
    const scanWith = (slot: number, value: number) => () => {
      state.set([inlineBytesMax, multibulkArgsMax, 1024, buf.length, 0, 0, -1, 0]);
      state[slot] = value;
      return respScan(buf);
    };
    try {
      expect(scanWith(slotEnd, buf.length + 1)).toThrow(/end/);
      expect(scanWith(slotPos, 5)).toThrow(/pos/);
      expect(scanWith(slotPos, 0.5)).toThrow(/pos/);
      expect(scanWith(slotBulkLength, -2)).toThrow(/bulk length/);
      // A buffer that is a view of the records array itself.
      expect(() => respScan(new Uint8Array(out.buffer, 0, 16))).toThrow(/share memory/);
      expect(() => nativeAddon.respScan(buf, 1_000_000)).toThrow(/binding/);
    } finally {
      state.set(saved);
    }
  });
});
