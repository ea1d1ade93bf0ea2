/**
 * The SQLite store's checkpoints, on a thread of their own: a Worker that a serving process starts
 * (store/sqlite.ts, a serving store). A checkpoint copies the write-ahead log's pages into the
 * database file and syncs the file. SQLite runs one inside whichever COMMIT takes the log past
 * 1,000 pages, so a request paid for it: on 100k opportunities a commit's median was 66 µs, its
 * p99 4.3 ms, and checkpoints were a third of all commit time, which every request committed
 * with it waited for. Here a PASSIVE checkpoint every `everyMs` copies what no reader still needs
 * while the writer goes on; once all is copied, the writer starts the log again from its
 * beginning. While writes go on, a checkpoint here never copies all of the log (the writer adds
 * pages while it copies), so past `logPagesMax` it tells the store, whose writer finishes one
 * between two transactions (sqlite.ts). A commit's durability does not depend on it: a committed
 * transaction is in the log.
 */
import { Database } from "bun:sqlite";
import { crmSqliteBusyTimeoutMs } from "../../core/limits.ts";

/** What the store sends: where the database is, how often to checkpoint and how long the log may grow, or "stop". */
export type CheckpointerMessage = { path: string; everyMs: number; logPagesMax: number } | "stop";

/** What the thread sends back: the log is past its bound ("log too long"), or it has closed. */
export type CheckpointerReply = "log too long" | "stopped";

/** What PRAGMA wal_checkpoint answers: whether it was blocked, the log's pages, and how many of them are copied. */
interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

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
    self.postMessage("stopped" satisfies CheckpointerReply);
    return;
  }
  const { logPagesMax } = message;
  db = new Database(message.path);
  db.exec(`PRAGMA busy_timeout = ${crmSqliteBusyTimeoutMs}`);
  timer = setInterval(() => {
    try {
      const result = db?.query("PRAGMA wal_checkpoint(PASSIVE)").get() as CheckpointResult | null;
      if (result !== null && result !== undefined && result.log > logPagesMax) self.postMessage("log too long" satisfies CheckpointerReply);
    } catch {
      // Busy, or the file is gone while the store closes: the next turn tries again.
    }
  }, message.everyMs);
}
