/**
 * Signed-in browser sessions of the /settings page. The cookie carries a random 256-bit id; the
 * server keeps only its SHA-256, so a leaked memory dump or log cannot be replayed as a cookie.
 * Sessions live in memory: a restart signs everyone out, which costs a sign-in, never access.
 * API tokens, not these sessions, are how programs authenticate.
 */
import { hashToken } from "../auth/tokens.ts";
import type { User } from "../auth/users.ts";

/** How long a browser session lasts without being renewed (sessions are not sliding). */
export const browserSessionTtlMs = 8 * 60 * 60 * 1000;
/** Bound on live sessions, so sign-in floods cannot grow memory without limit (oldest go first). */
export const browserSessionsMax = 10_000;
/** The cookie's name. The `__Host-` prefix is not used: svc serves plain HTTP behind a proxy. */
export const sessionCookieName = "crm_session";

const sessionIdBytes = 32;

interface Entry {
  user: User;
  expiresAtMs: number;
}

export class BrowserSessions {
  /** Digest of the cookie value → session; a Map keeps insertion order, oldest first. */
  readonly #sessions = new Map<string, Entry>();

  constructor(private readonly nowMs: () => number = Date.now) {}

  /** Starts a session and returns the cookie value that names it. */
  start(user: User): string {
    const id = Buffer.from(crypto.getRandomValues(new Uint8Array(sessionIdBytes))).toString("base64url");
    if (this.#sessions.size >= browserSessionsMax) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    this.#sessions.set(hashToken(id), { user, expiresAtMs: this.nowMs() + browserSessionTtlMs });
    return id;
  }

  /** The signed-in user of a cookie value, or null if it names no live session. */
  user(id: string | undefined): User | null {
    if (id === undefined || id === "") return null;
    const key = hashToken(id);
    const entry = this.#sessions.get(key);
    if (entry === undefined) return null;
    if (entry.expiresAtMs <= this.nowMs()) {
      this.#sessions.delete(key);
      return null;
    }
    return entry.user;
  }

  end(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(hashToken(id));
  }
}
