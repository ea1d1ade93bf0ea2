/**
 * The query of GET /api/v1/{object}: q, updated_since, page, per. A per above the spec's maximum
 * of 100 is refused with 400 rather than clamped, so a client never silently gets fewer records a
 * page than it asked for and miscounts its pages (docs/crm.md).
 */
import { SvcError } from "../../core/errors.ts";
import { crmPageMax, crmPageSizeDefault, crmPageSizeMax } from "../../core/limits.ts";
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

/** An ISO-8601 date or date-time, as the UTC timestamp text rows store (so it compares as text). */
export function parseUpdatedSince(text: string): string {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const dateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/.test(text);
  const ms = dateOnly ? Date.parse(`${text}T00:00:00Z`) : dateTime ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new SvcError(
      "bad_request",
      `updated_since: expected an ISO-8601 date or date-time with a zone (2024-05-01, 2024-05-01T12:00:00Z), got ${JSON.stringify(text)}`,
    );
  }
  return new Date(ms).toISOString();
}

export function parseListQuery(url: URL): ListQuery {
  const params = url.searchParams;
  const since = params.get("updated_since");
  return {
    terms: parseSearch(params.get("q") ?? ""),
    updatedSince: since === null || since === "" ? null : parseUpdatedSince(since),
    page: positiveInt(params, "page", 1, crmPageMax),
    per: positiveInt(params, "per", crmPageSizeDefault, crmPageSizeMax),
  };
}
