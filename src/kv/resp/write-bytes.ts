/**
 * Numbers and latin1 text written straight into a byte buffer, for the RESP that replies and the
 * append-only file are made of. Both are mostly short pieces — a count or a length heading every
 * reply and argument, a command name, a small value — where the usual route costs more than the
 * bytes: making a string of a number and copying it in is an allocation and a native call
 * (~60 ns); the digits themselves take ~5 ns.
 */

const DIGIT_0 = 0x30;
/**
 * Text up to this long is copied char by char, which beats the native latin1Write call (~20 ns);
 * longer text goes through the call.
 */
const charByCharBytesMax = 8;

/**
 * Bun's Buffer has Node's latin1Write and latin1Slice (one byte per char, no encoding lookup);
 * @types omit them.
 */
export type Latin1Buffer = Buffer & {
  latin1Write(text: string, offset: number): number;
  latin1Slice(start: number, end: number): string;
};

/** How many decimal digits the integer `n` (0 ≤ n < 2^53) has. */
export function decimalDigits(n: number): number {
  let digits = 1;
  for (let p = 10; p <= n; p *= 10) digits++;
  return digits;
}

/**
 * Writes the digits of `n` (an integer, 0 ≤ n < 2^53) into `bytes` at `at`, which must have room
 * for them; returns the offset after the last digit.
 */
export function writeDecimal(bytes: Uint8Array, at: number, n: number): number {
  const end = at + decimalDigits(n);
  let i = end;
  do {
    bytes[--i] = DIGIT_0 + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  return end;
}

/**
 * Writes a latin1 byte string (one char per byte) into `bytes` at `at`, which must have room for
 * it; returns the offset after it.
 */
export function writeLatin1(bytes: Latin1Buffer, at: number, text: string): number {
  if (text.length > charByCharBytesMax) return at + bytes.latin1Write(text, at);
  for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
  return at;
}

/**
 * Bytes up to this many are copied one by one, which beats making the subarray that a native
 * copy needs.
 */
const byteByByteBytesMax = 32;

/** Copies `from[start, end)` into `bytes` at `at`, which must have room; returns the offset after it. */
export function writeBytes(bytes: Uint8Array, at: number, from: Uint8Array, start: number, end: number): number {
  if (end - start > byteByByteBytesMax) {
    bytes.set(from.subarray(start, end), at);
    return at + end - start;
  }
  for (let i = start; i < end; i++) bytes[at++] = from[i]!;
  return at;
}
