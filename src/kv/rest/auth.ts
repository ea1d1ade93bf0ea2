/**
 * Bearer-token authentication for the REST API, which runs as the ACL default user. While that
 * user takes any password (no requirepass, no ACL password) no header is needed; otherwise every
 * request must carry `Authorization: Bearer <one of its passwords>` — `--requirepass P`, CONFIG
 * SET requirepass and ACL SETUSER default all apply to the very next request, as REST has no
 * logged-in connections. The comparison is the one AUTH uses (SHA-256 digests compared in
 * constant time); a default user that is off lets no request in.
 */
import { SvcError } from "../../core/errors.ts";
import type { AclUsers } from "../acl/acl-users.ts";
import { defaultUser } from "../auth.ts";

const bearer = /^Bearer +(.*)$/i;

export function checkBearer(req: Request, acl: AclUsers): void {
  const user = acl.defaultUser;
  // Not even a look at the headers without a password: reading one makes Bun build them all.
  if (user.enabled && user.nopass) return;
  const authorization = req.headers.get("authorization");
  const match = authorization === null ? null : bearer.exec(authorization);
  // A missing header is compared like a wrong token, so the timing shows neither.
  const ok = acl.authenticate(defaultUser, match?.[1] ?? "") !== null && match !== null;
  if (!ok) throw new SvcError("unauthorized", "Unauthorized", { headers: { "www-authenticate": 'Bearer realm="kv"' } });
}
