/**
 * Words — a script's keys and arguments, a command it calls — as they cross to the native Lua
 * scripts and back: one buffer holding a u32 count, then each word as a u32 length and its bytes,
 * little-endian (native/node/src/script.rs reads and writes the same). Words are latin1 byte
 * strings, as the engine holds them, so every byte survives.
 */
import { commandName } from "../resp/command-names.ts";
import { type Latin1Buffer, writeLatin1 } from "../text/write-bytes.ts";

/** The words of `words` from `from` on (a script's keys, then its arguments), packed in one buffer. */
export function packWords(words: readonly string[], from = 0): Buffer {
  const out = Buffer.allocUnsafe(packedBytes(words, from));
  packWordsInto(out, words, from);
  return out;
}

/** Bytes the words of `words` from `from` on take packed. */
function packedBytes(words: readonly string[], from: number): number {
  let bytes = 4;
  for (let i = from; i < words.length; i++) bytes += 4 + words[i]!.length;
  return bytes;
}

/**
 * Packs the words of `words` from `from` on at the start of `out` and returns the bytes written;
 * -1, writing nothing, when they do not fit. Every script run packs its keys and arguments
 * (EVAL's words after numkeys, taken in place rather than sliced): lengths are written byte by
 * byte and words as replies write text (writeLatin1: short ones char by char), as a native call
 * per word cost more.
 */
export function packWordsInto(out: Buffer, words: readonly string[], from = 0): number {
  if (packedBytes(words, from) > out.length) return -1;
  writeU32(out, 0, words.length - from);
  let at = 4;
  for (let i = from; i < words.length; i++) {
    const word = words[i]!;
    writeU32(out, at, word.length);
    at = writeLatin1(out as Latin1Buffer, at + 4, word);
  }
  return at;
}

/** The u32, little-endian, at `at` (which has room): read byte by byte, as Buffer's reader is a call the compiler does not inline. */
function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** The i32, little-endian, at `at` (which has room). */
function readI32(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
}

/** A u32, little-endian, at `at` (which has room). */
function writeU32(out: Uint8Array, at: number, n: number): void {
  out[at] = n & 0xff;
  out[at + 1] = (n >>> 8) & 0xff;
  out[at + 2] = (n >>> 16) & 0xff;
  out[at + 3] = n >>> 24;
}

/**
 * A packed length from this on is not a length but a mark, told apart by its top three bits
 * (native/script/src/words.rs):
 *
 * - runWordReference + n: the running script's word numbered n. The native side writes one for
 *   each word of a command that is a word the script was given — KEYS[1], ARGV[2], or a string
 *   equal to one.
 * - cachedWord + slot: the word kept in that slot of the word cache (below).
 * - cacheThisWord + (slot << 8) + length: the word's bytes follow; it is kept in that slot.
 *
 * Either way the string the server already holds is used again: no bytes compared, no string
 * made, and its hash kept.
 */
export const runWordReference = 2 ** 31;
export const cachedWord = 0b110 * 2 ** 29;
export const cacheThisWord = 0b111 * 2 ** 29;

/**
 * The word cache: the words of scripts' commands the native side knows the server holds, by slot
 * (native/script/src/word_cache.rs keeps their bytes in the same slots, and explains the table).
 * A script's commands repeat their names, field names and the keys they build; making a string of
 * a word's bytes is a native call (~45 ns) and garbage, and comparing bytes with a string made
 * before cost as much. One table for the thread, as the native side keeps one.
 */
export const wordCacheSlots = 1024;
const wordCache: (string | undefined)[] = new Array(wordCacheSlots).fill(undefined);

/**
 * The words packed at the start of `bytes`, which they fill unless `whole` is false (the mailbox
 * they cross in, native/node/src/script.rs); throws a RangeError on bytes not in that form. A
 * reference (runWordReference) is the word of `runWords` it numbers, counted from `runWordsFrom`.
 * A command's name made from bytes is interned as a request's command name is (command-names.ts).
 *
 * Lengths are read as signed 32-bit numbers, so that a mark is negative and stays a small
 * integer to the compiler (read unsigned, a mark is past 2^31 and made a double).
 */
export function unpackWords(bytes: Buffer, whole = true, runWords: readonly string[] = [], runWordsFrom = 0): string[] {
  const end = bytes.length;
  if (end < 4) throw new RangeError("packed words have no count");
  const count = readU32(bytes, 0);
  const words: string[] = [];
  const latin1 = bytes as Latin1Buffer;
  let at = 4;
  for (let i = 0; i < count; i++) {
    if (at + 4 > end) throw new RangeError("packed words run past their buffer");
    let length = readI32(bytes, at);
    at += 4;
    let slot = -1;
    if (length < 0) {
      const mark = (length >>> 29) & 0b11;
      const rest = length & 0x1fffffff;
      if (mark === 0b11) {
        slot = rest >>> 8;
        if (slot >= wordCacheSlots) throw new RangeError("packed words keep a word past the word cache");
        length = rest & 0xff;
      } else if (mark === 0b10) {
        const word = rest < wordCacheSlots ? wordCache[rest] : undefined;
        if (word === undefined) throw new RangeError("packed words refer to a word the word cache does not hold");
        words.push(word);
        continue;
      } else {
        const word = runWords[runWordsFrom + (length & 0x3fffffff)];
        if (word === undefined) throw new RangeError("packed words refer to a word the script was not given");
        words.push(word);
        continue;
      }
    }
    if (at + length > end) throw new RangeError("packed words run past their buffer");
    const word = i === 0 ? commandName(latin1, at, at + length) : latin1.latin1Slice(at, at + length);
    if (slot >= 0) wordCache[slot] = word;
    words.push(word);
    at += length;
  }
  if (whole && at !== end) throw new RangeError("packed words end before their buffer does");
  return words;
}
