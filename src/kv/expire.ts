/**
 * The active expiry cycle, after Redis's activeExpireCycle: keys with a time to live are sampled
 * in batches; expired ones are deleted; a database keeps being sampled while more than a quarter
 * of a batch had expired and the run's time budget lasts. Each database resumes where the last
 * run stopped, so over time every key with a TTL is visited — without any run taking longer than
 * kvExpireCycleBudgetMs.
 */
import { kvExpireCycleBudgetMs, kvExpireSampleKeys } from "../core/limits.ts";
import type { Engine } from "./engine.ts";
import type { Keyspace } from "./keyspace.ts";

/** Above this share of expired keys in a batch, the database is sampled again at once. */
const resampleExpiredRatio = 0.25;

/** Where each database's sampling resumes, kept from run to run by the caller (cron.ts). */
export type ExpireCursors = Map<Keyspace, Cursor>;

interface Cursor {
  keys: Set<string>;
  it: Iterator<string>;
}

/** Deletes up to one batch of expired keys from `db`; returns how many of the batch expired. */
function sampleBatch(db: Keyspace, cursors: ExpireCursors): { sampled: number; expired: number } {
  let cursor = cursors.get(db);
  if (cursor === undefined || cursor.keys !== db.expiring) {
    cursor = { keys: db.expiring, it: db.expiring.values() };
    cursors.set(db, cursor);
  }
  let sampled = 0;
  let expired = 0;
  while (sampled < kvExpireSampleKeys) {
    const next = cursor.it.next();
    if (next.done) {
      cursor.it = db.expiring.values();
      break;
    }
    sampled++;
    if (db.expireIfNeeded(next.value)) expired++;
  }
  return { sampled, expired };
}

/** One run over every database within the time budget. */
export function activeExpireRun(engine: Engine, cursors: ExpireCursors, budgetMs = kvExpireCycleBudgetMs): void {
  const deadline = performance.now() + budgetMs;
  for (const db of engine.dbs) {
    while (db.expiring.size > 0 && performance.now() < deadline) {
      const { sampled, expired } = sampleBatch(db, cursors);
      if (sampled === 0 || expired / sampled <= resampleExpiredRatio) break;
    }
  }
}
