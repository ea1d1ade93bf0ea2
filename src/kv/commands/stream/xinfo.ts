/**
 * XINFO STREAM, GROUPS and CONSUMERS, with Redis 7.0's fields in its order. Maps are written with
 * Reply.map: field, value pairs in a flat array for RESP2 clients, a map for RESP3.
 *
 * `radix-tree-keys` is the number of nodes (Redis's listpacks, each a key of its radix tree);
 * `radix-tree-nodes` is an estimate of the tree's inner nodes, which svc does not have.
 */
import { helpReply } from "../../kit/help.ts";
import type { Exec } from "../../kit/spec.ts";
import { isKeyword, parseInteger } from "../../text/args.ts";
import { noSuchKey, subcommandSyntaxError } from "../../text/errors.ts";
import type { Reply } from "../../kit/reply.ts";
import { byName, type ConsumerGroup } from "../../types/stream/consumer-group.ts";
import { getStream, replyEntries } from "./entries.ts";
import { noGroup } from "./groups.ts";
import type { Stream } from "../../types/stream/stream.ts";
import { formatId, streamIdMax, streamIdMin } from "../../types/stream/stream-id.ts";

/** Entries, and pending entries per group and consumer, that XINFO STREAM FULL shows unless COUNT says (0: all). */
const fullCountDefault = 10;

function requireStream(x: Exec, key: string): Stream {
  const stream = getStream(x, key);
  if (stream === undefined) throw noSuchKey();
  return stream;
}

const groupsByName = (stream: Stream) => byName([...stream.groups].map(([name, group]) => ({ name, group })));

const nullableInteger = (reply: Reply, n: bigint | null) => (n === null ? reply.bulk(null) : reply.integer(n));

function streamHead(reply: Reply, stream: Stream): void {
  reply.bulk("length");
  reply.integer(stream.length);
  reply.bulk("radix-tree-keys");
  reply.integer(stream.nodeCount);
  reply.bulk("radix-tree-nodes");
  reply.integer(stream.nodeCount === 0 ? 1 : stream.nodeCount + 1);
  reply.bulk("last-generated-id");
  reply.bulk(formatId(stream.lastId));
  reply.bulk("max-deleted-entry-id");
  reply.bulk(formatId(stream.maxDeletedId));
  reply.bulk("entries-added");
  reply.integer(stream.entriesAdded);
  reply.bulk("recorded-first-entry-id");
  reply.bulk(formatId(stream.edgeId(true) ?? streamIdMin));
}

function xinfoStream(x: Exec, argv: string[]): void {
  const stream = requireStream(x, argv[2]!);
  const full = argv.length > 3;
  const syntaxError = () => subcommandSyntaxError("XINFO", argv[1]!);
  if (full && !isKeyword(argv[3]!, "FULL")) throw syntaxError();
  if (argv.length > 4 && (argv.length !== 6 || !isKeyword(argv[4]!, "COUNT"))) throw syntaxError();
  let count = fullCountDefault;
  if (argv.length === 6) {
    const n = parseInteger(argv[5]!);
    count = n < 0 ? fullCountDefault : n;
  }
  const reply = x.reply;
  if (!full) {
    reply.map(10);
    streamHead(reply, stream);
    reply.bulk("groups");
    reply.integer(stream.groups.size);
    for (const [label, first] of [
      ["first-entry", true],
      ["last-entry", false],
    ] as const) {
      reply.bulk(label);
      const entry = stream.edgeEntry(first);
      if (entry === undefined) reply.bulk(null);
      else entry.reply(reply);
    }
    return;
  }
  reply.map(9);
  streamHead(reply, stream);
  reply.bulk("entries");
  replyEntries(reply, stream.range(streamIdMin, streamIdMax), count);
  reply.bulk("groups");
  reply.array(stream.groups.size);
  for (const { name, group } of groupsByName(stream)) fullGroup(reply, stream, name, group, count);
}

function fullGroup(reply: Reply, stream: Stream, name: string, group: ConsumerGroup, count: number): void {
  reply.map(7);
  reply.bulk("name");
  reply.bulk(name);
  reply.bulk("last-delivered-id");
  reply.bulk(formatId(group.lastId));
  reply.bulk("entries-read");
  nullableInteger(reply, group.entriesRead);
  reply.bulk("lag");
  nullableInteger(reply, stream.lag(group));
  reply.bulk("pel-count");
  reply.integer(group.pendingCount);
  reply.bulk("pending");
  const pending = [...group.pendingRange(streamIdMin, streamIdMax)];
  const shown = count > 0 ? pending.slice(0, count) : pending;
  reply.array(shown.length);
  for (const entry of shown) {
    reply.array(4);
    reply.bulk(formatId(entry.id));
    reply.bulk(entry.consumer.name);
    reply.integer(entry.deliveredMs);
    reply.integer(entry.deliveries);
  }
  reply.bulk("consumers");
  const consumers = byName(group.consumers.values());
  reply.array(consumers.length);
  for (const consumer of consumers) {
    reply.map(4);
    reply.bulk("name");
    reply.bulk(consumer.name);
    reply.bulk("seen-time");
    reply.integer(consumer.seenMs);
    reply.bulk("pel-count");
    reply.integer(consumer.pending.size);
    reply.bulk("pending");
    const own = pending.filter((entry) => entry.consumer === consumer);
    const ownShown = count > 0 ? own.slice(0, count) : own;
    reply.array(ownShown.length);
    for (const entry of ownShown) {
      reply.array(3);
      reply.bulk(formatId(entry.id));
      reply.integer(entry.deliveredMs);
      reply.integer(entry.deliveries);
    }
  }
}

function xinfoGroups(x: Exec, argv: string[]): void {
  const stream = requireStream(x, argv[2]!);
  const groups = groupsByName(stream);
  x.reply.array(groups.length);
  for (const { name, group } of groups) {
    x.reply.map(6);
    x.reply.bulk("name");
    x.reply.bulk(name);
    x.reply.bulk("consumers");
    x.reply.integer(group.consumers.size);
    x.reply.bulk("pending");
    x.reply.integer(group.pendingCount);
    x.reply.bulk("last-delivered-id");
    x.reply.bulk(formatId(group.lastId));
    x.reply.bulk("entries-read");
    nullableInteger(x.reply, group.entriesRead);
    x.reply.bulk("lag");
    nullableInteger(x.reply, stream.lag(group));
  }
}

function xinfoConsumers(x: Exec, argv: string[]): void {
  const key = argv[2]!;
  const stream = requireStream(x, key);
  const group = stream.groups.get(argv[3]!);
  if (group === undefined) throw noGroup(`No such consumer group '${argv[3]}' for key name '${key}'`);
  const nowMs = x.engine.clock.nowMs();
  const consumers = byName(group.consumers.values());
  x.reply.array(consumers.length);
  for (const consumer of consumers) {
    x.reply.map(3);
    x.reply.bulk("name");
    x.reply.bulk(consumer.name);
    x.reply.bulk("pending");
    x.reply.integer(consumer.pending.size);
    x.reply.bulk("idle");
    x.reply.integer(Math.max(0, nowMs - consumer.seenMs));
  }
}

function xinfoHelp(x: Exec): void {
  helpReply(x, "XINFO", [
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
  ]);
}

export const infoCommandRunners = { xinfoStream, xinfoGroups, xinfoConsumers, xinfoHelp };
