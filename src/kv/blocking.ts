/**
 * Clients blocked in BLPOP, BLMOVE, BZPOPMIN and friends. Each key keeps its waiters in the order
 * they blocked. A command that adds elements to a key someone waits on marks it ready; once that
 * command is done the engine serves the ready keys, first waiter first, as Redis does — and a
 * served client's own push (BLMOVE) can make further keys ready within the same pass.
 */
import type { Keyspace } from "./keyspace.ts";
import type { BlockedState, Session } from "./session.ts";

const blockKey = (dbIndex: number, key: string) => `${dbIndex}\u0000${key}`;
const keyOf = (id: string) => id.slice(id.indexOf("\u0000") + 1);

export class Blocking {
  private readonly waiters = new Map<string, Session[]>();
  private readonly ready: string[] = [];
  private readonly readySet = new Set<string>();
  private readonly blocked = new Set<Session>();

  get blockedCount(): number {
    return this.blocked.size;
  }

  block(session: Session, state: BlockedState): void {
    session.blocked = state;
    this.blocked.add(session);
    for (const key of state.keys) {
      const id = blockKey(state.dbIndex, key);
      const list = this.waiters.get(id);
      if (list === undefined) this.waiters.set(id, [session]);
      else if (!list.includes(session)) list.push(session);
    }
    if (Number.isFinite(state.deadlineMs)) {
      state.timer = setTimeout(() => {
        if (session.blocked !== state) return;
        this.unblock(session);
        state.timeout();
      }, Math.max(0, state.deadlineMs - Date.now()));
    }
  }

  unblock(session: Session): void {
    const state = session.blocked;
    if (state === null) return;
    if (state.timer !== undefined) clearTimeout(state.timer);
    for (const key of state.keys) {
      const id = blockKey(state.dbIndex, key);
      const list = this.waiters.get(id);
      if (list === undefined) continue;
      const rest = list.filter((s) => s !== session);
      if (rest.length === 0) this.waiters.delete(id);
      else this.waiters.set(id, rest);
    }
    session.blocked = null;
    this.blocked.delete(session);
  }

  /** A key got elements; if anyone waits on it, it is served after the current command. */
  signalReady(db: Keyspace, key: string): void {
    const id = blockKey(db.index, key);
    if (!this.waiters.has(id) || this.readySet.has(id)) return;
    this.readySet.add(id);
    this.ready.push(id);
  }

  /** Serves waiters of every ready key, in blocking order, until nothing more can be served. */
  serveReady(): void {
    while (this.ready.length > 0) {
      const id = this.ready.shift()!;
      this.readySet.delete(id);
      for (const session of [...(this.waiters.get(id) ?? [])]) {
        const state = session.blocked;
        if (state === null) continue;
        // A waiter that cannot be served (it wants another type) leaves later waiters their turn.
        if (!state.tryServe(keyOf(id))) continue;
        this.unblock(session);
        session.transport?.flush();
      }
    }
  }
}
