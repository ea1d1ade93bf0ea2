/**
 * Cross-origin policy of one HTTP service: off (no CORS headers at all — browsers then refuse
 * cross-origin reads), a list of allowed origins, or any origin. The media API accepts any origin
 * (its token is in the body); the broker lists origins with --cors-origin.
 */

export type CorsPolicy = { kind: "off" } | { kind: "origins"; origins: readonly string[] } | { kind: "any" };

/** How long a browser may cache a preflight answer. */
const preflightMaxAgeSeconds = 600;
/** Response headers a browser script may read besides the CORS-safelisted ones. */
const exposedHeaders = "X-Request-Id, Retry-After, Location";

/** The Access-Control-Allow-Origin value for this request, or null when CORS does not apply. */
export function allowedOrigin(policy: CorsPolicy, origin: string | null): string | null {
  if (origin === null || policy.kind === "off") return null;
  if (policy.kind === "any") return "*";
  return policy.origins.includes(origin) ? origin : null;
}

/** Headers added to an ordinary (non-preflight) response. */
export function corsHeaders(policy: CorsPolicy, origin: string | null): Record<string, string> {
  const allowed = allowedOrigin(policy, origin);
  if (allowed === null) return policy.kind === "origins" ? { vary: "Origin" } : {};
  const headers: Record<string, string> = {
    "access-control-allow-origin": allowed,
    "access-control-expose-headers": exposedHeaders,
  };
  if (policy.kind === "origins") headers.vary = "Origin";
  return headers;
}

/** Adds the CORS headers of an ordinary response to `headers`; with CORS off, reads nothing. */
export function setCorsHeaders(policy: CorsPolicy, req: Request, headers: Headers): void {
  if (policy.kind === "off") return;
  for (const [name, value] of Object.entries(corsHeaders(policy, req.headers.get("origin")))) headers.set(name, value);
}

/** Headers of a preflight answer for a path that serves `methods`. */
export function preflightHeaders(policy: CorsPolicy, req: Request, methods: readonly string[]): Record<string, string> {
  const allowed = allowedOrigin(policy, req.headers.get("origin"));
  const headers: Record<string, string> = { allow: [...methods, "OPTIONS"].join(", ") };
  if (allowed === null) return headers;
  return {
    ...headers,
    ...corsHeaders(policy, req.headers.get("origin")),
    "access-control-allow-methods": methods.join(", "),
    // Echoing the requested headers is what permissive CORS middlewares do; the origin check above
    // is what keeps unlisted sites out.
    "access-control-allow-headers": req.headers.get("access-control-request-headers") ?? "",
    "access-control-max-age": String(preflightMaxAgeSeconds),
  };
}
