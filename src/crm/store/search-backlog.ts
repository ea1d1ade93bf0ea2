/**
 * SQLite's search index (FTS5, trigram) written in batches rather than in each create's
 * transaction. Indexing a record in its own small transaction cost ~45 µs of a ~350 µs create
 * (FTS5 writes a new segment at every commit, and merges them); a batch of a few hundred costs
 * ~18 µs a record. So a create leaves its record unindexed — in the object's backlog — and the
 * store indexes the backlog every crmSearchIndexEveryMs (store/sqlite.ts).
 *
 * The backlog is the records whose id is above the object's `upto` in search_indexed (migration
 * 5): every record at or below it is in the index, none above it is. Ids only grow (AUTOINCREMENT),
 * so a create lands above it; the index's triggers act only on records at or below it (an edit or
 * delete of a record in the backlog has nothing in the index to change). A search reads the index
 * and the backlog, checked row by row (pendingMatches), so a record is found from the moment it is
 * committed. Both live in the database: a crash loses nothing, and the next batch picks up where
 * the last committed one ended.
 *
 * PostgreSQL keeps its trigram index in each transaction: its GIN index already defers its own
 * work (fastupdate).
 */
import { crmSearchIndexBatchRows } from "../../core/limits.ts";
import type { CrmObject } from "../rules/record.ts";
import type { Queryable } from "./db.ts";

/** The id at or below which `table`'s records are all in its search index, as a scalar subquery. */
export const indexedUpto = (table: CrmObject) => `(SELECT upto FROM search_indexed WHERE object = '${table}')`;

/**
 * `table`'s records not yet in the search index that `rowCondition` (over the row's own columns)
 * holds for, as a SELECT of their ids (column `match_id`): a range of the rowid, a few hundred
 * rows at most while the store keeps up.
 */
export function pendingMatches(table: CrmObject, rowCondition: string): string {
  return `SELECT id AS match_id FROM ${table} WHERE id > ${indexedUpto(table)} AND ${rowCondition}`;
}

/**
 * Indexes the oldest `crmSearchIndexBatchRows` or fewer records of `table`'s backlog, and moves
 * its `upto` past them, in the caller's transaction. Returns whether a backlog is left.
 */
export async function indexBacklog(tx: Queryable, table: CrmObject, batchRows = crmSearchIndexBatchRows): Promise<boolean> {
  const row = await tx.get<{ upto: number; newest: number }>(
    `SELECT upto, (SELECT coalesce(max(id), 0) FROM ${table}) AS newest FROM search_indexed WHERE object = $1`,
    [table],
  );
  if (row === undefined) throw new Error(`search_indexed has no row for ${table}: the store is not migrated`);
  const upto = Number(row.upto);
  const newest = Number(row.newest);
  if (newest <= upto) return false;
  const to = Math.min(newest, upto + batchRows);
  await tx.run(`INSERT INTO ${table}_fts(rowid, search_text) SELECT id, search_text FROM ${table} WHERE id > $1 AND id <= $2`, [upto, to]);
  await tx.run("UPDATE search_indexed SET upto = $1 WHERE object = $2", [to, table]);
  return to < newest;
}
