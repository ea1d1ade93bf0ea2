/**
 * The embedded store: bun:sqlite in WAL mode. SQLite has one writer, and a request's transaction
 * spans awaits (the rules engine is async), so write transactions wait their turn in a queue on
 * one writer connection. Plain reads go to a second connection, which in WAL mode sees only
 * committed data — never the half-done transaction of a request still in the queue's head.
 */
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SvcError } from "../../core/errors.ts";
import { crmSqliteBusyTimeoutMs, crmWriteQueueMax } from "../../core/limits.ts";
import type { Db, Queryable, Row } from "./db.ts";
import { fromStoreError } from "./store-errors.ts";

/** $1 → ?1: the same numbered parameters in SQLite's spelling. */
const toSqlite = (sql: string) => sql.replace(/\$(\d+)/g, "?$1");

/**
 * The store's parameters as SQLite binds them: booleans as 0/1 and undefined as NULL. The rest are
 * already what the store writes (strings, numbers, null, bytes), which the Queryable contract says.
 */
function bindable(params: readonly unknown[]): SQLQueryBindings[] {
  return params.map((p) => (p === undefined ? null : typeof p === "boolean" ? (p ? 1 : 0) : (p as SQLQueryBindings)));
}

/** Runs one statement; a refusal that client input can cause becomes its 4xx (store-errors.ts). */
function statement<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw fromStoreError(error);
  }
}

function connection(db: Database): Queryable {
  return {
    dialect: "sqlite",
    async all<T>(sql: string, params: readonly unknown[] = []) {
      return statement(() => db.query(toSqlite(sql)).all(...bindable(params)) as T[]);
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      return statement(() => (db.query(toSqlite(sql)).get(...bindable(params)) ?? undefined) as T | undefined);
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return statement(() => db.query(toSqlite(sql)).run(...bindable(params)).changes);
    },
  };
}

function open(path: string): Database {
  const db = new Database(path, { create: true, strict: false });
  db.exec(`PRAGMA busy_timeout = ${crmSqliteBusyTimeoutMs}`);
  db.exec("PRAGMA journal_mode = WAL");
  // NORMAL in WAL mode: a commit survives a process crash; a power cut may lose the last ones.
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  return db;
}

/**
 * Rows ANALYZE samples per index. Without statistics SQLite answers a sharing-filtered list by
 * the owner index and sorts every visible row to return one page; with them it walks the
 * newest-first index and stops after the page (31 ms → 0.2 ms for 20k visible leads of 100k).
 * 2000 rows is enough for that plan; 400 was not.
 */
const analysisRowsLimit = 2000;
/** How often long-lived connections refresh planner statistics, as SQLite advises for PRAGMA optimize. */
const optimizeEveryMs = 60 * 60 * 1000;

/**
 * Statistics for tables that changed enough since they were last analyzed (all of them, the first
 * time). Those of FTS5's shadow tables are dropped again: made while they were nearly empty, they
 * steer FTS5's own statements to plans that made bulk inserts 13× slower (60k leads: 47 s instead
 * of 3.5 s), and its statements look rows up by key anyway.
 */
function optimize(db: Database): void {
  db.exec(`PRAGMA analysis_limit = ${analysisRowsLimit}`);
  db.exec("PRAGMA optimize = 0x10002");
  if (db.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get() !== null) {
    db.exec("DELETE FROM sqlite_stat1 WHERE tbl LIKE '%\\_fts\\_%' ESCAPE '\\'");
  }
}

export function openSqlite(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const writer = open(path);
  optimize(writer);
  // Opened after: it loads the statistics just made.
  const reader = path === ":memory:" ? writer : open(path);
  const writes = connection(writer);
  const reads = connection(reader);
  let tail: Promise<unknown> = Promise.resolve();
  let queued = 0;

  async function transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    // Busy past busy_timeout (a CLI tool holding the lock): 503, try again.
    statement(() => writer.exec("BEGIN IMMEDIATE"));
    try {
      const result = await fn(writes);
      writer.exec("COMMIT");
      return result;
    } catch (error) {
      if (writer.inTransaction) writer.exec("ROLLBACK");
      throw error;
    }
  }

  const store: Db = {
    ...reads,
    write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      if (queued >= crmWriteQueueMax) {
        return Promise.reject(new SvcError("unavailable", "too many writes waiting; try again", { headers: { "retry-after": "1" } }));
      }
      queued += 1;
      const run = () => transaction(fn).finally(() => (queued -= 1));
      const result = tail.then(run, run);
      tail = result.catch(() => undefined);
      return result;
    },
    async close() {
      clearInterval(refresh);
      await tail;
      if (reader !== writer) reader.close();
      writer.close();
    },
  };
  // In the write queue, so it never lands inside a request's transaction; the reader then
  // reloads what the writer analyzed.
  const refresh = setInterval(() => {
    store
      .write(async () => optimize(writer))
      .then(() => reader.exec("ANALYZE sqlite_schema"))
      .catch(() => undefined);
  }, optimizeEveryMs);
  refresh.unref();
  return store;
}

export type { Row };
