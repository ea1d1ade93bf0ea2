/**
 * The embedded store: bun:sqlite in WAL mode. SQLite has one writer, and a request's transaction
 * spans awaits (the rules engine is async), so write transactions wait their turn in a queue on
 * one writer connection. Plain reads go to a second connection, which in WAL mode sees only
 * committed data — never the half-done transaction of a request still in the queue's head.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { SvcError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import {
  crmCheckpointEveryMs,
  crmSearchIndexEveryMs,
  crmSearchReaderThreads,
  crmSqliteLogKeptBytes,
  crmSqliteLogPagesMax,
  crmWriteGroupMax,
  crmWriteQueueMax,
} from "../../core/limits.ts";
import { crmObjects } from "../rules/record.ts";
import type { CheckpointerMessage, CheckpointerReply } from "./checkpointer.ts";
import { type Db, type Queryable, type Row, readsOnly } from "./db.ts";
import { indexBacklog, indexedUpto } from "./search-backlog.ts";
import { SearchReaders } from "./search-readers.ts";
import { SettingsCache } from "./settings-cache.ts";
import { openConnection } from "./sqlite-connection.ts";
import { fromStoreError } from "./store-errors.ts";
import { stopThread } from "./threads.ts";

/** $1 → ?1: the same numbered parameters in SQLite's spelling. */
const toSqlite = (sql: string) => sql.replace(/\$(\d+)/g, "?$1");

/**
 * The store's parameters as SQLite binds them: booleans as 0/1 and undefined as NULL. The rest are
 * already what the store writes (strings, numbers, null, bytes), which the Queryable contract says.
 */
function bindable(params: readonly unknown[]): SQLQueryBindings[] {
  return params.map((p) => (p === undefined ? null : typeof p === "boolean" ? (p ? 1 : 0) : (p as SQLQueryBindings)));
}

/** A statement and its parameters as bun:sqlite takes them (the search readers' threads too). */
const prepared = (sql: string, params: readonly unknown[]): [string, SQLQueryBindings[]] => [toSqlite(sql), bindable(params)];

/** Runs one statement; a refusal that client input can cause becomes its 4xx (store-errors.ts). */
function statement<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw fromStoreError(error);
  }
}

/**
 * Statements on `db`. `wrote` is told of each one that succeeded and may have changed something
 * (anything but a SELECT: an INSERT, an UPDATE that matched no row, an ALTER TABLE); a statement
 * that fails changes nothing, as SQLite undoes it alone.
 */
