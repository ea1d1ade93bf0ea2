/**
 * Redis's activerehashing. A key table resizes a step at a time, moved on by the changes made to
 * it (key-table.ts); one that stops changing would keep its keys in two sets of slots, with the
 * old slots' memory held and a missing key looked for in both. So each run of the cron (cron.ts)
 * moves the databases' resizes under way on for at most kvActiveRehashBudgetMs in all. Only the
 * databases' tables: a large hash or set resizing is moved on by changes alone, as in Redis.
 */
import { kvActiveRehashBudgetMs } from "../../core/limits.ts";
import type { Server } from "../kit/server.ts";

/** Old slots moved per step between looks at the clock (a few microseconds' work). */
const slotsPerStep = 1024;

/** One run: moves resizes under way on until they end or the budget is spent. */
export function activeRehashRun(engine: Server, budgetMs = kvActiveRehashBudgetMs): void {
  const deadline = performance.now() + budgetMs;
  for (const db of engine.dbs) {
    while (db.table.resizeStep(slotsPerStep)) if (performance.now() >= deadline) return;
  }
}
