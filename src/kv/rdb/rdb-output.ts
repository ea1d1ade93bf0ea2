/**
 * Writing RDB bytes: a growing buffer with RDB's length and string encodings, the counterpart of
 * rdb-cursor.ts.
 */
import { grownBuffer, type Latin1Buffer, writeLatin1 } from "../text/write-bytes.ts";

/** A growing byte buffer with RDB's length and string encodings. */
export class RdbOutput {
  private bytes = Buffer.allocUnsafe(256) as Latin1Buffer;
  length = 0;

  private room(n: number): void {
    if (this.length + n > this.bytes.length) this.bytes = grownBuffer(this.bytes, 0, this.length, this.length + n);
  }

  byte(b: number): void {
    this.room(1);
    this.bytes[this.length++] = b;
  }

  /** An RDB length: 6 bits, 14 bits, or a marker and 32 or 64 bits, big-endian. */
  lengthOf(n: number): void {
    if (n < 1 << 6) return this.byte(n);
    if (n < 1 << 14) {
      this.byte(0x40 | (n >> 8));
      return this.byte(n & 0xff);
    }
    this.room(9);
    if (n <= 0xffffffff) {
      this.bytes[this.length] = 0x80;
      this.length = this.bytes.writeUInt32BE(n, this.length + 1);
    } else {
      this.bytes[this.length] = 0x81;
      this.length = this.bytes.writeBigUInt64BE(BigInt(n), this.length + 1);
    }
  }

  /** A length past 2^53 (a stream's IDs and counters are unsigned 64-bit). */
  bigLength(n: bigint): void {
    if (n <= 0xffffffffn) return this.lengthOf(Number(n));
    this.room(9);
    this.bytes[this.length] = 0x81;
    this.length = this.bytes.writeBigUInt64BE(n, this.length + 1);
  }

  /** Bytes as they are, with no length. */
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Bytes as an RDB string, length first. */
  rawString(bytes: Uint8Array): void {
    this.lengthOf(bytes.length);
    this.raw(bytes);
  }

  /** A Unix time in ms: 8 bytes, little-endian. */
  millisecondTime(ms: number): void {
    this.room(8);
    this.length = this.bytes.writeBigInt64LE(BigInt(ms), this.length);
  }

  /** A latin1 string, length first. */
  string(text: string): void {
    this.lengthOf(text.length);
    this.room(text.length);
    this.length = writeLatin1(this.bytes, this.length, text);
  }

  binaryDouble(n: number): void {
    this.room(8);
    this.length = this.bytes.writeDoubleLE(n, this.length);
  }

  take(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}
