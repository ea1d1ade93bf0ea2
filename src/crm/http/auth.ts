/**
 * Bearer authentication of every /api/v1 route: `Authorization: Bearer <API token>`. No header,
 * another scheme, an unknown token and a revoked one all get the same 401, so the answer does
 * not tell a guesser which tokens once existed.
 */
import { SvcError } from "../../core/errors.ts";
import { crmRecordIdMax } from "../../core/limits.ts";
import { bearerToken } from "../../http/bearer.ts";
import type { Handler, RequestContext } from "../../http/route.ts";
import { hashToken, userForToken } from "../auth/tokens.ts";
import type { User } from "../auth/users.ts";
import type { Db } from "../store/db.ts";
import type { SettingsSnapshot } from "../store/settings-cache.ts";

const unauthorized = () =>
  new SvcError("unauthorized", "a valid API token is required: Authorization: Bearer <token>", {
    headers: { "www-authenticate": 'Bearer realm="crm"' },
  });

/** The settings each request was signed in at: its other reads outside a transaction use them (RecordStoreOptions.seen). */
const seenAt = new WeakMap<RequestContext, SettingsSnapshot>();

export const settingsSeenBy = (ctx: RequestContext): SettingsSnapshot | undefined => seenAt.get(ctx);

export async function authenticate(db: Db, ctx: RequestContext): Promise<User> {
  const token = bearerToken(ctx.req);
  if (token === null) throw unauthorized();
  // Kept while no token, user or role changes (store/settings-cache.ts); an unknown token is not
  // kept, so guesses cannot fill the cache.
  const settings = await db.settings.snapshot(db);
  seenAt.set(ctx, settings);
  const user = await settings.get(
    `token:${hashToken(token)}`,
    () => userForToken(db, token),
    (found) => found !== null,
  );
  if (user === null) throw unauthorized();
  return user;
}

export type AuthedHandler = (ctx: RequestContext, user: User) => Response | Promise<Response>;

/** A handler that runs only for a valid token's user. */
export const authed =
  (db: Db, handler: AuthedHandler): Handler =>
  async (ctx) =>
    handler(ctx, await authenticate(db, ctx));

/** A handler only admins may use; others get 403. */
export const adminOnly = (db: Db, handler: AuthedHandler): Handler =>
  authed(db, (ctx, user) => {
    if (!user.isAdmin) throw new SvcError("forbidden", "only an admin may use this setting");
    return handler(ctx, user);
  });

/** A path id: a whole number from 1 to crmRecordIdMax, else the resource cannot exist (404, without asking the store). */
export function pathId(ctx: RequestContext, what: string): number {
  const text = ctx.params.id ?? "";
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > crmRecordIdMax) throw new SvcError("not_found", `no ${what} ${JSON.stringify(text)}`);
  return Number(text);
}

/** A JSON body that must be an object (422 on base otherwise). */
export async function objectBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const body = await ctx.json();
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new SvcError("invalid", "invalid body", { details: [{ field: "base", message: "expected a JSON object" }] });
  }
  return body as Record<string, unknown>;
}
