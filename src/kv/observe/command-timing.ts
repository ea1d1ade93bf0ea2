/**
 * The time INFO commandstats reports per command, at fewer than one clock reading per command.
 *
 * Reading the clock costs about 50 ns in Bun (performance.now), a tenth of what a pipelined GET
 * costs us in all. So commands whose work is bounded by their own arguments — those Redis flags
 * "fast" (O(1) or O(log n)) and the plain string writes (SET, MSET and their kin) — are timed as a
 * batch: one reading when the first of them starts, one when the batch ends, and the time between
 * shared evenly among them. A batch ends when a command timed alone starts, or when whoever runs
 * the commands (a connection's read, EXEC, a REST request) is done with them.
 *
 * Every other command — anything whose time depends on the data it meets: KEYS, LRANGE, DEL of a
 * large value, SUNIONSTORE, EXEC — is timed alone, so a slow command still shows as slow. The
 * commands one of those runs itself (a script's, EXEC's) share a batch that starts with it, so a
 * script calling INCR reads the clock twice, not three times; their time includes the Lua
 * between them, as it did when their batch began with the first of them.
 *
 * Commands a connection runs back to back from one read (beginRun … settle) chain their
 * readings: one that starts right after another ended starts at that reading, so a pipeline of
 * EVALSHAs reads the clock once per command rather than twice. Each then also counts the few
 * dozen ns between the two, the dispatch of the command itself.
 */
import type { Clock } from "../../core/clock.ts";
import type { CommandShape } from "../kit/command-info.ts";
import { LatencyHistogram } from "./latency-histogram.ts";
import type { LatencyMonitor } from "./latency-monitor.ts";

export interface CommandStats {
  calls: number;
  /** Microseconds spent, unrounded (INFO rounds). */
  usec: number;
  rejectedCalls: number;
  failedCalls: number;
  /** Each call's time (LATENCY HISTOGRAM), made at the first one timed while latency-tracking is on. */
  latency: LatencyHistogram | null;
}

/** Records one call's time in the command's histogram. */
export function trackLatency(stats: CommandStats, micros: number): void {
  (stats.latency ??= new LatencyHistogram()).record(micros * 1000);
}

/** String writes that are not flagged "fast" in Redis but whose work is a copy of their arguments. */
const argumentBoundWrites = new Set(["set", "setnx", "setex", "psetex", "getset", "mset", "msetnx"]);

/** Whether a command is timed in a batch (see above) rather than alone. */
export function timedInBatch(spec: CommandShape): boolean {
  return spec.flags.includes("fast") || argumentBoundWrites.has(spec.name);
}

/** The latency monitor's event for a command's time: Redis's, by its "fast" flag. */
export const latencyEventOf = (spec: CommandShape): "fast-command" | "command" => (spec.flags.includes("fast") ? "fast-command" : "command");

export class CommandTiming {
  /** Monotonic ms when the open batch began; -1 when no batch is open. */
  private batchStartedMs = -1;
  /** The statistics of each command in the open batch, once per call. */
  private readonly batch: CommandStats[] = [];
  /** Whether every command of the open batch is flagged "fast" (its latency event). */
  private batchAllFast = true;
  /** latency-tracking: each call's time goes into its command's histogram too. */
  tracksLatency = true;
  /** Between beginRun and settle: the commands run come one right after another. */
  private chained = false;
  /** While chained, the reading that ended the last command (or batch), which the next starts at; -1 otherwise. */
  private lastReadingMs = -1;

  constructor(
    private readonly clock: Clock,
    private readonly latency: LatencyMonitor | null = null,
  ) {}

  /**
   * A caller is about to run commands back to back, with nothing else between them, until it
   * calls settle (a connection's commands from one read).
   */
  beginRun(): void {
    this.chained = true;
  }

  /** When a batched command starts: the open batch's start, or now, opening one. */
  startBatched(): number {
    if (this.batchStartedMs < 0) this.batchStartedMs = this.lastReadingMs >= 0 ? this.lastReadingMs : this.clock.monotonicMs();
    return this.batchStartedMs;
  }

  /** When a command timed alone starts: the open batch ends then; returns the time. */
  startAlone(): number {
    if (this.batchStartedMs < 0 && this.lastReadingMs >= 0) return this.lastReadingMs;
    return this.endBatch();
  }

  /**
   * Opens a batch at `atMs` (a reading just taken) unless one is open: a command timed alone
   * opens one at its start for the commands it runs itself (a script's, EXEC's), which then need
   * no reading of their own. The command's own end closes it.
   */
  openBatchAt(atMs: number): void {
    if (this.batchStartedMs < 0) this.batchStartedMs = atMs;
  }

  /** Records a batched command that finished; its time is added when the batch ends. */
  finishBatched(stats: CommandStats, spec: CommandShape): void {
    this.batch.push(stats);
    // Looked at only while the monitor is on: this runs for every GET and SET.
    if (this.batchAllFast && this.latency?.on && !spec.flags.includes("fast")) this.batchAllFast = false;
  }

  /** Ends the open batch, if there is one, and any chain (beginRun): for a caller done running commands. */
  settle(): void {
    if (this.batchStartedMs >= 0) this.endBatch();
    this.chained = false;
    this.lastReadingMs = -1;
  }

  /** Ends the open batch, if any, sharing its time among its commands; returns the time now. */
  endBatch(): number {
    const nowMs = this.clock.monotonicMs();
    const n = this.batch.length;
    if (n > 0) {
      const usecEach = ((nowMs - this.batchStartedMs) * 1000) / n;
      const tracks = this.tracksLatency;
      for (let i = 0; i < n; i++) {
        const stats = this.batch[i]!;
        stats.usec += usecEach;
        // Each call's share of the batch is the time it is known by (LATENCY HISTOGRAM).
        if (tracks) trackLatency(stats, usecEach);
      }
      this.batch.length = 0;
      // The whole batch, once: what its last client waited, a bound on each of its commands.
      if (this.latency?.on) this.latency.consider(this.batchAllFast ? "fast-command" : "command", nowMs - this.batchStartedMs);
      this.batchAllFast = true;
    }
    this.batchStartedMs = -1;
    if (this.chained) this.lastReadingMs = nowMs;
    return nowMs;
  }
}
