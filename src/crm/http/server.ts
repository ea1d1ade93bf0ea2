/**
 * The crm HTTP API on the shared server wrapper: records under /api/v1/{object}, settings under
 * /api/v1/settings, the /settings web page (src/crm/web), /healthz. Errors use the spec's 422 body `{"error":"invalid","details":[...]}`
 * and, for every other status, `{"error": <stable code>, "message": <what went wrong>}`.
 */
import type { SvcError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { json, text } from "../../http/response.ts";
import { type HttpService, startHttpServer } from "../../http/server.ts";
import type { ListLimits } from "../records/record-store.ts";
import type { Db } from "../store/db.ts";
import { isStoreRefusal } from "../store/store-errors.ts";
import { recordRoutes } from "./records.ts";
import { adminRoutes } from "./settings-admin.ts";
import { tokenRoutes } from "./settings-tokens.ts";
import { settingsRoutes } from "../web/settings-routes.ts";

export function crmErrorBody(error: SvcError): unknown {
  if (error.code === "invalid") return { error: "invalid", details: Array.isArray(error.details) ? error.details : [] };
  return { error: error.code, message: error.message };
}

export interface CrmHttpOptions {
  hostname: string;
  port: number;
  bodyBytesMax: number;
  /** How far a list counts and looks (--list-count-max, --search-newest-rows). */
  listLimits: ListLimits;
  log: Logger;
}

export function startCrmHttp(db: Db, options: CrmHttpOptions): HttpService {
  return startHttpServer({
    name: "crm",
    hostname: options.hostname,
    port: options.port,
    bodyBytesMax: options.bodyBytesMax,
    // The bearer token is the authentication, never a cookie, so any origin may call.
    cors: { kind: "any" },
    log: options.log,
    errorBody(error) {
      // A database refused what our checks let through: answered as a 4xx, but a check is missing.
      if (isStoreRefusal(error)) options.log.warn({ err: error.cause, status: error.status }, "crm store refused input its checks let through");
      return crmErrorBody(error);
    },
    routes: {
      "/healthz": {
        GET: async () => {
          try {
            await db.get("SELECT 1 AS ok");
            return text("ok");
          } catch {
            return json({ error: "unavailable", message: "database unreachable" }, 503);
          }
        },
      },
      ...settingsRoutes(db),
      ...tokenRoutes(db),
      ...adminRoutes(db),
      ...recordRoutes(db, options.listLimits),
    },
  });
}
