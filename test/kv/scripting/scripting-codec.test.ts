// The codecs between the engine and the native Lua scripts, under fast-check: words packed for
// the native side come back as they went (every byte of latin1 strings), and a script's RESP2
// reply written again through the Reply writers is byte for byte what it was. Arbitrary bytes
// never crash either reader with anything but a RangeError, and never hang it.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { RespWriter } from "../../../src/kv/resp/writer.ts";
import { replayResp, replayRespByLines } from "../../../src/kv/scripting/resp-replay.ts";
import { cachedWord, cacheThisWord, packWords, runWordReference, unpackWords, wordCacheSlots } from "../../../src/kv/scripting/words.ts";

const byteString = fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }).map((codes) => String.fromCharCode(...codes));

/** A RESP2 reply as the writer calls that make it. */
type Tree = { simple: string } | { error: string } | { integer: number | bigint } | { bulk: string | null } | { array: Tree[] | null };
const lineText = fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, " "));
const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    lineText.map((simple) => ({ simple })),
    lineText.map((error) => ({ error: `ERR ${error}` })),
    fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })).map((integer) => ({ integer })),
    fc.option(byteString, { nil: null }).map((bulk) => ({ bulk })),
    fc.option(fc.array(tie("tree"), { maxLength: 5 }), { nil: null }).map((array) => ({ array })),
  ),
})).tree;

function write(t: Tree, out: RespWriter): void {
  if ("simple" in t) out.simple(t.simple);
  else if ("error" in t) out.error(t.error);
  else if ("integer" in t) out.integer(t.integer);
  else if ("bulk" in t) out.bulk(t.bulk);
  else {
    out.array(t.array === null ? null : t.array.length);
    for (const item of t.array ?? []) write(item, out);
  }
}

/**
 * Words packed as native/script's pack_into packs them without a word cache: a word whose `references`
 * entry is n ≥ 0 as a reference to the script's word n (runWordReference + n, no bytes).
 */
function packReferring(words: string[], references: number[]): Buffer {
  const parts: Buffer[] = [u32(words.length)];
  for (const [i, word] of words.entries()) {
    const n = references[i]!;
    parts.push(n >= 0 ? u32(runWordReference + n) : Buffer.concat([u32(word.length), Buffer.from(word, "latin1")]));
  }
  return Buffer.concat(parts);
}

function u32(n: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(n);
  return out;
}

const bytesOf = (out: RespWriter) => Buffer.from(out.buffer.subarray(0, out.length));

