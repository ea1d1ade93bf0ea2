/**
 * One node of a stream: up to `stream-node-max-entries` entries, their fields and values packed
 * into one byte buffer, as Redis packs a node into a listpack.
 *
 * Why packed: held as a JS array of strings, an entry of two short fields took ~400 bytes (an
 * array, a string per field and value, the ID's text) and a million entries 387 MB, against
 * Redis's 32 bytes an entry. Packed, the fields and values are their bytes and a length each.
 *
 * An entry is written at `starts[slot]`: a varint count of field-value pairs, then each field and
 * value as a varint length and its bytes — or, when its field names are those of the node's first
 * entry (the usual case: a stream's entries share their names), a 0 and its values only, the
 * names being kept once per node (Redis's "master fields" do the same). A deleted entry's start
 * is -1; its bytes stay until the node goes, as a listpack's tombstones do.
 *
 * IDs stay bigints, one per entry, ascending (stream-id.ts).
 */
import { grownBuffer, type Latin1Buffer, writeLatin1 } from "../../resp/write-bytes.ts";
import { formatId, type StreamId } from "./stream-id.ts";

/** First size of a node's bytes and of its slot array; each doubles as needed. */
const initialBytes = 256;
const initialSlots = 8;
/** Bytes a varint of a length below 2^53 takes at most. */
const varintBytesMax = 8;
/** The header that says an entry has the node's first entry's field names. */
const sameFields = 0;

/** An entry as commands read it. */
export interface StreamEntry {
  id: StreamId;
  /** Field, value, field, value, … */
  fields: readonly string[];
  /** The ID as text (formatId). */
  text: string;
}

export class StreamNode {
  readonly ids: StreamId[] = [];
  private starts = new Int32Array(initialSlots);
  private bytes = Buffer.allocUnsafe(initialBytes) as Latin1Buffer;
  private used = 0;
  /** The first entry's field names, which later entries with the same names do not repeat. */
  private names: string[] | null = null;
  live = 0;

  /** Slots, deleted ones included. */
  get slots(): number {
    return this.ids.length;
  }

  isLive(slot: number): boolean {
    return this.starts[slot]! >= 0;
  }

  /** Adds an entry after the others. */
  push(id: StreamId, fields: readonly string[]): void {
    const slot = this.ids.length;
    if (slot === this.starts.length) {
      const grown = new Int32Array(Math.max(initialSlots, this.starts.length * 2));
      grown.set(this.starts);
      this.starts = grown;
    }
    const names = this.names ?? (this.names = fields.filter((_, i) => i % 2 === 0));
    const shared = names.length * 2 === fields.length && names.every((name, i) => fields[2 * i] === name);
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
    this.ids.push(id);
    this.live++;
  }

  /** The entry in `slot`, or undefined when it was deleted. */
  entry(slot: number): StreamEntry | undefined {
    const start = this.starts[slot]!;
    if (start < 0) return undefined;
    const bytes = this.bytes;
    let at = start;
    const [header, next] = readVarint(bytes, at);
    at = next;
    const names = header === sameFields ? this.names! : null;
    const fields: string[] = new Array(names !== null ? names.length * 2 : header * 2);
    for (let i = 0; i < fields.length; i++) {
      if (names !== null && i % 2 === 0) {
        fields[i] = names[i / 2]!;
        continue;
      }
      const [length, from] = readVarint(bytes, at);
      fields[i] = bytes.latin1Slice(from, from + length);
      at = from + length;
    }
    const id = this.ids[slot]!;
    return { id, fields, text: formatId(id) };
  }

  /** Deletes the entry in `slot`; false when it already was. */
  deleteSlot(slot: number): boolean {
    if (this.starts[slot]! < 0) return false;
    this.starts[slot] = -1;
    this.live--;
    return true;
  }

  /** The index of the first slot whose ID is ≥ id (or > id when `after`). */
  lowerBound(id: StreamId, after: boolean): number {
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const here = this.ids[mid]!;
      if (here < id || (after && here === id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Gives back the room kept for more entries: the node is full, and only loses entries now. */
  compact(): void {
    if (this.used === this.bytes.length) return;
    this.bytes = Buffer.from(this.bytes.subarray(0, this.used)) as Latin1Buffer;
    this.starts = this.starts.slice(0, this.ids.length);
  }

  memoryBytes(): number {
    // A 128-bit bigint is a heap cell of ~32 bytes, plus its slot in the array.
    return 96 + this.bytes.length + this.starts.byteLength + this.ids.length * 40;
  }

  copy(): StreamNode {
    const node = new StreamNode();
    node.ids.push(...this.ids);
    node.starts = this.starts.slice();
    node.bytes = Buffer.from(this.bytes.subarray(0, Math.max(this.used, 1))) as Latin1Buffer;
    node.used = this.used;
    node.names = this.names;
    node.live = this.live;
    return node;
  }
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
