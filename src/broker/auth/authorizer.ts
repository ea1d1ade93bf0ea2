/**
 * The seam where API keys plug in (a later issue): every route asks the authorizer before it
 * acts. Until keys exist the broker runs with `allowAll`, which is what the spec's "authentication
 * is off unless --auth required" means. A real authorizer throws the spec's 401 or 403 SvcError.
 */

/** The spec's grant actions: read, write (read plus produce) and admin. */
export type Action = "read" | "write" | "admin";

export interface Authorizer {
  /** Throws 401/403 unless the request may do `action` on `topic` (null: the whole broker). */
  check(req: Request, action: Action, topic: string | null): void;
  /** Whether the request may read `topic`; lists show only these. */
  canRead(req: Request, topic: string): boolean;
}

export const allowAll: Authorizer = {
  check: () => {},
  canRead: () => true,
};
