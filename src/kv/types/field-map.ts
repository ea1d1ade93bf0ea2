/**
 * A hash's fields and their values (latin1 byte strings). A small hash is a JavaScript Map; once
 * it has more than smallFieldsMax fields it moves, for good, into a KeyTable (key-table.ts) keyed
 * by field, with values of up to 64 bytes stored beside their fields — as Redis moves a hash from
 * its listpack to a hash table and never back. Why two forms: see member-set.ts.
 *
 * Order: a small hash iterates in insertion order, which is the order Redis's listpack hashes
 * reply in; a large one in table order (Redis's hash tables are unordered too).
 */
import { KeyTable } from "../key-table.ts";
import { randomElement } from "./sample.ts";

/** Fields a hash keeps in its small form; one more moves it into a table (Redis's listpack limit). */
export const smallFieldsMax = 128;

export class FieldMap implements Iterable<[string, string]> {
  readonly kind = "hash";
  private small: Map<string, string> | null = new Map();
  private table: KeyTable<string> | null = null;

  constructor(entries: Iterable<readonly [string, string]> = []) {
    for (const [field, value] of entries) this.set(field, value);
  }

  get size(): number {
    return this.small !== null ? this.small.size : this.table!.size;
  }

  /** Whether the fields are in a table: Redis's "hashtable" encoding. */
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
    return this.small !== null ? this.small.has(field) : this.table!.find(field) !== -1;
  }

  get(field: string): string | undefined {
    if (this.small !== null) return this.small.get(field);
    const ref = this.table!.find(field);
    return ref === -1 ? undefined : this.table!.valueOf(ref);
  }

  /** Sets the field's value; returns whether the field was new. */
  set(field: string, value: string): boolean {
    const small = this.small;
    if (small === null) return this.table!.set(field, value);
    const before = small.size;
    small.set(field, value);
    if (small.size === before) return false;
    if (small.size > smallFieldsMax) this.moveToTable(small);
    return true;
  }

  delete(field: string): boolean {
    return this.small !== null ? this.small.delete(field) : this.table!.delete(field);
  }

  /** The fields, as a snapshot the caller may keep while the hash changes. */
  fields(): string[] {
    return this.small !== null ? [...this.small.keys()] : this.table!.keys();
  }

  /** The values, in the order of fields(). */
  values(): string[] {
    if (this.small !== null) return [...this.small.values()];
    const table = this.table!;
    return table.keys().map((field) => table.valueOf(table.find(field)));
  }

  /** Field and value pairs, as a snapshot. */
  entries(): [string, string][] {
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
    if (this.small !== null) return randomElement(this.small.keys(), this.small.size);
    return this.table!.randomKey()!;
  }

  /**
   * A small hash: a live iterator over its entries (valid while the hash changes, which HSCAN's
   * parked cursors rely on). A large one: null — scan it with scanStep.
   */
  iterator(): Iterator<[string, string]> | null {
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
    return new FieldMap(this.entries());
  }

  private moveToTable(small: Map<string, string>): void {
    const table = new KeyTable<string>();
    for (const [field, value] of small) table.set(field, value);
    this.table = table;
    this.small = null;
  }
}
