/**
 * The LZ4 block format read from its specification (lz4's doc/lz4_Block_format.md), for tests: what
 * the broker's lz4 payloads must be so that any LZ4 library's clients can speak to it. A block is
 * a run of sequences — a token (high nibble: literal count, low nibble: match length − 4; 15 in
 * either means more length bytes follow, each added until one is below 255), the literals, then a
 * little-endian u16 offset back into the output and the match's extra length bytes — the last
 * sequence having literals only.
 */
export function decodeLz4Block(block: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let ip = 0;
  let op = 0;
  const byte = () => {
    if (ip >= block.length) throw new RangeError("the block ends inside a sequence");
    return block[ip++]!;
  };
  const longer = (length: number) => {
    if (length < 15) return length;
    for (let b = 255; b === 255; ) {
      b = byte();
      length += b;
    }
    return length;
  };
  while (ip < block.length) {
    const token = byte();
    const literals = longer(token >> 4);
    if (ip + literals > block.length || op + literals > size) throw new RangeError("literals run past the block or the output");
    out.set(block.subarray(ip, ip + literals), op);
    ip += literals;
    op += literals;
    if (ip === block.length) break;
    const offset = byte() | (byte() << 8);
    const length = longer(token & 15) + 4;
    if (offset === 0 || offset > op || op + length > size) throw new RangeError("a match points outside the output");
    // Byte by byte: a match may overlap the bytes it is making (offset < length).
    for (let i = 0; i < length; i++, op++) out[op] = out[op - offset]!;
  }
  return out.subarray(0, op);
}
