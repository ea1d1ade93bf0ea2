/**
 * Commands are declared once, as data — name, arity, flags, key positions — plus the function
 * that runs them. The dispatch table (server/command-table.ts) is built from these declarations,
 * and COMMAND INFO/DOCS answer from them, so adding a command is one declaration and one function.
 * What a declaration holds is command-info.ts; this is what a running command sees.
 */
import type { Keyspace } from "../keyspace/keyspace.ts";
import type { Session } from "../server/session.ts";
import { adminSubcommandFlags, type CommandFlag, type CommandGroup, type CommandShape } from "./command-info.ts";
import type { Reply } from "./reply.ts";
import type { Server } from "./server.ts";

export {
  adminSubcommandFlags,
  type CommandFlag,
  type CommandGroup,
  commandOrSubcommand,
  countedKeys,
  helpFlags,
  keyAndOptionKeys,
  keysOf,
  type ProtectedSwitch,
  protectedSwitches,
} from "./command-info.ts";

/** What a running command sees. */
export interface Exec {
  readonly engine: Server;
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

/** A command as the table holds it: run with the command context, its flags read against the server. */
export type CommandSpec = CommandShape<Exec, Server>;

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
