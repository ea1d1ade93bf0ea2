/**
 * LZF decompression, for the compressed strings in RDB payloads (Redis compresses strings over 20
 * bytes when `rdbcompression` is on, its default). The stream is a run of chunks, each led by a
 * control byte: below 32, a literal run of control + 1 bytes follows; otherwise a back reference —
 * a length (the top 3 bits, 7 meaning "add the next byte") and an offset into what was already
 * produced — copies length + 2 bytes, which may overlap what they produce.
 */

/** The `length` bytes `input` decompresses to; null when it is not an LZF stream of that length. */
export function lzfDecompress(input: Uint8Array, length: number): Uint8Array | null {
  const out = new Uint8Array(length);
  let i = 0;
  let o = 0;
  while (i < input.length) {
    const control = input[i++]!;
    if (control < 32) {
      const run = control + 1;
      if (i + run > input.length || o + run > length) return null;
      out.set(input.subarray(i, i + run), o);
      i += run;
      o += run;
      continue;
    }
    let run = control >> 5;
    if (run === 7) {
      if (i >= input.length) return null;
      run += input[i++]!;
    }
    if (i >= input.length) return null;
    const from = o - ((control & 0x1f) << 8) - input[i++]! - 1;
    run += 2;
    if (from < 0 || o + run > length) return null;
    // Byte by byte: a reference may reach into the bytes it is producing (a repeated run).
    for (let k = 0; k < run; k++) out[o++] = out[from + k]!;
  }
  return o === length ? out : null;
}
