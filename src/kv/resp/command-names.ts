/**
 * Command names read from requests, interned. Clients send the same few names over and over, and
 * making a fresh string for each (a native call, ~45 ns) then hashing it again in the command
 * table cost more than recognising the bytes of a name seen before: a string that is reused
 * keeps its hash, so the table lookup that follows is cheaper too.
 *
 * The cache is a small direct-mapped table, shared by every connection's parser: a slot holds the
 * last name whose bytes hashed to it, and a colliding name simply replaces it.
 */

import type { Latin1Buffer } from "../text/write-bytes.ts";

/** Names longer than this are made afresh: no command name is (the longest is 24 bytes). */
const internedBytesMax = 24;
const slotCount = 256;

const slots: (string | undefined)[] = new Array(slotCount).fill(undefined);

/** The command name in `bytes[start, end)`, as the same string object each time it recurs. */
export function commandName(bytes: Latin1Buffer, start: number, end: number): string {
  const length = end - start;
  if (length > internedBytesMax || length === 0) return bytes.latin1Slice(start, end);
  // Length, first and last byte separate the names clients actually send well enough.
  const slot = (length * 31 + bytes[start]! * 7 + bytes[end - 1]!) & (slotCount - 1);
  const cached = slots[slot];
  if (cached !== undefined && cached.length === length) {
    let i = 0;
    while (i < length && cached.charCodeAt(i) === bytes[start + i]) i++;
    if (i === length) return cached;
  }
  const name = bytes.latin1Slice(start, end);
  slots[slot] = name;
  return name;
}
