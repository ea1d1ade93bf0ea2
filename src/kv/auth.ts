/**
 * Password authentication, as Redis does it with `requirepass`: there is one user, "default",
 * whose password is the requirepass parameter; with none set, the default user takes any
 * password and every client starts authenticated. RESP clients authenticate with AUTH or HELLO
 * ... AUTH; the REST API checks a bearer token against the same password.
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

/** Whether `user` with `password` may log in while the required password is `required` ("" for none). */
export function credentialsValid(user: string, password: string, required: string): boolean {
  if (user !== defaultUser) return false;
  return required === "" || passwordMatches(password, required);
}
