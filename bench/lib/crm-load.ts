/**
 * Bulk loads of generated records straight into a crm store, bypassing the API: the load is set-up,
 * not what the benchmark measures, and 500k records through the rules engine would take longer than
 * the measurements. The rows are exactly what a create would have stored (crm-data.ts computes
 * search_text with the service's own function), and the store's own indexes and triggers stay in
 * place and are maintained by the load — PostgreSQL's pg_trgm GIN index takes the COPY — so the
 * server reads the indexes it would have built itself. SQLite's search index takes new records in
 * batches (src/crm/store/search-backlog.ts): the loaded rows are its backlog, which the load then
 * indexes with the server's own function, so the server starts with none left.
 *
 * SQLite: one prepared INSERT per row, `rowsPerTransaction` to a transaction, through bun:sqlite
 * (WAL, so it may run beside a server that has the file open; the benchmark stops it anyway).
 * PostgreSQL: `COPY ... FROM STDIN (FORMAT csv)` through Debian's psql, the rows streamed to it as
 * they are generated (a million rows' CSV need not sit in memory, and COPY works while the next
 * rows are made), then ANALYZE (autovacuum would do that soon after a bulk load anyway; doing it
 * now keeps the plans from depending on when it wakes up).
 *
 * After the loads, afterBulkLoad does what an operator does after an import that bypassed the
 * server: `svc crm sharing recalculate` when this checkout has it (a store that keeps sharing in
 * tables maintained on write cannot see rows written behind its back), then, on PostgreSQL,
 * VACUUM (ANALYZE) of the whole database: autovacuum (insert-triggered since PostgreSQL 13)
 * would otherwise vacuum the fresh tables, and whatever recalculate filled, in the middle of a
 * measurement.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { CrmObject } from "../../src/crm/rules/contract.ts";
import { openStore } from "../../src/crm/store/open.ts";
import { indexBacklog } from "../../src/crm/store/search-backlog.ts";
import { runCrmTool } from "../../test/crm/support/process.ts";
import { postgresBinDir } from "../../test/support/postgres.ts";
import { generateRows, loadColumns, type Population } from "./crm-data.ts";

/** Rows per SQLite transaction: large enough that commits do not dominate, small enough to show progress. */
const rowsPerTransaction = 20_000;
/** Loaded rows indexed for search per transaction, as the server would in its batches. */
const backlogRowsPerBatch = 100_000;
/** How long the SQLite loader waits for the server's own writes (there should be none). */
const sqliteBusyTimeoutMs = 10_000;
/** CSV lines handed to psql at a time: big enough that the pipe's round trips do not show. */
const copyChunkRows = 10_000;

export async function loadSqlite(path: string, object: CrmObject, pop: Population, seed: number): Promise<void> {
  const db = new Database(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${sqliteBusyTimeoutMs}`);
    const columns = loadColumns(object);
    const insert = db.prepare(`INSERT INTO ${object} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
    const batch = db.transaction((rows: unknown[][]) => {
      for (const row of rows) insert.run(...(row as any[]));
    });
    let rows: unknown[][] = [];
    for (const row of generateRows(object, pop, seed)) {
      rows.push(row);
      if (rows.length === rowsPerTransaction) {
        batch(rows);
        rows = [];
      }
    }
    if (rows.length > 0) batch(rows);
  } finally {
    db.close();
  }
  const store = await openStore(`sqlite:${path}`);
  try {
    while (await store.write((tx) => indexBacklog(tx, object, backlogRowsPerBatch)));
    // One segment, as FTS5 advises after a bulk load. Left as the load wrote them, its big new
    // segments sit with the server's small ones, and the first merges rewrite them inside
    // requests' commits (an 80 ms batch of 16 records).
    await store.write((tx) => tx.run(`INSERT INTO ${object}_fts(${object}_fts) VALUES ('optimize')`));
  } finally {
    await store.close();
  }
}

