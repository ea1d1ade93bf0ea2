/** `svc up`: every service, embedded defaults, one process group, stopped together. */
import { flag, formatHelp, parseConfig } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import { logLevels } from "../core/log.ts";
import { services } from "../services.ts";
import type { Command } from "./command.ts";
import { cliPath } from "./paths.ts";
import { supervise } from "./supervise.ts";

const flags = {
  only: flag.list({ default: [], help: "start only these services; repeatable or comma-separated" }),
  logLevel: flag.enum({ default: "info", choices: logLevels, help: "log level passed to every service", env: "SVC_LOG_LEVEL" }),
};

export const upCommand: Command = {
  name: "up",
  summary: "run every service with embedded defaults until Ctrl-C",
  help: () =>
    `usage: svc up [flags]\n\nservices: ${services.map((s) => s.name).join(", ") || "(none yet)"}\n` +
    `Each runs as \`svc <name>\` with its defaults; see svc <name> --help.\n\nflags:\n${formatHelp(flags, "SVC_UP")}`,
  async run(args) {
    const { values, positionals } = parseConfig(flags, args, process.env, "SVC_UP");
    if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
    const only = values.only.flatMap((s) => s.split(",")).filter((s) => s !== "");
    const unknown = only.filter((name) => !services.some((s) => s.name === name));
    if (unknown.length > 0) throw new SvcError("bad_config", `--only: no service named ${unknown.join(", ")}`);
    const chosen = services.filter((s) => only.length === 0 || only.includes(s.name));
    if (chosen.length === 0) {
      process.stderr.write("[svc] no services to start yet\n");
      return 0;
    }
    return supervise(chosen.map((s) => ({ name: s.name, cmd: [process.execPath, cliPath, s.name, "--log-level", values.logLevel] })));
  },
};
