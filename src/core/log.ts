/**
 * Structured logs: one JSON object per line (pino), to stdout unless a test passes a destination.
 * Every service logs through a child logger that names it, and HTTP handlers through a child that
 * carries the request id, so one grep finds everything about a request — including the detail of
 * a 500 whose response only says `internal error (id <id>)`.
 */
import pino from "pino";

export const logLevels = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof logLevels)[number];
export type Logger = pino.Logger;

export interface LogOptions {
  level: LogLevel;
  /** Where lines go; stdout when omitted. Tests pass a stream that collects them. */
  destination?: pino.DestinationStream;
}

export function createLogger({ level, destination }: LogOptions): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names read better than pino's numbers when a person greps the log.
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ fd: 1, sync: true }),
  );
}

/** A destination that keeps every line in memory, parsed; for tests. */
export function memoryDestination(): pino.DestinationStream & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    write(line: string) {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
}