/** A CSV field: quoted when it holds a quote, comma or newline; empty (unquoted) is NULL in COPY's csv format. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\n\r]/.test(text) || text === "" ? `"${text.replace(/"/g, '""')}"` : text;
}

const psqlPath = join(postgresBinDir, "psql");

async function finish(proc: Bun.Subprocess<any, "pipe", "pipe">, command: string): Promise<string> {
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`psql ${command.slice(0, 60)} exited ${code}:\n${out}${err}`);
  return out;
}

/** One SQL command through psql; its unaligned, tuples-only output. */
export async function psql(url: string, command: string): Promise<string> {
  const proc = Bun.spawn([psqlPath, url, "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-c", command], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return (await finish(proc, command)).trim();
}

export async function loadPostgres(url: string, object: CrmObject, pop: Population, seed: number): Promise<void> {
  const command = `COPY ${object} (${loadColumns(object).join(", ")}) FROM STDIN WITH (FORMAT csv)`;
  const proc = Bun.spawn([psqlPath, url, "-v", "ON_ERROR_STOP=1", "-q", "-c", command], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const done = finish(proc, command);
  let lines: string[] = [];
  const send = async () => {
    proc.stdin.write(`${lines.join("\n")}\n`);
    // flush waits for the pipe to take the chunk: psql's pace, not a growing buffer, sets ours.
    await proc.stdin.flush();
    lines = [];
  };
  try {
    for (const row of generateRows(object, pop, seed)) {
      lines.push(row.map(csvField).join(","));
      if (lines.length === copyChunkRows) await send();
    }
    if (lines.length > 0) await send();
  } finally {
    await proc.stdin.end();
  }
  await done;
  await psql(url, `ANALYZE ${object}`);
}

/** Rows in a table, read straight from the store (not the API, whose `total` may be capped). */
export async function countRows(db: string, table: string): Promise<number> {
  if (db.startsWith("sqlite:")) {
    const conn = new Database(db.slice("sqlite:".length), { readonly: true });
    try {
      return Number((conn.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    } finally {
      conn.close();
    }
  }
  return Number(await psql(db, `SELECT count(*) FROM ${table}`));
}

/** Seconds each step after a bulk load took; null where the step does not apply. */
export interface AfterLoad {
  /** `svc crm sharing recalculate`; null when this checkout has no such tool. */
  recalculateSeconds: number | null;
  /** VACUUM (ANALYZE) of the database; null on SQLite, whose store analyzes its tables when it opens. */
  vacuumSeconds: number | null;
}

let recalculateKnown: Promise<boolean> | undefined;

/**
 * Whether `svc crm sharing recalculate` exists. Its --help must succeed and name the tool: in a
 * checkout without it, `svc crm sharing recalculate --help` prints the server's usage and exits 0.
 */
export function hasSharingRecalculate(db: string): Promise<boolean> {
  recalculateKnown ??= runCrmTool(db, ["sharing", "recalculate", "--help"]).then((r) => r.code === 0 && /sharing recalculate/.test(r.stdout + r.stderr));
  return recalculateKnown;
}

/** What an operator runs after an import that bypassed the server (see the header); run with the server stopped. */
export async function afterBulkLoad(db: string): Promise<AfterLoad> {
  let recalculateSeconds: number | null = null;
  if (await hasSharingRecalculate(db)) {
    const start = performance.now();
    const r = await runCrmTool(db, ["sharing", "recalculate"]);
    if (r.code !== 0) throw new Error(`svc crm sharing recalculate failed (${r.code}): ${r.stderr}`);
    recalculateSeconds = (performance.now() - start) / 1000;
  }
  let vacuumSeconds: number | null = null;
  if (!db.startsWith("sqlite:")) {
    const start = performance.now();
    await psql(db, "VACUUM (ANALYZE)");
    vacuumSeconds = (performance.now() - start) / 1000;
  }
  return { recalculateSeconds, vacuumSeconds };
}
