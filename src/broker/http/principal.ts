/**
 * The credential an HTTP request carries (spec: Authentication 3): `Authorization: Bearer <key>`
 * or `X-Svc-Key: <key>`. The pipeline turns it into the principal the request acts as.
 */
import { SvcError } from "../../core/errors.ts";
import { bearerToken } from "../../http/bearer.ts";
import type { Principal } from "../auth/principal.ts";
import type { RequestPipeline } from "../requests/pipeline.ts";

/** The key's secret the request sent, or null; two different keys in one request are a 400. */
export function credentialOf(req: Request): string | null {
  const bearer = req.headers.has("authorization") ? bearerToken(req) : null;
  if (req.headers.has("authorization") && bearer === null) {
    throw new SvcError("unauthorized", "the Authorization header must be 'Bearer <key>'");
  }
  const header = req.headers.get("x-svc-key");
  if (bearer !== null && header !== null && bearer !== header) {
    throw new SvcError("bad_request", "the request sends two different keys (Authorization and X-Svc-Key); send one");
  }
  return bearer ?? header;
}

/** The principal the request acts as: anonymous while authentication is off, else its key (401 without a good one). */
export function principalOf(pipeline: RequestPipeline, req: Request): Principal {
  return pipeline.authenticate(credentialOf(req));
}

/** Runs `run` through the pipeline as work for the whole broker: admin on `*` (keys, passes, producers). */
export function asGlobalAdmin<T>(pipeline: RequestPipeline, req: Request, run: () => T | Promise<T>): Promise<T> {
  return pipeline.run(principalOf(pipeline, req), { action: "admin", topic: null, run });
}
