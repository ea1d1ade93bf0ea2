/**
 * Writing one value in RDB format, type byte first, for DUMP. Only the plain encodings: a string
 * as its bytes, a list, a set, a hash as its elements, a sorted set as members with binary scores
 * — every Redis from 5.0 on reads these (and converts them to its compact forms as it loads), so
 * a DUMP from svc RESTOREs there as well as here. A stream has only its compact form, Redis 7.0's
 * (types/stream/stream-rdb.ts). Bloom filters, a module type in Redis, have no
 * such form: DUMP refuses them (BF.SCANDUMP moves them).
 */
import type { Value } from "../types/value.ts";
import { BloomChain } from "../types/bloom/chain.ts";
import { Stream } from "../types/stream/stream.ts";
import { writeStream } from "./stream-rdb.ts";
import { MutableString } from "../types/string/bytes.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { ZSet } from "../types/zset/zset.ts";
import { grownBuffer, type Latin1Buffer, writeLatin1 } from "../resp/write-bytes.ts";
import { rdbType } from "./value-types.ts";

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

/** The value in RDB format, or null for a value that has none (a Bloom filter). */
export function writeValue(value: Value): Uint8Array | null {
  const out = new RdbOutput();
  if (typeof value === "string" || value instanceof MutableString) {
    out.byte(rdbType.string);
    out.string(typeof value === "string" ? value : value.toString());
  } else if (value instanceof List) {
    out.byte(rdbType.list);
    out.lengthOf(value.size);
    for (const item of value) out.string(item);
  } else if (value instanceof MemberSet) {
    out.byte(rdbType.set);
    out.lengthOf(value.size);
    for (const member of value.values()) out.string(member);
  } else if (value instanceof FieldMap) {
    out.byte(rdbType.hash);
    out.lengthOf(value.size);
    for (const [field, v] of value.entries()) {
      out.string(field);
      out.string(v);
    }
  } else if (value instanceof ZSet) {
    out.byte(rdbType.zset);
    out.lengthOf(value.size);
    for (const { member, score } of value.entries()) {
      out.string(member);
      out.binaryDouble(score);
    }
  } else if (value instanceof Stream) writeStream(out, value);
  else if (value instanceof BloomChain) return null;
  return out.take();
}
