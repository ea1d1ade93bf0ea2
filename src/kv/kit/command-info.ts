/**
 * What a command is, apart from running it: its name, arity, flags, group, key positions and
 * subcommands, and how to find its keys in an argv. COMMAND INFO and DOCS, ACL, the slowlog and
 * the append-only file read these; only the command layer runs them (spec.ts).
 */
import { digitsFrom } from "../text/args.ts";

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
  | "asking"
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

/**
 * A command as declared, generic in what runs it: `X` is the context its run takes and `E` what
 * flagsFor reads. The modules below the command layer (ACL, the slowlog, MONITOR, the append-only
 * file, a session's queue) hold commands as `CommandShape` — their names, flags and keys — and
 * never run them; the commands' own `CommandSpec` (spec.ts) binds `X` and `E` to the command
 * context and the server. Methods, not function properties, so that a CommandSpec is a
 * CommandShape.
 */
export interface CommandShape<X = unknown, E = unknown> {
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
  run?(x: X, argv: string[]): void;
  subcommands?: readonly CommandShape<X, E>[];
  /**
   * The flags a run with `argv` has, where its arguments change them from `flags`: EVAL or FCALL
   * of a script that declared its own (Redis's getCommandFlags). Read where a command is refused
   * before it runs (maxmemory, an append-only file that cannot be written), not on every command.
   */
  flagsFor?(engine: E, argv: readonly string[]): readonly CommandFlag[];
  /**
   * A protected command (Redis's CMD_PROTECTED: DEBUG, MODULE LOAD …): the start-time switch that
   * allows it (no, local, yes), checked before authentication.
   */
  protectedBy?: ProtectedSwitch;
  /**
   * The command's number in the dispatch table (command-table.ts numbers each command and
   * subcommand once, at start): an engine keeps each command's statistics in an array by it
   * rather than finding them by name in a Map on every call (10–20 ns of a script's ~500 ns INCR).
   */
  statsIndex?: number;
  /** What every call's path asks of the command, as bits worked out once (server/command-traits.ts). */
  traits?: number;
}

/** The switches of Redis 7.0's protected commands, and the command each names in its refusal. */
export const protectedSwitches = { "enable-debug-command": "DEBUG", "enable-module-command": "MODULE" } as const;
export type ProtectedSwitch = keyof typeof protectedSwitches;

/** The flags of an administrative subcommand (CONFIG SET, ACL SETUSER, LATENCY RESET …), as Redis flags them. */
export const adminSubcommandFlags: readonly CommandFlag[] = ["admin", "noscript", "loading", "stale"];

/** A command by name, or a subcommand by its full name ("config|get"), in any case, as COMMAND INFO and LATENCY HISTOGRAM take them. */
export function commandOrSubcommand<C extends CommandShape<never, never>>(table: ReadonlyMap<string, C>, name: string): C | undefined {
  const full = name.toLowerCase();
  const bar = full.indexOf("|");
  if (bar < 0) return table.get(full);
  return table.get(full.slice(0, bar))?.subcommands?.find((sub) => sub.name === full) as C | undefined;
}

/** The keys a command's argv names — by movableKeys if it has it, else by its declared positions; null when argv does not say. */
export function keysOf(spec: CommandShape<never, never>, argv: readonly string[]): string[] | null {
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
