/**
 * Words — a script's keys and arguments, a command it calls — as they cross to the native Lua
 * scripts and back: one buffer holding a u32 count, then each word as a u32 length and its bytes,
 * little-endian (native/node/src/script.rs reads and writes the same). Words are latin1 byte
 * strings, as the engine holds them, so every byte survives.
 */
import type { Latin1Buffer } from "../resp/write-bytes.ts";

/** `words`, then the words of `more` (a script's keys, then its arguments), packed in one buffer. */
export function packWords(words: readonly string[], more: readonly string[] = []): Buffer {
  const out = Buffer.allocUnsafe(packedBytes(words, more));
  packWordsInto(out, words, more);
  return out;
}

/** Bytes `words` and `more` take packed. */
function packedBytes(words: readonly string[], more: readonly string[]): number {
  let bytes = 4;
  for (const word of words) bytes += 4 + word.length;
  for (const word of more) bytes += 4 + word.length;
  return bytes;
}

/**
 * Packs `words`, then `more`, at the start of `out` and returns the bytes written; -1, writing
 * nothing, when they do not fit.
 */
export function packWordsInto(out: Buffer, words: readonly string[], more: readonly string[] = []): number {
  if (packedBytes(words, more) > out.length) return -1;
  out.writeUInt32LE(words.length + more.length, 0);
  let at = 4;
  for (const list of [words, more]) {
    for (const word of list) {
      out.writeUInt32LE(word.length, at);
      at += 4;
      at += (out as Latin1Buffer).latin1Write(word, at);
    }
  }
  return at;
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
