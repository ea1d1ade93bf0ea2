/**
 * Every table of a crm database, read from the test process beside the running server, so a
 * test can say "this request changed nothing": its schema (a custom field is an ALTER TABLE) and
 * every row. Read through SQLite's WAL (committed data only) or a PostgreSQL connection of its own.
 * Sequences are left out: PostgreSQL does not roll an identity back, and an id skipped by a refused
 * insert is invisible to users.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";

export interface DbSnapshots {
  /** Table name → the table's columns and rows, as comparable text. */
  take(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

const rowText = (row: Record<string, unknown>) =>
  JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : typeof v === "bigint" ? v.toString() : v));

function sqliteSnapshots(path: string): DbSnapshots {
  const db = new Database(path, { readonly: true });
  return {
    async take() {
      const out = new Map<string, string>();
      // Planner statistics (sqlite_stat*) are refreshed by the server on its own schedule, and so
      // is the search index (FTS5's shadow tables, search_indexed: store/search-backlog.ts), which
      // the records' own rows, compared here, are indexed from.
      const tables = db
        .query(
          `SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%' AND sql NOT LIKE 'CREATE VIRTUAL%'
           AND name NOT LIKE '%\\_fts\\_%' ESCAPE '\\' AND name <> 'search_indexed' ORDER BY name`,
        )
        .all() as { name: string; sql: string }[];
      for (const { name, sql } of tables) {
        const rows = db.query(`SELECT * FROM "${name}" ORDER BY 1`).all() as Record<string, unknown>[];
        out.set(name, `${sql}\n${rows.map(rowText).join("\n")}`);
      }
      return out;
    },
    async close() {
      db.close();
    },
  };
}

async function postgresSnapshots(url: string): Promise<DbSnapshots> {
  const sql = new SQL({ url, max: 1 });
  return {
    async take() {
      const out = new Map<string, string>();
      const columns = (await sql.unsafe(
        `SELECT table_name, string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) AS cols
         FROM information_schema.columns WHERE table_schema = 'public' GROUP BY table_name ORDER BY table_name`,
      )) as { table_name: string; cols: string }[];
      for (const { table_name, cols } of columns) {
        const rows = (await sql.unsafe(`SELECT * FROM "${table_name}" ORDER BY 1`)) as Record<string, unknown>[];
        out.set(table_name, `${cols}\n${[...rows].map(rowText).join("\n")}`);
      }
      return out;
    },
    async close() {
      await sql.close({ timeout: 5 });
    },
  };
}

export function openSnapshots(dbUrl: string): Promise<DbSnapshots> {
  return dbUrl.startsWith("sqlite:") ? Promise.resolve(sqliteSnapshots(dbUrl.slice("sqlite:".length))) : postgresSnapshots(dbUrl);
}

/** The tables whose text differs between two snapshots. */
export function changedTables(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}
