/**
 * Reading one value in RDB format, as it follows its type byte in a DUMP payload: every encoding
 * Redis 5 to 7.2 writes for strings, lists, sets, sorted sets, hashes and streams — plain elements, and the
 * compact ones (intsets, ziplists, listpacks, quicklist nodes, LZF-compressed and integer-encoded
 * strings). Anything malformed — a length past the end, a bad container, a duplicate member, a NaN
 * score — reads as null: RESTORE answers "Bad data format" and stores nothing.
 */
import { strtod } from "../text/args.ts";
import type { Value } from "../types/value.ts";
import { bytesOf, latin1Text } from "../types/string/bytes.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { ZSet } from "../types/zset/zset.ts";
import { lzfDecompress } from "./lzf.ts";
import { intsetEntries, listpackEntries, ziplistEntries } from "./packed-lists.ts";
import { rdbType } from "./value-types.ts";
import { readStream } from "./stream-rdb.ts";

/** Thrown inside the reader for malformed bytes; readValue turns it into null. */
export class BadRdbData extends Error {}

const bad = (): never => {
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

/** Elements of a compact container held as one RDB string. */
function container(c: RdbCursor, read: (bytes: Uint8Array) => string[] | null): string[] {
  return read(c.stringBytes()) ?? bad();
}

/** Pairs of consecutive entries: a hash's fields and values, a sorted set's members and scores. */
function pairs(entries: string[]): [string, string][] {
  if (entries.length % 2 !== 0) bad();
  const out: [string, string][] = [];
  for (let i = 0; i < entries.length; i += 2) out.push([entries[i]!, entries[i + 1]!]);
  return out;
}

/** A set, checked free of duplicates as Redis checks it. */
function setOf(members: string[]): MemberSet {
  const set = new MemberSet(members);
  return set.size === members.length && members.length > 0 ? set : bad();
}

function hashOf(entries: [string, string][]): FieldMap {
  const hash = new FieldMap(entries);
  return hash.size === entries.length && entries.length > 0 ? hash : bad();
}

function zsetOf(entries: [string, number][]): ZSet {
  if (entries.some(([, score]) => Number.isNaN(score))) bad();
  const zset = ZSet.of(entries.map(([member, score]) => ({ member, score })));
  return zset.size === entries.length && entries.length > 0 ? zset : bad();
}

/** A score a ziplist or listpack holds as text ("inf", "-0", "1.5") or an integer, read as Redis reads it: strtod. */
function packedScore(text: string): number {
  return strtod(text) ?? bad();
}

function listOf(items: string[]): List {
  return items.length > 0 ? new List(items) : bad();
}

function readOne(c: RdbCursor, type: number): Value {
  switch (type) {
    case rdbType.string:
      return c.string();
    case rdbType.list:
      return listOf(Array.from({ length: c.length() }, () => c.string()));
    case rdbType.set:
      return setOf(Array.from({ length: c.length() }, () => c.string()));
    case rdbType.zsetText:
    case rdbType.zset: {
      const n = c.length();
      const entries: [string, number][] = [];
      for (let i = 0; i < n; i++) entries.push([c.string(), type === rdbType.zset ? c.binaryDouble() : c.textDouble()]);
      return zsetOf(entries);
    }
    case rdbType.hash: {
      const n = c.length();
      const entries: [string, string][] = [];
      for (let i = 0; i < n; i++) entries.push([c.string(), c.string()]);
      return hashOf(entries);
    }
    case rdbType.setIntset:
      return setOf(container(c, intsetEntries));
    case rdbType.setListpack:
      return setOf(container(c, listpackEntries));
    case rdbType.listZiplist:
      return listOf(container(c, ziplistEntries));
    case rdbType.hashZiplist:
      return hashOf(pairs(container(c, ziplistEntries)));
    case rdbType.hashListpack:
      return hashOf(pairs(container(c, listpackEntries)));
    case rdbType.zsetZiplist:
    case rdbType.zsetListpack: {
      const entries = pairs(container(c, type === rdbType.zsetZiplist ? ziplistEntries : listpackEntries));
      return zsetOf(entries.map(([member, score]) => [member, packedScore(score)]));
    }
    case rdbType.listQuicklist: {
      const items: string[] = [];
      for (let nodes = c.length(); nodes > 0; nodes--) items.push(...container(c, ziplistEntries));
      return listOf(items);
    }
    case rdbType.listQuicklist2: {
      const items: string[] = [];
      for (let nodes = c.length(); nodes > 0; nodes--) {
        const kind = c.length();
        // 1: one plain item (a large one), 2: a listpack of items.
        if (kind === 1) items.push(c.string());
        else if (kind === 2) items.push(...container(c, listpackEntries));
        else bad();
      }
      return listOf(items);
    }
    case rdbType.streamListpacks:
    case rdbType.streamListpacks2:
    case rdbType.streamListpacks3:
      return readStream(c, type);
    default:
      return bad();
  }
}

/** The value `bytes` (a type byte, then the value) encodes; null when they are not a valid one. */
export function readValue(bytes: Uint8Array): Value | null {
  const c = new RdbCursor(bytes);
  try {
    return readOne(c, c.byte());
  } catch (error) {
    if (error instanceof BadRdbData || error instanceof RangeError) return null;
    throw error;
  }
}
