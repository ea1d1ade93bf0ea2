/**
 * Opens the store a --db value names and brings its schema up to date. It sits above the
 * sharing module because one migration's data (materialized access) is computed, not declared.
 */
import type { Logger } from "../../core/log.ts";
import { type Db, parseDbUrl } from "./db.ts";
import { rebuildAllAccess } from "../sharing/sharing-rules.ts";
import { accessRowsVersion, migrate } from "./migrations.ts";
import { openPostgres } from "./postgres.ts";
import { openSqlite } from "./sqlite.ts";

/** `serving`: the store of a long-running server (SQLite then checkpoints on a thread of its own and indexes searches in batches). */
export async function openStore(dbUrl: string, log?: Logger, options: { serving?: boolean } = {}): Promise<Db> {
  const target = parseDbUrl(dbUrl);
  const db = target.kind === "sqlite" ? openSqlite(target.path, { serving: options.serving, log }) : await openPostgres(target.url);
  try {
    const applied = await migrate(db, log);
    // Records stored before access was materialized get their rows once, when it is introduced.
    if (applied.includes(accessRowsVersion)) await db.write((tx) => rebuildAllAccess(tx));
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
