/**
 * A hash's fields and their values (latin1 byte strings), in one of three forms, as Redis holds a
 * hash in a listpack until it outgrows it and in a hash table from then on, never moving back:
 * - packed (packed-fields.ts): one byte array, while the hash has at most smallFieldsMax fields
 *   and no field or value longer than packedItemBytesMax bytes (Redis's listpack value limit); this is
 *   what most small hashes are, at ~270 bytes for ten short fields instead of ~1.6 KB;
 * - a JavaScript Map, for a small hash that once held a longer field or value;
 * - a KeyTable (key-table.ts) keyed by field, with values of up to 64 bytes stored beside their
 *   fields, once it has more than smallFieldsMax fields. Why not a table from the start: see
 *   member-set.ts.
 * What Redis calls a listpack — packed here, or a table of at most 512 short fields (smallFieldsMax
 * says why) — is reported as one: OBJECT ENCODING, and HSCAN answering whole.
 *
 * Order: a packed or Map hash iterates in insertion order, which is the order Redis's listpack
 * hashes reply in; a large one in table order (Redis's hash tables are unordered too).
 */
import { encodingLimits } from "../compact.ts";
import { KeyTable } from "../key-table.ts";
import { mapBytes, objectBytes, sampledBytes, stringBytes, typedArrayBytes } from "../memory-sizes.ts";
import { entryAt, fieldAt, findField, nextEntry, packedEntries, valueAt, withoutEntry, withValue } from "./packed-fields.ts";
import { randomElement } from "../sample.ts";
import { allPackable, noShorts, packable, packedItemBytesMax, skipShort, withShorts } from "../short-strings.ts";

/**
 * Where a hash writes its values for a reply: bulk strings, and for a packed hash straight from its
 * bytes (the command layer's Reply is one). Declared here so a data structure needs nothing from
 * the layers above it.
 */
export interface ValueSink {
  bulk(value: string | null): void;
  bulkBytes(bytes: Uint8Array, from: number, to: number): void;
}

/**
 * Fields a hash keeps in its small forms; one more moves it into a table. Redis keeps a listpack
 * up to 512 (hash-max-listpack-entries), but a packed hash of hundreds of fields is searched field
 * by field: measured on 500 fields at -P 16, HGET and HSET ran 185k/s packed against 660k–1.08M/s in
 * a table (Redis's listpack: 290k/s). So the table takes over at 128, and what Redis would still
 * call a listpack is reported as one (compact) without being one.
 */
export const smallFieldsMax = 128;

export class FieldMap implements Iterable<[string, string]> {
  readonly kind = "hash";
  /** The packed form's entries (null once it has left that form) and how many there are. */
  private packed: Uint8Array | null = noShorts;
  private packedCount = 0;
  private small: Map<string, string> | null = null;
  private table: KeyTable<string> | null = null;
  /**
   * Redis would have moved this hash out of its listpack by now, for good: it has held a field
   * or value longer than hash-max-listpack-value, or more fields than hash-max-listpack-entries
   * (encodingLimits; 64 bytes and 512 unless CONFIG says otherwise).
   */
  private leftListpack = false;

  constructor(entries: Iterable<readonly [string, string]> = []) {
    for (const [field, value] of entries) this.set(field, value);
  }

  get size(): number {
    if (this.packed !== null) return this.packedCount;
    return this.small !== null ? this.small.size : this.table!.size;
  }

  /** Whether Redis would hold this hash in a listpack (OBJECT ENCODING, HSCAN answering whole). */
  get compact(): boolean {
    return !this.leftListpack;
  }

  /** Whether the fields are in a table. */
  get hashed(): boolean {
    return this.table !== null;
  }

  /**
   * The table of a large hash, which an append-only file rewrite reads in slot order and copies
   * to go on reading while the hash changes (collection-parts.ts); null while it is small.
   */
  get memberTable(): KeyTable<string> | null {
    return this.table;
  }

  has(field: string): boolean {
    if (this.packed !== null) return findField(this.packed, field) !== -1;
    return this.small !== null ? this.small.has(field) : this.table!.find(field) !== -1;
  }

  get(field: string): string | undefined {
    const packed = this.packed;
    if (packed !== null) {
      const at = findField(packed, field);
      return at === -1 ? undefined : valueAt(packed, at);
    }
    if (this.small !== null) return this.small.get(field);
    const ref = this.table!.find(field);
    return ref === -1 ? undefined : this.table!.valueOf(ref);
  }

