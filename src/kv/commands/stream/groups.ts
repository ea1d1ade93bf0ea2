/**
 * Consumer groups and their pending entries: XGROUP's subcommands, XACK, XPENDING, XCLAIM and
 * XAUTOCLAIM, with Redis 7.0's argument order and error texts.
 *
 * A claim is recorded in the append-only file as the XCLAIM that recreates its pending entry
 * exactly — `XCLAIM key group consumer 0 id TIME <ms> RETRYCOUNT <n> FORCE JUSTID LASTID <id>` —
 * which is what Redis propagates for every claim, so replaying the file restores who holds what,
 * since when, and how often it was delivered.
 */
import { isKeyword, parseInt64, parseInteger } from "../../text/args.ts";
import { helpReply } from "../../kit/help.ts";
import type { Exec } from "../../kit/spec.ts";
import { KvError, notAnInteger, subcommandSyntaxError, syntaxError } from "../../text/errors.ts";
import { byName, type Consumer, ConsumerGroup, type PendingEntry } from "../../types/stream/consumer-group.ts";
import { claimCommand, createGroupCommand, setIdCommand } from "../../types/stream/group-records.ts";
import { getStream, parseLongLong, parseLongLongOr } from "./entries.ts";
import { Stream, type StreamEntry } from "../../types/stream/stream.ts";
import { formatId, parseId, parseRangeEnd, parseRangeStart, parseStrictId, type StreamId, streamIdMax, streamIdMin } from "../../types/stream/stream-id.ts";

export const noGroup = (text: string) => new KvError(`NOGROUP ${text}`);
const noKeyOrGroup = (key: string, group: string) => noGroup(`No such key '${key}' or consumer group '${group}'`);

/** The group `name` of the stream at `key`, or NOGROUP (XPENDING, XCLAIM, XAUTOCLAIM). */
function requireGroup(x: Exec, key: string, name: string): { stream: Stream; group: ConsumerGroup } {
  const stream = getStream(x, key);
  const group = stream?.groups.get(name);
  if (stream === undefined || group === undefined) throw noKeyOrGroup(key, name);
  return { stream, group };
}

/**
 * The consumer `name` of the group at `key`, seen now; made when missing, which publishes
 * "xgroup-createconsumer" (XGROUP CREATECONSUMER, XREADGROUP, XCLAIM and XAUTOCLAIM alike).
 */
export function consumerOf(x: Exec, key: string, group: ConsumerGroup, name: string, nowMs: number): { consumer: Consumer; created: boolean } {
  const found = group.consumer(name, nowMs);
  if (found.created) x.db.notify("xgroup-createconsumer", key);
  return found;
}

// ---- XGROUP -----------------------------------------------------------------------------------

const xgroupSyntaxError = (argv: readonly string[]) => subcommandSyntaxError("XGROUP", argv[1]!);

/**
 * The key and group every subcommand but HELP names, checked as Redis checks them: the options
 * of CREATE and SETID first, then the key's type, then that the key exists (unless MKSTREAM) and
 * that the group does, for the subcommands that need it.
 */
function xgroupTarget(
  x: Exec,
  argv: readonly string[],
): { stream: Stream | undefined; group: ConsumerGroup | undefined; makeStream: boolean; entriesRead: bigint | null } {
  const sub = argv[1]!.toLowerCase();
  let makeStream = false;
  let entriesRead: bigint | null = null;
  for (let i = 5; i < argv.length; ) {
    if (sub === "create" && isKeyword(argv[i]!, "MKSTREAM")) {
      makeStream = true;
      i++;
    } else if ((sub === "create" || sub === "setid") && isKeyword(argv[i]!, "ENTRIESREAD") && i + 1 < argv.length) {
      const n = parseLongLong(argv[i + 1]!);
      if (n < 0n && n !== -1n) throw new KvError("ERR value for ENTRIESREAD must be positive or -1");
      entriesRead = n === -1n ? null : n;
      i += 2;
    } else throw xgroupSyntaxError(argv);
  }
  const key = argv[2]!;
  const stream = getStream(x, key);
  const group = stream?.groups.get(argv[3]!);
  if (!makeStream) {
    if (stream === undefined) {
      throw new KvError(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
      );
    }
    if (group === undefined && sub !== "create" && sub !== "destroy") throw noGroup(`No such consumer group '${argv[3]}' for key name '${key}'`);
  }
  return { stream, group, makeStream, entriesRead };
}

