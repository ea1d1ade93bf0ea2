/** `svc <service> [flags]`: runs one service in the foreground. */
import type { Service } from "../service.ts";
import { runService } from "./run-service.ts";
import type { Command } from "./command.ts";

export function serviceCommand(service: Service): Command {
  return {
    name: service.name,
    summary: service.summary,
    help: () => `usage: svc ${service.name} [flags]\n\n${service.summary}\n\nflags:\n${service.flagHelp()}`,
    async run(args) {
      const { log, start } = service.configure(args);
      return runService(service.name, start, log);
    },
  };
}
