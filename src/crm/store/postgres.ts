/**
 * The scale-out store: PostgreSQL through Bun's built-in client (a connection pool). A write
 * transaction is `BEGIN ... COMMIT` on one pooled connection; plain reads take any connection.
 */
import { SQL } from "bun";
import { crmPostgresPoolMax } from "../../core/limits.ts";
import type { Db, Queryable } from "./db.ts";
import { SettingsCache } from "./settings-cache.ts";
import { fromStoreError } from "./store-errors.ts";

function bindable(params: readonly unknown[]): unknown[] {
  return params.map((p) => (p === undefined ? null : p));
}

/** Runs one statement; a refusal that client input can cause becomes its 4xx (store-errors.ts). */
async function statement(sql: SQL, text: string, params: readonly unknown[]) {
  try {
    return await sql.unsafe(text, bindable(params));
  } catch (error) {
    throw fromStoreError(error);
  }
}

function connection(sql: SQL): Queryable {
  return {
    dialect: "postgres",
    async all<T>(text: string, params: readonly unknown[] = []) {
      return [...(await statement(sql, text, params))] as T[];
    },
    async get<T>(text: string, params: readonly unknown[] = []) {
      const rows = await statement(sql, text, params);
      return (rows[0] ?? undefined) as T | undefined;
    },
    async run(text: string, params: readonly unknown[] = []) {
      const result = await statement(sql, text, params);
      return Number((result as unknown as { count?: number }).count ?? 0);
    },
  };
}

export async function openPostgres(url: string): Promise<Db> {
  const sql = new SQL({ url, max: crmPostgresPoolMax });
  await sql.unsafe("SELECT 1");
  return {
    ...connection(sql),
    settings: new SettingsCache(),
    write<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
      // A serialization failure or deadlock can also surface at BEGIN or COMMIT.
      return (sql.begin((tx) => fn(connection(tx as unknown as SQL))) as Promise<T>).catch((error) => {
        throw fromStoreError(error);
      });
    },
    async close() {
      await sql.close({ timeout: 5 });
    },
  };
}
