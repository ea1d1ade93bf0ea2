/**
 * The query parameters of GET /topics/{name}/consume, checked before anything is read. A
 * parameter the endpoint does not know, or one given twice, is a 400 rather than a silent guess.
 */
import { fetchBytesDefault, fetchRecordsDefault } from "../../core/limits.ts";
import { badRequest } from "../requests/fields.ts";

export const encodings = ["utf8", "base64"] as const;
export type Encoding = (typeof encodings)[number];

export interface ConsumeParams {
  partition: number;
  offset: number;
  maxRecords: number;
  maxBytes: number;
  encoding: Encoding;
}

export interface ConsumeLimits {
  /** --max-fetch-records */
  fetchRecordsMax: number;
  /** --max-fetch-bytes */
  fetchBytesMax: number;
}

const known = ["partition", "offset", "max_records", "max_bytes", "encoding"];

function single(query: URLSearchParams, name: string): string | null {
  const values = query.getAll(name);
  if (values.length > 1) throw badRequest(`query parameter '${name}' is given ${values.length} times; give it once`);
  return values[0] ?? null;
}

function integerParam(query: URLSearchParams, name: string, min: number, max: number, fallback: number | null): number {
  const text = single(query, name);
  if (text === null) {
    if (fallback === null) throw badRequest(`query parameter '${name}' is required`);
    return fallback;
  }
  const value = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value)) throw badRequest(`query parameter '${name}' must be a non-negative integer, not ${JSON.stringify(text)}`);
  if (value < min || value > max) throw badRequest(`query parameter '${name}' is ${value}; it must be from ${min} to ${max}`);
  return value;
}

export function parseConsumeParams(query: URLSearchParams, limits: ConsumeLimits): ConsumeParams {
  for (const name of new Set(query.keys())) {
    if (!known.includes(name)) throw badRequest(`unknown query parameter '${name}'; expected ${known.join(", ")}`);
  }
  const encoding = single(query, "encoding") ?? "utf8";
  if (!(encodings as readonly string[]).includes(encoding)) {
    throw badRequest(`query parameter 'encoding' must be utf8 or base64, not ${JSON.stringify(encoding)}`);
  }
  return {
    partition: integerParam(query, "partition", 0, Number.MAX_SAFE_INTEGER, null),
    offset: integerParam(query, "offset", 0, Number.MAX_SAFE_INTEGER, null),
    maxRecords: integerParam(query, "max_records", 1, limits.fetchRecordsMax, Math.min(fetchRecordsDefault, limits.fetchRecordsMax)),
    maxBytes: integerParam(query, "max_bytes", 1, limits.fetchBytesMax, Math.min(fetchBytesDefault, limits.fetchBytesMax)),
    encoding: encoding as Encoding,
  };
}