describe("words packed for the native Lua scripts", () => {
  test("unpack(pack(words)) gives the words back, every byte", () => {
    fc.assert(
      fc.property(fc.array(byteString, { maxLength: 20 }), (words) => {
        expect(unpackWords(packWords(words))).toEqual(words);
      }),
      { numRuns: 500 },
    );
  });

  test("commands unpacked one after another — repeated words, references to the script's words — each come back exactly (the reuse paths == a fresh string)", () => {
    // Few distinct words, so that positions and given words repeat often. The given words follow
    // a command's first three (EVALSHA sha numkeys), as a run's do; a word the script was given
    // may be packed as a reference to it, as the native side packs it.
    const word = fc.constantFrom("", "k", "K", "key:1", "key:2", "\u00ff\u0000", "x".repeat(70), "y".repeat(70));
    const packed = fc.array(fc.tuple(word, fc.boolean()), { minLength: 1, maxLength: 18 });
    fc.assert(
      fc.property(fc.array(packed, { maxLength: 12 }), fc.array(word, { maxLength: 4 }), (commands, given) => {
        const argv = ["EVALSHA", "sha", String(given.length), ...given];
        for (const command of commands) {
          const words = command.map(([w]) => w);
          const references = command.map(([w, refer]) => (refer ? given.indexOf(w) : -1));
          const unpacked = unpackWords(packReferring(words, references), true, argv, 3);
          expect(unpacked).toEqual(words);
          // A reference is the given string itself.
          for (const [i, n] of references.entries()) if (n >= 0) expect(unpacked[i]).toBe(argv[3 + n]);
        }
      }),
      { numRuns: 500 },
    );
  });

  test("words the word cache holds, keeps or passes by cross exactly (the native side's marks, a model of its table == the words)", () => {
    // The native side (word_cache.rs) keeps a word of 1 to 63 bytes in the slot its bytes hash
    // to; here a word's slot is drawn, so that words share slots, replace each other and come
    // back. A word in its slot crosses as a mark alone, any other kept one with its bytes.
    const word = fc.oneof(fc.constantFrom("hget", "HGET", "field", "\u00ff\u0000", "x".repeat(63), "x".repeat(64), ""), byteString);
    const slotOf = new Map<string, number>();
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { minLength: 1, maxLength: 10 }), { maxLength: 15 }),
        fc.integer({ min: 0, max: wordCacheSlots - 1 }),
        (commands, seed) => {
          const held: (string | undefined)[] = [];
          for (const command of commands) {
            const parts: Buffer[] = [u32(command.length)];
            for (const w of command) {
              if (w.length === 0 || w.length > 63) {
                parts.push(u32(w.length), Buffer.from(w, "latin1"));
                continue;
              }
              if (!slotOf.has(w)) slotOf.set(w, (seed + slotOf.size * 7) % 16);
              const slot = slotOf.get(w)!;
              if (held[slot] === w) parts.push(u32(cachedWord + slot));
              else {
                held[slot] = w;
                parts.push(u32(cacheThisWord + slot * 256 + w.length), Buffer.from(w, "latin1"));
              }
            }
            expect(unpackWords(Buffer.concat(parts))).toEqual(command);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test("a mark for a slot the word cache does not hold, or past its last slot, is refused with a RangeError", () => {
    /** One word, packed. */
    const words = (...parts: Buffer[]) => Buffer.concat([u32(1), ...parts]);
    expect(() => unpackWords(words(u32(cacheThisWord + wordCacheSlots * 256 + 1), Buffer.from("a")))).toThrow(RangeError);
    expect(() => unpackWords(words(u32(cachedWord + wordCacheSlots)))).toThrow(RangeError);
    // The last slot is a slot.
    expect(unpackWords(words(u32(cacheThisWord + (wordCacheSlots - 1) * 256 + 1), Buffer.from("z")))).toEqual(["z"]);
    expect(unpackWords(words(u32(cachedWord + wordCacheSlots - 1)))).toEqual(["z"]);
  });

  test("a reference to a word the script was not given is refused with a RangeError", () => {
    const argv = ["EVALSHA", "sha", "1", "key", "arg"];
    expect(unpackWords(packReferring(["GET", "arg"], [-1, 1]), true, argv, 3)).toEqual(["GET", "arg"]);
    expect(() => unpackWords(packReferring(["GET", "?"], [-1, 2]), true, argv, 3)).toThrow(RangeError);
    expect(() => unpackWords(packReferring(["GET", "?"], [-1, 0]))).toThrow(RangeError);
  });

  test("a buffer cut short or run long is refused with a RangeError", () => {
    const packed = packWords(["SET", "k", "v"]);
    expect(() => unpackWords(packed.subarray(0, packed.length - 1))).toThrow(RangeError);
    expect(() => unpackWords(Buffer.concat([packed, Buffer.from([0])]))).toThrow(RangeError);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          unpackWords(Buffer.from(bytes));
        } catch (error) {
          expect(error).toBeInstanceOf(RangeError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("a script's reply written again through the Reply writers", () => {
  // What lets a plain RESP2 reply (no error in it, whose replay would count one) go to a RESP2
  // client as it is, unread (commands/scripting.ts): replayed, it is the same bytes.
  test("comes out byte for byte as it went in", () => {
    fc.assert(
      fc.property(tree, (t) => {
        const original = new RespWriter();
        write(t, original);
        const replayed = new RespWriter();
        replayResp(bytesOf(original), replayed);
        expect(bytesOf(replayed)).toEqual(bytesOf(original));
      }),
      { numRuns: 1000 },
    );
  });

  test("the fast paths for integers and bulk strings replay exactly what reading every line as text does", () => {
    const respish = fc
      .array(
        fc.oneof(
          fc.constantFrom(":", "$", "*2\r\n", "\r\n", "\r", "\n", "-", "0", "7", "-1", "-5", "12", "123456789012345", "1234567890123456", "abc"),
          fc.string({ maxLength: 3 }),
        ),
        { maxLength: 10 },
      )
      .map((parts) => Buffer.from(parts.join(""), "latin1"));
    const outcome = (play: typeof replayResp, bytes: Buffer, end: number) => {
      const out = new RespWriter();
      try {
        play(bytes, out, false, end);
      } catch (error) {
        return error instanceof RangeError ? "RangeError" : error;
      }
      return bytesOf(out);
    };
    fc.assert(
      fc.property(respish, fc.nat(), (bytes, cut) => {
        // A reply may end before its buffer does, as one in the shared mailbox does.
        const end = bytes.length === 0 ? 0 : cut % (bytes.length + 1);
        expect(outcome(replayResp, bytes, end)).toEqual(outcome(replayRespByLines, bytes, end));
      }),
      { numRuns: 5000 },
    );
  });

  test("arbitrary bytes are replayed or refused with a RangeError, never anything else", () => {
    const respish = fc
      .array(fc.oneof(fc.constantFrom("+", "-", ":", "$", "*", "\r\n", "1", "-1", "3", "abc", "9999999999"), fc.string({ maxLength: 4 })), { maxLength: 12 })
      .map((parts) => Buffer.from(parts.join(""), "latin1"));
    fc.assert(
      fc.property(fc.oneof(respish, fc.uint8Array({ maxLength: 48 })), (bytes) => {
        try {
          replayResp(Buffer.from(bytes), new RespWriter());
        } catch (error) {
          expect(error).toBeInstanceOf(RangeError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
