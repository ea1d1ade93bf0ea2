/**
 * The stream commands that add, read by range, trim and delete entries: XADD, XLEN, XRANGE,
 * XREVRANGE, XDEL, XTRIM and XSETID. Arguments are checked in the order Redis 7.0 checks them
 * (some before the key is looked up, some after), since that decides which error a client sees.
 *
 * What the append-only file records is deterministic: XADD with the ID it generated, and any trim
 * as `MAXLEN = <length left>` (entries leave from the head whatever the strategy, so the length
 * left says exactly what went), as Redis rewrites `~` for its replicas and file.
 */
import { isKeyword, parseInt64, parseInteger } from "../../text/args.ts";
import { getValue } from "../../kit/lookup.ts";
import type { Exec } from "../../kit/spec.ts";
import { arityError, KvError, noSuchKey, notAnInteger, syntaxError, wrongType } from "../../text/errors.ts";
import { typeOf } from "../../types/value.ts";
import type { Reply } from "../../kit/reply.ts";
import { writeDecimal } from "../../text/write-bytes.ts";
import { Stream, type StreamEntry, type TrimSpec } from "../../types/stream/stream.ts";
import {
  makeId,
  msOf,
  parseId,
  parseRangeEnd,
  parseRangeStart,
  parseStrictId,
  seqOf,
  type StreamId,
  streamIdMax,
  streamIdMin,
} from "../../types/stream/stream-id.ts";

/** The stream at `key`, undefined when missing; WRONGTYPE for another type. */
export function getStream(x: Exec, key: string): Stream | undefined {
  const value = getValue(x, key);
  if (value !== undefined && typeOf(value) !== "stream") throw wrongType();
  return value as Stream | undefined;
}

/** A count argument read as Redis's getLongLongFromObjectOrReply reads it. */
export function parseLongLong(text: string): bigint {
  const n = parseInt64(text);
  if (n === null) throw notAnInteger();
  return n;
}

/** parseLongLong with the command's own error (`message`, code included) for a bad number. */
export function parseLongLongOr(text: string, message: string): bigint {
  const n = parseInt64(text);
  if (n === null) throw new KvError(message);
  return n;
}

/** Up to `count` of `entries` (all when count ≤ 0). */
export function takeEntries(entries: Iterable<StreamEntry>, count: number): StreamEntry[] {
  const taken: StreamEntry[] = [];
  for (const entry of entries) {
    if (count > 0 && taken.length === count) break;
    taken.push(entry);
  }
  return taken;
}

/** Replies with entries (an array), at most `count` of them when count > 0. */
export function replyEntries(reply: Reply, entries: Iterable<StreamEntry>, count: number): void {
  const taken = takeEntries(entries, count);
  reply.array(taken.length);
  for (const entry of taken) entry.reply(reply);
}

// ---- XADD and XTRIM's trimming options --------------------------------------------------------

interface AddOrTrimArgs {
  trim: TrimSpec | null;
  noMakeStream: boolean;
  /** XADD's ID, unless `*`. */
  id: { id: StreamId; seqGiven: boolean } | null;
  /** Where parsing stopped: XADD's ID (XTRIM's options run to the end). */
  next: number;
}

/** IDs whose halves stay below this are made from numbers (XADD `*`). */
const numberIdMax = Number.MAX_SAFE_INTEGER;

/** Entries `~` trims at most unless LIMIT says, per slot of a node (Redis: 100 × stream-node-max-entries). */
const approxLimitNodes = 100;
/** The limit when that product is not usable: not positive, or past this. */
const approxLimitFallback = 10_000;
const approxLimitMax = 2 ** 30;

