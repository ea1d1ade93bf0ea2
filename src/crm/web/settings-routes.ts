/**
 * Routes of the /settings page (issue 8, item 10): sign in with username and password, then create
 * and revoke your own API tokens. Everything is a plain HTML form post.
 *
 * Protection, since a session cookie authenticates these posts:
 * - the cookie is HttpOnly and SameSite=Strict, so other sites' pages cannot send it;
 * - a post whose Origin header names another host is refused (403) on top of that;
 * - pages carry a CSP that forbids scripts and framing (no clickjacking of the revoke buttons),
 *   and `no-store`, so a token shown once is not kept in the browser's cache.
 */
import type { BunRequest } from "bun";
import type { RouteTable } from "../../http/route.ts";
import { readBodyBytes } from "../../http/body.ts";
import { isSvcError } from "../../core/errors.ts";
import { crmSettingsFormBytesMax, crmTokenNameCharsMax } from "../../core/limits.ts";
import { BrowserSessions, browserSessionTtlMs, sessionCookieName } from "./browser-sessions.ts";
import { createToken, listTokens, revokeToken } from "../auth/tokens.ts";
import { activeUser, type User, userForPassword } from "../auth/users.ts";
import type { Db } from "../store/db.ts";
import { signInPage, tokensPage } from "./settings-page.ts";

const pageHeaders = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  // Not no-referrer: under it Chromium sends `Origin: null` with the page's own form posts.
  "referrer-policy": "same-origin",
};

function page(html: string, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { ...pageHeaders, ...extra } });
}

/** After a post that changed something: back to the page with a GET, so a reload repeats nothing. */
function seeOther(extra: Record<string, string> = {}): Response {
  return new Response(null, { status: 303, headers: { location: "/settings", "cache-control": "no-store", ...extra } });
}

function cookie(req: Request, value: string, maxAgeSeconds: number): string {
  const secure = req.headers.get("x-forwarded-proto") === "https" ? "; Secure" : "";
  return `${sessionCookieName}=${value}; Path=/settings; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

/** True when a browser says the post comes from another site's page. */
function crossOrigin(req: Request): boolean {
  const origin = req.headers.get("origin");
  if (origin === null || origin === "null") return origin === "null";
  try {
    return new URL(origin).host !== req.headers.get("host");
  } catch {
    return true;
  }
}

async function readForm(req: Request): Promise<URLSearchParams | null> {
  const type = (req.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return null;
  const bytes = await readBodyBytes(req, crmSettingsFormBytesMax);
  return new URLSearchParams(new TextDecoder().decode(bytes));
}

function sessionId(req: BunRequest): string | undefined {
  return req.cookies.get(sessionCookieName) ?? undefined;
}

export function settingsRoutes(db: Db, sessions = new BrowserSessions()): RouteTable {
  async function tokensView(user: User, extra: { created?: { name: string; token: string }; error?: string } = {}): Promise<Response> {
    return page(tokensPage({ user, tokens: await listTokens(db, user.id), ...extra }), extra.error === undefined ? 200 : 400);
  }

  /** The session's user, unless they have been disabled since signing in (the CLI may do that while they are). */
  async function signedIn(req: BunRequest): Promise<User | null> {
    const user = sessions.user(sessionId(req));
    return user === null ? null : activeUser(db, user.id);
  }

  /** Runs a post's action after the checks every post shares; answers HTML for every outcome. */
  async function post(req: Request, action: (form: URLSearchParams) => Promise<Response>): Promise<Response> {
    if (crossOrigin(req)) return page(signInPage("This form was posted from another site and was refused."), 403);
    let form: URLSearchParams | null;
    try {
      form = await readForm(req);
    } catch (error) {
      if (isSvcError(error) && error.code === "body_too_large") {
        return page(signInPage("The form was too large."), 413, { connection: "close" });
      }
      throw error;
    }
    if (form === null) return page(signInPage("Expected an HTML form post."), 415);
    return action(form);
  }

  return {
    "/settings": {
      async GET(ctx) {
        const user = await signedIn(ctx.req);
        return user === null ? page(signInPage()) : tokensView(user);
      },
    },
    "/settings/sign-in": {
      POST: (ctx) =>
        post(ctx.req, async (form) => {
          const username = form.get("username") ?? "";
          const user = await userForPassword(db, username, form.get("password") ?? "");
          if (user === null) return page(signInPage("Wrong username or password.", username), 401);
          // A fresh id at every sign-in: a session id planted before sign-in is never promoted.
          sessions.end(sessionId(ctx.req));
          const id = sessions.start(user);
          return seeOther({ "set-cookie": cookie(ctx.req, id, browserSessionTtlMs / 1000) });
        }),
    },
    "/settings/sign-out": {
      POST: (ctx) =>
        post(ctx.req, async () => {
          sessions.end(sessionId(ctx.req));
          return seeOther({ "set-cookie": cookie(ctx.req, "", 0) });
        }),
    },
    "/settings/tokens": {
      POST: (ctx) =>
        post(ctx.req, async (form) => {
          const user = await signedIn(ctx.req);
          if (user === null) return page(signInPage("Your session has ended; sign in again."), 401);
          const name = (form.get("name") ?? "").trim();
          if (name === "") return tokensView(user, { error: "A token needs a name." });
          if (name.length > crmTokenNameCharsMax) return tokensView(user, { error: `A token name has at most ${crmTokenNameCharsMax} characters.` });
          const created = await db.write((tx) => createToken(tx, user.id, name));
          return tokensView(user, { created: { name, token: created.token } });
        }),
    },
    "/settings/tokens/:id/revoke": {
      POST: (ctx) =>
        post(ctx.req, async () => {
          const user = await signedIn(ctx.req);
          if (user === null) return page(signInPage("Your session has ended; sign in again."), 401);
          const id = Number(ctx.params.id);
          // Revoking an already revoked token of one's own changes nothing and is not an error.
          const revoked = Number.isSafeInteger(id) && id > 0 && (await db.write((tx) => revokeToken(tx, user.id, id))) !== null;
          return revoked ? seeOther() : tokensView(user, { error: "No such active token of yours." });
        }),
    },
  };
}
