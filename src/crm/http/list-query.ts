/**
 * The query of GET /api/v1/{object}: q, updated_since, page, per. A per above the spec's maximum
 * of 100 is refused with 400 rather than clamped, so a client never silently gets fewer records a
 * page than it asked for and miscounts its pages (docs/crm.md).
 */
import { SvcError } from "../../core/errors.ts";
import { crmPageMax, crmPageSizeDefault, crmPageSizeMax } from "../../core/limits.ts";
import { parseInstant } from "../objects/iso-time.ts";
import { storableTextProblem } from "../objects/text.ts";
import type { ListQuery } from "../records/record-store.ts";
import { parseSearch } from "../records/search.ts";

function positiveInt(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const text = params.get(name);
  if (text === null) return fallback;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1)
    throw new SvcError("bad_request", `${name}: expected a whole number from 1 to ${max}, got ${JSON.stringify(text)}`);
  const n = Number(text);
  if (n > max) throw new SvcError("bad_request", `${name}: at most ${max}, got ${n}`);
  return n;
}

/**
 * An ISO-8601 date (midnight UTC) or date-time with a zone, read exactly (objects/iso-time.ts:
 * 2024-02-30 and 24:00 are refused, not rolled over), as the UTC text rows store, so it compares
 * as text.
 */
export function parseUpdatedSince(text: string): string {
  const since = parseInstant(text);
  if (since === null) {
    throw new SvcError(
      "bad_request",
      `updated_since: expected an ISO-8601 date or date-time with a zone, years 0000 to 9999 (2024-05-01, 2024-05-01T12:00:00Z), got ${JSON.stringify(text)}`,
    );
  }
  return since;
}

/** `q` as search terms. A NUL would end FTS5's query text early (a syntax error) and PostgreSQL refuses it in any text. */
function searchTerms(q: string): string[] {
  const problem = storableTextProblem(q);
  if (problem !== null) throw new SvcError("bad_request", `q: ${problem}`);
  return parseSearch(q);
}

export function parseListQuery(url: URL): ListQuery {
  const params = url.searchParams;
  const since = params.get("updated_since");
  return {
    terms: searchTerms(params.get("q") ?? ""),
    updatedSince: since === null || since === "" ? null : parseUpdatedSince(since),
    page: positiveInt(params, "page", 1, crmPageMax),
    per: positiveInt(params, "per", crmPageSizeDefault, crmPageSizeMax),
  };
}
