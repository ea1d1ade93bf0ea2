/** The credential of an `Authorization: Bearer <token>` header (RFC 6750), shared by the services. */

const bearer = /^Bearer\s+(\S+)\s*$/i;

/** The token of a Bearer Authorization header, or null when there is none or it uses another scheme. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  if (header === null) return null;
  return bearer.exec(header)?.[1] ?? null;
}
