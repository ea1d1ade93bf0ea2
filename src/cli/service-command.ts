/** `svc <service> [flags]`: runs one service in the foreground; `svc <service> <tool> ...` runs one of its tools. */
import { SvcError } from "../core/errors.ts";
import type { Service } from "../service.ts";
import { runService } from "./run-service.ts";
import type { Command } from "./command.ts";

export function serviceCommand(service: Service): Command {
  const tools = service.tools ?? [];
  const toolHelp =
    tools.length === 0 ? "" : `\n\ntools (svc ${service.name} <tool> --help for each):\n${tools.map((t) => `  ${t.name}  ${t.summary}`).join("\n")}`;
  return {
    name: service.name,
    summary: service.summary,
    help: () => `usage: svc ${service.name} [flags]\n\n${service.summary}\n\nflags:\n${service.flagHelp()}${toolHelp}`,
    subcommands: tools,
    async run(args) {
      // A first word that names no tool is a mistyped tool, not a stray argument to the service.
      const first = args[0];
      if (tools.length > 0 && first !== undefined && !first.startsWith("-")) {
        throw new SvcError("bad_config", `unknown tool ${JSON.stringify(first)}; tools: ${tools.map((t) => t.name).join(", ")}`);
      }
      const { log, start } = service.configure(args);
      return runService(service.name, start, log);
    },
  };
}
