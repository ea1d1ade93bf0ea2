/**
 * The kv REST API: the route modules mounted on the shared HTTP layer (src/http), beside RESP
 * and over the same engine. Every request — to a route, to an unknown path, with a method a path
 * does not serve — must pass the credentials check first (auth.ts); only CORS preflights, which
 * browsers send without credentials, are answered without it. CORS is off: a page on another
 * site has no business reading the store.
 */
import { SvcError } from "../../core/errors.ts";
import { kvRestBodyBytesMax } from "../../core/limits.ts";
import type { Logger } from "../../core/log.ts";
import { type HttpService, startHttpServer } from "../../http/server.ts";
import { type Handler, type HttpMethod, httpMethods, type RouteTable } from "../../http/route.ts";
import type { Engine } from "../server/engine.ts";
import { requestUser } from "./rest-auth.ts";
import { CommandRunner } from "./command-runner.ts";
import { paramPositions, pathParams } from "./path-params.ts";
import { type RestHandler, RestRequest, type RestRoutes } from "./request.ts";
import { bitmapRoutes } from "./routes/bitmap-routes.ts";
import { bloomRoutes } from "./routes/bloom-routes.ts";
import { cmdRoutes } from "./routes/cmd-routes.ts";
import { geoRoutes } from "./routes/geo-routes.ts";
import { hashRoutes } from "./routes/hashes-routes.ts";
import { hyperloglogRoutes } from "./routes/hyperloglog-routes.ts";
import { listRoutes } from "./routes/lists-routes.ts";
import { serverRoutes } from "./routes/server-routes.ts";
import { setRoutes } from "./routes/sets-routes.ts";
import { stringRoutes } from "./routes/strings-routes.ts";
import { zsetRoutes } from "./routes/zsets-routes.ts";

export interface RestServerOptions {
  engine: Engine;
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** Longest a blocking command over POST /cmd waits (ms). */
  blockTimeoutMs: number;
  /** Seconds an HTTP connection may stay silent, outside a blocking wait, before it is closed. */
  idleTimeoutSeconds: number;
  log: Logger;
}

/** Bun's pattern for "any other path", below every specific route. */
const anyOtherPath = "/*";

function handler(pattern: string, run: RestHandler, runner: CommandRunner): Handler {
  const positions = paramPositions(pattern);
  return (ctx) => {
    const user = requestUser(ctx.req, runner.engine.acl);
    return run(
      new RestRequest(
        ctx,
        pathParams(ctx.params, positions, () => ctx.req.url),
        runner,
        user,
      ),
    );
  };
}

/** A path's unserved methods answer 405 — after the bearer check, like everything else. */
function refuse(served: readonly HttpMethod[]): RestHandler {
  return () => {
    throw new SvcError("method_not_allowed", `this path serves ${served.join(", ")}`, { headers: { allow: [...served, "OPTIONS"].join(", ") } });
  };
}

const noRoute: RestHandler = (r) => {
  throw new SvcError("not_found", `no route for ${r.http.req.method} ${r.http.url.pathname}`);
};

function routeTable(routes: RestRoutes, runner: CommandRunner): RouteTable {
  const table: RouteTable = {};
  for (const [pattern, handlers] of Object.entries(routes)) {
    const served = httpMethods.filter((m) => handlers[m] !== undefined);
    table[pattern] = Object.fromEntries(httpMethods.map((m) => [m, handler(pattern, handlers[m] ?? refuse(served), runner)]));
  }
  table[anyOtherPath] = Object.fromEntries(httpMethods.map((m) => [m, handler(anyOtherPath, noRoute, runner)]));
  return table;
}

export function startRestServer(options: RestServerOptions): HttpService {
  const { engine } = options;
  const runner = new CommandRunner(engine);
  const routes: RestRoutes = {
    ...stringRoutes,
    ...listRoutes,
    ...hashRoutes,
    ...setRoutes,
    ...zsetRoutes,
    ...hyperloglogRoutes,
    ...bloomRoutes,
    ...geoRoutes,
    ...bitmapRoutes,
    ...serverRoutes,
    ...cmdRoutes(options.blockTimeoutMs, () => engine.config.get("port") ?? "6379"),
  };
  const server = startHttpServer({
    name: "kv-rest",
    hostname: options.hostname,
    port: options.port,
    routes: routeTable(routes, runner),
    bodyBytesMax: kvRestBodyBytesMax,
    cors: { kind: "off" },
    log: options.log,
    idleTimeoutSeconds: options.idleTimeoutSeconds,
    // A data path, like RESP: an answer carries a request id only where a log line may name it.
    idOnSuccess: false,
  });
  runner.local = `${options.hostname}:${server.port}`;
  return server;
}