/**
 * A group made, moved, destroyed, or a consumer made or deleted, on a stream that was there: a
 * change to the data (the change count) but not to the key, as Redis 7.0's XGROUP signals none —
 * a WATCH of it holds, clients caching it are not told, and a client blocked in XREADGROUP stays
 * blocked after SETID moves its group back (DESTROY wakes it, for its NOGROUP).
 */
function groupChanged(x: Exec): void {
  x.engine.dirty++;
}

function xgroupCreate(x: Exec, argv: string[]): void {
  if (argv.length > 8) throw xgroupSyntaxError(argv);
  const target = xgroupTarget(x, argv);
  const key = argv[2]!;
  const name = argv[3]!;
  const id = argv[4] === "$" ? (target.stream?.lastId ?? streamIdMin) : parseStrictId(argv[4]!);
  let stream = target.stream;
  if (stream === undefined) {
    // MKSTREAM: a new key, which is a change to it (WATCH, tracking, the change count).
    stream = new Stream();
    x.db.set(key, stream);
  } else if (stream.groups.has(name)) throw new KvError("BUSYGROUP Consumer Group name already exists");
  else groupChanged(x);
  const group = new ConsumerGroup(id, target.entriesRead);
  stream.groups.set(name, group);
  x.db.notify("xgroup-create", key);
  x.reply.simple("OK");
  x.propagate = [createGroupCommand(key, name, group)];
}

function xgroupSetId(x: Exec, argv: string[]): void {
  if (argv.length !== 5 && argv.length !== 7) throw xgroupSyntaxError(argv);
  const { stream, group, entriesRead } = xgroupTarget(x, argv);
  const id = argv[4] === "$" ? stream!.lastId : parseId(argv[4]!, false, 0n).id;
  group!.lastId = id;
  group!.entriesRead = entriesRead;
  groupChanged(x);
  x.db.notify("xgroup-setid", argv[2]!);
  x.reply.simple("OK");
}

function xgroupDestroy(x: Exec, argv: string[]): void {
  const { stream, group } = xgroupTarget(x, argv);
  if (group === undefined) return x.reply.integer(0);
  stream!.groups.delete(argv[3]!);
  groupChanged(x);
  // Its blocked XREADGROUP clients wake and find the group gone (NOGROUP).
  if (x.engine.blocking.blockedCount > 0) x.engine.blocking.signalReady(x.db, argv[2]!);
  x.db.notify("xgroup-destroy", argv[2]!);
  x.reply.integer(1);
}

function xgroupCreateConsumer(x: Exec, argv: string[]): void {
  const { group } = xgroupTarget(x, argv);
  const { created } = consumerOf(x, argv[2]!, group!, argv[4]!, x.engine.clock.nowMs());
  if (created) groupChanged(x);
  x.reply.integer(created ? 1 : 0);
}

function xgroupDelConsumer(x: Exec, argv: string[]): void {
  const { group } = xgroupTarget(x, argv);
  if (!group!.consumers.has(argv[4]!)) return x.reply.integer(0);
  const pending = group!.deleteConsumer(argv[4]!);
  groupChanged(x);
  x.db.notify("xgroup-delconsumer", argv[2]!);
  x.reply.integer(pending);
}

function xgroupHelp(x: Exec): void {
  helpReply(x, "XGROUP", [
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
  ]);
}

// ---- XACK -------------------------------------------------------------------------------------

function xack(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const group = getStream(x, key)?.groups.get(argv[2]!);
  if (group === undefined) return x.reply.integer(0);
  // All or nothing: every ID is read before any is acknowledged.
  const ids = argv.slice(3).map((text) => parseStrictId(text));
  let acknowledged = 0;
  for (const id of ids) if (group.acknowledge(id)) acknowledged++;
  if (acknowledged > 0) x.db.modified(key);
  x.reply.integer(acknowledged);
}

// ---- XPENDING ---------------------------------------------------------------------------------

