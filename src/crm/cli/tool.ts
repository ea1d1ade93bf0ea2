/**
 * The plumbing of `svc crm <group> <tool>`: each tool opens the store its --db names (the same
 * flag and SVC_CRM_DB as the server), runs, prints what it did, and closes it. Exit codes: 0 done,
 * 1 refused (no such user, a name taken: the reason on stderr), 2 a command line it does not
 * understand (an unknown subcommand, a missing or malformed flag).
 */
import type { Command } from "../../cli/command.ts";
import { usageExitCode } from "../../cli/command.ts";
import { type ConfigValues, flag, type FlagSpec, formatHelp, parseConfig } from "../../core/config.ts";
import { isSvcError, SvcError } from "../../core/errors.ts";
import type { Db } from "../store/db.ts";
import { openStore } from "../store/open.ts";

export const dbDefault = "sqlite:data/crm/crm.db";
export const envPrefix = "SVC_CRM";
const dbFlag = flag.string({ default: dbDefault, help: "the store: sqlite:PATH or postgres://user@host:port/db" });

/** The flag of every list: JSON for scripts instead of the table people read. */
export const jsonFlag = flag.bool({ default: false, help: "print a JSON array (the settings API's field names) instead of a table" });

export function tool<S extends FlagSpec>(
  name: string,
  usage: string,
  summary: string,
  flags: S,
  run: (db: Db, values: ConfigValues<S>) => Promise<string>,
): Command {
  const spec = { db: dbFlag, ...flags };
  const title = `svc crm ${usage.split(" ").slice(0, 2).join(" ")}`;
  return {
    name,
    summary,
    help: () => `usage: svc crm ${usage}\n\n${summary}\n\nflags:\n${formatHelp(spec, envPrefix)}`,
    async run(args) {
      const { values, positionals } = parseConfig(spec, args, process.env, envPrefix);
      if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
      const db = await openStore(values.db);
      try {
        process.stdout.write(`${await run(db, values as ConfigValues<S>)}\n`);
        return 0;
      } catch (error) {
        if (!isSvcError(error) || error.code === "bad_config") throw error;
        const details = Array.isArray(error.details)
          ? `: ${error.details.map((d: { field: string; message: string }) => `${d.field} ${d.message}`).join("; ")}`
          : "";
        process.stderr.write(`${title}: ${error.message}${details}\n`);
        return 1;
      } finally {
        await db.close();
      }
    },
  };
}

/**
 * A command that only groups subcommands. Run bare it shows them; with a word it does not know it
 * says so (a mistyped `token revok` must not look like a request for help); both exit 2.
 */
export function group(name: string, summary: string, subcommands: Command[]): Command {
  const names = subcommands.map((c) => c.name);
  const width = Math.max(...names.map((n) => n.length));
  const help = () =>
    `usage: svc crm ${name} <${names.join("|")}> [flags]\n\n${summary}\n\n${subcommands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}`;
  return {
    name,
    summary,
    help,
    subcommands,
    async run(args) {
      const first = args[0];
      if (first === undefined) process.stderr.write(`${help()}\n`);
      else if (first.startsWith("-")) process.stderr.write(`svc crm ${name}: name a subcommand before flags: ${names.join(", ")}\n\n${help()}\n`);
      else process.stderr.write(`svc crm ${name}: unknown subcommand ${JSON.stringify(first)}; use ${names.join(", ")}\n`);
      return usageExitCode;
    },
  };
}

export async function readStdin(): Promise<string> {
  return (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, "");
}

/** A whole-number flag given as text (the flag parser's ints cannot be required). */
export function idFlag(flagName: string, text: string, max: number): number {
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > max)
    throw new SvcError("bad_config", `--${flagName}: expected a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Control characters shown as escapes, so a name cannot break a table's lines or move the cursor. */
const visible = (text: string) => text.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map(visible));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n");
}
