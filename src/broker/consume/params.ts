/**
 * The query parameters of GET /topics/{name}/consume and GET /groups/{group}/consume, checked
 * before anything is read. A
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

/** The parameters of GET /groups/{group}/consume: a topic in place of the offset, which the group's commit gives. */
export interface GroupConsumeParams extends Omit<ConsumeParams, "offset"> {
  topic: string;
}

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

/** The parameters both consume endpoints share, after refusing any the endpoint does not know. */
function commonParams(query: URLSearchParams, limits: ConsumeLimits, known: readonly string[]): Omit<ConsumeParams, "offset"> {
  for (const name of new Set(query.keys())) {
    if (!known.includes(name)) throw badRequest(`unknown query parameter '${name}'; expected ${known.join(", ")}`);
  }
  const encoding = single(query, "encoding") ?? "utf8";
  if (!(encodings as readonly string[]).includes(encoding)) {
    throw badRequest(`query parameter 'encoding' must be utf8 or base64, not ${JSON.stringify(encoding)}`);
  }
  return {
    partition: integerParam(query, "partition", 0, Number.MAX_SAFE_INTEGER, null),
    maxRecords: integerParam(query, "max_records", 1, limits.fetchRecordsMax, Math.min(fetchRecordsDefault, limits.fetchRecordsMax)),
    maxBytes: integerParam(query, "max_bytes", 1, limits.fetchBytesMax, Math.min(fetchBytesDefault, limits.fetchBytesMax)),
    encoding: encoding as Encoding,
  };
}

const topicKnown = ["partition", "offset", "max_records", "max_bytes", "encoding"];
const groupKnown = ["topic", "partition", "max_records", "max_bytes", "encoding"];

export function parseConsumeParams(query: URLSearchParams, limits: ConsumeLimits): ConsumeParams {
  const common = commonParams(query, limits, topicKnown);
  return { ...common, offset: integerParam(query, "offset", 0, Number.MAX_SAFE_INTEGER, null) };
}

export function parseGroupConsumeParams(query: URLSearchParams, limits: ConsumeLimits): GroupConsumeParams {
  const common = commonParams(query, limits, groupKnown);
  const topic = single(query, "topic");
  if (topic === null) throw badRequest("query parameter 'topic' is required");
  return { ...common, topic };
}
