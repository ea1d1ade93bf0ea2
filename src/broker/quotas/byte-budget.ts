/**
 * A per-key byte budget (spec: Quotas, "per-key budgets holding one second of traffic"): a token
 * bucket that holds at most one second of the rate and refills continuously. A produce takes its
 * bytes before it is written, or is refused with the wait until they are there; a consume's
 * bytes are known only after the read, so it is charged then and may leave the budget in debt,
 * which later reads wait out.
 */
import type { Clock } from "../../core/clock.ts";

export class ByteBudget {
  private bytes: number;
  private atMs: number;

  constructor(
    /** Bytes per second; also what the bucket holds. */
    readonly rate: number,
    private readonly clock: Clock,
  ) {
    this.bytes = rate;
    this.atMs = clock.monotonicMs();
  }

  /** The bytes there now (negative in debt). */
  available(): number {
    const now = this.clock.monotonicMs();
    this.bytes = Math.min(this.rate, this.bytes + ((now - this.atMs) * this.rate) / 1000);
    this.atMs = now;
    return this.bytes;
  }

  /**
   * Takes `bytes` if the budget holds them and answers 0; else takes nothing and answers the
   * milliseconds until it will. `bytes` must be at most `rate` (a bucket never holds more).
   */
  tryTake(bytes: number): number {
    const have = this.available();
    if (have >= bytes) {
      this.bytes -= bytes;
      return 0;
    }
    return ((bytes - have) * 1000) / this.rate;
  }

  /** Takes `bytes` whether or not they are there (a consume, charged after the read). */
  charge(bytes: number): void {
    this.available();
    this.bytes -= bytes;
  }

  /** Milliseconds until the budget is out of debt; 0 when it is not in debt. */
  debtMs(): number {
    const have = this.available();
    return have >= 0 ? 0 : (-have * 1000) / this.rate;
  }
}
