/**
 * A Reply that builds the JSON value of one command's answer, for the REST API. The engine calls
 * the same writers it calls for RESP; this collector nests them by their announced lengths.
 *
 * How replies map to JSON (docs/kv-rest.md has the table):
 * - status and bulk strings → strings (bytes that are not UTF-8 → `{"base64": ...}`, bytes-json.ts);
 * - integers → numbers, except outside ±(2^53−1), where a JSON number would be rounded by most
 *   parsers: there the decimal digits as a string;
 * - null bulk and null array → null; arrays, sets and pushes → arrays;
 * - maps → objects in protocol 3 (when every key is a distinct string; otherwise a flat
 *   key, value, … array), flat arrays in protocol 2, as RESP2 sends them;
 * - doubles → numbers in protocol 3 ("inf", "-inf", "nan" as strings: JSON has no such numbers),
 *   the RESP2 text in protocol 2;
 * - booleans (a script's, in RESP3) → JSON booleans in protocol 3, 1 and 0 in protocol 2; big
 *   numbers → their digits as a string;
 * - an error nested in an array (EXEC-style) → `{"error": message}`; the command's own error is
 *   kept apart, for the HTTP status.
 */
import { assert } from "../../core/assert.ts";
import type { Reply } from "../kit/reply.ts";
import { formatDouble } from "../text/format-double.ts";
import { latin1Text } from "../types/string/bytes.ts";
import { bytesToJson, bytesToText } from "./bytes-json.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Open {
  items: Json[];
  left: number;
  /** Becomes an object when it closes (a protocol-3 map). */
  map: boolean;
}

export class JsonReply implements Reply {
  private readonly open: Open[] = [];
  private value: Json = null;
  /** The command's error reply, if it answered with one. */
  failure: string | null = null;
  /** Whether a whole reply has been written. */
  done = false;
  /** Told of every error reply, nested ones too (the server's error statistics). */
  onError: ((message: string) => void) | null = null;

  constructor(public protocol: 2 | 3) {}

  /** The reply, once done. */
  get result(): Json {
    assert(this.done, "JsonReply.result read before the reply was complete");
    return this.value;
  }

  private add(value: Json): void {
    const top = this.open.at(-1);
    if (top === undefined) {
      // Only connection-state commands (SUBSCRIBE of several channels) answer more than once,
      // and /cmd refuses them; the first reply is the answer.
      if (this.done) return;
      this.value = value;
      this.done = true;
      return;
    }
    top.items.push(value);
    if (--top.left > 0) return;
    this.open.pop();
    this.add(top.map ? mapValue(top.items) : top.items);
  }

  private container(length: number, map: boolean): void {
    if (length === 0) this.add(map ? {} : []);
    else this.open.push({ items: [], left: length, map });
  }

  simple(text: string): void {
    this.add(bytesToText(text));
  }

  error(message: string, counted = false): void {
    if (!counted) this.onError?.(message);
    const text = bytesToText(message);
    if (this.open.length === 0) {
      if (this.done) return;
      this.failure = text;
      this.done = true;
    } else this.add({ error: text });
  }

  integer(n: number | bigint): void {
    const safe = typeof n === "number" ? Number.isSafeInteger(n) : n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER);
    this.add(safe ? Number(n) : String(n));
  }

  bulkBytes(bytes: Uint8Array, from: number, to: number): void {
    this.bulk(latin1Text(bytes, from, to));
  }

  bulk(value: string | null): void {
    this.add(value === null ? null : bytesToJson(value));
  }

  array(length: number | null): void {
    if (length === null) this.add(null);
    else this.container(length, false);
  }

  map(pairs: number): void {
    this.container(pairs * 2, this.protocol === 3);
  }

  set(count: number): void {
    this.container(count, false);
  }

  double(n: number, text?: string): void {
    if (this.protocol === 2) this.add(text ?? formatDouble(n));
    else this.add(Number.isFinite(n) ? n : Number.isNaN(n) ? "nan" : n > 0 ? "inf" : "-inf");
  }

  push(count: number): void {
    this.container(count, false);
  }

  verbatim(text: string): void {
    this.add(bytesToText(text));
  }

  boolean(value: boolean): void {
    this.add(this.protocol === 3 ? value : value ? 1 : 0);
  }

  bigNumber(digits: string): void {
    this.add(bytesToText(digits));
  }
}

/** A map's flat key, value list as an object, or left flat when a key cannot be an object key. */
function mapValue(items: Json[]): Json {
  const entries: [string, Json][] = [];
  const seen = new Set<string>();
  for (let i = 0; i < items.length; i += 2) {
    const key = items[i]!;
    const name = typeof key === "number" ? String(key) : key;
    if (typeof name !== "string" || seen.has(name)) return items;
    seen.add(name);
    entries.push([name, items[i + 1]!]);
  }
  // fromEntries defines own properties, so a key such as "__proto__" is data, not a prototype.
  return Object.fromEntries(entries);
}
