/**
 * The answer of a container command's HELP subcommand (CONFIG HELP, XINFO HELP, …), in Redis's shape.
 */
import type { Exec } from "./spec.ts";

/** The shape of Redis's HELP subcommands: a title line, each usage line, then HELP itself. */
export function helpReply(x: Exec, command: string, lines: readonly string[]): void {
  x.reply.array(lines.length + 3);
  x.reply.simple(`${command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`);
  for (const line of lines) x.reply.simple(line);
  x.reply.simple("HELP");
  x.reply.simple("    Prints this help.");
}
