/**
 * A stream in RDB format, for DUMP and RESTORE: Redis 7.0's RDB_TYPE_STREAM_LISTPACKS_2, which
 * redis-server 7.0 and later RESTORE; RESTORE also reads Redis 5–6's and 7.2's forms.
 *
 * The value is its nodes — each the 16-byte big-endian ID of its first entry and a listpack —
 * then the length, the last ID, the first ID, the largest deleted ID and the count of entries
 * ever added, then each consumer group: its name, last ID and read count, its pending entries
 * (16-byte ID, delivery time, delivery count) and its consumers (name, seen time, and the IDs of
 * their pending entries).
 *
 * A node's listpack begins with its "master entry" — live count, deleted count, the field names of
 * its first entry, and 0 — and then holds each entry as: flags, its ID as ms and seq differences
 * from the first entry's, its fields and values (only values, flagged, when the names are the
 * master's), and the count of elements it took. A deleted entry keeps its place, flagged.
 */
import { ListpackWriter } from "./listpack-writer.ts";
import { listpackEntries } from "./packed-lists.ts";
import { BadRdbData, type RdbCursor } from "./rdb-cursor.ts";
import type { RdbOutput } from "./rdb-output.ts";
import { rdbType } from "./value-types.ts";
import { ConsumerGroup } from "../types/stream/consumer-group.ts";
import { Stream } from "../types/stream/stream.ts";
import { hasNames, type NodeSlot } from "../types/stream/stream-node.ts";
import { makeId, msOf, seqOf, type StreamId, streamIdMax, streamIdMin } from "../types/stream/stream-id.ts";

const flagDeleted = 1;
const flagSameFields = 2;
/** A group's read count Redis writes when it is not known (SCG_INVALID_ENTRIES_READ as unsigned). */
const unknownEntriesRead = 2n ** 64n - 1n;

const bad = (): never => {
  throw new BadRdbData();
};

// ---- writing --------------------------------------------------------------------------------------

export function writeStream(out: RdbOutput, stream: Stream): void {
  out.byte(rdbType.streamListpacks2);
  const nodes = stream.nodesView();
  out.lengthOf(nodes.length);
  for (const { names, slots } of nodes) {
    out.rawString(idBytes(slots[0]!.id));
    out.rawString(nodeListpack(names, slots));
  }
  out.lengthOf(stream.length);
  writeId(out, stream.lastId);
  writeId(out, stream.edgeId(true) ?? streamIdMin);
  writeId(out, stream.maxDeletedId);
  out.bigLength(stream.entriesAdded);
  out.lengthOf(stream.groups.size);
  for (const [name, group] of stream.groups) {
    out.string(name);
    writeId(out, group.lastId);
    out.bigLength(group.entriesRead ?? unknownEntriesRead);
    const pending = [...group.pendingRange(streamIdMin, streamIdMax)];
    out.lengthOf(pending.length);
    for (const entry of pending) {
      out.raw(idBytes(entry.id));
      out.millisecondTime(entry.deliveredMs);
      out.bigLength(entry.deliveries);
    }
    out.lengthOf(group.consumers.size);
    for (const consumer of group.consumers.values()) {
      out.string(consumer.name);
      out.millisecondTime(consumer.seenMs);
      const ids = [...consumer.pending].sort((a, b) => (a < b ? -1 : 1));
      out.lengthOf(ids.length);
      for (const id of ids) out.raw(idBytes(id));
    }
  }
}

function writeId(out: RdbOutput, id: StreamId): void {
  out.bigLength(msOf(id));
  out.bigLength(seqOf(id));
}

/** An ID as Redis keys its radix trees: ms then seq, each 8 bytes big-endian. */
function idBytes(id: StreamId): Uint8Array {
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, msOf(id));
  view.setBigUint64(8, seqOf(id));
  return bytes;
}

function nodeListpack(names: readonly string[], slots: readonly NodeSlot[]): Uint8Array {
  const lp = new ListpackWriter();
  const live = slots.filter((slot) => slot.fields !== null).length;
  lp.integer(live);
  lp.integer(slots.length - live);
  lp.integer(names.length);
  for (const name of names) lp.string(name);
  lp.integer(0);
  const master = slots[0]!.id;
  for (const { id, fields } of slots) {
    // A deleted entry's values are gone here: it is written with the master's names and empty values.
    const items = fields ?? names.flatMap((name) => [name, ""]);
    const same = hasNames(items, names);
    lp.integer((fields === null ? flagDeleted : 0) | (same ? flagSameFields : 0));
    lp.integer(BigInt.asIntN(64, msOf(id) - msOf(master)));
    lp.integer(BigInt.asIntN(64, seqOf(id) - seqOf(master)));
    if (!same) lp.integer(items.length / 2);
    for (let i = same ? 1 : 0; i < items.length; i += same ? 2 : 1) lp.string(items[i]!);
    lp.integer(same ? 3 + items.length / 2 : 4 + items.length);
  }
  return lp.finish();
}

