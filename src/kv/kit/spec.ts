/**
 * Commands are declared once, as data — name, arity, flags, key positions — plus the function
 * that runs them. The dispatch table (table.ts) is built from these declarations, and COMMAND
 * INFO/DOCS answer from them, so adding a command is one declaration and one function.
 */
import { digitsFrom } from "../text/args.ts";
import type { Engine } from "../server/engine.ts";
import type { Keyspace } from "../keyspace/keyspace.ts";
import type { Reply } from "./reply.ts";
import type { Session } from "../server/session.ts";

export type CommandFlag =
  | "write"
  | "readonly"
  | "denyoom"
  | "admin"
  | "pubsub"
  | "noscript"
  | "blocking"
  | "loading"
  | "stale"
  | "fast"
  | "no_multi"
  | "allow_busy"
  | "movablekeys"
  | "no_auth"
  | "skip_slowlog"
  | "no_async_loading"
  | "skip_monitor"
  | "no_mandatory_keys";

/** A container's HELP subcommand: only text, allowed while loading and on a stale replica. */
export const helpFlags: readonly CommandFlag[] = ["loading", "stale"];

/** Redis's command groups, as COMMAND DOCS reports them. */
export type CommandGroup =
  | "generic"
  | "string"
  | "list"
  | "hash"
  | "set"
  | "sorted_set"
  | "hyperloglog"
  | "geo"
  | "bitmap"
  | "stream"
  | "connection"
  | "server"
  | "transactions"
  | "pubsub"
  | "cluster"
  | "module"
  | "scripting";

/** What a running command sees. */
export interface Exec {
  readonly engine: Engine;
  readonly session: Session;
  readonly reply: Reply;
  /** The session's selected database. */
  readonly db: Keyspace;
  /**
   * Monotonic ms when the command started: the time its reads are recorded at (OBJECT IDLETIME),
   * read once per command as Redis snapshots its clock per command.
   */
  readonly timeMs: number;
  /**
   * Whether the command's key reads count as keyspace hits and misses (INFO stats): as in Redis,
   * whose read lookups count and whose write lookups do not (lookup.ts, countsReads).
   */
  readonly countsReads: boolean;
  /**
   * What the append-only file records for this command if it changed data; null records argv as
   * sent. Commands whose replay would differ — relative expiry times, random picks, blocking —
   * set the deterministic commands that have the same effect (Redis's command rewriting).
   */
  propagate: string[][] | null;
  /**
   * Set by a command that failed without throwing (EVAL passing on its script's error reply),
   * so that it counts as failed in INFO commandstats all the same.
   */
  failed: boolean;
}

export interface CommandSpec {
  /** Lower case; a subcommand is "container|sub" (e.g. "client|setname"). */
  name: string;
  /** Redis's convention: N means exactly N arguments counting the name, -N at least N. */
  arity: number;
  flags: readonly CommandFlag[];
  group: CommandGroup;
  summary: string;
  /** Key positions in argv: first, last (negative counts from the end), step. 0,0,0 = no keys. */
  keys?: readonly [first: number, last: number, step: number];
  /**
   * For a command whose keys move with its arguments (flagged "movablekeys": a count of keys, a
   * STORE option): every key argv names, or null when argv does not say (a bad count).
   */
  movableKeys?(argv: readonly string[]): string[] | null;
  /** Runs the command; argv[0] is the command name as the client sent it. */
  run?(x: Exec, argv: string[]): void;
  subcommands?: readonly CommandSpec[];
  /**
   * The flags a run with `argv` has, where its arguments change them from `flags`: EVAL or FCALL
   * of a script that declared its own (Redis's getCommandFlags). Read where a command is refused
   * before it runs (maxmemory, an append-only file that cannot be written), not on every command.
   */
  flagsFor?(engine: Engine, argv: readonly string[]): readonly CommandFlag[];
}

/** The flags of an administrative subcommand (CONFIG SET, ACL SETUSER, LATENCY RESET …), as Redis flags them. */
export const adminSubcommandFlags: readonly CommandFlag[] = ["admin", "noscript", "loading", "stale"];

/** Makes the subcommands of `container` ("container|name"), administrative unless their flags say otherwise. */
export const subcommandsOf =
  (container: string, group: CommandGroup = "server") =>
  (name: string, arity: number, summary: string, run: CommandSpec["run"], flags: readonly CommandFlag[] = adminSubcommandFlags): CommandSpec => ({
    name: `${container}|${name}`,
    arity,
    flags,
    group,
    summary,
    run,
  });

/** A command by name, or a subcommand by its full name ("config|get"), in any case, as COMMAND INFO and LATENCY HISTOGRAM take them. */
export function commandOrSubcommand(table: ReadonlyMap<string, CommandSpec>, name: string): CommandSpec | undefined {
  const full = name.toLowerCase();
  const bar = full.indexOf("|");
  if (bar < 0) return table.get(full);
  return table.get(full.slice(0, bar))?.subcommands?.find((sub) => sub.name === full);
}

/** The keys a command's argv names — by movableKeys if it has it, else by its declared positions; null when argv does not say. */
export function keysOf(spec: CommandSpec, argv: readonly string[]): string[] | null {
  if (spec.movableKeys !== undefined) return spec.movableKeys(argv);
  if (spec.keys === undefined) return [];
  const [first, lastDeclared, step] = spec.keys;
  if (first === 0) return [];
  const last = lastDeclared < 0 ? argv.length + lastDeclared : lastDeclared;
  const keys: string[] = [];
  for (let i = first; i <= last && i < argv.length; i += step) keys.push(argv[i]!);
  return keys;
}

/** movableKeys for a count of keys at argv[at] followed by the keys, after `before` fixed keys at 1..before. */
export function countedKeys(at: number, before = 0): (argv: readonly string[]) => string[] | null {
  return (argv) => {
    // A count that is not all digits is no count (the command's own check answers the error).
    const n = digitsFrom(argv[at] ?? "", 0) ?? 0;
    if (n < 1 || at + n >= argv.length) return null;
    // Every script run's keys are read here (warm.ts): no pattern, no intermediate arrays.
    const keys: string[] = [];
    for (let i = 1; i <= before; i++) keys.push(argv[i]!);
    for (let i = at + 1; i <= at + n; i++) keys.push(argv[i]!);
    return keys;
  };
}

/** movableKeys for a key at 1 and the key after each of `words` anywhere after `from` (SORT's STORE, GEORADIUS's STORE and STOREDIST). */
export function keyAndOptionKeys(from: number, words: readonly string[], skips: Readonly<Record<string, number>> = {}): (argv: readonly string[]) => string[] {
  return (argv) => {
    const keys = [argv[1]!];
    for (let i = from; i < argv.length; i++) {
      const word = argv[i]!.toUpperCase();
      if (words.includes(word) && i + 1 < argv.length) keys.push(argv[++i]!);
      else i += skips[word] ?? 0;
    }
    return keys;
  };
}
