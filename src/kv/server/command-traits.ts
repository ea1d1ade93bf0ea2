/**
 * What the path every command takes asks of it — is it timed in a batch, do its reads count, may
 * a script call it, does it write — as bits worked out once per command when the dispatch table
 * is built (command-table.ts sets CommandShape.traits). Read from the flags on every call, those
 * were a few string compares each and a set lookup; with the statistics found by number
 * (CommandShape.statsIndex), a script's EXISTS went from 338–382 to 305–334 ns in process.
 */
import type { CommandSpec } from "../kit/spec.ts";
import { countsReads } from "../kit/lookup.ts";
import { timedInBatch } from "../observe/command-timing.ts";

/** Timed in a batch with its neighbours (command-timing.ts), not alone. */
export const traitTimedInBatch = 1;
/** Its key lookups count in keyspace_hits and keyspace_misses (lookup.ts). */
export const traitCountsReads = 2;
/** Flagged noscript: no script may call it. */
export const traitNoscript = 4;
/** Flagged write. */
export const traitWrite = 8;
/** Flagged denyoom: refused past maxmemory. */
export const traitDenyoom = 16;
/** One of Redis 7.0's may-replicate commands (mayReplicateCommands). */
export const traitMayReplicate = 32;

/**
 * The commands Redis 7.0 flags may_replicate: not writes, but they may make the server replicate
 * something, so a WRITE pause holds them and a read-only script may not call them. The flag is
 * Redis's own and COMMAND INFO does not show it, so it is kept here rather than among the
 * commands' flags. SCRIPT LOAD and FLUSH are not among them in 7.0, which replicates a script's
 * effects, not scripts.
 */
const mayReplicateCommands: ReadonlySet<string> = new Set(["eval", "evalsha", "fcall", "publish", "spublish", "pfcount"]);

/** The traits of `spec`: those the table worked out, or worked out now for a command outside it. */
export function traitsOf(spec: CommandSpec): number {
  return spec.traits ?? workOutTraits(spec);
}

/** The traits of `spec` from its flags and name. */
export function workOutTraits(spec: CommandSpec): number {
  const flags = spec.flags;
  return (
    (timedInBatch(spec) ? traitTimedInBatch : 0) |
    (countsReads(spec) ? traitCountsReads : 0) |
    (flags.includes("noscript") ? traitNoscript : 0) |
    (flags.includes("write") ? traitWrite : 0) |
    (flags.includes("denyoom") ? traitDenyoom : 0) |
    (mayReplicateCommands.has(spec.name) ? traitMayReplicate : 0)
  );
}
