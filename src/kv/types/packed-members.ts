/**
 * A small set's members packed into one byte array, back to back in insertion order, each after
 * its length byte (short-strings.ts): the form a set keeps while it has at most smallMembersMax
 * members and none longer than packedMemberBytesMax bytes (member-set.ts). Redis 7.0 holds such a
 * set in a hash table (or an intset); packed, ten short members cost ~460 bytes of RSS a set
 * instead of ~1,250 as a JavaScript Set, and Redis's ~810 (100k sets, 2026-11-26).
 *
 * An array is exactly as long as its members: adding or removing one makes a new array.
 */
import { compactValueBytesMax } from "../encoding.ts";
import { shortAt, shortEquals, skipShort, writeShort } from "./short-strings.ts";

/** The longest member a packed set holds (Redis 7.2's set-max-listpack-value). */
export const packedMemberBytesMax = compactValueBytesMax;

/** A set with no members. Never written to: every change makes a new array. */
export const noMembers = new Uint8Array(0);

/** Where `member` starts, or -1. */
export function findMember(bytes: Uint8Array, member: string): number {
  for (let at = 0; at < bytes.length; at = skipShort(bytes, at)) if (shortEquals(bytes, at, member)) return at;
  return -1;
}

/** `bytes` with `member` (not in it, at most packedMemberBytesMax bytes) added at the end. */
export function withMember(bytes: Uint8Array, member: string): Uint8Array {
  const out = new Uint8Array(bytes.length + 1 + member.length);
  out.set(bytes);
  writeShort(out, bytes.length, member);
  return out;
}

/** `bytes` without the member at `at`. */
export function withoutMember(bytes: Uint8Array, at: number): Uint8Array {
  const end = skipShort(bytes, at);
  if (end - at === bytes.length) return noMembers;
  const out = new Uint8Array(bytes.length - (end - at));
  out.set(bytes.subarray(0, at));
  out.set(bytes.subarray(end), at);
  return out;
}

/** Every member, in order. */
export function packedMembers(bytes: Uint8Array): string[] {
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at = skipShort(bytes, at)) out.push(shortAt(bytes, at));
  return out;
}

/** The `index`th member (from 0); there must be that many. */
export function memberAt(bytes: Uint8Array, index: number): string {
  let at = 0;
  for (let i = 0; i < index; i++) at = skipShort(bytes, at);
  return shortAt(bytes, at);
}
