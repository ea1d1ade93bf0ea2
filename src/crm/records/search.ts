/**
 * `q`: every whitespace-separated term must occur, case-insensitively, somewhere in the record's
 * name-like fields (objects/fields.ts searchFields). Both databases answer from an index of
 * trigrams — SQLite's FTS5 trigram tokenizer, PostgreSQL's pg_trgm — so both mean substring
 * match and agree. A term under three characters has no trigram to look up; it is matched by a
 * scan of the rows the other conditions leave.
 */
import { SvcError } from "../../core/errors.ts";
import { crmSearchCharsMax, crmSearchTermsMax } from "../../core/limits.ts";
import type { CrmObject } from "../rules/record.ts";
import { type Dialect, escapeLike, type SqlParams } from "../store/db.ts";
import { pendingMatches } from "../store/search-backlog.ts";

const trigramChars = 3;

/** Whether `text` has a trigram: three characters (not bytes) or more. */
export const hasTrigram = (text: string): boolean => [...text].length >= trigramChars;

export function parseSearch(q: string): string[] {
  if (q.length > crmSearchCharsMax) throw new SvcError("bad_request", `q: at most ${crmSearchCharsMax} characters`);
  const terms = q
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t !== "");
  if (terms.length > crmSearchTermsMax) throw new SvcError("bad_request", `q: at most ${crmSearchTermsMax} terms`);
  return terms;
}

const ftsPhrase = (term: string) => `"${term.replace(/"/g, '""')}"`;

/** The SQL condition for `terms` over `table`, or null when there are none. */
function searchPredicate(dialect: Dialect, table: CrmObject, terms: readonly string[], p: SqlParams): string | null {
  if (terms.length === 0) return null;
  const parts: string[] = [];
  if (dialect === "sqlite") {
    const indexed = terms.filter(hasTrigram);
    if (indexed.length > 0) parts.push(`id IN (${sqliteMatches(table, indexed, p)})`);
    for (const t of terms.filter((t) => !hasTrigram(t))) parts.push(contains("sqlite", "search_text", t, p));
  } else {
    for (const t of terms) parts.push(postgresTermMatch(t, p));
  }
  return parts.join(" AND ");
}

/** A run of what pg_trgm takes for a word's characters: letters and digits. */
const wordRun = /[\p{L}\p{N}]+/gu;

/**
 * PostgreSQL: `search_text` holds `term`. pg_trgm splits a LIKE pattern into words at anything
 * but letters and digits and pads each word where something other than a wildcard bounds it, so
 * `%ivy.novak%` asks the index for ten trigrams, among them "  n" and " no", which begin a large
 * share of all words; the index scan read their long lists (4.8 ms at 1M leads). Such a term asks
 * the index for its words joined by wildcards instead (`%ivy%novak%`: the four unpadded trigrams,
 * 2.1 ms) and is checked exactly on the rows it finds. Only when a word of three characters or more
 * is left, so the index still has a trigram to look up.
 */
function postgresTermMatch(term: string, p: SqlParams): string {
  const words = term.match(wordRun) ?? [];
  if (words.join("") === term || !words.some(hasTrigram)) return `search_text LIKE ${p.add(`%${escapeLike(term)}%`)}`;
  return `search_text LIKE ${p.add(`%${words.join("%")}%`)} AND ${contains("postgres", "search_text", term, p)}`;
}

/**
 * The SQL condition that a row of alias `row` matches `terms` and `extra` (conditions on that
 * row), read from the row itself rather than the trigram index: for rows already chosen some
 * other way (a list read from the user's newest records), where asking the index would read every
 * match. The same substring match as the index gives: `search_text` is kept lower-cased, as the
 * terms are.
 */
export function rowMatches(dialect: Dialect, row: string, terms: readonly string[], extra: readonly string[], p: SqlParams): string {
  const parts = terms.map((t) => contains(dialect, `${row}.search_text`, t, p));
  return [...parts, ...extra].join(" AND ") || "1 = 1";
}

/**
 * Whether `column` holds `term`, tested on the row. strpos, not LIKE, on PostgreSQL: a plain
 * substring test, with no pattern to escape, which the trigram index cannot serve, so the planner
 * has no index to weigh for these rows (a page query's round trip 0.43 → 0.36 ms at 100k rows).
 */
function contains(dialect: Dialect, column: string, term: string, p: SqlParams): string {
  return `${dialect === "sqlite" ? "instr" : "strpos"}(${column}, ${p.add(term)}) > 0`;
}

/**
 * The ids (column `match_id`) of `table`'s rows that match `terms` (and `extra`, conditions on
 * the row), as a query a list can drive from: SQLite answers terms of three characters or more from FTS5 alone,
 * without reading the rows; anything else reads the matching rows. Null when there is nothing to
 * match on.
 */
export function matchingIds(dialect: Dialect, table: CrmObject, terms: readonly string[], extra: readonly string[], p: SqlParams): string | null {
  if (terms.length === 0 && extra.length === 0) return null;
  if (dialect === "sqlite" && extra.length === 0 && terms.every(hasTrigram)) return sqliteMatches(table, terms, p);
  return rowsMatching(dialect, table, "id AS match_id", terms, extra, p);
}

/** `columns` of `table`'s rows that match `terms` and every one of `conditions`, read from the rows. */
function rowsMatching(dialect: Dialect, table: CrmObject, columns: string, terms: readonly string[], conditions: readonly string[], p: SqlParams): string {
  const search = searchPredicate(dialect, table, terms, p);
  const all = search === null ? conditions : [search, ...conditions];
  return `SELECT ${columns} FROM ${table} WHERE ${all.join(" AND ")}`;
}

/**
 * The ids (column `match_id`) of `table`'s rows holding every one of `terms` (each of three
 * characters or more): those in SQLite's search index, from FTS5, and those created since its
 * last batch (store/search-backlog.ts), each checked on its row. The two never share a row.
 */
function sqliteMatches(table: CrmObject, terms: readonly string[], p: SqlParams): string {
  const indexed = `SELECT rowid AS match_id FROM ${table}_fts WHERE ${table}_fts MATCH ${p.add(terms.map(ftsPhrase).join(" AND "))}`;
  const pending = pendingMatches(table, terms.map((t) => contains("sqlite", "search_text", t, p)).join(" AND "));
  return `${indexed} UNION ALL ${pending}`;
}

/**
 * PostgreSQL: the `id` and `created_at` of `table`'s rows that match `terms` and every one of
 * `conditions` (on the row: updated_since, the user's access), so that a list chosen from all the
 * matches decides each one on the row the trigram index's check reads anyway.
 */
export function postgresMatchingRows(table: CrmObject, terms: readonly string[], conditions: readonly string[], p: SqlParams): string {
  return rowsMatching("postgres", table, "id, created_at", terms, conditions, p);
}
