/**
 * CLIENT PAUSE and UNPAUSE, as Redis 7.0 pauses clients: for a time, a client's next command that
 * the pause covers is held, with every command after it, and runs when the pause ends — the time
 * is up, or CLIENT UNPAUSE came — in the order the clients sent them.
 *
 * - ALL (the default) holds every command of every client, CLIENT UNPAUSE too: only the time
 *   ends it.
 * - WRITE holds the commands that may change data or be replicated — writes, EXEC of a queue
 *   holding one, scripts (EVAL, EVALSHA, FCALL) unless they declare no-writes, PUBLISH, SPUBLISH,
 *   PFCOUNT (which may rewrite its cache) — and lets reads through.
 * - A second pause keeps the stricter mode and the later end.
 * - While paused, the active expiry cycle and eviction wait too, as in Redis, so that nothing
 *   changes the data; a key read past its time reads as gone but stays until the pause is over
 *   (KeyspaceHooks.clientsPaused), as Redis 7.0's lookups leave it.
 */

export class ClientPause {
  private all = false;
  private untilMs = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly monotonicMs: () => number) {}

  get active(): boolean {
    return this.timer !== null;
  }

  /** Clients held now (INFO counts them among blocked_clients, as Redis blocks them to postpone). */
  get heldCount(): number {
    return this.waiting.size;
  }

  /** CLIENT PAUSE: for `ms` milliseconds, all commands or (`all` false) the writing ones. */
  pause(ms: number, all: boolean): void {
    const until = this.monotonicMs() + ms;
    if (this.timer === null) this.all = all;
    else {
      this.all ||= all;
      if (until <= this.untilMs) return;
      clearTimeout(this.timer);
    }
    this.untilMs = until;
    this.timer = setTimeout(() => this.unpause(), ms);
  }

  /**
   * The pause is over: the held clients go on, in the order they were held — in the event loop's
   * next turn, after this turn's replies (CLIENT UNPAUSE's among them) have left, as in Redis. A
   * timer, not setImmediate: the turn's replies are written in setImmediate (end-of-turn.ts).
   */
  unpause(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    const resume = [...this.waiting];
    this.waiting.clear();
    setTimeout(() => {
      for (const go of resume) go();
    }, 0);
  }

  /**
   * Whether the pause holds a command that may write, or is one of Redis's may-replicate commands
   * (command-traits.ts): ALL holds any, WRITE those.
   */
  holds(write: boolean, mayReplicate: boolean): boolean {
    if (this.timer === null) return false;
    return this.all || write || mayReplicate;
  }

  /** Calls `go` once the pause ends (a held client's way of going on). */
  whenOver(go: () => void): void {
    this.waiting.add(go);
  }

  /** A held client that left: nothing to resume. */
  forget(go: () => void): void {
    this.waiting.delete(go);
  }
}
