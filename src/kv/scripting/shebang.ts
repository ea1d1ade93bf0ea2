/**
 * A script's shebang, Redis 7's way for a script to declare what it does: a first line
 * `#!lua flags=no-writes,allow-oom` (flags optional). A script with one is run by its flags, one
 * without (the older form) as Redis 6 ran it. Read here as Redis 7.0 reads it, with its errors.
 */
import { KvError } from "../text/errors.ts";

export interface ScriptFlags {
  /** The script declared its flags with a shebang. */
  declared: boolean;
  /** no-writes: the script may not write; EVAL_RO may run it (only it, of declared scripts). */
  noWrites: boolean;
  /** allow-oom: the script runs past maxmemory, and its commands may grow the data there. */
  allowOom: boolean;
}

/** How a script without a shebang runs: it may write, and is refused nothing up front. */
export const undeclared: ScriptFlags = { declared: false, noWrites: false, allowOom: false };

/** The flags Redis 7.0 knows; those past the first two mean nothing to a standalone server. */
const knownFlags = new Set(["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"]);

/** The flags `body` declares, or `undeclared` when it has no shebang; throws Redis's error for a bad one. */
export function shebangFlags(body: string): ScriptFlags {
  if (!body.startsWith("#!")) return undeclared;
  const end = body.indexOf("\n");
  if (end < 0) throw new KvError("ERR Invalid script shebang");
  const [engine, ...options] = body
    .slice(0, end)
    .split(" ")
    .filter((part) => part !== "");
  if (engine !== "#!lua") throw new KvError(`ERR Unexpected engine in script shebang: ${engine ?? "#!"}`);
  const flags = { declared: true, noWrites: false, allowOom: false };
  for (const option of options) {
    if (!option.startsWith("flags=")) throw new KvError(`ERR Unknown lua shebang option: ${option}`);
    for (const flag of option.slice("flags=".length).split(",")) {
      if (flag === "") continue;
      if (!knownFlags.has(flag)) throw new KvError(`ERR Unexpected flag in script shebang: ${flag}`);
      if (flag === "no-writes") flags.noWrites = true;
      if (flag === "allow-oom") flags.allowOom = true;
    }
  }
  return flags;
}

/**
 * The script as Lua compiles it: the shebang made a comment, so that Lua reads the rest and the
 * lines keep their numbers (an error on the second line still says line 2, as Redis's do).
 */
export function withoutShebang(body: string): string {
  return body.startsWith("#!") ? `--${body.slice(2)}` : body;
}
