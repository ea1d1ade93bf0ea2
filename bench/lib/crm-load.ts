/**
 * Bulk loads of generated records straight into a crm store, bypassing the API: the load is set-up,
 * not what the benchmark measures, and 500k records through the rules engine would take longer than
 * the measurements. The rows are exactly what a create would have stored (crm-data.ts computes
 * search_text with the service's own function), and the store's own indexes and triggers stay in
 * place and are maintained by the load — the SQLite FTS5 triggers fire per row, PostgreSQL's
 * pg_trgm GIN index takes the COPY — so the server reads the indexes it would have built itself.
 *
 * SQLite: one prepared INSERT per row, `rowsPerTransaction` to a transaction, through bun:sqlite
 * on the same file the server has open (WAL lets another process write).
 * PostgreSQL: `COPY ... FROM STDIN (FORMAT csv)` through Debian's psql, then ANALYZE (autovacuum
 * would do that soon after a bulk load anyway; doing it now keeps the plans from depending on
 * when it wakes up).
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import type { CrmObject } from "../../src/crm/rules/contract.ts";
import { postgresBinDir } from "../../test/support/postgres.ts";
import { generateRows, loadColumns, type Population } from "./crm-data.ts";

/** Rows per SQLite transaction: large enough that commits do not dominate, small enough to show progress. */
const rowsPerTransaction = 20_000;
/** How long the SQLite loader waits for the server's own writes (there should be none). */
const sqliteBusyTimeoutMs = 10_000;

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
}

/** A CSV field: quoted when it holds a quote, comma or newline; empty (unquoted) is NULL in COPY's csv format. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\n\r]/.test(text) || text === "" ? `"${text.replace(/"/g, '""')}"` : text;
}

async function psql(url: string, command: string, stdin?: string): Promise<void> {
  const proc = Bun.spawn([join(postgresBinDir, "psql"), url, "-v", "ON_ERROR_STOP=1", "-q", "-c", command], {
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`psql ${command.slice(0, 60)} exited ${code}:\n${out}${err}`);
}

export async function loadPostgres(url: string, object: CrmObject, pop: Population, seed: number): Promise<void> {
  const lines: string[] = [];
  for (const row of generateRows(object, pop, seed)) lines.push(row.map(csvField).join(","));
  await psql(url, `COPY ${object} (${loadColumns(object).join(", ")}) FROM STDIN WITH (FORMAT csv)`, `${lines.join("\n")}\n`);
  await psql(url, `ANALYZE ${object}`);
}
