/**
 * One thread of a serving SQLite store's search readers (search-readers.ts): a Worker with its own
 * read-only connection to the database, which runs the statements the main thread sends it and
 * answers with their rows, or with the error SQLite raised (its name, message and code, which the
 * main thread maps as it maps its own: store-errors.ts).
 */
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { crmSqliteBusyTimeoutMs, crmSqliteMmapBytes } from "../../core/limits.ts";

/** What the store sends: the database to open, a statement, "reload the planner statistics", or "stop". */
export type SearchReaderMessage = { open: string } | { id: number; mode: "all" | "get"; sql: string; params: SQLQueryBindings[] } | "analyze" | "stop";

/** What the thread answers a statement with. */
export type SearchReaderAnswer = { id: number; rows: unknown } | { id: number; error: { name: string; message: string; code?: string } };

declare const self: Worker;

let db: Database | null = null;

/** Only as a Worker: imported on the main thread (a test importing every module), it does nothing. */
if (!Bun.isMainThread) self.onmessage = onMessage;

function onMessage(event: MessageEvent<SearchReaderMessage>): void {
  const message = event.data;
  if (message === "stop") {
    db?.close();
    db = null;
    self.postMessage("stopped");
    return;
  }
  if (message === "analyze") {
    db?.exec("ANALYZE sqlite_schema");
    return;
  }
  if ("open" in message) {
    db = new Database(message.open);
    db.exec(`PRAGMA busy_timeout = ${crmSqliteBusyTimeoutMs}`);
    db.exec(`PRAGMA mmap_size = ${crmSqliteMmapBytes}`);
    // Reads only: a statement that would write fails here rather than taking the write lock.
    db.exec("PRAGMA query_only = ON");
    return;
  }
  try {
    const statement = db!.query(message.sql);
    const rows = message.mode === "all" ? statement.all(...message.params) : (statement.get(...message.params) ?? undefined);
    self.postMessage({ id: message.id, rows } satisfies SearchReaderAnswer);
  } catch (error) {
    const e = error as Error & { code?: unknown };
    self.postMessage({
      id: message.id,
      error: { name: e.name, message: e.message, code: typeof e.code === "string" ? e.code : undefined },
    } satisfies SearchReaderAnswer);
  }
}
