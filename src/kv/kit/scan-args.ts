/**
 * The arguments and the answer the SCAN family shares (SCAN, HSCAN, SSCAN, ZSCAN): the cursor as
 * Redis reads it, MATCH / COUNT / TYPE, and the [cursor, items] reply.
 */
import { parseInteger } from "../text/args.ts";
import { KvError, syntaxError } from "../text/errors.ts";
import { replyStrings } from "./lookup.ts";
import type { Exec } from "./spec.ts";

/** A SCAN cursor as Redis reads it (strtoul): digits only, at most 2^64 - 1. */
const cursorMax = 2n ** 64n - 1n;

/**
 * A SCAN cursor, read the way Redis reads it (C's strtoul): an optional sign, decimal digits, and
 * nothing else; "-1" wraps to 2^64-1 and "" is 0. Any cursor we did not issue starts a fresh scan.
 */
export function parseCursor(text: string): number {
  const match = /^([+-]?)(\d*)$/.exec(text);
  if (match === null || (match[1] !== "" && match[2] === "")) throw new KvError("ERR invalid cursor");
  const magnitude = BigInt(match[2] || "0");
  if (magnitude > cursorMax) throw new KvError("ERR invalid cursor");
  return Number(match[1] === "-" ? (cursorMax + 1n - magnitude) & cursorMax : magnitude);
}

export interface ScanOptions {
  match: string | null;
  count: number;
  type: string | null;
}

/** MATCH, COUNT and (for SCAN) TYPE options, from argv[from]. */
export function parseScanOptions(argv: string[], from: number, allowType: boolean): ScanOptions {
  const options: ScanOptions = { match: null, count: 10, type: null };
  for (let i = from; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    const value = argv[i + 1];
    if (value === undefined) throw syntaxError();
    // "*" alone is no pattern, as in Redis: it passes every name, the empty one too.
    if (word === "MATCH") options.match = value === "*" ? null : value;
    else if (word === "COUNT") {
      options.count = parseInteger(value);
      if (options.count < 1) throw syntaxError();
    } else if (word === "TYPE" && allowType) options.type = value.toLowerCase();
    else throw syntaxError();
    i++;
  }
  return options;
}

/** Answers [cursor, items] — SCAN's shape, shared with HSCAN, SSCAN and ZSCAN. */
export function replyScan(x: Exec, cursor: number, items: readonly string[]): void {
  x.reply.array(2);
  x.reply.bulk(String(cursor));
  replyStrings(x, items);
}
