/**
 * One node of a stream: up to `stream-node-max-entries` entries, their fields and values packed
 * into one byte buffer, as Redis packs a node into a listpack.
 *
 * Why packed: held as a JS array of strings, an entry of two short fields took ~400 bytes (an
 * array, a string per field and value, the ID's text) and a million entries 387 MB, against
 * Redis's 32 bytes an entry. Packed, the fields and values are their bytes and a length each
 * (77 bytes an entry in all, with the IDs as numbers).
 *
 * An entry is written at `starts[slot]`: a varint count of field-value pairs, then each field and
 * value as a varint length and its bytes — or, when its field names are those of the node's first
 * entry (the usual case: a stream's entries share their names), a 0 and its values only, the
 * names being kept once per node (Redis's "master fields" do the same). A deleted entry's start
 * is -1; its bytes stay until the node goes, as a listpack's tombstones do.
 *
 * The IDs are kept beside, as numbers while they fit (node-ids.ts).
 */
import { grownBuffer, type Latin1Buffer, writeLatin1 } from "../../text/write-bytes.ts";
import { NodeIds } from "./node-ids.ts";
import { type IdBound, idBound, type StreamId } from "./stream-id.ts";

/** First size of a node's bytes and of its slot array; each doubles as needed. */
const initialBytes = 256;
const initialSlots = 8;
/** Bytes a varint of a length below 2^53 takes at most. */
const varintBytesMax = 8;
/** The header that says an entry has the node's first entry's field names. */
const sameFields = 0;

/** A slot of a node as DUMP and RESTORE see it: its ID, and its fields and values (null: deleted). */
export interface NodeSlot {
  id: StreamId;
  fields: readonly string[] | null;
}

/** An entry as commands read it: read in place, its fields decoded only when asked for. */
export class StreamEntry {
  private decoded: readonly string[] | null = null;
  private idValue: StreamId | null = null;

  constructor(
    private readonly node: StreamNode,
    private readonly slot: number,
  ) {}

  get id(): StreamId {
    return (this.idValue ??= this.node.ids.idAt(this.slot));
  }

  /** The ID as text (formatId). */
  get text(): string {
    return this.node.ids.textAt(this.slot);
  }

  /** Field, value, field, value, … */
  get fields(): readonly string[] {
    return (this.decoded ??= this.node.fieldsOf(this.slot));
  }

  /** Replies [id, [field, value, …]], the values copied from the node's bytes. */
  reply(reply: EntrySink): void {
    reply.array(2);
    reply.bulk(this.text);
    this.node.replyFields(reply, this.slot);
  }
}

/**
 * What an entry writes itself into: the reply's array and bulk strings, a value straight from the
 * node's bytes (the command layer's Reply is one). Declared here so a data structure needs nothing
 * from the layers above it.
 */
export interface EntrySink {
  array(length: number): void;
  bulk(text: string): void;
  bulkBytes(bytes: Latin1Buffer, from: number, to: number): void;
}

export class StreamNode {
  private starts: Int32Array;
  private bytes: Latin1Buffer;
  private used = 0;
  /**
   * The first entry's field names, which later entries with the same names do not repeat. Before
   * the first entry: the names of the node before, if any, which the new node shares when its
   * first entry has them too (one array for a stream's nodes, not one each).
   */
  private names: readonly string[] | null = null;
  live = 0;

  /**
   * `slots` and `bytes`: the room to start with. A stream's first node starts small (many streams
   * hold a few entries); one after a full node gets that node's size at once, rather than
   * doubling its way there.
   */
  constructor(
    slots = initialSlots,
    bytes = initialBytes,
    readonly ids = new NodeIds(slots),
  ) {
    this.starts = new Int32Array(slots);
    this.bytes = Buffer.allocUnsafe(bytes) as Latin1Buffer;
  }

  /** The node after `previous`: its size at once, and its field names to share. */
  static after(previous: StreamNode): StreamNode {
    const node = new StreamNode(previous.slots, previous.usedBytes + 1);
    node.names = previous.names;
    return node;
  }

  /** Bytes of entries it holds. */
  get usedBytes(): number {
    return this.used;
  }

  /** The field names of the node's first entry (Redis's master fields). */
  get masterNames(): readonly string[] {
    return this.names ?? [];
  }

  /** Each slot's ID, and its fields and values, null once deleted (DUMP writes the node as it is). */
  slotsView(): NodeSlot[] {
    return Array.from({ length: this.slots }, (_, slot) => ({ id: this.ids.idAt(slot), fields: this.entry(slot)?.fields ?? null }));
  }

  /** Slots, deleted ones included. */
  get slots(): number {
    return this.ids.count;
  }

