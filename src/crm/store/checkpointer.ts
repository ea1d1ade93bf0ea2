/**
 * The SQLite store's checkpoints, on a thread of their own: a Worker that a serving process starts
 * (store/sqlite.ts, a serving store). A checkpoint copies the write-ahead log's pages into the
 * database file and syncs the file. SQLite runs one inside whichever COMMIT takes the log past
 * 1,000 pages, so a request paid for it: on 100k opportunities a commit's median was 66 µs, its
 * p99 4.3 ms, and checkpoints were a third of all commit time, which every request committed
 * with it waited for. Here a PASSIVE checkpoint every `everyMs` copies what no reader still needs
 * while the writer goes on; once all is copied, the writer starts the log again from its
 * beginning. A commit's durability does not depend on it: a committed transaction is in the log.
 */
import { Database } from "bun:sqlite";
import { crmSqliteBusyTimeoutMs } from "../../core/limits.ts";

/** What the store sends: where the database is and how often to checkpoint, or "stop". */
export type CheckpointerMessage = { path: string; everyMs: number } | "stop";

declare const self: Worker;

let db: Database | null = null;
let timer: ReturnType<typeof setInterval> | undefined;

/** Only as a Worker: imported on the main thread (a test importing every module), it does nothing. */
if (!Bun.isMainThread) self.onmessage = onMessage;

function onMessage(event: MessageEvent<CheckpointerMessage>): void {
  const message = event.data;
  if (message === "stop") {
    clearInterval(timer);
    db?.close();
    db = null;
    self.postMessage("stopped");
    return;
  }
  db = new Database(message.path);
  db.exec(`PRAGMA busy_timeout = ${crmSqliteBusyTimeoutMs}`);
  timer = setInterval(() => {
    try {
      db?.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch {
      // Busy, or the file is gone while the store closes: the next turn tries again.
    }
  }, message.everyMs);
}
