/** Opens the store a --db value names and brings its schema up to date. */
import type { Logger } from "../../core/log.ts";
import { type Db, parseDbUrl } from "./db.ts";
import { migrate } from "./migrations.ts";
import { openPostgres } from "./postgres.ts";
import { openSqlite } from "./sqlite.ts";

export async function openStore(dbUrl: string, log?: Logger): Promise<Db> {
  const target = parseDbUrl(dbUrl);
  const db = target.kind === "sqlite" ? openSqlite(target.path) : await openPostgres(target.url);
  try {
    await migrate(db, log);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
