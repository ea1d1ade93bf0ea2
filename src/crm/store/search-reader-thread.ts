/**
 * One thread of a serving SQLite store's search readers (search-readers.ts): a Worker with its own
 * read-only connection to the database, which runs the statements the main thread sends it and
 * answers with their rows, or with the error SQLite raised (its name, message and code, which the
 * main thread maps as it maps its own: store-errors.ts).
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { openConnection } from "./sqlite-connection.ts";

/** What the store sends: the database to open, a statement, "reload the planner statistics", or "stop". */
export type SearchReaderMessage = { open: string } | { id: number; mode: "all" | "get"; sql: string; params: SQLQueryBindings[] } | "analyze" | "stop";

/** What the thread answers a statement with. */
export type SearchReaderAnswer = { id: number; rows: unknown } | { id: number; error: { name: string; message: string; code?: string } };

declare const self: Worker;

let db: Database | null = null;
let path = "";

/** Only as a Worker: imported on the main thread (a test importing every module), it does nothing. */
if (!Bun.isMainThread) self.onmessage = onMessage;

function open(at: string): Database {
  const opened = openConnection(at);
  // Reads only: a statement that would write fails here rather than taking the write lock.
  opened.exec("PRAGMA query_only = ON");
  return opened;
}

function onMessage(event: MessageEvent<SearchReaderMessage>): void {
  const message = event.data;
  if (message === "stop") {
    db?.close();
    db = null;
    self.postMessage("stopped");
    return;
  }
  if (message === "analyze") {
    // A new connection loads the statistics as they are now (ANALYZE sqlite_schema, which
    // reloads them in place, counts as a write, which query_only refuses).
    db?.close();
    db = open(path);
    return;
  }
  if ("open" in message) {
    path = message.open;
    db = open(path);
    return;
  }
  // No connection (it could not open): failing the thread hands its searches back (search-readers.ts).
  if (db === null) throw new Error("a search reader has no connection to the database");
  let answer: SearchReaderAnswer;
  try {
    const statement = db.query(message.sql);
    const rows = message.mode === "all" ? statement.all(...message.params) : (statement.get(...message.params) ?? undefined);
    answer = { id: message.id, rows };
  } catch (error) {
    const e = error as Error & { code?: unknown };
    answer = { id: message.id, error: { name: String(e.name), message: String(e.message), code: typeof e.code === "string" ? e.code : undefined } };
  }
  self.postMessage(answer);
}
