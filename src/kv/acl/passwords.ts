/**
 * Passwords as the ACL users hold them (acl/): SHA-256 digests, as Redis keeps them, compared in
 * constant time. `requirepass` is the password of the user "default", which every client starts
 * as; with none set, the default user takes any password and every client starts authenticated.
 * RESP clients authenticate with AUTH or HELLO ... AUTH as any user; the REST API checks a bearer
 * token against the default user's passwords (rest/rest-auth.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";

export const defaultUser = "default";

/** A password's digest as Redis keeps and shows it: SHA-256, lower-case hex. */
export function passwordDigest(password: string): string {
  return createHash("sha256").update(password, "latin1").digest("hex");
}

/**
 * Whether `given` is the password whose digest is `digest`, in time that depends on neither:
 * the given password is hashed first, so not even its length shows.
 */
export function passwordMatchesDigest(given: string, digest: string): boolean {
  return timingSafeEqual(Buffer.from(passwordDigest(given), "latin1"), Buffer.from(digest, "latin1"));
}
