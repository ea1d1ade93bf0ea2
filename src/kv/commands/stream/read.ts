/**
 * XREAD and XREADGROUP: entries after an ID, from one or more streams, blocking until some arrive
 * when asked to (BLOCK ms).
 *
 * XREADGROUP with `>` delivers entries the group has not delivered yet to the consumer, adding
 * each to the group's pending entries list (unless NOACK) and moving the group's last ID; with an
 * ID it re-reads the consumer's own pending entries after that ID (its history). What the
 * append-only file records for a delivery is what Redis propagates for it: the consumer's
 * creation (XGROUP CREATECONSUMER), an XCLAIM … FORCE JUSTID per pending entry made, and the
 * group's new last ID and read count (XGROUP SETID … ENTRIESREAD).
 */
import { isKeyword, parseInteger } from "../../text/args.ts";
import { serveBlocked } from "../../kit/block.ts";
import { countLookup } from "../../kit/lookup.ts";
import type { Exec } from "../../kit/spec.ts";
import type { Server } from "../../kit/server.ts";
import { KvError, syntaxError } from "../../text/errors.ts";
import { typeOf } from "../../types/value.ts";
import type { Reply } from "../../kit/reply.ts";
import type { Session } from "../../server/session.ts";
import type { ConsumerGroup } from "../../types/stream/consumer-group.ts";
import { getStream, parseLongLongOr, takeEntries } from "./entries.ts";
import { claimCommand, createConsumerCommand, setIdCommand } from "../../types/stream/group-records.ts";
import { consumerOf, noGroup } from "./groups.ts";
import type { Stream, StreamEntry } from "../../types/stream/stream.ts";
import { formatId, parseStrictId, type StreamId, streamIdMax, streamIdMin } from "../../types/stream/stream-id.ts";

/** Entries a blocked read is served at most when it gave no COUNT (Redis's XREAD_BLOCKED_DEFAULT_COUNT). */
const blockedCountDefault = 1000;
/** A row of a reply: an entry, or the ID of a pending entry no longer in the stream (its fields null). */
type Row = StreamEntry | { id: StreamId; gone: true };

/**
 * The commands a group read records in the append-only file (the deliveries as XCLAIMs, the
 * group's new position, consumers made), or null when there is no file to record them in: they
 * are then not made at all (`commands?.push(…)` does not evaluate its argument), which was a
 * third of an XREADGROUP's time (formatting IDs held as bigints).
 */
type FileCommands = string[][] | null;

const fileCommands = (x: Exec): FileCommands => (x.engine.aof === null ? null : []);

/** `>`: entries never delivered to the group; held as the largest ID, as Redis holds it. */
const undelivered = streamIdMax;

interface ReadArgs {
  /** BLOCK's ms, 0 for no deadline; null without BLOCK. */
  blockMs: number | null;
  count: number;
  group: { name: string; consumer: string; noAck: boolean } | null;
  keys: string[];
  idTexts: string[];
}

