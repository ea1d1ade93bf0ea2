/**
 * The fewest commands that rebuild one key: what an append-only file rewrite writes for it. A
 * string is one SET, which the buffer gathers with the SETs around it into an MSET
 * (CommandBuffer.pushSetText), or, with a time to live, one `SET key value PXAT <unix ms>`
 * (Redis writes a SET and a PEXPIREAT); a collection or a Bloom filter goes out through its parts
 * writer (collection-parts.ts), here in one go, then PEXPIREAT if it expires.
 */
import { typeOf, type Value } from "../types/value.ts";
import { collectionParts } from "./collection-parts.ts";
import type { CommandBuffer } from "./command-buffer.ts";

/** Appends to `out` the commands that recreate `key` holding `value`, expiring at `expiresAtMs` if given. */
export function writeValueCommands(out: CommandBuffer, key: string, value: Value, expiresAtMs: number | undefined): void {
  const type = typeOf(value);
  if (type === "string") {
    if (expiresAtMs === undefined) out.pushSetText(key, value.toString());
    else out.push(["SET", key, value.toString(), "PXAT", String(expiresAtMs)]);
    return;
  }
  const parts = collectionParts(key, value);
  if (parts === null) throw new Error(`an append-only file rewrite cannot write a ${type} value yet`);
  parts.write(out, Infinity);
  if (expiresAtMs !== undefined) out.push(["PEXPIREAT", key, String(expiresAtMs)]);
}
