/**
 * WATCH: which sessions watch which keys. When a watched key changes, its watchers are marked
 * dirty and their EXEC fails. Lookups cost nothing while nobody watches anything.
 */
import type { Keyspace } from "../keyspace/keyspace.ts";
import { addToIndex, removeFromIndex, type Session, type SessionIndex } from "./session.ts";

const watchKey = (dbIndex: number, key: string) => `${dbIndex}\u0000${key}`;

export class Watches {
  private readonly watchers: SessionIndex = new Map();

  watch(session: Session, db: Keyspace, key: string): void {
    const id = watchKey(db.index, key);
    if (session.watched.has(id)) return;
    // Looked at, not looked up: WATCH does not delete a key whose time has passed (Redis's
    // watchForKey only notes it was expired).
    session.watched.set(id, { dbIndex: db.index, key, expired: db.isExpired(key) });
    addToIndex(this.watchers, id, session);
  }

  unwatchAll(session: Session): void {
    for (const id of session.watched.keys()) removeFromIndex(this.watchers, id, session);
    session.watched.clear();
    session.watchDirty = false;
  }

  /**
   * A watched key changed: its watchers' EXEC will fail — except, as in Redis 7.0, for a key that
   * had already expired when it was watched and is now deleted (by its expiry, a flush) or still
   * expired (a SWAPDB bringing in another expired one): no logical change. Once deleted, it is
   * watched as a missing key. Likewise a SWAPDB (`swappedWith` holds what `db` held) that brings
   * an expired key where a watched one was missing: it is then watched as an expired key.
   */
  touched(db: Keyspace, key: string, swappedWith?: Keyspace): void {
    if (this.watchers.size === 0) return;
    const id = watchKey(db.index, key);
    const set = this.watchers.get(id);
    if (set === undefined) return;
    for (const session of set) {
      const watched = session.watched.get(id);
      if (watched?.expired === true) {
        const present = db.contains(key);
        if (!present || db.isExpired(key)) {
          watched.expired = present;
          continue;
        }
      } else if (watched !== undefined && swappedWith !== undefined && !swappedWith.contains(key) && db.isExpired(key)) {
        watched.expired = true;
        continue;
      }
      session.watchDirty = true;
    }
  }

  /**
   * True when EXEC must fail: a watched key changed, or (as in Redis 7) a key that had not expired
   * when watched has expired since, even if nobody has looked it up yet.
   */
  isDirty(session: Session, dbs: readonly Keyspace[]): boolean {
    if (session.watchDirty) return true;
    for (const { dbIndex, key, expired } of session.watched.values()) {
      if (!expired && dbs[dbIndex]!.isExpired(key)) return true;
    }
    return false;
  }
}
