/**
 * PostgreSQL's search among the records of a few owners. A rep sees their own records and a few
 * others' (sharing/access.ts, accessibleOwners); the trigram index answers for everyone's, so a
 * search read the whole posting list of each trigram and visited every match's row to find the
 * fifth the rep may see. The owner-keyed index (migration 6, search_owner_grams) is asked once per
 * owner instead: at 1M leads `ann smi` for a rep who sees three owners read 388 rows instead of
 * 2,012, 6.3 → 2.1 ms a request.
 *
 * Each owner's scan costs its share of the matches and little else (an owner without a match
 * ~3.5 µs; a thousand of them 3.6–4.0 ms a statement), but where the owners hold most records the
 * scans together read about what one scan of everyone's would, twice over at worst (all sixteen
 * owners: 12.5 against 6.3 ms). So the owners' scans are taken only while the owners are a small
 * share of the users.
 */
import { crmSearchOwnerShareMax } from "../../core/limits.ts";
import type { CrmObject } from "../rules/record.ts";
import type { SqlParams } from "../store/db.ts";
import { hasTrigram, rowMatches } from "./search.ts";

/** Whether a search by someone who sees `owners` of `users` users' records asks per owner. */
export function searchesPerOwner(owners: readonly number[], users: number, terms: readonly string[]): boolean {
  return owners.length * crmSearchOwnerShareMax <= users && terms.some(hasTrigram);
}

/**
 * The `id` and `created_at` of `table`'s rows owned by one of `owners` that match `terms` and
 * every one of `conditions` (on the row, which is named `r`). The index narrows each owner's rows to
 * those holding every three-character window of the keyed terms; each is then checked exactly.
 */
export function ownersMatchingRows(table: CrmObject, owners: readonly number[], terms: readonly string[], conditions: readonly string[], p: SqlParams): string {
  const ownerList = `${p.add(`{${owners.join(",")}}`)}::integer[]`;
  const keys = terms
    // A term gives the index keys only with a window of three characters.
    .filter(hasTrigram)
    .map((t) => `search_owner_grams(owner_.id, ${p.add(t)})`)
    .join(" || ");
  const exact = rowMatches("postgres", "r", terms, conditions, p);
  return `SELECT m.id, m.created_at FROM unnest(${ownerList}) AS owner_(id) CROSS JOIN LATERAL
    (SELECT r.id, r.created_at FROM ${table} AS r WHERE search_owner_grams(r.owner_id, r.search_text) @> (${keys}) AND ${exact}) AS m`;
}
