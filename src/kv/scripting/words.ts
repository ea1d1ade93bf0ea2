/**
 * Words — a script's keys and arguments, a command it calls — as they cross to the native Lua
 * scripts and back: one buffer holding a u32 count, then each word as a u32 length and its bytes,
 * little-endian (native/node/src/script.rs reads and writes the same). Words are latin1 byte
 * strings, as the engine holds them, so every byte survives.
 */
import { type Latin1Buffer, writeLatin1 } from "../resp/write-bytes.ts";

/** `words`, then the words of `more` (a script's keys, then its arguments), packed in one buffer. */
export function packWords(words: readonly string[], more: readonly string[] = []): Buffer {
  const out = Buffer.allocUnsafe(packedBytes(words, more));
  packWordsInto(out, words, more);
  return out;
}

/** Bytes `words` and `more` take packed. */
function packedBytes(words: readonly string[], more: readonly string[]): number {
  let bytes = 4;
  for (let i = 0; i < words.length; i++) bytes += 4 + words[i]!.length;
  for (let i = 0; i < more.length; i++) bytes += 4 + more[i]!.length;
  return bytes;
}

/**
 * Packs `words`, then `more`, at the start of `out` and returns the bytes written; -1, writing
 * nothing, when they do not fit. Every script run packs its keys and arguments: lengths are
 * written byte by byte and words as replies write text (writeLatin1: short ones char by char),
 * as a native call per word cost more.
 */
export function packWordsInto(out: Buffer, words: readonly string[], more: readonly string[] = []): number {
  if (packedBytes(words, more) > out.length) return -1;
  writeU32(out, 0, words.length + more.length);
  return packList(out, packList(out, 4, words), more);
}

function packList(out: Buffer, at: number, words: readonly string[]): number {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    writeU32(out, at, word.length);
    at = writeLatin1(out as Latin1Buffer, at + 4, word);
  }
  return at;
}

/** A u32, little-endian, at `at` (which has room). */
function writeU32(out: Uint8Array, at: number, n: number): void {
  out[at] = n & 0xff;
  out[at + 1] = (n >>> 8) & 0xff;
  out[at + 2] = (n >>> 16) & 0xff;
  out[at + 3] = n >>> 24;
}

/**
 * The words packed at the start of `bytes`, which they fill unless `whole` is false (the mailbox
 * they cross in, native/node/src/script.rs); throws a RangeError on bytes not in that form.
 */
export function unpackWords(bytes: Buffer, whole = true): string[] {
  const end = bytes.length;
  const count = bytes.readUInt32LE(0);
  const words: string[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    const length = bytes.readUInt32LE(at);
    at += 4;
    if (at + length > end) throw new RangeError("packed words run past their buffer");
    words.push((bytes as Latin1Buffer).latin1Slice(at, at + length));
    at += length;
  }
  if (whole && at !== end) throw new RangeError("packed words end before their buffer does");
  return words;
}