  /**
   * Writes the field's value into `sink`, a null bulk string if the hash has no such field. A
   * packed hash writes the bytes it holds: no string is made, which in BullMQ's scripts (an HGET
   * or HMGET of a job on every call) was most of what reading a field cost.
   */
  writeValue(field: string, sink: ValueSink): void {
    const packed = this.packed;
    if (packed === null) return sink.bulk(this.get(field) ?? null);
    const at = findField(packed, field);
    if (at === -1) return sink.bulk(null);
    const value = skipShort(packed, at);
    sink.bulkBytes(packed, value + 1, skipShort(packed, value));
  }

  /**
   * Writes every field and its value into `sink`, as bulk strings, in the hash's order (HGETALL;
   * the caller writes the header). A packed hash writes its bytes, making no strings: HGETALL of
   * a BullMQ job (a dozen fields) made 24 strings and 12 pairs, ~2.4 µs, to copy bytes it held.
   */
  writeEntries(sink: ValueSink): void {
    const packed = this.packed;
    if (packed === null) {
      for (const [field, value] of this.small ?? this.entries()) {
        sink.bulk(field);
        sink.bulk(value);
      }
      return;
    }
    for (let at = 0; at < packed.length; ) {
      const value = skipShort(packed, at);
      sink.bulkBytes(packed, at + 1, value);
      at = skipShort(packed, value);
      sink.bulkBytes(packed, value + 1, at);
    }
  }

  /** Sets the field's value; returns whether the field was new. */
  set(field: string, value: string): boolean {
    const fits = packable(field) && packable(value);
    const limits = encodingLimits;
    if (field.length > limits.hashValueBytes || value.length > limits.hashValueBytes) this.leftListpack = true;
    const added = this.setInForm(field, value, fits);
    if (added && this.size > limits.hashEntries) this.leftListpack = true;
    return added;
  }

  /** set() in the hash's current form; `fits`: the field and value are short enough to pack. */
  private setInForm(field: string, value: string, fits: boolean): boolean {
    const packed = this.packed;
    if (packed !== null) {
      // Redis leaves the listpack before writing a field or value too long for it.
      if (!fits) this.unpack(packed);
      else {
        const at = findField(packed, field);
        if (at !== -1) {
          this.packed = withValue(packed, at, value);
          return false;
        }
        if (this.packedCount === smallFieldsMax) this.unpack(packed);
        else {
          this.packed = withShorts(packed, [field, value]);
          this.packedCount++;
          return true;
        }
      }
    }
    const small = this.small;
    if (small === null) return this.table!.set(field, value);
    const before = small.size;
    small.set(field, value);
    if (small.size === before) return false;
    if (small.size > smallFieldsMax) this.moveToTable(small);
    return true;
  }

  /**
   * HSET's fields and values, argv[from] on in pairs; returns how many fields were new. A hash
   * that stays packed takes its new fields in one new array, not one per field (HSET making an
   * object of twenty fields would leave nineteen arrays of garbage).
   */
  setPairs(argv: readonly string[], from: number): number {
    // Below the packing limit, a value CONFIG says is too long for a listpack is reported as such
    // though it is packed (set() sees to the rest).
    const limits = encodingLimits;
    if (limits.hashValueBytes < packedItemBytesMax)
      for (let i = from; i < argv.length; i++) if (argv[i]!.length > limits.hashValueBytes) this.leftListpack = true;
    let packed = this.packed;
    if (packed === null || !allPackable(argv, from)) {
      // A value too long to pack leaves the packed form for good: leave it before the first
      // pair, as Redis converts a listpack before writing, rather than pack the pairs before the
      // long one only to unpack them (a job's HSET with its data past 64 bytes, as BullMQ makes
      // one per job).
      if (packed !== null) this.unpack(packed);
      let added = 0;
      for (let i = from; i < argv.length; i += 2) if (this.set(argv[i]!, argv[i + 1]!)) added++;
      return added;
    }
    /** New fields and their values, flat, each field once (a later value wins, as in Redis). */
    const fresh: string[] = [];
    for (let i = from; i < argv.length; i += 2) {
      const field = argv[i]!;
      const at = findField(packed, field);
      if (at !== -1) {
        packed = withValue(packed, at, argv[i + 1]!);
        continue;
      }
      let j = 0;
      while (j < fresh.length && fresh[j] !== field) j += 2;
      if (j < fresh.length) fresh[j + 1] = argv[i + 1]!;
      else fresh.push(field, argv[i + 1]!);
    }
    this.packed = packed;
    const added = fresh.length / 2;
    if (this.packedCount + added <= smallFieldsMax) {
      if (added > 0) this.packed = withShorts(packed, fresh);
      this.packedCount += added;
      if (this.packedCount > limits.hashEntries) this.leftListpack = true;
    } else for (let j = 0; j < fresh.length; j += 2) this.set(fresh[j]!, fresh[j + 1]!);
    return added;
  }