function parseRead(x: Exec, argv: readonly string[], xreadgroup: boolean): ReadArgs {
  let blockMs: number | null = null;
  let count = 0;
  let group: ReadArgs["group"] = null;
  let noAck = false;
  let streamsAt = 0;
  for (let i = 1; i < argv.length; i++) {
    const more = argv.length - i - 1;
    const option = argv[i]!;
    if (isKeyword(option, "BLOCK") && more > 0) {
      if (x.session.inScript) throw new KvError(`ERR ${argv[0]} command is not allowed with BLOCK option from scripts`);
      blockMs = parseBlockMs(argv[++i]!);
    } else if (isKeyword(option, "COUNT") && more > 0) {
      count = Math.max(0, parseInteger(argv[++i]!));
    } else if (isKeyword(option, "STREAMS") && more > 0) {
      streamsAt = i + 1;
      if ((argv.length - streamsAt) % 2 !== 0) {
        // Redis 7.0 names XREAD and `$` in this error for XREADGROUP too.
        throw new KvError("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.");
      }
      break;
    } else if (isKeyword(option, "GROUP") && more >= 2) {
      if (!xreadgroup) throw new KvError("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      group = { name: argv[i + 1]!, consumer: argv[i + 2]!, noAck: false };
      i += 2;
    } else if (isKeyword(option, "NOACK")) {
      if (!xreadgroup) throw new KvError("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      noAck = true;
    } else throw syntaxError();
  }
  if (streamsAt === 0) throw syntaxError();
  if (xreadgroup && group === null) throw new KvError("ERR Missing GROUP option for XREADGROUP");
  if (group !== null) group.noAck = noAck;
  const half = (argv.length - streamsAt) / 2;
  return { blockMs, count, group, keys: argv.slice(streamsAt, streamsAt + half), idTexts: argv.slice(streamsAt + half) };
}

/** BLOCK's milliseconds, read as Redis reads a timeout in ms (an integer, not negative). */
function parseBlockMs(text: string): number {
  const ms = parseLongLongOr(text, "ERR timeout is not an integer or out of range");
  if (ms < 0n) throw new KvError("ERR timeout is negative");
  return Number(ms);
}

/** One stream to read: its key, its stream when it exists, the ID to read after, and the group. */
interface Source {
  key: string;
  stream: Stream | undefined;
  after: StreamId;
  group: ConsumerGroup | null;
}

function resolveSources(x: Exec, args: ReadArgs): Source[] {
  const sources: Source[] = [];
  for (let i = 0; i < args.keys.length; i++) {
    const key = args.keys[i]!;
    const text = args.idTexts[i]!;
    const stream = getStream(x, key);
    let group: ConsumerGroup | null = null;
    if (args.group !== null) {
      group = stream?.groups.get(args.group.name) ?? null;
      if (group === null) throw noGroup(`No such key '${key}' or consumer group '${args.group.name}' in XREADGROUP with GROUP option`);
    }
    let after: StreamId;
    if (text === "$") {
      if (args.group !== null) {
        throw new KvError(
          "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.",
        );
      }
      after = stream?.lastId ?? streamIdMin;
    } else if (text === ">") {
      if (args.group === null) throw new KvError("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
      after = undelivered;
    } else after = parseStrictId(text);
    sources.push({ key, stream, after, group });
  }
  return sources;
}

function xread(x: Exec, argv: string[], xreadgroup: boolean): void {
  const args = parseRead(x, argv, xreadgroup);
  const sources = resolveSources(x, args);
  const nowMs = x.engine.clock.nowMs();
  // Each stream is served in turn (a key named twice finds the first serving's changes), and the
  // reply is written once all are, when its length is known.
  const served: { key: string; rows: Row[] }[] = [];
  const commands = fileCommands(x);
  for (const source of sources) {
    const { key, stream, group } = source;
    // Redis looks each key up again to serve it: a second hit or miss (and keymiss event).
    countLookup(x, key, stream !== undefined);
    if (stream === undefined) continue;
    if (group !== null && args.group !== null) {
      // With an ID the consumer re-reads its history, even when that is empty.
      const history = source.after !== undelivered;
      if (!history && !hasEntriesAfter(stream, group.lastId)) continue;
      seeConsumer(x, key, group, args.group, nowMs, commands);
      const consumerName = args.group.consumer;
      const rows = history
        ? readHistory(key, stream, args.group.name, group, consumerName, source.after, args.count, nowMs, commands)
        : deliverNew(x, key, stream, group, args.group, args.count, nowMs, commands);
      served.push({ key, rows });
    } else if (hasEntriesAfter(stream, source.after)) {
      served.push({ key, rows: entriesAfter(stream, source.after, args.count) });
    }
  }
  x.propagate = commands;
  if (served.length > 0) {
    replyPerStream(x.reply, served.length);
    for (const { key, rows } of served) replyStream(x.reply, key, rows);
    if (args.group !== null) x.engine.dirty++;
    return;
  }
  if (args.blockMs === null || !x.session.mayBlock) return x.reply.array(null);
  block(x, args, sources);
}

/** The outer reply of XREAD: an array of [key, entries] in RESP2, a map of key → entries in RESP3. */
function replyPerStream(reply: Reply, streams: number): void {
  if (reply.protocol === 3) reply.map(streams);
  else reply.array(streams);
}

/**
 * The reading consumer is seen now, and made if it is new — only once it is served, as in Redis —
 * which the file records as XGROUP CREATECONSUMER.
 */
function seeConsumer(x: Exec, key: string, group: ConsumerGroup, args: NonNullable<ReadArgs["group"]>, nowMs: number, commands: FileCommands): void {
  if (!consumerOf(x, key, group, args.consumer, nowMs).created) return;
  x.db.modified(key);
  commands?.push(createConsumerCommand(key, args.name, args.consumer));
}

function hasEntriesAfter(stream: Stream, after: StreamId): boolean {
  if (stream.length === 0) return false;
  return stream.edgeId(false)! > after;
}

/**
 * Delivers the entries after the group's last ID to `consumer`: each becomes pending (unless
 * NOACK) with one delivery, taking it from whoever held it (XGROUP SETID can move the last ID
 * back), and the group's last ID and read count move on, as Redis's streamReplyWithRange does.
 */
function deliverNew(
  x: Exec,
  key: string,
  stream: Stream,
  group: ConsumerGroup,
  args: NonNullable<ReadArgs["group"]>,
  count: number,
  nowMs: number,
  commands: FileCommands,
): Row[] {
  const entries = entriesAfter(stream, group.lastId, count);
  const consumer = group.consumers.get(args.consumer)!;
  for (const entry of entries) {
    advanceGroup(stream, group, entry.id);
    if (!args.noAck) {
      const pending = group.deliver(entry.id, consumer, nowMs);
      pending.deliveries = 1n;
      commands?.push(claimCommand(key, args.name, group, pending, consumer.name));
    }
  }
  if (entries.length > 0) {
    commands?.push(setIdCommand(key, args.name, group));
    x.db.modified(key);
  }
  return entries;
}

/** Entries with IDs above `after`, at most `count` (0: all). */
function entriesAfter(stream: Stream, after: StreamId, count: number): StreamEntry[] {
  return after === streamIdMax ? [] : takeEntries(stream.range(after + 1n, streamIdMax), count);
}

/** One stream's part of a reply: [key, entries] in RESP2, key → entries in RESP3's map. */
function replyStream(reply: Reply, key: string, rows: readonly Row[]): void {
  if (reply.protocol === 2) reply.array(2);
  reply.bulk(key);
  reply.array(rows.length);
  for (const row of rows) {
    if (!("gone" in row)) {
      row.reply(reply);
      continue;
    }
    reply.array(2);
    reply.bulk(formatId(row.id));
    reply.array(null);
  }
}

/** The group has now read the entry `id`: its last ID moves there and its read count follows. */
export function advanceGroup(stream: Stream, group: ConsumerGroup, id: StreamId): void {
  if (id <= group.lastId) return;
  if (group.entriesRead !== null && !stream.hasTombstonesFrom(id)) group.entriesRead++;
  else if (stream.entriesAdded > 0n) group.entriesRead = stream.entriesReadAt(id);
  group.lastId = id;
}

/**
 * The consumer's pending entries after `after`, oldest first, at most `count` (0: all): an entry
 * deleted from the stream meanwhile is answered as its ID and a null, and each one still there
 * counts a delivery, as Redis's streamReplyWithRangeFromConsumerPEL does. The new counts are
 * recorded in the append-only file (Redis does not propagate them), so that a restart keeps them.
 */
function readHistory(
  key: string,
  stream: Stream,
  groupName: string,
  group: ConsumerGroup,
  consumerName: string,
  after: StreamId,
  count: number,
  nowMs: number,
  commands: FileCommands,
): Row[] {
  const rows: Row[] = [];
  if (after === streamIdMax) return rows;
  for (const pending of group.pendingRange(after + 1n, streamIdMax)) {
    if (pending.consumer.name !== consumerName) continue;
    const entry = stream.get(pending.id);
    if (entry !== undefined) {
      pending.deliveredMs = nowMs;
      pending.deliveries++;
      commands?.push(claimCommand(key, groupName, group, pending, consumerName));
    }
    rows.push(entry ?? { id: pending.id, gone: true });
    if (count > 0 && rows.length === count) break;
  }
  return rows;
}

/** Waits for entries after each source's ID (for `>`, after the group's last ID when served). */
function block(x: Exec, args: ReadArgs, sources: Source[]): void {
  const { engine, session } = x;
  const dbIndex = session.dbIndex;
  // Each key's starting point and, for a group, the stream as the reader saw it.
  const waits = new Map(sources.map((source) => [source.key, { after: source.after, seen: seenOf(source.stream) }]));
  const count = args.count > 0 ? args.count : blockedCountDefault;
  engine.blocking.block(session, {
    dbIndex,
    keys: args.keys,
    deadlineMs: args.blockMs === 0 ? Infinity : engine.clock.nowMs() + args.blockMs!,
    tryServe: (key) => {
      const { after, seen } = waits.get(key)!;
      return tryServe(engine, session, dbIndex, key, after, seen, args.group, count);
    },
    timeout: () => {
      session.reply.array(null);
      session.transport?.flush();
    },
  });
}

/** A stream as a blocked reader last saw it: the object, and how many entries had been added to it. */
interface Seen {
  stream: Stream | undefined;
  entriesAdded: bigint;
}

const seenOf = (stream: Stream | undefined): Seen => ({ stream, entriesAdded: stream?.entriesAdded ?? 0n });

/**
 * Serves a client blocked in XREAD or XREADGROUP from `key`, which changed; false to keep it
 * waiting. Redis 7.0 wakes a consumer only when entries are added, the key is made, deleted or
 * replaced, or its group destroyed: not when the group moves back (XGROUP SETID) and so has
 * entries to deliver again, which waits for the next entry, as there.
 */
function tryServe(
  engine: Server,
  session: Session,
  dbIndex: number,
  key: string,
  after: StreamId,
  seen: Seen,
  groupArgs: ReadArgs["group"],
  count: number,
): boolean {
  const value = engine.dbs[dbIndex]!.get(key);
  const reply = session.reply;
  if (value === undefined || typeOf(value) !== "stream") {
    // A consumer waits on its group, which went with the key: Redis 7.0 ends its wait with this
    // error. A plain XREAD waits on for a stream to appear.
    if (groupArgs === null) return false;
    reply.error("UNBLOCKED the stream key no longer exists");
    return true;
  }
  const stream = value as Stream;
  if (groupArgs !== null) {
    const group = stream.groups.get(groupArgs.name);
    if (group === undefined) {
      reply.error(noGroup("the consumer group this client was blocked on no longer exists").message);
      return true;
    }
    if (stream === seen.stream && stream.entriesAdded === seen.entriesAdded) return false;
    if (!hasEntriesAfter(stream, group.lastId)) return false;
    serveBlocked(engine, session, dbIndex, [key], (x) => {
      const nowMs = engine.clock.nowMs();
      const commands = fileCommands(x);
      seeConsumer(x, key, group, groupArgs, nowMs, commands);
      replyPerStream(reply, 1);
      replyStream(reply, key, deliverNew(x, key, stream, group, groupArgs, count, nowMs, commands));
      x.propagate = commands;
    });
    return true;
  }
  if (!hasEntriesAfter(stream, after)) return false;
  replyPerStream(reply, 1);
  replyStream(reply, key, entriesAfter(stream, after, count));
  return true;
}

export const readCommandRunners = {
  xread: (x: Exec, argv: string[]) => xread(x, argv, false),
  xreadgroup: (x: Exec, argv: string[]) => xread(x, argv, true),
};
