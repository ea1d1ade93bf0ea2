/**
 * svc: one CLI for every service and for the project's own chores.
 *
 *   svc up | test | bench | <service> ...     svc <command> --help for each
 *
 * The ./svc bootstrap makes the machine ready, then runs this file with Bun.
 */
import { benchCommand } from "./cli/bench.ts";
import { type Command, resolveSubcommand, usageExitCode, wantsHelp } from "./cli/command.ts";
import { serviceCommand } from "./cli/service-command.ts";
import { testCommand } from "./cli/test.ts";
import { upCommand } from "./cli/up.ts";
import { isSvcError } from "./core/errors.ts";
import { services } from "./services.ts";

const commands: Command[] = [upCommand, testCommand, benchCommand, ...services.map(serviceCommand)];

function overview(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return `usage: svc <command> [flags]\n\ncommands:\n${lines.join("\n")}\n\nsvc <command> --help describes each.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(overview());
    return name === undefined ? usageExitCode : 0;
  }
  const named = commands.find((c) => c.name === name);
  if (named === undefined) {
    process.stderr.write(`svc: unknown command ${JSON.stringify(name)}\n\n${overview()}\n`);
    return usageExitCode;
  }
  const { command, args } = resolveSubcommand(named, rest);
  if (wantsHelp(args)) {
    console.log(command.help());
    return 0;
  }
  try {
    return await command.run(args);
  } catch (error) {
    if (isSvcError(error) && error.code === "bad_config") {
      // The words that chose the command: "crm token revoke", not just its last one.
      const full = [name, ...rest.slice(0, rest.length - args.length)].join(" ");
      process.stderr.write(`svc ${full}: ${error.message}\nsvc ${full} --help lists the flags.\n`);
      return usageExitCode;
    }
    throw error;
  }
}

process.exit(await main(process.argv.slice(2)));
