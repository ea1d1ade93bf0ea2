/** One `svc <name>` subcommand. Each lives in its own module and is listed in src/cli.ts. */
export interface Command {
  name: string;
  /** One line for `svc --help`. */
  summary: string;
  /** The full `svc <name> --help` text. */
  help(): string;
  /** Runs with the arguments after the command's name; resolves to the process exit code. */
  run(args: string[]): Promise<number>;
  /**
   * The command's own subcommands (e.g. `svc media token`), chosen by the first argument. The CLI
   * resolves them before `--help`, so `svc media token --help` describes the subcommand.
   */
  subcommands?: Command[];
}

/** The command a command line names: a subcommand when the first argument names one. */
export function resolveSubcommand(command: Command, args: string[]): { command: Command; args: string[] } {
  const sub = command.subcommands?.find((c) => c.name === args[0]);
  return sub === undefined ? { command, args } : resolveSubcommand(sub, args.slice(1));
}

/** Exit code for a command line svc does not understand (what getopt-style tools use). */
export const usageExitCode = 2;

export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}
