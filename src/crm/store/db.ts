/**
 * The crm store's database seam: one interface, one implementation per database (sqlite.ts,
 * postgres.ts). Queries are written once with PostgreSQL's numbered placeholders ($1, $2, ...);
 * the SQLite side rewrites them to its own ?1, ?2. Where the dialects differ (identity columns,
 * full-text search) the caller asks `dialect`.
 */
import { SvcError } from "../../core/errors.ts";
import type { SettingsCache } from "./settings-cache.ts";

export type Dialect = "sqlite" | "postgres";
export type Row = Record<string, unknown>;

/** Statements run on one connection: inside a write transaction, or plain reads. */
export interface Queryable {
  readonly dialect: Dialect;
  all<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  get<T = Row>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

export interface Db extends Queryable {
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. The
   * request's one transaction (docs/crm.md); SQLite's are run one at a time.
   */
  write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Where a search's reads go, when not to this connection: a serving SQLite store's threads
   * (search-readers.ts). Committed data only, as the plain reads.
   */
  readonly searchReads?: Queryable;
  /** Settings this process keeps between requests, for as long as they stay the same (settings-cache.ts). */
  readonly settings: SettingsCache;
}

/** Whether `sql` only reads (a SELECT): nothing else may be asked twice or left out of a count of writes. */
export const readsOnly = (sql: string) => /^\s*SELECT\b/i.test(sql);

/** Numbered placeholders built up as a query is assembled, so fragments can be composed. */
export class SqlParams {
  readonly values: unknown[] = [];
  /** The placeholder for `value`, e.g. "$3". */
  add(value: unknown): string {
    this.values.push(value === undefined ? null : value);
    return `$${this.values.length}`;
  }
}

/**
 * `s` as literal text inside a LIKE pattern: backslash, % and _ each escaped with a backslash.
 * PostgreSQL's LIKE takes the backslash as its escape by default; SQLite's LIKE has no escape
 * character unless the query says `ESCAPE '\'`.
 */
export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export function parseDbUrl(text: string): { kind: "sqlite"; path: string } | { kind: "postgres"; url: string } {
  if (text.startsWith("sqlite:")) {
    const path = text.slice("sqlite:".length);
    if (path === "") throw new SvcError("bad_config", "--db: sqlite: needs a path, e.g. sqlite:data/crm/crm.db");
    return { kind: "sqlite", path };
  }
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: "postgres", url: text };
  throw new SvcError("bad_config", `--db: expected sqlite:PATH or postgres://..., got ${JSON.stringify(text)}`);
}
