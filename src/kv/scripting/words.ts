/**
 * Words — a script's keys and arguments, a command it calls — as they cross to the native Lua
 * scripts and back: one buffer holding a u32 count, then each word as a u32 length and its bytes,
 * little-endian (native/node/src/script.rs reads and writes the same). Words are latin1 byte
 * strings, as the engine holds them, so every byte survives.
 */

export function packWords(words: readonly string[]): Buffer {
  let bytes = 4;
  for (const word of words) bytes += 4 + word.length;
  const out = Buffer.allocUnsafe(bytes);
  out.writeUInt32LE(words.length, 0);
  let at = 4;
  for (const word of words) {
    out.writeUInt32LE(word.length, at);
    at += 4;
    at += out.write(word, at, "latin1");
  }
  return out;
}

/** The words packed in `bytes`; throws on a buffer that is not in that form. */
export function unpackWords(bytes: Uint8Array): string[] {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.readUInt32LE(0);
  const words: string[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    const length = view.readUInt32LE(at);
    at += 4;
    if (at + length > view.length) throw new RangeError("packed words run past their buffer");
    words.push(view.toString("latin1", at, at + length));
    at += length;
  }
  if (at !== view.length) throw new RangeError("packed words end before their buffer does");
  return words;
}