  delete(field: string): boolean {
    const packed = this.packed;
    if (packed !== null) {
      const at = findField(packed, field);
      if (at === -1) return false;
      this.packed = withoutEntry(packed, at);
      this.packedCount--;
      return true;
    }
    return this.small !== null ? this.small.delete(field) : this.table!.delete(field);
  }

  /**
   * Estimated bytes of the hash (MEMORY USAGE): fields and values held as strings are sized from
   * the first `samples` (0: all).
   */
  memoryBytes(samples: number): number {
    const own = objectBytes(5);
    if (this.packed !== null) return own + typedArrayBytes(this.packed.byteLength);
    const small = this.small;
    if (small !== null) {
      return own + mapBytes(small.size) + sampledBytes(small, small.size, samples, ([f, v]) => stringBytes(f.length) + stringBytes(v.length));
    }
    return own + this.table!.memoryBytes(samples, (held) => stringBytes((held as string).length));
  }

  /** The fields, as a snapshot the caller may keep while the hash changes. */
  fields(): string[] {
    const packed = this.packed;
    if (packed !== null) {
      const out: string[] = [];
      for (let at = 0; at < packed.length; at = nextEntry(packed, at)) out.push(fieldAt(packed, at));
      return out;
    }
    return this.small !== null ? [...this.small.keys()] : this.table!.keys();
  }

  /** The values, in the order of fields(). */
  values(): string[] {
    const packed = this.packed;
    if (packed !== null) {
      const out: string[] = [];
      for (let at = 0; at < packed.length; at = nextEntry(packed, at)) out.push(valueAt(packed, at));
      return out;
    }
    if (this.small !== null) return [...this.small.values()];
    const table = this.table!;
    return table.keys().map((field) => table.valueOf(table.find(field)));
  }

  /** Field and value pairs, as a snapshot. */
  entries(): [string, string][] {
    if (this.packed !== null) return packedEntries(this.packed);
    if (this.small !== null) return [...this.small];
    const table = this.table!;
    return table.keys().map((field) => [field, table.valueOf(table.find(field))]);
  }

  [Symbol.iterator](): Iterator<[string, string]> {
    return this.small !== null ? this.small.entries() : this.entries()[Symbol.iterator]();
  }

  /** Brings into cache where the first `count` of `fields` are, in a large one's table (warm.ts). */
  warm(fields: readonly string[], count: number): void {
    this.table?.warm(fields, count);
  }

  /** One uniformly random field; the hash must not be empty. */
  randomField(): string {
    const packed = this.packed;
    if (packed !== null) return fieldAt(packed, entryAt(packed, Math.floor(Math.random() * this.packedCount)));
    if (this.small !== null) return randomElement(this.small.keys(), this.small.size);
    return this.table!.randomKey()!;
  }

  /**
   * A small hash: an iterator over its entries — a packed one's as they are now (HSCAN takes
   * them all at once, as Redis answers a listpack), a Map's live (valid while the hash changes,
   * which HSCAN's parked cursors rely on). A large one: null — scan it with scanStep.
   */
  iterator(): Iterator<[string, string]> | null {
    if (this.packed !== null) return packedEntries(this.packed)[Symbol.iterator]();
    return this.small !== null ? this.small.entries() : null;
  }

  /**
   * One step of a cursor walk over a large hash (see KeyTable.scanStep for the guarantee): adds
   * the fields of `cursor`'s slot to `out` and returns the next cursor, 0 when done.
   */
  scanStep(cursor: number, out: string[]): number {
    return this.table!.scanStep(cursor, out);
  }

  clone(): FieldMap {
    if (this.packed === null) {
      const copy = new FieldMap(this.entries());
      copy.leftListpack ||= this.leftListpack;
      return copy;
    }
    const copy = new FieldMap();
    copy.packed = this.packed.slice();
    copy.packedCount = this.packedCount;
    return copy;
  }

  /** Leaves the packed form for a Map, for good. */
  private unpack(packed: Uint8Array): void {
    this.small = new Map(packedEntries(packed));
    this.packed = null;
    this.packedCount = 0;
  }

  private moveToTable(small: Map<string, string>): void {
    const table = new KeyTable<string>();
    for (const [field, value] of small) table.set(field, value);
    this.table = table;
    this.small = null;
  }
}
