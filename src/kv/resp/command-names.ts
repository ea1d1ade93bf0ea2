/**
 * Command names read from requests, handed out again when they recur (text/recent-strings.ts).
 * Clients send the same few names over and over, and making a fresh string for each (a native
 * call, ~45 ns) then hashing it again in the command table cost more than recognising the bytes
 * of a name seen before. One table, shared by every connection's parser.
 */
import { RecentStrings } from "../text/recent-strings.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";

/** Names longer than this are made afresh: no command name is (the longest is 24 bytes). */
const nameBytesMax = 24;
const slotCount = 256;

const names = new RecentStrings(slotCount, nameBytesMax);

/** The command name in `bytes[start, end)`, as the same string object each time it recurs. */
export function commandName(bytes: Latin1Buffer, start: number, end: number): string {
  return names.fromBytes(bytes, start, end);
}