/** The trimming options of XADD (from argv[2] up to its ID) or XTRIM, as Redis's streamParseAddOrTrimArgsOrReply reads them. */
function parseAddOrTrim(x: Exec, argv: readonly string[], xadd: boolean): AddOrTrimArgs {
  let strategy: TrimSpec["strategy"] | null = null;
  let maxlen = 0;
  let minId = streamIdMin;
  let approx = false;
  let limit = 0;
  let limitGiven = false;
  let noMakeStream = false;
  let id: AddOrTrimArgs["id"] = null;
  let i = 2;
  for (; i < argv.length; i++) {
    const more = argv.length - 1 - i;
    const option = argv[i]!;
    if (xadd && option === "*") break;
    const isMaxlen = isKeyword(option, "MAXLEN");
    if ((isMaxlen || isKeyword(option, "MINID")) && more > 0) {
      if (strategy !== null) throw new KvError("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
      approx = false;
      const next = argv[i + 1]!;
      if (more >= 2 && next === "~") {
        approx = true;
        i++;
      } else if (more >= 2 && next === "=") i++;
      if (isMaxlen) {
        // Past 2^53 a count is inexact, but still more than any stream holds.
        maxlen = parseInteger(argv[i + 1]!);
        if (maxlen < 0) throw new KvError("ERR The MAXLEN argument must be >= 0.");
      } else minId = parseStrictId(argv[i + 1]!);
      i++;
      strategy = isMaxlen ? "maxlen" : "minid";
    } else if (isKeyword(option, "LIMIT") && more > 0) {
      limit = parseInteger(argv[i + 1]!);
      if (limit < 0) throw new KvError("ERR The LIMIT argument must be >= 0.");
      limitGiven = true;
      i++;
    } else if (xadd && isKeyword(option, "NOMKSTREAM")) {
      noMakeStream = true;
    } else if (xadd) {
      id = parseId(option, true, 0n, true);
      break;
    } else throw syntaxError();
  }
  if (limit !== 0 && strategy === null) throw new KvError("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
  if (!xadd && strategy === null) throw new KvError("ERR syntax error, XTRIM must be called with a trimming strategy");
  if (limitGiven) {
    if (!approx) throw new KvError("ERR syntax error, LIMIT cannot be used without the special ~ option");
  } else if (approx) {
    limit = approxLimitNodes * x.engine.streamNodeEntriesMax;
    if (limit <= 0 || limit > approxLimitMax) limit = approxLimitFallback;
  }
  const trim = strategy === null ? null : { strategy, maxlen, minId, approx, limit };
  return { trim, noMakeStream, id, next: i };
}

function xadd(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const args = parseAddOrTrim(x, argv, true);
  const fieldsAt = args.next + 1;
  const pairs = argv.length - fieldsAt;
  if (pairs < 2 || pairs % 2 === 1) throw arityError("xadd");
  if (args.id?.seqGiven && args.id.id === streamIdMin) throw new KvError("ERR The ID specified in XADD must be greater than 0-0");
  let stream = getStream(x, key);
  if (stream === undefined) {
    if (args.noMakeStream) return x.reply.bulk(null);
    stream = new Stream();
    x.db.set(key, stream);
  }
  if (stream.lastId === streamIdMax) throw new KvError("ERR The stream has exhausted the last possible ID, unable to add more items");
  const nowMs = x.engine.clock.nowMs();
  const fields = argv.slice(fieldsAt);
  const nodeEntriesMax = x.engine.streamNodeEntriesMax;
  const { lastMs, lastSeq } = stream;
  // `*`, the usual case: the next ID made from numbers — the time now, or the last ID's time and
  // the next sequence number when the clock is not past it — and written into the reply from
  // them; its text is made only for the append-only file.
  let text: string | null = null;
  const clockPastLast = nowMs > lastMs;
  if (args.id === null && (clockPastLast || (lastMs < numberIdMax && lastSeq < numberIdMax))) {
    const ms = clockPastLast ? nowMs : lastMs;
    const seq = clockPastLast ? 0 : lastSeq + 1;
    stream.appendAt(ms, seq, fields, nodeEntriesMax);
    replyNumberId(x.reply, ms, seq);
    if (x.engine.aof !== null) text = `${ms}-${seq}`;
  } else {
    const id = nextId(stream, args.id, nowMs);
    // The stream made above stays only if it holds something: Redis checks 0-0 before making it
    // for this reason, and any other ID is above a new stream's 0-0.
    if (id <= stream.lastId) throw new KvError("ERR The ID specified in XADD is equal or smaller than the target stream top item");
    text = stream.append(id, fields, nodeEntriesMax);
    x.reply.bulk(text);
  }
  x.db.modified(key);
  x.db.notify("xadd", key);
  if (args.trim !== null && stream.trim(args.trim) > 0) x.db.notify("xtrim", key);
  // Only the file reads what is recorded: no need to build it without one.
  if (text !== null) x.propagate = [["XADD", key, ...(args.trim === null ? [] : ["MAXLEN", "=", String(stream.length)]), text, ...fields]];
}

/** Room for `<ms>-<seq>` with both below 2^53: 16 digits, a dash, 16 digits. */
const numberIdBytesMax = 33;
const numberIdScratch = new Uint8Array(numberIdBytesMax);
const DASH = 0x2d;

/** Writes the ID `<ms>-<seq>` as a bulk string from its numbers, making no string. */
function replyNumberId(reply: Reply, ms: number, seq: number): void {
  let at = writeDecimal(numberIdScratch, 0, ms);
  numberIdScratch[at++] = DASH;
  at = writeDecimal(numberIdScratch, at, seq);
  reply.bulkBytes(numberIdScratch, 0, at);
}

/**
 * The ID XADD adds: the one given; for `<ms>-*` the next sequence number at that time (past the
 * last one at the same time); for `*` the time now, or the last ID's successor when the clock is
 * not past it. An ID at or below the last is returned as is, for the caller to refuse.
 */
function nextId(stream: Stream, given: AddOrTrimArgs["id"], nowMs: number): StreamId {
  const last = stream.lastId;
  if (given !== null) {
    if (given.seqGiven) return given.id;
    if (msOf(given.id) !== msOf(last)) return given.id;
    // The last ID's own time: its sequence number plus one, unless that would overflow, which
    // is refused as an ID not above the top item. (Redis 7.0 leaves errno unset on this path and
    // answers whichever error a stale errno picks, at times "Elements are too large to be stored".)
    return seqOf(last) === 2n ** 64n - 1n ? last : last + 1n;
  }
  const ms = BigInt(nowMs);
  return ms > msOf(last) ? makeId(ms, 0n) : last + 1n;
}

function xtrim(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const args = parseAddOrTrim(x, argv, false);
  const stream = getStream(x, key);
  if (stream === undefined) return x.reply.integer(0);
  const removed = stream.trim(args.trim!);
  if (removed > 0) {
    x.db.modified(key);
    x.db.notify("xtrim", key);
  }
  x.reply.integer(removed);
  x.propagate = removed > 0 ? [["XTRIM", key, "MAXLEN", "=", String(stream.length)]] : null;
}

function xdel(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const stream = getStream(x, key);
  if (stream === undefined) return x.reply.integer(0);
  // Every ID is checked before any is deleted: a bad one leaves the stream as it was.
  const ids = argv.slice(2).map((text) => parseStrictId(text));
  let deleted = 0;
  for (const id of ids) {
    if (!stream.delete(id)) continue;
    if (id > stream.maxDeletedId) stream.maxDeletedId = id;
    deleted++;
  }
  if (deleted > 0) {
    x.db.modified(key);
    x.db.notify("xdel", key);
  }
  x.reply.integer(deleted);
}

function xlen(x: Exec, argv: string[]): void {
  x.reply.integer(getStream(x, argv[1]!)?.length ?? 0);
}

function xrange(x: Exec, argv: string[], reverse: boolean): void {
  const start = parseRangeStart(argv[reverse ? 3 : 2]!);
  const end = parseRangeEnd(argv[reverse ? 2 : 3]!);
  let count = -1;
  for (let j = 4; j < argv.length; j++) {
    if (!isKeyword(argv[j]!, "COUNT") || j + 1 === argv.length) throw syntaxError();
    count = Math.max(0, parseInteger(argv[++j]!));
  }
  const stream = getStream(x, argv[1]!);
  if (stream === undefined) return x.reply.array(0);
  if (count === 0) return x.reply.array(null);
  replyEntries(x.reply, stream.range(start, end, reverse), count);
}

function xsetid(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const id = parseStrictId(argv[2]!);
  let entriesAdded = -1n;
  let maxDeletedId = streamIdMin;
  for (let i = 3; i < argv.length; i += 2) {
    const option = argv[i]!;
    const more = i + 1 < argv.length;
    if (isKeyword(option, "ENTRIESADDED") && more) {
      entriesAdded = parseLongLong(argv[i + 1]!);
      if (entriesAdded < 0n) throw new KvError("ERR entries_added must be positive");
    } else if (isKeyword(option, "MAXDELETEDID") && more) {
      maxDeletedId = parseStrictId(argv[i + 1]!);
      if (id < maxDeletedId) throw new KvError("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
    } else throw syntaxError();
  }
  const stream = getStream(x, key);
  if (stream === undefined) throw noSuchKey();
  if (stream.length > 0) {
    if (id < stream.edgeId(false)!) throw new KvError("ERR The ID specified in XSETID is smaller than the target stream top item");
    if (entriesAdded !== -1n && BigInt(stream.length) > entriesAdded)
      throw new KvError("ERR The entries_added specified in XSETID is smaller than the target stream length");
  }
  stream.lastId = id;
  if (entriesAdded !== -1n) stream.entriesAdded = entriesAdded;
  if (maxDeletedId !== streamIdMin) stream.maxDeletedId = maxDeletedId;
  x.db.modified(key);
  x.db.notify("xsetid", key);
  x.reply.simple("OK");
}

export const entryCommandRunners = {
  xadd,
  xtrim,
  xdel,
  xlen,
  xrange: (x: Exec, argv: string[]) => xrange(x, argv, false),
  xrevrange: (x: Exec, argv: string[]) => xrange(x, argv, true),
  xsetid,
};
