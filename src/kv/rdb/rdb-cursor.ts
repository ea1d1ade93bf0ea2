/**
 * Reading RDB bytes: a forward cursor with RDB's length and string encodings, and the error it
 * throws on malformed input. value-reader.ts reads whole values with it, stream-rdb.ts streams,
 * function-dump.ts FUNCTION RESTORE's payloads.
 */
import { strtod } from "../text/args.ts";
import { bytesOf, latin1Text } from "../types/string/bytes.ts";
import { lzfDecompress } from "./lzf.ts";

/** Thrown inside the reader for malformed bytes; readValue turns it into null. */
export class BadRdbData extends Error {}

/** Throws BadRdbData: the bytes cannot be what they claim. */
export const bad = (): never => {
  throw new BadRdbData();
};

/** The longest element a value may hold, as Redis's proto-max-bulk-len default. */
const elementBytesMax = 512 * 1024 * 1024;

/** A forward reader over the payload's bytes, with RDB's length and string encodings. */
export class RdbCursor {
  at = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  byte(): number {
    if (this.at >= this.bytes.length) bad();
    return this.bytes[this.at++]!;
  }

  /** Moves past `n` bytes; returns where they start. */
  private skip(n: number): number {
    if (n < 0 || this.at + n > this.bytes.length) bad();
    this.at += n;
    return this.at - n;
  }

  take(n: number): Uint8Array {
    const at = this.skip(n);
    return this.bytes.subarray(at, at + n);
  }

  /** A length, or for strings one of the special encodings: [value, encoded]. */
  lengthOrEncoding(): [number, boolean] {
    const b = this.byte();
    const kind = b >> 6;
    if (kind === 0) return [b & 0x3f, false];
    if (kind === 1) return [((b & 0x3f) << 8) | this.byte(), false];
    if (kind === 3) return [b & 0x3f, true];
    if (b === 0x80) return [this.view.getUint32(this.skip(4), false), false];
    if (b === 0x81) {
      const n = this.view.getBigUint64(this.skip(8), false);
      return [n > BigInt(Number.MAX_SAFE_INTEGER) ? bad() : Number(n), false];
    }
    return bad();
  }

  /** A length as a bigint: a stream's IDs and counters use all 64 bits. */
  bigLength(): bigint {
    const b = this.byte();
    if (b === 0x81) return this.view.getBigUint64(this.skip(8), false);
    this.at--;
    return BigInt(this.length());
  }

  /** A Unix time in ms: 8 bytes, little-endian. */
  millisecondTime(): number {
    return Number(this.view.getBigInt64(this.skip(8), true));
  }

  length(): number {
    const [n, encoded] = this.lengthOrEncoding();
    return encoded ? bad() : n;
  }

  /** A string as its bytes: plain, an 8/16/32-bit integer, or LZF-compressed. */
  stringBytes(): Uint8Array {
    const [n, encoded] = this.lengthOrEncoding();
    if (!encoded) return n > elementBytesMax ? bad() : this.take(n);
    if (n === 0) return bytesOf(String(this.view.getInt8(this.skip(1))));
    if (n === 1) return bytesOf(String(this.view.getInt16(this.skip(2), true)));
    if (n === 2) return bytesOf(String(this.view.getInt32(this.skip(4), true)));
    if (n === 3) {
      const compressedLength = this.length();
      const length = this.length();
      if (length > elementBytesMax) bad();
      return lzfDecompress(this.take(compressedLength), length) ?? bad();
    }
    return bad();
  }

  string(): string {
    const bytes = this.stringBytes();
    return latin1Text(bytes, 0, bytes.length);
  }

  /** A score written as text (RDB_TYPE_ZSET): its length byte, or 253/254/255 for NaN/+inf/-inf. */
  textDouble(): number {
    const length = this.byte();
    if (length === 253) return NaN;
    if (length === 254) return Infinity;
    if (length === 255) return -Infinity;
    return strtod(latin1Text(this.take(length), 0, length)) ?? bad();
  }

  binaryDouble(): number {
    return this.view.getFloat64(this.skip(8), true);
  }
}
