/**
 * A stream entry's ID: a Unix time in ms and a sequence number, each an unsigned 64-bit integer,
 * written `<ms>-<seq>`. Held as one bigint, ms × 2^64 + seq, so that IDs compare, sort and step
 * as plain numbers (Redis compares the two halves in turn; the order is the same).
 *
 * Parsing follows Redis 7.0's rules, because clients send IDs typed by people: `-` and `+` are the
 * smallest and largest IDs where a range is meant, `<ms>` alone takes a default sequence number,
 * `<ms>-*` (XADD) asks for the next sequence number, and each half is read as Redis reads an
 * unsigned 64-bit number (string2ull: a plain decimal, else what C's strtoull accepts whole —
 * leading blanks and a sign included).
 */
import { parseInt64 } from "../../text/args.ts";
import { KvError } from "../../text/errors.ts";

export type StreamId = bigint;

const u64Max = 2n ** 64n - 1n;
export const streamIdMin: StreamId = 0n;
export const streamIdMax: StreamId = (u64Max << 64n) | u64Max;
/** Longest ID text Redis reads; anything longer is invalid. */
const idCharsMax = 127;

export const makeId = (ms: bigint, seq: bigint): StreamId => (ms << 64n) | seq;
export const msOf = (id: StreamId): bigint => id >> 64n;
export const seqOf = (id: StreamId): bigint => id & u64Max;

/** The ms last given to idOf and its shifted bigint: IDs made in one ms, in any stream, share it. */
let shiftedFor = -1;
let shifted = 0n;

/** The ID of `ms` and `seq` given as numbers below 2^53 (XADD `*`). */
export function idOf(ms: number, seq: number): StreamId {
  if (ms !== shiftedFor) {
    shiftedFor = ms;
    shifted = BigInt(ms) << 64n;
  }
  return seq === 0 ? shifted : shifted | BigInt(seq);
}

/** Halves below this are exact as numbers: kept and written as numbers (node-ids.ts, formatId). */
export const numberHalfMax = 2n ** 53n;

export function formatId(id: StreamId): string {
  const ms = id >> 64n;
  const seq = id & u64Max;
  if (ms < numberHalfMax && seq < numberHalfMax) return `${Number(ms)}-${Number(seq)}`;
  return `${ms}-${seq}`;
}

/**
 * An ID as two numbers, for comparing with IDs kept as numbers (node-ids.ts): a half of 2^53 or
 * more is Infinity, which is above every half a number keeps — so the order comes out right.
 */
export interface IdBound {
  ms: number;
  seq: number;
}

const minBound: IdBound = { ms: 0, seq: 0 };
const maxBound: IdBound = { ms: Infinity, seq: Infinity };

export function idBound(id: StreamId): IdBound {
  // `-` and `+`, the usual ends of a range.
  if (id === streamIdMin) return minBound;
  if (id === streamIdMax) return maxBound;
  const ms = id >> 64n;
  const seq = id & u64Max;
  return { ms: ms < numberHalfMax ? Number(ms) : Infinity, seq: seq < numberHalfMax ? Number(seq) : Infinity };
}

export const invalidId = () => new KvError("ERR Invalid stream ID specified as stream command argument");

/** What parseId read: the ID, and whether a sequence number was given (false for `<ms>-*`). */
export interface ParsedId {
  id: StreamId;
  seqGiven: boolean;
}

const blanks = " \t\n\v\f\r";

/**
 * An unsigned 64-bit number as Redis's string2ull reads it, or null: a decimal int64 that is not
 * negative; failing that, the whole text as strtoull takes it (leading blanks, an optional sign, a
 * minus wrapping around as in C), refusing overflow.
 */
export function parseU64(text: string): bigint | null {
  const int64 = parseInt64(text);
  if (int64 !== null) return int64 < 0n ? null : int64;
  let at = 0;
  while (at < text.length && blanks.includes(text[at]!)) at++;
  let negative = false;
  if (text[at] === "+" || text[at] === "-") negative = text[at++] === "-";
  const digits = text.slice(at);
  if (!/^\d+$/.test(digits)) return null;
  const n = BigInt(digits);
  if (n > u64Max) return null;
  return negative && n !== 0n ? 2n ** 64n - n : n;
}

/**
 * An ID argument. `strict`: `-` and `+` are refused (an ID of an entry, not a range's end).
 * `missingSeq`: the sequence number of `<ms>` alone. `allowAutoSeq`: `<ms>-*` is read (XADD).
 */
export function parseId(text: string, strict: boolean, missingSeq: bigint, allowAutoSeq = false): ParsedId {
  if (text.length > idCharsMax) throw invalidId();
  if (text === "-" || text === "+") {
    if (strict) throw invalidId();
    return { id: text === "-" ? streamIdMin : streamIdMax, seqGiven: true };
  }
  const dash = text.indexOf("-");
  const ms = parseU64(dash < 0 ? text : text.slice(0, dash));
  if (ms === null) throw invalidId();
  if (dash < 0) return { id: makeId(ms, missingSeq), seqGiven: true };
  const seqText = text.slice(dash + 1);
  if (allowAutoSeq && seqText === "*") return { id: makeId(ms, 0n), seqGiven: false };
  const seq = parseU64(seqText);
  if (seq === null) throw invalidId();
  return { id: makeId(ms, seq), seqGiven: true };
}

/** An entry's ID: `-` and `+` refused, `<ms>` alone meaning `<ms>-<missingSeq>`. */
export const parseStrictId = (text: string, missingSeq = 0n): StreamId => parseId(text, true, missingSeq).id;

/**
 * One end of a range (XRANGE, XPENDING, XAUTOCLAIM): `(` before an ID excludes it, and then the ID
 * must be an entry's ID (strict).
 */
function parseIntervalId(text: string, missingSeq: bigint): { id: StreamId; exclusive: boolean } {
  if (text.length > 1 && text[0] === "(") return { id: parseStrictId(text.slice(1), missingSeq), exclusive: true };
  return { id: parseId(text, false, missingSeq).id, exclusive: false };
}

/** A range's first ID: `<ms>` alone is `<ms>-0`, and an excluded ID's successor (none past the largest). */
export function parseRangeStart(text: string): StreamId {
  const { id, exclusive } = parseIntervalId(text, 0n);
  if (!exclusive) return id;
  if (id === streamIdMax) throw new KvError("ERR invalid start ID for the interval");
  return id + 1n;
}

/** A range's last ID: `<ms>` alone is `<ms>-<largest seq>`, and an excluded ID's predecessor (none before 0-0). */
export function parseRangeEnd(text: string): StreamId {
  const { id, exclusive } = parseIntervalId(text, u64Max);
  if (!exclusive) return id;
  if (id === streamIdMin) throw new KvError("ERR invalid end ID for the interval");
  return id - 1n;
}
