/**
 * The contract between a service (kv, broker, media, crm) and the CLI. A service declares its
 * flags and how to start; the CLI gives it `svc <name>`, runs it under `svc up`, and stops it
 * cleanly on Ctrl-C or SIGTERM.
 */
import type { Command } from "./cli/command.ts";
import { type ConfigValues, flag, type FlagSpec, formatHelp, parseConfig } from "./core/config.ts";
import { SvcError } from "./core/errors.ts";
import { createLogger, type Logger, logLevels } from "./core/log.ts";

/** One address a service listens on, and a first command a user can paste to try it. */
export interface Endpoint {
  /** What speaks there, e.g. "RESP2" or "HTTP". */
  protocol: string;
  /** host:port or a URL. */
  address: string;
  /** e.g. `redis-cli -p 6379 PING` or a curl line. */
  tryIt: string;
}

export interface RunningService {
  endpoints: Endpoint[];
  /** Stops accepting work, finishes or fails what is in flight, flushes to disk, closes. */
  stop(): Promise<void>;
}

/** The message a service child sends `svc up` over IPC once it listens. */
export interface ReadyMessage {
  type: "ready";
  service: string;
  pid: number;
  endpoints: Endpoint[];
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  const m = message as Partial<ReadyMessage> | null;
  return typeof m === "object" && m !== null && m.type === "ready" && Array.isArray(m.endpoints);
}

// ---- declaring a service -----------------------------------------------------------------------

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
  /** Commands beside the service itself, e.g. `svc media token`; each parses its own flags. */
  tools?: Command[];
}

/** A service with its flag types closed over, so services of different flags share one list. */
export interface Service {
  name: string;
  summary: string;
  flagHelp(): string;
  tools?: Command[];
  /** Parses `args` (exits the caller with a bad_config SvcError on bad flags) and starts. */
  configure(args: readonly string[]): { log: Logger; start: () => Promise<RunningService> };
}

export function defineService<S extends FlagSpec>(definition: ServiceDefinition<S>): Service {
  const spec = { ...definition.flags, ...commonFlags };
  return {
    name: definition.name,
    summary: definition.summary,
    tools: definition.tools,
    flagHelp: () => formatHelp(spec, definition.envPrefix),
    configure(args) {
      const { values, positionals } = parseConfig(spec, args, process.env, definition.envPrefix);
      if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
      const log = createLogger({ level: values.logLevel }).child({ service: definition.name });
      return { log, start: () => definition.start(values as ConfigValues<S & typeof commonFlags>, log) };
    },
  };
}
