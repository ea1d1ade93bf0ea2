/**
 * Which internal encoding Redis 7.0 would use for a value, for OBJECT ENCODING and for the places
 * where the encoding shows in replies (a compact collection is scanned in one step). We do not
 * switch representations ourselves; we report what Redis would.
 */
import { parseInt64 } from "../text/args.ts";
import type { Value } from "./value.ts";
import { encodingLimits } from "./compact.ts";
import type { MemberSet } from "./set/member-set.ts";

const embstrBytesMax = 44;
/** Redis shares the integers 0..9999 and reports their refcount as INT_MAX. */
const sharedIntegersMax = 10_000;
const sharedRefcount = 2_147_483_647;

/** OBJECT REFCOUNT's answer: INT_MAX for one of Redis's shared integers, else 1. */
export function refcountOf(value: Value): number {
  const shared = typeof value === "string" && /^\d{1,4}$/.test(value) && Number(value) < sharedIntegersMax && encodingOf(value) === "int";
  return shared ? sharedRefcount : 1;
}

export function encodingOf(value: Value): string {
  if (typeof value === "string") {
    if (value.length <= 20 && parseInt64(value) !== null) return "int";
    return value.length <= embstrBytesMax ? "embstr" : "raw";
  }
  // A hash is packed exactly while Redis would keep it in a listpack (field-map.ts).
  if (value.kind === "hash") return value.compact ? "listpack" : "hashtable";
  if (value.kind === "set") return isIntset(value) ? "intset" : "hashtable";
  if (value.kind === "list") return "quicklist";
  // Redis turns a string it changes in place (SETBIT, SETRANGE, APPEND) into a raw sds.
  if (value.kind === "string") return "raw";
  // A module value (a RedisBloom filter) is created with Redis's default object encoding, raw.
  if (value.kind === "MBbloom--") return "raw";
  if (value.kind === "stream") return "stream";
  return value.encoding;
}

/**
 * Whether Redis would hold this set as an intset: at most set-max-intset-entries members, every
 * one an int64, and never otherwise since it was made (MemberSet.leftIntset).
 */
export function isIntset(set: MemberSet): boolean {
  if (set.leftIntset || set.size > encodingLimits.intsetEntries) return false;
  for (const member of set) if (parseInt64(member) === null) return false;
  return true;
}
