/**
 * The routes of spec part A. Each handler reads the body (src/http enforces 256 KiB → 413),
 * checks the token (401) before anything else in the body, then the body's shape (400), then
 * ownership (404), and only then changes anything.
 */
import { SvcError } from "../../core/errors.ts";
import { bearerToken } from "../../http/bearer.ts";
import { json, noContent, text } from "../../http/response.ts";
import type { RequestContext, RouteTable } from "../../http/route.ts";
import type { MediaServer } from "../media-server.ts";
import { parsePeers } from "../media-server.ts";
import { parseOffer } from "../sdp/offer.ts";
import type { Session } from "../session.ts";
import { type TokenClaims, verifyToken } from "../token.ts";

interface Body {
  token?: unknown;
  sdp_offer?: unknown;
  peers?: unknown;
}

async function bodyOf(ctx: RequestContext): Promise<Body> {
  const body = await ctx.json();
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new SvcError("bad_request", "request body must be a JSON object with a token");
  }
  return body as Body;
}

/** The session id in the path; a path that is not a session id names no session (404). */
function sessionIdOf(ctx: RequestContext): number {
  const raw = ctx.params.id ?? "";
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new SvcError("not_found", `no session ${JSON.stringify(raw)}: session ids are positive integers`);
  return id;
}

export function mediaRoutes(server: MediaServer, secret: string): RouteTable {
  const claimsOf = (token: unknown): TokenClaims => verifyToken(secret, token, Date.now());

  /** Body, token and owned session of a /v1/sessions/{id} call. */
  async function ownedSession(ctx: RequestContext): Promise<{ body: Body; session: Session }> {
    const body = await bodyOf(ctx);
    const claims = claimsOf(body.token);
    return { body, session: server.owned(claims, sessionIdOf(ctx)) };
  }

  return {
    "/v1/sessions": {
      POST: async (ctx) => {
        const body = await bodyOf(ctx);
        const claims = claimsOf(body.token);
        const peers = parsePeers(body.peers);
        if (typeof body.sdp_offer !== "string" || body.sdp_offer === "") {
          throw new SvcError("bad_request", "sdp_offer is required: the client's SDP offer as a string");
        }
        const offer = parseOffer(body.sdp_offer);
        return json(await server.create(claims, offer, peers));
      },
    },
    "/v1/sessions/:id": {
      PATCH: async (ctx) => {
        const { body, session } = await ownedSession(ctx);
        await server.setPeers(session, parsePeers(body.peers));
        return noContent();
      },
      DELETE: async (ctx) => {
        const { session } = await ownedSession(ctx);
        server.delete(session);
        return noContent();
      },
    },
    "/v1/sessions/:id/slots": {
      POST: async (ctx) => {
        const { session } = await ownedSession(ctx);
        return json(session.slotMap());
      },
    },
    "/v1/stats": {
      GET: ({ req }) => {
        const claims = claimsOf(bearerToken(req));
        // Rule 4: only the token's own room is named, so no tenant can list another's rooms.
        return json({ sessions: server.sessionCount, rooms: { [claims.room]: server.roomSize(claims.room) } });
      },
    },
    "/healthz": {
      GET: () => (server.workers.healthy ? text("ok") : text("media engine is down: a worker died and is being replaced\n", 503)),
    },
  };
}
