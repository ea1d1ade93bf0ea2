/**
 * The scale-out store: PostgreSQL through Bun's built-in client (a connection pool). A write
 * transaction is `BEGIN ... COMMIT` on one pooled connection; plain reads take any connection.
 */
import { SQL } from "bun";
import { crmPostgresPoolMax } from "../../core/limits.ts";
import type { Db, Queryable } from "./db.ts";

function bindable(params: readonly unknown[]): unknown[] {
  return params.map((p) => (p === undefined ? null : p));
}

function connection(sql: SQL): Queryable {
  return {
    dialect: "postgres",
    async all<T>(text: string, params: readonly unknown[] = []) {
      return [...(await sql.unsafe(text, bindable(params)))] as T[];
    },
    async get<T>(text: string, params: readonly unknown[] = []) {
      const rows = await sql.unsafe(text, bindable(params));
      return (rows[0] ?? undefined) as T | undefined;
    },
    async run(text: string, params: readonly unknown[] = []) {
      const result = await sql.unsafe(text, bindable(params));
      return Number((result as unknown as { count?: number }).count ?? 0);
    },
  };
}

export async function openPostgres(url: string): Promise<Db> {
  const sql = new SQL({ url, max: crmPostgresPoolMax });
  await sql.unsafe("SELECT 1");
  return {
    ...connection(sql),
    write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      return sql.begin((tx) => fn(connection(tx as unknown as SQL))) as Promise<T>;
    },
    async close() {
      await sql.close({ timeout: 5 });
    },
  };
}