function connection(db: Database, wrote?: () => void): Queryable {
  const counted = <T>(sql: string, run: () => T): T => {
    const result = statement(run);
    if (wrote !== undefined && !readsOnly(sql)) wrote();
    return result;
  };
  return {
    dialect: "sqlite",
    async all<T>(sql: string, params: readonly unknown[] = []) {
      return counted(sql, () => db.query(toSqlite(sql)).all(...bindable(params)) as T[]);
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      return counted(sql, () => (db.query(toSqlite(sql)).get(...bindable(params)) ?? undefined) as T | undefined);
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return counted(sql, () => db.query(toSqlite(sql)).run(...bindable(params)).changes);
    },
  };
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
/** FTS5's shadow tables of an object's search index (`leads_fts_data`, ...): see analyze(). */
const ftsShadowTable = "name LIKE '%\\_fts\\_%' ESCAPE '\\'";

/**
 * Planner statistics for the store's own tables, never for FTS5's shadow tables. Statistics of
 * those steer FTS5's statements to plans whose cost grows with the index: a connection that had
 * them loaded spent 0.2 ms per committed create on an empty table and 3.5 ms by 100k rows, and
 * made bulk inserts 13× slower. FTS5 looks its rows up by key and needs none. So the tables are
 * analyzed one by one (PRAGMA optimize would take the shadow tables too).
 */
function analyze(db: Database): void {
  db.exec(`PRAGMA analysis_limit = ${analysisRowsLimit}`);
  const tables = db
    .query<{ name: string }, []>(
      `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND NOT ${ftsShadowTable} AND sql NOT LIKE 'CREATE VIRTUAL%'`,
    )
    .all();
  for (const { name } of tables) db.exec(`ANALYZE "${name}"`);
}

/**
 * Removes shadow-table statistics an earlier version of the store analyzed. It must run before a
 * long-lived connection first reads the schema: a connection keeps the statistics it loaded even
 * after their rows are deleted and it reloads (ANALYZE sqlite_schema), so this runs on a
 * connection of its own, closed before the writer and reader open.
 */
function forgetShadowStatistics(path: string): void {
  const db = openConnection(path);
  try {
    if (db.query("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get() !== null) {
      db.exec(`DELETE FROM sqlite_stat1 WHERE tbl IN (SELECT name FROM sqlite_schema WHERE ${ftsShadowTable})`);
    }
  } finally {
    db.close();
  }
}

/** One row when some object has records its search index is waiting for (search-backlog.ts), else none. */
const backlogCheck = `SELECT 1 WHERE ${crmObjects.map((t) => `EXISTS (SELECT 1 FROM ${t} WHERE id > ${indexedUpto(t)})`).join(" OR ")}`;

/** SQLite's own checkpoint threshold (log pages), which the writer goes back to without its checkpointer. */
const sqliteAutoCheckpointPages = 1000;
/** How long a closing store waits for its checkpointer thread to close its connection. */
const checkpointerStopMs = 1000;

/**
 * Opens the store at `path`. `serving` (a server's store): the write-ahead log is copied into the
 * database by a thread of its own (checkpointer.ts), never inside a request's COMMIT, and new
 * records are indexed for search in batches (search-backlog.ts). A tool's store does neither: it
 * leaves what it creates to the server's next batch.
 */
export function openSqlite(path: string, options: { serving?: boolean; log?: Logger } = {}): Db {
  if (path !== ":memory:") {
    mkdirSync(dirname(path), { recursive: true });
    forgetShadowStatistics(path);
  }
  const writer = openConnection(path);
  analyze(writer);
  /** The checkpointer thread found the log past its bound: the writer finishes a checkpoint before its next transaction. */
  let logTooLong = false;
  const checkpointer =
    options.serving === true && path !== ":memory:"
      ? startCheckpointer(writer, path, () => {
          logTooLong = true;
        })
      : null;
  // Opened after: it loads the statistics just made.
  const reader = path === ":memory:" ? writer : openConnection(path);
  const reads = connection(reader);
  const searchReaders =
    options.serving === true && path !== ":memory:" ? new SearchReaders(path, crmSearchReaderThreads, prepared, fromStoreError, reads) : undefined;
  /**
   * Statements the writer has run that may have changed something (connection's `wrote`): a
   * request in a group that fails with the count where it was wrote nothing, and the group goes
   * on without it. Counted here, as asking SQLite (total_changes(), schema_version) was one more
   * statement per request.
   */
  let writeStatements = 0;
  const writes = connection(writer, () => writeStatements++);
  /** Write transactions waiting for the writer, and whether it is busy with a group of them. */
  const waiting: Waiting[] = [];
  let writing = false;
  let scheduled = false;

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

  /**
   * The waiting transactions as one: each request's work runs in turn in one transaction, and one
   * COMMIT makes them all durable before any is answered. One that fails having written nothing
   * (a 422, a 404) is answered and the rest go on. One that fails after writing, or a COMMIT that
   * fails, rolls the group back, and each runs again in a transaction of its own, as if alone.
   * Savepoints would let one be undone alone, but FTS5 writes its pending index at each.
   */
  async function commitGroup(group: Waiting[]): Promise<void> {
    if (group.length === 1) return settle(group[0]!, () => transaction(group[0]!.fn));
    try {
      statement(() => writer.exec("BEGIN IMMEDIATE"));
    } catch (error) {
      for (const w of group) w.reject(error);
      return;
    }
    const outcomes: (() => void)[] = [];
    for (const w of group) {
      const before = writeStatements;
      try {
        const value = await w.fn(writes);
        outcomes.push(() => w.resolve(value));
      } catch (error) {
        if (writer.inTransaction && writeStatements === before) {
          outcomes.push(() => w.reject(error));
          continue;
        }
        return alone(group);
      }
    }
    try {
      writer.exec("COMMIT");
    } catch {
      return alone(group);
    }
    for (const outcome of outcomes) outcome();
  }

  /** A group undone: each of its transactions again, one by one. */
  async function alone(group: Waiting[]): Promise<void> {
    if (writer.inTransaction) writer.exec("ROLLBACK");
    for (const w of group) await settle(w, () => transaction(w.fn));
  }

  /** Answers `w` with what `run` gives, or the error it throws. */
  async function settle(w: Waiting, run: () => Promise<unknown>): Promise<void> {
    try {
      w.resolve(await run());
    } catch (error) {
      w.reject(error);
    }
  }

  /**
   * The next group starts after the event loop has read what the sockets hold, so requests that
   * arrived while one group committed join the next rather than each waiting for its own commit.
   */
  function schedule(): void {
    if (writing || scheduled || waiting.length === 0) return;
    scheduled = true;
    setImmediate(async () => {
      scheduled = false;
      writing = true;
      try {
        if (logTooLong) {
          logTooLong = false;
          finishCheckpoint(writer);
        }
        await commitGroup(waiting.splice(0, crmWriteGroupMax));
      } finally {
        writing = false;
        schedule();
      }
    });
  }

  /** The search backlog's batch waiting or running (search-backlog.ts); null when none is. */
  let indexing: Promise<unknown> | null = null;
  /**
   * Queues a batch of every object's search backlog, when a read (which takes no lock) finds one:
   * an idle server never asks for the write lock. A failed batch (the table not migrated yet, a
   * tool holding the lock) is tried again at the next tick; the first failure of a run of them is
   * logged, and the batch that ends it, since searches read the backlog row by row meanwhile.
   */
  let batchesFailing = false;
  function indexSoon(): void {
    if (indexing !== null) return;
    try {
      if (reader.query(backlogCheck).get() === null) return;
    } catch {
      return;
    }
    indexing = store
      .write(async (tx) => {
        for (const table of crmObjects) await indexBacklog(tx, table);
      })
      .then(
        () => {
          if (batchesFailing) options.log?.info("the search index takes new records again");
          batchesFailing = false;
        },
        (error: unknown) => {
          if (!batchesFailing) {
            options.log?.warn(
              { err: error },
              `the search index could not take new records; trying again every ${crmSearchIndexEveryMs} ms (searches read them row by row meanwhile)`,
            );
          }
          batchesFailing = true;
        },
      )
      .finally(() => {
        indexing = null;
      });
  }
  const indexer = options.serving === true ? setInterval(indexSoon, crmSearchIndexEveryMs) : null;
  indexer?.unref();

  const store: Db = {
    ...reads,
    searchReads: searchReaders,
    settings: new SettingsCache(),
    write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      if (waiting.length >= crmWriteQueueMax) {
        return Promise.reject(new SvcError("unavailable", "too many writes waiting; try again", { headers: { "retry-after": "1" } }));
      }
      return new Promise<T>((resolve, reject) => {
        waiting.push({ fn, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    async close() {
      clearInterval(refresh);
      if (indexer !== null) clearInterval(indexer);
      await indexing;
      // The writes still waiting commit first; the checkpointer then closes, and the last
      // connection's close checkpoints what is left.
      while (writing || scheduled || waiting.length > 0) await new Promise((resolve) => setImmediate(resolve));
      await searchReaders?.close();
      if (checkpointer !== null) await stopThread(checkpointer, checkpointerStopMs);
      if (reader !== writer) reader.close();
      writer.close();
    },
  };
  // In the write queue, so it never lands inside a request's transaction; the readers then
  // reload what the writer analyzed.
  const refresh = setInterval(() => {
    store
      .write(async () => analyze(writer))
      .then(() => {
        reader.exec("ANALYZE sqlite_schema");
        searchReaders?.reloadStatistics();
      })
      .catch(() => undefined);
  }, optimizeEveryMs);
  refresh.unref();
  return store;
}

/**
 * Turns off the writer's own checkpoints and starts the thread that makes them instead;
 * `onLogTooLong` hears when the log has grown past crmSqliteLogPagesMax.
 */
function startCheckpointer(writer: Database, path: string, onLogTooLong: () => void): Worker {
  writer.exec("PRAGMA wal_autocheckpoint = 0");
  writer.exec(`PRAGMA journal_size_limit = ${crmSqliteLogKeptBytes}`);
  const worker = new Worker(new URL("./checkpointer.ts", import.meta.url).href);
  worker.addEventListener("message", (event: MessageEvent<CheckpointerReply>) => {
    if (event.data === "log too long") onLogTooLong();
  });
  // A thread that fails must not leave the log growing without end: the writer checkpoints again.
  worker.addEventListener("error", () => {
    try {
      writer.exec(`PRAGMA wal_autocheckpoint = ${sqliteAutoCheckpointPages}`);
    } catch {
      // The store has closed: its last connection's close checkpointed the log.
    }
  });
  worker.postMessage({ path, everyMs: crmCheckpointEveryMs, logPagesMax: crmSqliteLogPagesMax } satisfies CheckpointerMessage);
  // The thread never keeps the process alive; it ends with it.
  worker.unref();
  return worker;
}

/**
 * Copies what the checkpointer thread has not yet copied of the log, on the writer between two
 * transactions, so no page is added meanwhile and the checkpoint covers the whole log: the next
 * transaction then starts the log again from its beginning (unless a reader still reads an older
 * part of it; the thread asks again). PASSIVE waits for no reader. It costs the main thread the
 * pages written since the thread's last checkpoint and the database file's sync.
 */
function finishCheckpoint(writer: Database): void {
  try {
    writer.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Busy (the thread's own checkpoint is running): it asks again.
  }
}

/** A request's write transaction waiting for SQLite's one writer. */
interface Waiting {
  fn: (tx: Queryable) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export type { Row };
