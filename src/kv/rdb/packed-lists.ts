/**
 * Reading the compact containers Redis nests inside RDB values — listpacks (Redis 7), ziplists
 * (Redis 6 and before) and intsets — into their entries, as latin1 byte strings (integers as
 * their decimal text, as Redis presents them). Each returns null for bytes that are not a valid
 * container: a RESTORE of them is "Bad data format", never a crash or a wrong value.
 */
import { latin1Text } from "../types/string/bytes.ts";

const int64Text = (view: DataView, at: number) => view.getBigInt64(at, true).toString();

/**
 * A listpack: total bytes (u32) and entry count (u16, 65535 when unknown), the entries — each an
 * encoding byte, its data, and its own length again backwards (1–5 bytes) — and 0xff.
 */
export function listpackEntries(lp: Uint8Array): string[] | null {
  if (lp.length < 7) return null;
  const view = new DataView(lp.buffer, lp.byteOffset, lp.byteLength);
  if (view.getUint32(0, true) !== lp.length) return null;
  const declared = view.getUint16(4, true);
  const out: string[] = [];
  let at = 6;
  for (;;) {
    if (at >= lp.length) return null;
    const b = lp[at]!;
    if (b === 0xff) break;
    let value: string;
    let size: number;
    if (b < 0x80) [value, size] = [String(b), 1];
    else if (b < 0xc0) [value, size] = [stringAt(lp, at + 1, b & 0x3f), 1 + (b & 0x3f)];
    else if (b < 0xe0) {
      if (at + 2 > lp.length) return null;
      const n = ((b & 0x1f) << 8) | lp[at + 1]!;
      [value, size] = [String(n >= 1 << 12 ? n - (1 << 13) : n), 2];
    } else if (b < 0xf0) {
      if (at + 2 > lp.length) return null;
      const length = ((b & 0x0f) << 8) | lp[at + 1]!;
      [value, size] = [stringAt(lp, at + 2, length), 2 + length];
    } else if (b === 0xf0) {
      if (at + 5 > lp.length) return null;
      const length = view.getUint32(at + 1, true);
      [value, size] = [stringAt(lp, at + 5, length), 5 + length];
    } else if (b === 0xf1 && at + 3 <= lp.length) [value, size] = [String(view.getInt16(at + 1, true)), 3];
    else if (b === 0xf2 && at + 4 <= lp.length) {
      const n = lp[at + 1]! | (lp[at + 2]! << 8) | (lp[at + 3]! << 16);
      [value, size] = [String(n >= 1 << 23 ? n - (1 << 24) : n), 4];
    } else if (b === 0xf3 && at + 5 <= lp.length) [value, size] = [String(view.getInt32(at + 1, true)), 5];
    else if (b === 0xf4 && at + 9 <= lp.length) [value, size] = [int64Text(view, at + 1), 9];
    else return null;
    if (at + size > lp.length) return null;
    out.push(value);
    at += size + backlenBytes(size);
  }
  if (at !== lp.length - 1 || (declared !== 0xffff && declared !== out.length)) return null;
  return out;
}

/**
 * The bytes a listpack entry's backwards length takes: 7 bits of it per byte, with Redis's bounds
 * (lpEncodeBacklen: a size of exactly 16,383 already takes three).
 */
function backlenBytes(entryBytes: number): number {
  if (entryBytes <= 127) return 1;
  if (entryBytes < 16_383) return 2;
  if (entryBytes < 2_097_151) return 3;
  if (entryBytes < 268_435_455) return 4;
  return 5;
}

/** `length` bytes at `at` as a latin1 string; a length past the end gives a string that fails the caller's bounds check. */
function stringAt(bytes: Uint8Array, at: number, length: number): string {
  return at + length > bytes.length ? "" : latin1Text(bytes, at, at + length);
}

/**
 * A ziplist: total bytes (u32), the offset of its last entry (u32), entry count (u16), the entries
 * — each the previous entry's length (1 byte, or 0xfe and 4 more), an encoding, its data — and 0xff.
 */
export function ziplistEntries(zl: Uint8Array): string[] | null {
  if (zl.length < 11) return null;
  const view = new DataView(zl.buffer, zl.byteOffset, zl.byteLength);
  if (view.getUint32(0, true) !== zl.length) return null;
  const out: string[] = [];
  let at = 10;
  for (;;) {
    if (at >= zl.length) return null;
    if (zl[at] === 0xff) break;
    at += zl[at] === 0xfe ? 5 : 1;
    if (at >= zl.length) return null;
    const b = zl[at]!;
    const kind = b >> 6;
    let length = -1;
    let header = 1;
    if (kind === 0) length = b & 0x3f;
    else if (kind === 1) {
      if (at + 2 > zl.length) return null;
      [length, header] = [((b & 0x3f) << 8) | zl[at + 1]!, 2];
    } else if (kind === 2) {
      if (at + 5 > zl.length) return null;
      [length, header] = [view.getUint32(at + 1, false), 5];
    }
    if (length >= 0) {
      if (at + header + length > zl.length) return null;
      out.push(latin1Text(zl, at + header, at + header + length));
      at += header + length;
      continue;
    }
    const ints: Record<number, [number, () => string]> = {
      192: [2, () => String(view.getInt16(at + 1, true))],
      208: [4, () => String(view.getInt32(at + 1, true))],
      224: [8, () => int64Text(view, at + 1)],
      240: [3, () => String(((zl[at + 1]! | (zl[at + 2]! << 8) | (zl[at + 3]! << 16)) << 8) >> 8)],
      254: [1, () => String(view.getInt8(at + 1))],
    };
    const int = ints[b];
    if (int !== undefined) {
      if (at + 1 + int[0] > zl.length) return null;
      out.push(int[1]());
      at += 1 + int[0];
    } else if (b >= 0xf1 && b <= 0xfd) {
      // An immediate 0–12.
      out.push(String((b & 0x0f) - 1));
      at += 1;
    } else return null;
  }
  if (at !== zl.length - 1 || (view.getUint16(8, true) !== 0xffff && view.getUint16(8, true) !== out.length)) return null;
  return out;
}

/** An intset: the width of its integers (u32: 2, 4 or 8), their count (u32), then them, ascending. */
export function intsetEntries(is: Uint8Array): string[] | null {
  if (is.length < 8) return null;
  const view = new DataView(is.buffer, is.byteOffset, is.byteLength);
  const width = view.getUint32(0, true);
  const count = view.getUint32(4, true);
  if ((width !== 2 && width !== 4 && width !== 8) || is.length !== 8 + width * count) return null;
  const out: string[] = [];
  for (let i = 0, at = 8; i < count; i++, at += width) {
    out.push(width === 2 ? String(view.getInt16(at, true)) : width === 4 ? String(view.getInt32(at, true)) : int64Text(view, at));
  }
  return out;
}
