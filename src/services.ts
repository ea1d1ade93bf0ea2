/**
 * Every service svc runs. Each gets `svc <name>` and is started by `svc up`. A service module
 * exports the result of defineService(); adding a service is one line in `services` below.
 */
import { type ConfigValues, flag, type FlagSpec, formatHelp, parseConfig } from "./core/config.ts";
import { SvcError } from "./core/errors.ts";
import { createLogger, type Logger, logLevels } from "./core/log.ts";
import type { RunningService } from "./service.ts";

/** Flags every service takes. */
export const commonFlags = {
  logLevel: flag.enum({ default: "info", choices: logLevels, help: "least severe log level written", env: "SVC_LOG_LEVEL" }),
};

export interface ServiceDefinition<S extends FlagSpec> {
  name: string;
  summary: string;
  /** Environment variables of this service's flags start with this, e.g. SVC_KV. */
  envPrefix: string;
  flags: S;
  start(config: ConfigValues<S & typeof commonFlags>, log: Logger): Promise<RunningService>;
}

/** A service with its flag types closed over, so services of different flags share one list. */
export interface Service {
  name: string;
  summary: string;
  flagHelp(): string;
  /** Parses `args` (exits the caller with a bad_config SvcError on bad flags) and starts. */
  configure(args: readonly string[]): { log: Logger; start: () => Promise<RunningService> };
}

export function defineService<S extends FlagSpec>(definition: ServiceDefinition<S>): Service {
  const spec = { ...definition.flags, ...commonFlags };
  return {
    name: definition.name,
    summary: definition.summary,
    flagHelp: () => formatHelp(spec, definition.envPrefix),
    configure(args) {
      const { values, positionals } = parseConfig(spec, args, process.env, definition.envPrefix);
      if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
      const log = createLogger({ level: values.logLevel }).child({ service: definition.name });
      return { log, start: () => definition.start(values as ConfigValues<S & typeof commonFlags>, log) };
    },
  };
}

/** The services that exist so far, in the order `svc up` starts them. */
export const services: Service[] = [];
