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

/** A u32, little-endian, at `at` (which has room). */
function writeU32(out: Uint8Array, at: number, n: number): void {
  out[at] = n & 0xff;
  out[at + 1] = (n >>> 8) & 0xff;
  out[at + 2] = (n >>> 16) & 0xff;
  out[at + 3] = n >>> 24;
}

/** Words of at most this many bytes are looked for among recent words before a string is made of them. */
const recentWordBytesMax = 24;
/** Slots of the table of recent words (a power of two). */
const recentWordSlots = 1024;
/** Recent words by their length and three of their bytes: a slot holds the last word that fell in it. */
const recentWords: (string | undefined)[] = new Array(recentWordSlots).fill(undefined);

/**
 * A packed length at or past this is a reference, with no bytes after it: the running script's
 * word numbered by the rest (native/script/src/words.rs). The native side writes one for each
 * word of a command that is a word the script was given — KEYS[1], ARGV[2], or a string equal
 * to one — so the string the server already holds is used again: no bytes compared, no string
 * made, and its hash kept.
 */
export const runWordReference = 2 ** 31;

/**
 * The words packed at the start of `bytes`, which they fill unless `whole` is false (the mailbox
 * they cross in, native/node/src/script.rs); throws a RangeError on bytes not in that form. A
 * reference (runWordReference) is the word of `runWords` it numbers, counted from `runWordsFrom`.
 *
 * Of the words made from bytes, the first (the command's name) is interned as a request's
 * command name is (command-names.ts), and a later one that has the bytes of a recent word is
 * that string (recentWord): a script's commands repeat the words written in it — of the ~76
 * words a BullMQ job's commands name that its scripts were not given, most are "event", "jobId",
 * "0", "MAXLEN" and a few more. Comparing a short word's bytes costs less than making a string (a
 * native call, ~45 ns, and garbage), and a string used again keeps its hash.
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
    const length = readU32(bytes, at);
    at += 4;
    if (length >= runWordReference) {
      const word = runWords[runWordsFrom + length - runWordReference];
      if (word === undefined) throw new RangeError("packed words refer to a word the script was not given");
      words.push(word);
      continue;
    }
    if (at + length > end) throw new RangeError("packed words run past their buffer");
    words.push(i === 0 ? commandName(latin1, at, at + length) : recentWord(latin1, at, length));
    at += length;
  }
  if (whole && at !== end) throw new RangeError("packed words end before their buffer does");
  return words;
}

/**
 * The word at `at` of `length` bytes: the recent word with those bytes, if one is kept. Its slot
 * is found from its length and its first, middle and last bytes — hashing every byte cost more
 * than the strings it saved under BullMQ — so words that differ only elsewhere take turns in one
 * slot, and a miss costs a comparison.
 */
function recentWord(bytes: Latin1Buffer, at: number, length: number): string {
  if (length > recentWordBytesMax || length === 0) return bytes.latin1Slice(at, at + length);
  const slot = (length * 61 + bytes[at]! * 31 + bytes[at + (length >>> 1)]! * 7 + bytes[at + length - 1]!) & (recentWordSlots - 1);
  const recent = recentWords[slot];
  if (recent !== undefined && recent.length === length) {
    let i = 0;
    while (i < length && recent.charCodeAt(i) === bytes[at + i]) i++;
    if (i === length) return recent;
  }
  const word = bytes.latin1Slice(at, at + length);
  recentWords[slot] = word;
  return word;
}