  /** Adds an entry after the others; its ID is `id`, or `ms` and `seq` when given as numbers below 2^53. */
  push(id: StreamId | null, fields: readonly string[], ms = 0, seq = 0): void {
    const slot = this.ids.count;
    if (slot === this.starts.length) {
      const grown = new Int32Array(Math.max(initialSlots, this.starts.length * 2));
      grown.set(this.starts);
      this.starts = grown;
    }
    if (slot === 0 && (this.names === null || !hasNames(fields, this.names))) this.names = fields.filter((_, i) => i % 2 === 0);
    const names = this.names!;
    const shared = hasNames(fields, names);
    let needed = varintBytesMax;
    for (let i = shared ? 1 : 0; i < fields.length; i += shared ? 2 : 1) needed += varintBytesMax + fields[i]!.length;
    if (this.used + needed > this.bytes.length) this.bytes = grownBuffer(this.bytes, 0, this.used, this.used + needed);
    const bytes = this.bytes;
    let at = this.used;
    this.starts[slot] = at;
    at = writeVarint(bytes, at, shared ? sameFields : fields.length / 2);
    for (let i = shared ? 1 : 0; i < fields.length; i += shared ? 2 : 1) {
      const item = fields[i]!;
      at = writeLatin1(bytes, writeVarint(bytes, at, item.length), item);
    }
    this.used = at;
    if (id === null) this.ids.pushNumbers(ms, seq);
    else this.ids.push(id);
    this.live++;
  }

  /**
   * Whether the last slot is a deleted entry whose ID is at least `id`: after XSETID moved the
   * last ID back below it, an entry added here would break the slots' order (Stream.nodeWithRoom).
   */
  endsAbove(id: StreamId): boolean {
    const last = this.ids.count - 1;
    return last >= 0 && this.starts[last]! < 0 && this.ids.compare(last, id, idBound(id)) >= 0;
  }

  /** The entry in `slot`, or undefined when it was deleted. */
  entry(slot: number): StreamEntry | undefined {
    return this.starts[slot]! < 0 ? undefined : new StreamEntry(this, slot);
  }

  /** The fields and values of the (live) entry in `slot`, as strings. */
  fieldsOf(slot: number): string[] {
    const fields: string[] = [];
    this.eachItem(slot, (name, from, to) => fields.push(name ?? this.bytes.latin1Slice(from, to)));
    return fields;
  }

  /** Replies the (live) entry's fields and values as an array, values straight from the bytes. */
  replyFields(reply: EntrySink, slot: number): void {
    reply.array(this.itemCount(slot));
    this.eachItem(slot, (name, from, to) => (name === null ? reply.bulkBytes(this.bytes, from, to) : reply.bulk(name)));
  }

  private itemCount(slot: number): number {
    const [header] = readVarint(this.bytes, this.starts[slot]!);
    return header === sameFields ? this.names!.length * 2 : header * 2;
  }

  /** Calls `each` for every field and value of the entry in order: a shared name as itself, else its bytes' range. */
  private eachItem(slot: number, each: (name: string | null, from: number, to: number) => void): void {
    const bytes = this.bytes;
    const [header, first] = readVarint(bytes, this.starts[slot]!);
    const names = header === sameFields ? this.names! : null;
    const items = names !== null ? names.length * 2 : header * 2;
    let at = first;
    for (let i = 0; i < items; i++) {
      if (names !== null && i % 2 === 0) {
        each(names[i / 2]!, 0, 0);
        continue;
      }
      const [length, from] = readVarint(bytes, at);
      at = from + length;
      each(null, from, at);
    }
  }

  /** Deletes the entry in `slot`; false when it already was. */
  deleteSlot(slot: number): boolean {
    if (this.starts[slot]! < 0) return false;
    this.starts[slot] = -1;
    this.live--;
    return true;
  }

  /** The index of the first slot whose ID is ≥ id (or > id when `after`). */
  lowerBound(id: StreamId, after: boolean, bound: IdBound = idBound(id)): number {
    let lo = 0;
    let hi = this.ids.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const order = this.ids.compare(mid, id, bound);
      if (order < 0 || (after && order === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Gives back the room kept for more entries: the node is full, and only loses entries now. */
  compact(): void {
    if (this.used === this.bytes.length) return;
    this.bytes = Buffer.from(this.bytes.subarray(0, this.used)) as Latin1Buffer;
    this.starts = this.starts.slice(0, this.ids.count);
    this.ids.compact();
  }

  memoryBytes(): number {
    return 96 + this.bytes.length + this.starts.byteLength + this.ids.memoryBytes();
  }

  copy(): StreamNode {
    const node = new StreamNode(1, 1, this.ids.copy());
    node.starts = this.starts.slice();
    node.bytes = Buffer.from(this.bytes.subarray(0, Math.max(this.used, 1))) as Latin1Buffer;
    node.used = this.used;
    node.names = this.names;
    node.live = this.live;
    return node;
  }
}

/** Whether the field names of `fields` (field, value, …) are `names`, in order. */
export function hasNames(fields: readonly string[], names: readonly string[]): boolean {
  if (fields.length !== names.length * 2) return false;
  for (let i = 0; i < names.length; i++) if (fields[2 * i] !== names[i]) return false;
  return true;
}

/** Writes `n` (below 2^53) as a little-endian base-128 varint at `at`; returns where it ends. */
function writeVarint(bytes: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    bytes[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  bytes[at++] = n;
  return at;
}

/** The varint at `at`, and where it ends. */
function readVarint(bytes: Uint8Array, at: number): [number, number] {
  let n = 0;
  let scale = 1;
  for (;;) {
    const byte = bytes[at++]!;
    n += (byte & 0x7f) * scale;
    if (byte < 0x80) return [n, at];
    scale *= 0x80;
  }
}
