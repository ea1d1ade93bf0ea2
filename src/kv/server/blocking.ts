/**
 * Clients blocked in BLPOP, BLMOVE, BZPOPMIN and friends. Each key keeps its waiters in the order
 * they blocked. A command that adds elements to a key someone waits on marks it ready; once that
 * command is done the engine serves the ready keys, first waiter first, as Redis does — and a
 * served client's own push (BLMOVE) can make further keys ready within the same pass.
 */
import type { Keyspace } from "../keyspace/keyspace.ts";
import { addToIndex, answerBlocked, type BlockedState, removeFromIndex, type Session, type SessionIndex } from "./session.ts";

const blockKey = (dbIndex: number, key: string) => `${dbIndex}\u0000${key}`;
const keyOf = (id: string) => id.slice(id.indexOf("\u0000") + 1);

/**
 * Told that `session` was served, after `micros` of serving (the command's own run, not its
 * wait), and whether what it was served is an error (XREADGROUP's group or stream gone).
 */
export type ServedListener = (session: Session, state: BlockedState, micros: number, failed: boolean) => void;

export class Blocking {
  /** Waiters per key; a Set keeps the order they blocked in and removes any of them in O(1). */
  private readonly waiters: SessionIndex = new Map();
  /** Keys to serve, in the order they became ready. */
  private readonly ready = new Set<string>();
  private readonly blocked = new Set<Session>();

  /** Clients whose timeout passed while timeouts were held (held()), answered by timeOutLate. */
  private readonly lateTimeouts = new Set<Session>();

  /**
   * `errorReplies` counts the error replies sent so far (INFO's total_error_replies): one sent
   * while a client is served makes it a failed call, as Redis tells them apart. While `held()`
   * (a busy script runs) no client times out: as in Redis, which answers timeouts from its cron,
   * one whose time passes then is served first if the script gave it something (timeOutLate).
   */
  constructor(
    private readonly onServed: ServedListener = () => {},
    private readonly errorReplies: () => number = () => 0,
    private readonly held: () => boolean = () => false,
    /** Runs a waiter's serving as that client's own command (the engine's current client). */
    private readonly servingAs: (session: Session, serve: () => boolean) => boolean = (_session, serve) => serve(),
  ) {}

  get blockedCount(): number {
    return this.blocked.size;
  }

  block(session: Session, state: BlockedState): void {
    session.blocked = state;
    this.blocked.add(session);
    for (const key of state.keys) addToIndex(this.waiters, blockKey(state.dbIndex, key), session);
    if (Number.isFinite(state.deadlineMs)) {
      state.timer = setTimeout(() => this.timedOut(session, state), Math.max(0, state.deadlineMs - Date.now()));
    }
  }

  private timedOut(session: Session, state: BlockedState): void {
    if (session.blocked !== state) return;
    if (this.held()) {
      this.lateTimeouts.add(session);
      return;
    }
    this.unblock(session);
    answerBlocked(session, () => state.timeout());
  }

  /** Answers the timeouts that passed while they were held; for after serveReady. */
  timeOutLate(): void {
    if (this.lateTimeouts.size === 0) return;
    const late = [...this.lateTimeouts];
    this.lateTimeouts.clear();
    for (const session of late) if (session.blocked !== null) this.timedOut(session, session.blocked);
  }

  unblock(session: Session): void {
    const state = session.blocked;
    if (state === null) return;
    if (state.timer !== undefined) clearTimeout(state.timer);
    this.lateTimeouts.delete(session);
    for (const key of state.keys) removeFromIndex(this.waiters, blockKey(state.dbIndex, key), session);
    session.blocked = null;
    this.blocked.delete(session);
  }

  /** A key got elements; if anyone waits on it, it is served after the current command. */
  signalReady(db: Keyspace, key: string): void {
    const id = blockKey(db.index, key);
    if (this.waiters.has(id)) this.ready.add(id);
  }

  /** Serves waiters of every ready key, in blocking order, until nothing more can be served. */
  serveReady(): void {
    // Nearly always so: no iterator made after every command.
    if (this.ready.size === 0) return;
    // A Set's iteration visits entries added while it runs, so a key made ready by a served
    // client (BLMOVE's push) — even one removed here earlier in the pass — is served in turn.
    for (const id of this.ready) {
      this.ready.delete(id);
      const waiters = this.waiters.get(id);
      if (waiters === undefined) continue;
      const key = keyOf(id);
      // Serving removes the served waiter from `waiters`; iteration goes on to the next one.
      for (const session of waiters) {
        const state = session.blocked;
        if (state === null) continue;
        // A waiter that cannot be served (it wants another type) leaves later waiters their turn.
        const startedMs = performance.now();
        const errorsBefore = this.errorReplies();
        if (!this.servingAs(session, () => answerBlocked(session, () => state.tryServe(key)))) continue;
        this.onServed(session, state, (performance.now() - startedMs) * 1000, this.errorReplies() !== errorsBefore);
        this.unblock(session);
        session.transport?.flush();
      }
    }
  }
}
