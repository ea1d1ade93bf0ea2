/**
 * A stream as an append-only file rewrite writes it: an XADD per entry, then XSETID with the last
 * ID and the counters, then each group (XGROUP CREATE at its last ID and read count), each of its
 * pending entries as the XCLAIM … FORCE JUSTID that recreates it with its owner, delivery time and
 * count, and XGROUP CREATECONSUMER for consumers holding nothing — the commands Redis's own
 * rewrite writes. An empty stream is made by `XADD key MAXLEN 0 0-1 x y`, as Redis makes it,
 * before XSETID sets its real last ID.
 *
 * The commands are made when the rewrite reaches the stream, so the parts hold still whatever
 * happens to the stream after: freeze has nothing more to copy.
 */
import type { CollectionParts } from "./collection-parts.ts";
import type { CommandBuffer } from "./command-buffer.ts";
import type { Stream } from "../types/stream/stream.ts";
import { claimCommand, createConsumerCommand, createGroupCommand } from "../types/stream/group-records.ts";
import { formatId, streamIdMax, streamIdMin } from "../types/stream/stream-id.ts";

export class StreamParts implements CollectionParts {
  private readonly commands: string[][] = [];
  private next = 0;

  constructor(key: string, stream: Stream) {
    const commands = this.commands;
    for (const entry of stream.range(streamIdMin, streamIdMax)) commands.push(["XADD", key, entry.text, ...entry.fields]);
    if (stream.length === 0) commands.push(["XADD", key, "MAXLEN", "0", "0-1", "x", "y"]);
    commands.push(["XSETID", key, formatId(stream.lastId), "ENTRIESADDED", String(stream.entriesAdded), "MAXDELETEDID", formatId(stream.maxDeletedId)]);
    for (const [name, group] of stream.groups) {
      commands.push(createGroupCommand(key, name, group));
      for (const pending of group.pendingRange(streamIdMin, streamIdMax)) commands.push(claimCommand(key, name, group, pending, pending.consumer.name));
      for (const consumer of group.consumers.values()) {
        if (consumer.pending.size === 0) commands.push(createConsumerCommand(key, name, consumer.name));
      }
    }
  }

  /** Items of a stream, for the rewrite's steps: one per command. */
  get size(): number {
    return this.commands.length;
  }

  write(out: CommandBuffer, maxItems: number): boolean {
    const end = Math.min(this.commands.length, this.next + maxItems);
    for (; this.next < end; this.next++) out.push(this.commands[this.next]!);
    return end === this.commands.length;
  }

  freeze(): CollectionParts {
    return this;
  }
}
