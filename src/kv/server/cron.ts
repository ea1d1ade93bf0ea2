/**
 * The server's periodic work, one timer as Redis's serverCron: a sample of the instantaneous
 * rates INFO reports, the active expiry cycle (unless DEBUG SET-ACTIVE-EXPIRE 0 turned it off),
 * the key tables' idle resizes moved on, CLIENT TRACKING's table held to its bound, and the
 * clients blocked on keys that the cycle or anything else since made ready served. It waits
 * while a script is busy.
 */
import { kvCronIntervalMs } from "../../core/limits.ts";
import { activeRehashRun } from "./active-rehash.ts";
import type { Engine } from "./engine.ts";
import { activeExpireRun, type ExpireCursors } from "./expire.ts";
import { usedMemoryBytes } from "../observe/server-stats.ts";

/** Starts the runs; returns the function that stops them. */
export function startCron(engine: Engine): () => void {
  const cursors: ExpireCursors = new Map();
  const timer = setInterval(() => {
    // Nothing changes the data around a busy script, as Redis runs no cron then.
    if (engine.busyScript !== null) return;
    engine.stats.sample(engine.clock.monotonicMs(), usedMemoryBytes());
    engine.checkMaxmemory();
    // CLIENT PAUSE holds the cycle too, so that nothing changes the data meanwhile.
    if (engine.activeExpire && !engine.clientPause.active) activeExpireRun(engine, cursors);
    activeRehashRun(engine);
    engine.tracking.bound(null);
    engine.blocking.serveReady();
  }, kvCronIntervalMs);
  return () => clearInterval(timer);
}
