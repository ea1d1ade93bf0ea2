/**
 * What INFO persistence reports about saves and rewrites, under Redis's field names (info.ts), and
 * the limit Redis 7 puts on automatic rewrites that keep failing: each one walks the whole
 * dataset, so on a full disk retrying every check would burn CPU for nothing.
 */

/** How a rewrite ended: swapped in, failed (the old file stays), or stopped on purpose. */
export type RewriteOutcome = "done" | "failed" | "stopped";

/** Automatic rewrites failing this many times in a row start waiting between tries. */
export const rewriteFailuresBeforeLimit = 3;
/** The first wait is a minute; each failure after doubles it, up to this. */
export const rewriteLimitMinutesMax = 60;
const msPerMinute = 60_000;

export class PersistenceState {
  /** Engine.dirty when data was last made durable by SAVE or BGSAVE (rdb_changes_since_last_save). */
  dirtyAtLastSave = 0;
  /** SAVE and BGSAVE calls that succeeded. */
  saves = 0;
  lastBgsaveOk = true;
  bgsaveInProgress = false;
  /** Rewrites started (aof_rewrites counts them as they start, as Redis does). */
  rewrites = 0;
  rewriteFailuresInARow = 0;
  lastRewriteOk = true;
  /** Whole seconds the last rewrite took; -1 before the first. */
  lastRewriteSeconds = -1;
  /** When the rewrite in progress began; null when none runs. */
  rewriteStartedMs: number | null = null;
  private limitMinutes = 0;
  /** While automatic rewrites are limited: when the next may start; 0 when no wait is set. */
  private limitUntilMs = 0;

  rewriteStarted(nowMs: number): void {
    this.rewriteStartedMs = nowMs;
    this.rewrites++;
  }

  /** A rewrite could not even start (its file could not be created): a failure all the same. */
  rewriteNotStarted(): void {
    this.lastRewriteOk = false;
    this.rewriteFailuresInARow++;
  }

  /** A stopped rewrite (server or file stopping) is neither a success nor a failure, as in Redis. */
  rewriteEnded(outcome: RewriteOutcome, nowMs: number): void {
    this.lastRewriteSeconds = Math.floor((nowMs - (this.rewriteStartedMs ?? nowMs)) / 1000);
    this.rewriteStartedMs = null;
    if (outcome === "stopped") return;
    this.lastRewriteOk = outcome === "done";
    this.rewriteFailuresInARow = outcome === "done" ? 0 : this.rewriteFailuresInARow + 1;
  }

  /** Seconds the rewrite in progress has run (aof_current_rewrite_time_sec); -1 when none runs. */
  currentRewriteSeconds(nowMs: number): number {
    return this.rewriteStartedMs === null ? -1 : Math.floor((nowMs - this.rewriteStartedMs) / 1000);
  }

  /**
   * Whether an automatic rewrite may start now. After rewriteFailuresBeforeLimit failures in a
   * row it may not until a wait has passed (1 minute, then 2, 4, … up to the maximum), when one
   * try is let through; `onLimited` hears each new wait. BGREWRITEAOF is never limited.
   */
  autoRewriteAllowed(nowMs: number, onLimited: (minutes: number) => void): boolean {
    if (this.rewriteFailuresInARow < rewriteFailuresBeforeLimit) {
      this.limitMinutes = 0;
      this.limitUntilMs = 0;
      return true;
    }
    if (this.limitUntilMs !== 0) {
      if (nowMs < this.limitUntilMs) return false;
      this.limitUntilMs = 0;
      return true;
    }
    this.limitMinutes = Math.min(this.limitMinutes === 0 ? 1 : this.limitMinutes * 2, rewriteLimitMinutesMax);
    this.limitUntilMs = nowMs + this.limitMinutes * msPerMinute;
    onLimited(this.limitMinutes);
    return false;
  }
}
