/**
 * /api/v1/settings/tokens: a user's own API tokens. Create answers the secret once (201); list
 * shows names, prefixes and dates, never secrets; revoke (DELETE) makes the token answer 401 from
 * then on. Another user's token id is 404, as if it did not exist.
 */
import { SvcError } from "../../core/errors.ts";
import { json, noContent } from "../../http/response.ts";
import type { RouteTable } from "../../http/route.ts";
import { createToken, listTokens, revokeToken, tokenNameProblem } from "../auth/tokens.ts";
import type { Db } from "../store/db.ts";
import { authed, objectBody, pathId } from "./auth.ts";

export function tokenRoutes(db: Db): RouteTable {
  return {
    "/api/v1/settings/tokens": {
      GET: authed(db, async (_ctx, user) => json({ data: await listTokens(db, user.id) })),
      POST: authed(db, async (ctx, user) => {
        const body = await objectBody(ctx);
        const name = body.name ?? "API token";
        const problem = tokenNameProblem(name);
        const details = Object.keys(body)
          .filter((k) => k !== "name")
          .map((field) => ({ field, message: "unknown field" }));
        if (problem !== null) details.push({ field: "name", message: problem });
        if (details.length > 0) throw new SvcError("invalid", "invalid token", { details });
        return json(await db.write((tx) => createToken(tx, user.id, name as string)), 201);
      }),
    },
    "/api/v1/settings/tokens/:id": {
      DELETE: authed(db, async (ctx, user) => {
        const id = pathId(ctx, "token");
        const revoked = await db.write((tx) => revokeToken(tx, user.id, id));
        if (revoked === null) throw new SvcError("not_found", `no token ${id} of yours`);
        return noContent();
      }),
    },
  };
}
