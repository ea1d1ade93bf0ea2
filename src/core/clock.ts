/**
 * Time as a dependency. Code that expires keys, rolls segments or times out members takes a Clock,
 * so tests can move time by hand and replay the same scenario exactly.
 */

export interface Clock {
  /** Wall-clock time in milliseconds since the Unix epoch (timestamps that leave the process). */
  nowMs(): number;
  /** Monotonic milliseconds from an arbitrary origin (durations and deadlines). */
  monotonicMs(): number;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/** A clock that moves only when a test tells it to. */
export class ManualClock implements Clock {
  private wallMs: number;
  private elapsedMs = 0;

  constructor(startMs = 1_700_000_000_000) {
    this.wallMs = startMs;
  }

  nowMs(): number {
    return this.wallMs;
  }

  monotonicMs(): number {
    return this.elapsedMs;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock only moves forward, not by ${ms} ms`);
    this.wallMs += ms;
    this.elapsedMs += ms;
  }
}
