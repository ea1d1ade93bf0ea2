/** The broker's HTTP API: its route modules mounted on the shared HTTP layer (src/http). */
import type { Logger } from "../../core/log.ts";
import { type HttpService, startHttpServer } from "../../http/server.ts";
import type { Broker } from "../broker.ts";
import type { TlsPem } from "../transport.ts";
import { adminRoutes } from "./admin-routes.ts";
import { dataRoutes } from "./data-routes.ts";
import { groupRoutes } from "./group-routes.ts";
import { healthRoutes } from "./health-routes.ts";
import { keyRoutes } from "./key-routes.ts";
import { metricsRoutes } from "./metrics-routes.ts";
import { schemaRoutes } from "./schema-routes.ts";
import { topicRoutes } from "./topic-routes.ts";

export interface BrokerHttpOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** --max-request-body-bytes */
  bodyBytesMax: number;
  /** --cors-origin: the origins sent CORS headers; none means no CORS headers at all. */
  corsOrigins: readonly string[];
  /** --tls-cert and --tls-key, read: HTTPS instead of HTTP. */
  tls: TlsPem | null;
  log: Logger;
}

export function startBrokerHttp(broker: Broker, options: BrokerHttpOptions): HttpService {
  return startHttpServer({
    name: "broker-http",
    hostname: options.hostname,
    port: options.port,
    routes: {
      ...healthRoutes(broker),
      ...topicRoutes(broker),
      ...dataRoutes(broker),
      ...groupRoutes(broker),
      ...adminRoutes(broker),
      ...keyRoutes(broker),
      ...schemaRoutes(broker),
      ...metricsRoutes(broker),
    },
    bodyBytesMax: options.bodyBytesMax,
    // The spec sends no CORS headers unless --cors-origin lists origins; a listed one is echoed.
    cors: options.corsOrigins.length === 0 ? { kind: "off" } : { kind: "origins", origins: options.corsOrigins },
    ...(options.tls === null ? {} : { tls: options.tls }),
    log: options.log,
  });
}
