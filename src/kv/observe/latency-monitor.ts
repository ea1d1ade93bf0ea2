/**
 * The latency monitor (LATENCY LATEST, HISTORY, RESET, GRAPH, DOCTOR), as Redis 7.0 keeps it:
 * while `latency-monitor-threshold` is above 0 ms, every event that took at least that long is
 * recorded under its event's name — a time series per event of its last latencySamplesMax
 * seconds that had one (the worst of each second), and the worst ever. At 0, the default,
 * nothing is measured or kept.
 *
 * (Each command's call times, LATENCY HISTOGRAM, are latency-histogram.ts's, kept in its statistics.)
 *
 * The events svc records, named as Redis names them:
 * - `command`, `fast-command`: a command, by whether Redis flags it "fast". The commands INFO
 *   commandstats times as a batch (command-timing.ts) are recorded as their batch: the whole
 *   batch's time once, which is what the last client in it waited.
 * - `aof-write`: the write of a turn's commands to the append-only file (everysec, no).
 * - `aof-fsync-always`: an `always` write and fdatasync, on the writer's thread, from start to end.
 * - `expire-cycle`: an active expiry cycle.
 * - `eviction-cycle`: the evictions one command's memory check made.
 */
import type { Clock } from "../../core/clock.ts";

/** Seconds with a sample each event keeps: Redis's LATENCY_TS_LEN. */
export const latencySamplesMax = 160;

export interface LatencySample {
  /** Unix seconds. */
  readonly unixSeconds: number;
  /** The worst latency of that second, ms. */
  ms: number;
}

/** One event's samples, oldest first, and its worst ever. */
export class LatencySeries {
  readonly samples: LatencySample[] = [];
  maxMs = 0;

  get latest(): LatencySample {
    return this.samples.at(-1)!;
  }

  add(unixSeconds: number, ms: number): void {
    if (ms > this.maxMs) this.maxMs = ms;
    const last = this.samples.at(-1);
    // One sample a second: the worst of it.
    if (last !== undefined && last.unixSeconds === unixSeconds) {
      if (ms > last.ms) last.ms = ms;
      return;
    }
    this.samples.push({ unixSeconds, ms });
    if (this.samples.length > latencySamplesMax) this.samples.shift();
  }
}

export class LatencyMonitor {
  /** latency-monitor-threshold, ms: 0 records nothing. */
  thresholdMs = 0;
  /** Series by event name, in the order each was first recorded. */
  readonly events = new Map<string, LatencySeries>();

  constructor(private readonly clock: Clock) {}

  /** Whether events are measured at all: callers skip reading the clock otherwise. */
  get on(): boolean {
    return this.thresholdMs > 0;
  }

  /** Records `ms` (fractions dropped, as Redis counts whole ms) under `event` if it reaches the threshold. */
  consider(event: string, ms: number): void {
    if (this.thresholdMs <= 0 || ms < this.thresholdMs) return;
    let series = this.events.get(event);
    if (series === undefined) this.events.set(event, (series = new LatencySeries()));
    series.add(Math.floor(this.clock.nowMs() / 1000), Math.floor(ms));
  }

  /** LATENCY RESET: forgets the named events, or all; returns how many there were. */
  reset(names?: readonly string[]): number {
    if (names === undefined || names.length === 0) {
      const count = this.events.size;
      this.events.clear();
      return count;
    }
    let count = 0;
    for (const name of names) if (this.events.delete(name)) count++;
    return count;
  }
}
