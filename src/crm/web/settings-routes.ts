/**
 * Routes of the /settings page (issue 8, item 10): sign in with username and password, then create
 * and revoke your own API tokens; an admin also reaches the admin pages (admin-routes.ts).
 * Everything is a plain HTML form post, checked as form-posts.ts says.
 */
import { crmSettingsFormBytesMax, crmTokenNameCharsMax } from "../../core/limits.ts";
import type { BunRequest } from "bun";
import type { RouteTable } from "../../http/route.ts";
import { createToken, listTokens, revokeToken } from "../auth/tokens.ts";
import { activeUser, type User, userForPassword } from "../auth/users.ts";
import type { Db } from "../store/db.ts";
import { adminRoutes } from "./admin-routes.ts";
import { BrowserSessions, browserSessionTtlMs, sessionCookieName } from "./browser-sessions.ts";
import { page, receiveForm, seeOther, sessionId } from "./form-posts.ts";
import { signInPage, tokensPage } from "./settings-page.ts";

function cookie(req: Request, value: string, maxAgeSeconds: number): string {
  const secure = req.headers.get("x-forwarded-proto") === "https" ? "; Secure" : "";
  return `${sessionCookieName}=${value}; Path=/settings; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}

export function settingsRoutes(db: Db, sessions = new BrowserSessions()): RouteTable {
  async function tokensView(user: User, extra: { created?: { name: string; token: string }; error?: string } = {}): Promise<Response> {
    return page(tokensPage({ user, tokens: await listTokens(db, user.id), ...extra }), extra.error === undefined ? 200 : 400);
  }

  const post = (req: Request, action: (form: URLSearchParams) => Promise<Response>) => receiveForm(req, crmSettingsFormBytesMax, action);

  /** The session's user, unless they have been disabled since signing in (the CLI may do that while they are). */
  async function signedIn(req: BunRequest): Promise<User | null> {
    const user = sessions.user(sessionId(req));
    return user === null ? null : activeUser(db, user.id);
  }

  return {
    ...adminRoutes(db, sessions),
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
          return seeOther("/settings", { "set-cookie": cookie(ctx.req, id, browserSessionTtlMs / 1000) });
        }),
    },
    "/settings/sign-out": {
      POST: (ctx) =>
        post(ctx.req, async () => {
          sessions.end(sessionId(ctx.req));
          return seeOther("/settings", { "set-cookie": cookie(ctx.req, "", 0) });
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
