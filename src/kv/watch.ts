/**
 * WATCH: which sessions watch which keys. When a watched key changes, its watchers are marked
 * dirty and their EXEC fails. Lookups cost nothing while nobody watches anything.
 */
import type { Keyspace } from "./keyspace.ts";
import { addToIndex, removeFromIndex, type Session, type SessionIndex } from "./session.ts";

const watchKey = (dbIndex: number, key: string) => `${dbIndex}\u0000${key}`;

export class Watches {
  private readonly watchers: SessionIndex = new Map();

  watch(session: Session, db: Keyspace, key: string): void {
    const id = watchKey(db.index, key);
    if (session.watched.has(id)) return;
    session.watched.set(id, { dbIndex: db.index, key, existed: db.has(key) });
    addToIndex(this.watchers, id, session);
  }

  unwatchAll(session: Session): void {
    for (const id of session.watched.keys()) removeFromIndex(this.watchers, id, session);
    session.watched.clear();
    session.watchDirty = false;
  }

  touched(db: Keyspace, key: string): void {
    if (this.watchers.size === 0) return;
    const set = this.watchers.get(watchKey(db.index, key));
    if (set !== undefined) for (const session of set) session.watchDirty = true;
  }

  /**
   * True when EXEC must fail: a watched key changed, or (as in Redis 7) a key that was live when
   * watched has expired since, even if nobody has looked it up yet.
   */
  isDirty(session: Session, dbs: readonly Keyspace[]): boolean {
    if (session.watchDirty) return true;
    for (const { dbIndex, key, existed } of session.watched.values()) {
      if (existed && dbs[dbIndex]!.isExpired(key)) return true;
    }
    return false;
  }
}
