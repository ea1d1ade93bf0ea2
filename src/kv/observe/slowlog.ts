/**
 * SLOWLOG: the last commands that took at least `slowlog-log-slower-than` microseconds to run
 * (10,000 by default; 0 logs every command, a negative value none), at most `slowlog-max-len` of
 * them (128), newest first — as Redis keeps them, with the same entry shape: id, Unix time in
 * seconds, microseconds, the arguments (shortened, and with secrets redacted: redact.ts), the client's
 * address and name.
 *
 * What "took" means here: a command timed alone is measured alone. The O(1) and O(log n) commands
 * that INFO commandstats times in batches (command-timing.ts) are timed alone too while every
 * command is to be logged (a threshold of 0); above 0 they are not checked, as their own work
 * cannot reach a threshold that a command with data-bound work would.
 */
import type { Clock } from "../../core/clock.ts";
import type { CommandShape } from "../kit/command-info.ts";
import { redactSecrets } from "./redact.ts";
import type { Session } from "../server/session.ts";

/** Redis's SLOWLOG_ENTRY_MAX_ARGC: past it the last argument kept says how many more there were. */
export const slowlogArgsMax = 32;
/** Redis's SLOWLOG_ENTRY_MAX_STRING: longer arguments are cut there, saying how much more there was. */
export const slowlogArgBytesMax = 128;

export interface SlowlogEntry {
  readonly id: number;
  /** Unix seconds when the command ended. */
  readonly unixSeconds: number;
  readonly micros: number;
  readonly args: readonly string[];
  readonly peer: string;
  readonly clientName: string;
}

/** argv as the log shows it: passwords redacted, at most slowlogArgsMax arguments, each shortened. */
export function loggedArgs(spec: CommandShape, argv: readonly string[]): string[] {
  const shown = redactSecrets(spec, argv);
  const kept = shown.length > slowlogArgsMax ? slowlogArgsMax - 1 : shown.length;
  const args = shown
    .slice(0, kept)
    .map((arg) => (arg.length > slowlogArgBytesMax ? `${arg.slice(0, slowlogArgBytesMax)}... (${arg.length - slowlogArgBytesMax} more bytes)` : arg));
  if (kept < shown.length) args.push(`... (${shown.length - kept} more arguments)`);
  return args;
}

export class Slowlog {
  /** Newest first. */
  private entries: SlowlogEntry[] = [];
  private nextId = 0;
  /** slowlog-log-slower-than, µs: 0 logs every command, a negative value none. */
  thresholdMicros = 10_000;
  /** slowlog-max-len. */
  lengthMax = 128;

  constructor(private readonly clock: Clock) {}

  /** Whether every command is logged, so each must be timed alone. */
  get logsEverything(): boolean {
    return this.thresholdMicros === 0;
  }

  get length(): number {
    return this.entries.length;
  }

  /**
   * Logs the command if it took long enough, dropping the oldest entries past lengthMax (so a
   * lowered slowlog-max-len applies at the next entry, as in Redis).
   */
  consider(spec: CommandShape, argv: readonly string[], session: Session, micros: number): void {
    if (this.thresholdMicros < 0 || micros < this.thresholdMicros || spec.flags.includes("skip_slowlog")) return;
    this.entries.unshift({
      id: this.nextId++,
      unixSeconds: Math.floor(this.clock.nowMs() / 1000),
      micros: Math.floor(micros),
      args: loggedArgs(spec, argv),
      peer: session.transport?.peer ?? "",
      clientName: session.name,
    });
    if (this.entries.length > this.lengthMax) this.entries.length = this.lengthMax;
  }

  /** The newest `count` entries (all when count is -1). */
  newest(count: number): readonly SlowlogEntry[] {
    return count < 0 ? this.entries : this.entries.slice(0, count);
  }

  reset(): void {
    this.entries = [];
  }
}