function xpending(x: Exec, argv: string[]): void {
  const summary = argv.length === 3;
  if (!summary && (argv.length < 6 || argv.length > 9)) throw syntaxError();
  let minIdleMs = 0;
  let count = 0;
  let start = streamIdMin;
  let end = streamIdMax;
  let consumerName: string | null = null;
  if (!summary) {
    let at = 3;
    if (isKeyword(argv[3]!, "IDLE")) {
      minIdleMs = parseInteger(argv[4]!);
      if (argv.length < 8) throw syntaxError();
      at += 2;
    }
    count = Math.max(0, parseInteger(argv[at + 2]!));
    start = parseRangeStart(argv[at]!);
    end = parseRangeEnd(argv[at + 1]!);
    if (at + 3 < argv.length) consumerName = argv[at + 3]!;
  }
  const { group } = requireGroup(x, argv[1]!, argv[2]!);
  if (summary) return pendingSummary(x, group);
  if (consumerName !== null && !group.consumers.has(consumerName)) return x.reply.array(0);
  const nowMs = x.engine.clock.nowMs();
  const rows: PendingEntry[] = [];
  for (const entry of group.pendingRange(start, end)) {
    if (rows.length >= count) break;
    if (consumerName !== null && entry.consumer.name !== consumerName) continue;
    if (minIdleMs !== 0 && nowMs - entry.deliveredMs < minIdleMs) continue;
    rows.push(entry);
  }
  x.reply.array(rows.length);
  for (const entry of rows) {
    x.reply.array(4);
    x.reply.bulk(formatId(entry.id));
    x.reply.bulk(entry.consumer.name);
    x.reply.integer(Math.max(0, nowMs - entry.deliveredMs));
    x.reply.integer(entry.deliveries);
  }
}

/** XPENDING key group: the count, the lowest and highest IDs, and each consumer's count (as a bulk string, as Redis writes it). */
function pendingSummary(x: Exec, group: ConsumerGroup): void {
  x.reply.array(4);
  x.reply.integer(group.pendingCount);
  const bounds = group.pendingBounds();
  if (bounds === undefined) {
    x.reply.bulk(null);
    x.reply.bulk(null);
    x.reply.array(null);
    return;
  }
  x.reply.bulk(formatId(bounds[0]));
  x.reply.bulk(formatId(bounds[1]));
  const holders = byName([...group.consumers.values()].filter((c) => c.pending.size > 0));
  x.reply.array(holders.length);
  for (const consumer of holders) {
    x.reply.array(2);
    x.reply.bulk(consumer.name);
    x.reply.bulk(String(consumer.pending.size));
  }
}

// ---- XCLAIM and XAUTOCLAIM ----------------------------------------------------------------------

function xclaim(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const groupName = argv[2]!;
  const consumerName = argv[3]!;
  const { stream, group } = requireGroup(x, key, groupName);
  let minIdleMs = parseLongLongOr(argv[4]!, "ERR Invalid min-idle-time argument for XCLAIM");
  if (minIdleMs < 0n) minIdleMs = 0n;
  // The IDs run up to the first argument that is not one; options follow.
  const ids: StreamId[] = [];
  let j = 5;
  for (; j < argv.length; j++) {
    try {
      ids.push(parseStrictId(argv[j]!));
    } catch {
      break;
    }
  }
  const nowMs = x.engine.clock.nowMs();
  let force = false;
  let justId = false;
  let deliveredMs: bigint | null = null;
  let retryCount: bigint | null = null;
  let lastId = streamIdMin;
  for (; j < argv.length; j++) {
    const option = argv[j]!;
    const more = j + 1 < argv.length;
    if (isKeyword(option, "FORCE")) force = true;
    else if (isKeyword(option, "JUSTID")) justId = true;
    else if (isKeyword(option, "IDLE") && more) deliveredMs = BigInt(nowMs) - parseLongLongOr(argv[++j]!, "ERR Invalid IDLE option argument for XCLAIM");
    else if (isKeyword(option, "TIME") && more) deliveredMs = parseLongLongOr(argv[++j]!, "ERR Invalid TIME option argument for XCLAIM");
    else if (isKeyword(option, "RETRYCOUNT") && more) retryCount = parseLongLongOr(argv[++j]!, "ERR Invalid RETRYCOUNT option argument for XCLAIM");
    else if (isKeyword(option, "LASTID") && more) lastId = parseStrictId(argv[++j]!);
    else throw new KvError(`ERR Unrecognized XCLAIM option '${option}'`);
  }
  const commands: string[][] = [];
  let moveLastId = false;
  if (lastId > group.lastId) {
    group.lastId = lastId;
    moveLastId = true;
  }
  // A bogus delivery time (negative, or in the future) is taken as now, as Redis takes it.
  const deliveredAt = deliveredMs === null || deliveredMs < 0n || deliveredMs > BigInt(nowMs) ? nowMs : Number(deliveredMs);
  const claimed: StreamEntry[] = [];
  for (const id of ids) {
    let pending = group.pendingEntry(id);
    const entry = stream.get(id);
    if (entry === undefined) {
      // The entry is gone from the stream: its pending entry goes too.
      if (pending !== undefined) {
        commands.push(claimCommand(key, groupName, group, pending, consumerName));
        group.acknowledge(id);
        moveLastId = false;
      }
      continue;
    }
    const made = pending === undefined;
    if (made && !force) continue;
    if (!made && minIdleMs !== 0n && BigInt(nowMs - pending!.deliveredMs) < minIdleMs) continue;
    const { consumer } = consumerOf(x, key, group, consumerName, nowMs);
    pending = group.deliver(id, consumer, deliveredAt, false);
    if (retryCount !== null && retryCount >= 0n) pending.deliveries = retryCount;
    else if (!justId) pending.deliveries++;
    claimed.push(entry);
    commands.push(claimCommand(key, groupName, group, pending, consumerName));
    moveLastId = false;
  }
  if (moveLastId) commands.push(setIdCommand(key, groupName, group));
  if (commands.length > 0) x.db.modified(key);
  x.propagate = commands;
  replyClaimed(x, claimed, justId);
}

