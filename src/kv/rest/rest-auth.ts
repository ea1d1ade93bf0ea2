/**
 * Who a REST request runs as. REST has no logged-in connections, so every request says it:
 * - `Authorization: Basic <base64 of name:password>` runs as that ACL user (ACL SETUSER, the ACL
 *   file), as a RESP client does after `AUTH name password`;
 * - `Authorization: Bearer <password>` runs as the default user, with one of its passwords:
 *   `--requirepass P`, CONFIG SET requirepass, ACL SETUSER default;
 * - no header runs as the default user while it is on and takes any password (no requirepass).
 * Anything else is 401. Passwords are checked as AUTH checks them (SHA-256 digests compared in
 * constant time), and a change applies to the very next request. A user that is off lets no
 * request in.
 */
import { SvcError } from "../../core/errors.ts";
import type { AclUser } from "../acl/acl-user.ts";
import type { AclUsers } from "../acl/acl-users.ts";
import { defaultUser } from "../acl/passwords.ts";

const bearer = /^Bearer +(.*)$/i;
/** The Basic scheme, with what follows it: a client that chose it and got it wrong is refused, not let in as default. */
const basic = /^Basic(?: +(.*))?$/i;
const base64Text = /^[A-Za-z0-9+/]+={0,2}$/;

const unauthorized = () => new SvcError("unauthorized", "Unauthorized", { headers: { "www-authenticate": 'Basic realm="kv", Bearer realm="kv"' } });

/** The user the request runs as, or a 401 thrown. */
export function requestUser(req: Request, acl: AclUsers): AclUser {
  const fallback = acl.defaultUser;
  const open = fallback.enabled && fallback.nopass;
  // Not even a look at the headers while anyone comes in as the only user there is: reading one
  // makes Bun build them all (~0.9 µs of a GET, docs/kv-rest.md).
  if (open && acl.size === 1) return fallback;
  const authorization = req.headers.get("authorization");
  const credentials = authorization === null ? null : basic.exec(authorization);
  if (credentials !== null) {
    const encoded = credentials[1]?.trim() ?? "";
    if (!base64Text.test(encoded)) throw unauthorized();
    // RFC 7617: the name ends at the first colon; both are bytes, as AUTH's arguments are.
    const pair = Buffer.from(encoded, "base64").toString("latin1");
    const colon = pair.indexOf(":");
    const user = colon < 0 ? null : acl.authenticate(pair.slice(0, colon), pair.slice(colon + 1));
    if (user === null) throw unauthorized();
    return user;
  }
  if (open) return fallback;
  const token = authorization === null ? null : bearer.exec(authorization);
  // A missing header is compared like a wrong token, so the timing shows neither.
  const user = acl.authenticate(defaultUser, token?.[1] ?? "");
  if (user === null || token === null) throw unauthorized();
  return user;
}
