/**
 * Bearer-token authentication for the REST API. With `--requirepass P` (or CONFIG SET
 * requirepass) every request must carry `Authorization: Bearer P`; without a password none is
 * needed. The password is read on every request: REST has no logged-in connections, so a new
 * password applies to the very next request. The comparison is the one AUTH uses
 * (passwordMatches: SHA-256 digests compared in constant time).
 */
import { SvcError } from "../../core/errors.ts";
import { passwordMatches } from "../auth.ts";

const bearer = /^Bearer +(.*)$/i;

export function checkBearer(req: Request, password: string): void {
  // Not even a look at the headers without a password: reading one makes Bun build them all.
  if (password === "") return;
  const authorization = req.headers.get("authorization");
  const match = authorization === null ? null : bearer.exec(authorization);
  // A missing header is compared like a wrong token, so the timing shows neither.
  const ok = passwordMatches(match?.[1] ?? "", password) && match !== null;
  if (!ok) throw new SvcError("unauthorized", "Unauthorized", { headers: { "www-authenticate": 'Bearer realm="kv"' } });
}