function replyClaimed(x: Exec, entries: readonly StreamEntry[], justId: boolean): void {
  x.reply.array(entries.length);
  for (const entry of entries) {
    if (justId) x.reply.bulk(entry.text);
    else entry.reply(x.reply);
  }
}

/** Pending entries XAUTOCLAIM looks at per entry it may claim (Redis's attempts_factor). */
const autoclaimAttemptsPerEntry = 10;
/** What COUNT may be at most: Redis's LONG_MAX / max(sizeof(streamID), attempts_factor). */
const autoclaimCountMax = (2n ** 63n - 1n) / 16n;

function xautoclaim(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const groupName = argv[2]!;
  const consumerName = argv[3]!;
  let minIdleMs = parseLongLongOr(argv[4]!, "ERR Invalid min-idle-time argument for XAUTOCLAIM");
  if (minIdleMs < 0n) minIdleMs = 0n;
  const start = parseRangeStart(argv[5]!);
  let count = 100;
  let justId = false;
  for (let j = 6; j < argv.length; j++) {
    if (isKeyword(argv[j]!, "COUNT") && j + 1 < argv.length) {
      const n = parseInt64(argv[++j]!);
      if (n === null) throw notAnInteger();
      if (n < 1n || n > autoclaimCountMax) throw new KvError("ERR COUNT must be > 0");
      count = Number(n);
    } else if (isKeyword(argv[j]!, "JUSTID")) justId = true;
    else throw syntaxError();
  }
  const { stream, group } = requireGroup(x, key, groupName);
  const nowMs = x.engine.clock.nowMs();
  const candidates = [...group.pendingRange(start, streamIdMax)].map((entry) => entry.id);
  let attempts = count * autoclaimAttemptsPerEntry;
  let at = 0;
  const claimed: StreamEntry[] = [];
  const deleted: StreamId[] = [];
  const commands: string[][] = [];
  for (; attempts > 0 && count > 0 && at < candidates.length; attempts--, at++) {
    const id = candidates[at]!;
    const pending = group.pendingEntry(id)!;
    const entry = stream.get(id);
    if (entry === undefined) {
      commands.push(claimCommand(key, groupName, group, pending, pending.consumer.name));
      group.acknowledge(id);
      deleted.push(id);
      count--;
      continue;
    }
    if (minIdleMs !== 0n && BigInt(nowMs - pending.deliveredMs) < minIdleMs) continue;
    const { consumer } = consumerOf(x, key, group, consumerName, nowMs);
    group.deliver(id, consumer, nowMs, !justId);
    claimed.push(entry);
    count--;
    commands.push(claimCommand(key, groupName, group, pending, consumerName));
  }
  if (commands.length > 0) x.db.modified(key);
  x.propagate = commands;
  x.reply.array(3);
  x.reply.bulk(formatId(candidates[at] ?? streamIdMin));
  replyClaimed(x, claimed, justId);
  x.reply.array(deleted.length);
  for (const id of deleted) x.reply.bulk(formatId(id));
}

export const groupCommandRunners = {
  xgroupCreate,
  xgroupSetId,
  xgroupDestroy,
  xgroupCreateConsumer,
  xgroupDelConsumer,
  xgroupHelp,
  xack,
  xpending,
  xclaim,
  xautoclaim,
};
