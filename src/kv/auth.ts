/**
 * Password authentication with `requirepass`: it is the password of the user "default", which
 * every client starts as; with none set, the default user takes any password and every client
 * starts authenticated. RESP clients authenticate with AUTH or HELLO ... AUTH, as the default
 * user or any other ACL user (acl/acl-users.ts); the REST API checks a bearer token against the
 * requirepass password.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export const defaultUser = "default";

/**
 * Compares a given password with the required one in time that depends on neither: both are
 * hashed first, so even their lengths do not show (Redis compares SHA-256 digests too).
 */
export function passwordMatches(given: string, required: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "latin1").digest();
  return timingSafeEqual(digest(given), digest(required));
}
