/**
 * Operating errors: bad input, a missing resource, a peer that went away. Each carries a stable
 * machine-readable code (clients and tests match on it, so a code never changes meaning) and the
 * HTTP status it is answered with. Every code svc can answer with is listed here, once.
 */

export const errorStatus = {
  bad_request: 400,
  malformed_json: 400,
  bad_config: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  body_too_large: 413,
  unsupported_media_type: 415,
  invalid: 422,
  rate_limited: 429,
  internal: 500,
  /** Stored data that cannot be read back (a damaged file); the service refuses to start on it. */
  data_corrupt: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface SvcErrorOptions {
  /** Structured detail a service's error envelope may show (e.g. the CRM's field errors). */
  details?: unknown;
  /** Extra response headers, e.g. Retry-After on 429 or Allow on 405. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class SvcError extends Error {
  override name = "SvcError";
  readonly status: number;
  readonly details: unknown;
  readonly headers: Record<string, string> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: SvcErrorOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.status = errorStatus[code];
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isSvcError(error: unknown): error is SvcError {
  return error instanceof SvcError;
}
