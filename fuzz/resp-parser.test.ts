// The RESP request parser under arbitrary input: it never throws or hangs, input split at any
// points parses exactly like the same bytes read at once, and encoded commands come back intact.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type ParseOutput, RespParser } from "../src/kv/resp/parser.ts";

/** Feeds `bytes` cut at `cuts`, collecting commands up to the first protocol error. */
function parseInPieces(bytes: Uint8Array, cuts: number[]): ParseOutput {
  const parser = new RespParser(1024);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const commands: string[][] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    const out = parser.feed(bytes.subarray(from, to));
    commands.push(...out.commands);
    if (out.error !== null) return { commands, error: out.error };
    from = to;
  }
  return { commands, error: null };
}

const latin1 = (s: string) => Buffer.from(s, "latin1");
const byteString = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 });
const encode = (argv: string[]) => `*${argv.length}\r\n${argv.map((a) => `$${a.length}\r\n${a}\r\n`).join("")}`;

/** Bytes that look like RESP often enough to reach deep states: fragments of valid framing. */
const respish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "*",
        "$",
        "\r\n",
        "\n",
        "*1\r\n",
        "*2\r\n",
        "$3\r\n",
        "$-1\r\n",
        "*-1\r\n",
        "*0\r\n",
        "$0\r\n",
        "GET",
        " ",
        '"',
        "'",
        "\\x41",
        "PING\r\n",
        "$2000\r\n",
        "*99999999\r\n",
      ),
      byteString,
      fc.array(byteString, { minLength: 1, maxLength: 3 }).map(encode),
    ),
    { maxLength: 20 },
  )
  .map((parts) => latin1(parts.join("")));

describe("RESP parser properties", () => {
  test("arbitrary bytes never throw, and any split parses like the whole", () => {
    fc.assert(
      fc.property(fc.oneof(respish, fc.uint8Array({ maxLength: 300 })), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const whole = parseInPieces(bytes, []);
        const pieces = parseInPieces(bytes, cuts);
        expect(pieces).toEqual(whole);
      }),
      { numRuns: 3000 },
    );
  });

  test("encoded commands parse back to the same arguments, however they are split", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(byteString, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (commands, cuts) => {
          const bytes = latin1(commands.map(encode).join(""));
          expect(parseInPieces(bytes, cuts)).toEqual({ commands, error: null });
        },
      ),
      { numRuns: 2000 },
    );
  });

  test("inline commands of plain words parse like their multibulk form", () => {
    const word = fc.stringMatching(/^[A-Za-z0-9_:.-]{1,10}$/);
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (commands, cuts) => {
          const inline = latin1(commands.map((argv) => `${argv.join(" ")}\r\n`).join(""));
          expect(parseInPieces(inline, cuts)).toEqual(parseInPieces(latin1(commands.map(encode).join("")), []));
        },
      ),
      { numRuns: 1000 },
    );
  });

  test("a bulk length one past the limit is a protocol error; at the limit it parses", () => {
    const atLimit = latin1(`*1\r\n$1024\r\n${"x".repeat(1024)}\r\n`);
    expect(parseInPieces(atLimit, [])).toEqual({ commands: [["x".repeat(1024)]], error: null });
    const past = latin1(`*1\r\n$1025\r\n`);
    expect(parseInPieces(past, [])).toEqual({ commands: [], error: "ERR Protocol error: invalid bulk length" });
  });
});