// ---- reading --------------------------------------------------------------------------------------

/** The stream of an RDB stream value of `type` (15, 19 or 21); throws BadRdbData when malformed. */
export function readStream(c: RdbCursor, type: number): Stream {
  const stream = new Stream();
  for (let nodes = c.length(); nodes > 0; nodes--) {
    const key = c.stringBytes();
    if (key.length !== 16) bad();
    const view = new DataView(key.buffer, key.byteOffset, 16);
    const master = makeId(view.getBigUint64(0), view.getBigUint64(8));
    const { names, slots } = readNode(listpackEntries(c.stringBytes()) ?? bad(), master);
    if (slots.length === 0) bad();
    stream.restoreNode(names, slots);
  }
  if (BigInt(stream.length) !== c.bigLength()) bad();
  stream.lastId = readId(c);
  if (type !== rdbType.streamListpacks) {
    readId(c); // the first ID, which svc works out from the entries
    stream.maxDeletedId = readId(c);
    stream.entriesAdded = c.bigLength();
  } else stream.entriesAdded = BigInt(stream.length);
  const last = stream.edgeId(false);
  if (last !== undefined && last > stream.lastId) bad();
  for (let groups = c.length(); groups > 0; groups--) {
    const name = c.string();
    const lastId = readId(c);
    // Redis before 7.0 kept no count: it is estimated from where the group is, as Redis 7.0
    // estimates it when it loads such a value (a group at the first entry has read one).
    let entriesRead = stream.entriesReadAt(lastId);
    if (type !== rdbType.streamListpacks) {
      const n = c.bigLength();
      entriesRead = n === unknownEntriesRead ? null : n;
    }
    if (stream.groups.has(name)) bad();
    const group = new ConsumerGroup(lastId, entriesRead);
    stream.groups.set(name, group);
    const pending = new Map<StreamId, { deliveredMs: number; deliveries: bigint }>();
    for (let n = c.length(); n > 0; n--) {
      const id = rawId(c);
      if (pending.has(id)) bad();
      pending.set(id, { deliveredMs: c.millisecondTime(), deliveries: c.bigLength() });
    }
    for (let consumers = c.length(); consumers > 0; consumers--) {
      const consumerName = c.string();
      const seenMs = c.millisecondTime();
      if (type === rdbType.streamListpacks3) c.millisecondTime(); // 7.2's active time
      if (group.consumers.has(consumerName)) bad();
      const { consumer } = group.consumer(consumerName, seenMs);
      for (let n = c.length(); n > 0; n--) {
        const id = rawId(c);
        const nack = pending.get(id) ?? bad();
        pending.delete(id);
        group.deliver(id, consumer, nack.deliveredMs, false).deliveries = nack.deliveries;
      }
    }
    // Every pending entry has an owner.
    if (pending.size > 0) bad();
  }
  return stream;
}

function readId(c: RdbCursor): StreamId {
  const ms = c.bigLength();
  const seq = c.bigLength();
  return ms >= 2n ** 64n || seq >= 2n ** 64n ? bad() : makeId(ms, seq);
}

function rawId(c: RdbCursor): StreamId {
  const bytes = c.take(16);
  const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
  return makeId(view.getBigUint64(0), view.getBigUint64(8));
}

/** A node's listpack elements as its master field names and its slots, checked as they are read. */
function readNode(items: string[], master: StreamId): { names: string[]; slots: NodeSlot[] } {
  let at = 0;
  const next = (): string => (at < items.length ? items[at++]! : bad());
  const integer = (): bigint => {
    const text = next();
    return /^-?\d+$/.test(text) ? BigInt(text) : bad();
  };
  const live = integer();
  const deleted = integer();
  const nameCount = Number(integer());
  if (nameCount < 1) bad();
  const names = Array.from({ length: nameCount }, next);
  if (integer() !== 0n) bad();
  const slots: NodeSlot[] = [];
  let liveSeen = 0n;
  // Live entries ascend; a deleted one may be above those after it (Stream.restoreNode).
  let previousLive = -1n;
  while (at < items.length) {
    const flags = Number(integer());
    const id = makeId(BigInt.asUintN(64, msOf(master) + integer()), BigInt.asUintN(64, seqOf(master) + integer()));
    const same = (flags & flagSameFields) !== 0;
    const pairs = same ? nameCount : Number(integer());
    if (pairs < 1) bad();
    const fields: string[] = [];
    for (let i = 0; i < pairs; i++) {
      fields.push(same ? names[i]! : next());
      fields.push(next());
    }
    if (integer() !== BigInt(same ? 3 + pairs : 4 + 2 * pairs)) bad();
    const isDeleted = (flags & flagDeleted) !== 0;
    if (!isDeleted) {
      if (id <= previousLive) bad();
      previousLive = id;
      liveSeen++;
    }
    slots.push({ id, fields: isDeleted ? null : fields });
  }
  if (liveSeen !== live || BigInt(slots.length) - liveSeen !== deleted) bad();
  return { names, slots };
}
