/**
 * One connection to the SQLite store's file, as every connection of a store opens it: the store's
 * writer and reader (sqlite.ts) and its search threads (search-reader-thread.ts).
 */
import { Database } from "bun:sqlite";
import { crmSqliteBusyTimeoutMs, crmSqliteMmapBytes } from "../../core/limits.ts";

export function openConnection(path: string): Database {
  const db = new Database(path, { create: true, strict: false });
  db.exec(`PRAGMA busy_timeout = ${crmSqliteBusyTimeoutMs}`);
  db.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL mode: a commit survives a process crash; a power cut may lose the last ones.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec(`PRAGMA mmap_size = ${crmSqliteMmapBytes}`);
  return db;
}
