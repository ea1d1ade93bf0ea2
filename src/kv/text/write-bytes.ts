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

const int32Max = 0x7fffffff;

/**
 * A new buffer of at least `needed` bytes — `buffer`'s size doubled as often as that takes —
 * holding `buffer`'s bytes [from, to) at its start: how the reply, command and RDB buffers grow.
 */
export function grownBuffer(buffer: Latin1Buffer, from: number, to: number, needed: number): Latin1Buffer {
  let size = buffer.length * 2;
  while (size < needed) size *= 2;
  const grown = Buffer.allocUnsafe(size) as Latin1Buffer;
  buffer.copy(grown, 0, from, to);
  return grown;
}

/**
 * How many decimal digits the integer `n` (0 ≤ n < 2^53) has: by comparisons up to 2^31, by a
 * loop of multiplications past it.
 */
export function decimalDigits(n: number): number {
  if (n < 100000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : 5;
  if (n <= int32Max) return n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  let digits = 10;
  for (let p = 1e10; p <= n; p *= 10) digits++;
  return digits;
}

/** The two digits of 0..99, by pairs: "00", "01", … "99". */
const digitPairs = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  digitPairs[i * 2] = DIGIT_0 + Math.floor(i / 10);
  digitPairs[i * 2 + 1] = DIGIT_0 + (i % 10);
}

/**
 * Writes the digits of `n` (an integer, 0 ≤ n < 2^53) into `bytes` at `at`, which must have room
 * for them; returns the offset after the last digit.
 *
 * Below 2^31 (every length and count in practice) it divides in int32 by 100 and writes two
 * digits per step from a table: a list length of seven digits takes ~15 ns, where float `% 10`
 * and `/ 10` per digit took ~40.
 */
export function writeDecimal(bytes: Uint8Array, at: number, n: number): number {
  if (n > int32Max) return writeDecimalSlow(bytes, at, n);
  const end = at + decimalDigits(n);
  let i = end;
  while (n >= 100) {
    const quotient = (n / 100) | 0;
    const pair = (n - quotient * 100) * 2;
    bytes[--i] = digitPairs[pair + 1]!;
    bytes[--i] = digitPairs[pair]!;
    n = quotient;
  }
  if (n >= 10) {
    bytes[--i] = digitPairs[n * 2 + 1]!;
    bytes[--i] = digitPairs[n * 2]!;
  } else bytes[--i] = DIGIT_0 + n;
  return end;
}

/**
 * Writes a RESP line holding an integer — `<prefix><n>\r\n`, as in `*3\r\n`, `$5\r\n`, `:-1\r\n` —
 * into `bytes` at `at`, which must have room; returns the offset after it. Replies and logged
 * commands head every array and argument with one; the offset stays in a local (keeping it in an
 * object's field, written at each byte, made a list's rewrite twice as slow).
 */
export function writeIntLine(bytes: Uint8Array, at: number, prefix: number, n: number): number {
  bytes[at++] = prefix;
  if (n < 0) {
    bytes[at++] = 0x2d; // "-"
    n = -n;
  }
  if (n < 10) bytes[at++] = DIGIT_0 + n;
  else at = writeDecimal(bytes, at, n);
  bytes[at++] = 0x0d;
  bytes[at++] = 0x0a;
  return at;
}

/** Integers from 2^31 up to 2^53 are written as a high part and eight low digits, both in int32s. */
const lowPartBase = 100_000_000;
const lowPartDigits = 8;

/**
 * Past 2^31: a Unix-ms time (PEXPIREAT's, EXPIRETIME's reply), a large counter. Below 2^53, the
 * number splits exactly into a high part (below 2^27) and eight low digits, each written by pairs
 * as writeDecimal does: ~60 ns for a 13-digit time, where float `% 10` per digit took ~250.
 */
function writeDecimalSlow(bytes: Uint8Array, at: number, n: number): number {
  if (n <= Number.MAX_SAFE_INTEGER) {
    const high = Math.floor(n / lowPartBase);
    let low = n - high * lowPartBase;
    const end = writeDecimal(bytes, at, high) + lowPartDigits;
    let i = end;
    for (let pairs = 0; pairs < lowPartDigits / 2; pairs++) {
      const quotient = (low / 100) | 0;
      const pair = (low - quotient * 100) * 2;
      bytes[--i] = digitPairs[pair + 1]!;
      bytes[--i] = digitPairs[pair]!;
      low = quotient;
    }
    return end;
  }
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
 * copy needs: copies of 33–64 bytes took 31–39 ns so, against 75–90 through a subarray; the two
 * meet near 110 bytes (2026-11-30). 64 is the longest item a packed collection holds.
 */
const byteByByteBytesMax = 64;

/** Copies `from[start, end)` into `bytes` at `at`, which must have room; returns the offset after it. */
export function writeBytes(bytes: Uint8Array, at: number, from: Uint8Array, start: number, end: number): number {
  if (end - start > byteByByteBytesMax) {
    // A whole array is copied as it is: no view of it made (a pub/sub message for each subscriber).
    bytes.set(start === 0 && end === from.length ? from : from.subarray(start, end), at);
    return at + end - start;
  }
  for (let i = start; i < end; i++) bytes[at++] = from[i]!;
  return at;
}
