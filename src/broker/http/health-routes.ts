/** Liveness and readiness (spec: Health); neither needs a key. */
import type { RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Broker } from "../broker.ts";

export function healthRoutes(broker: Broker): RouteTable {
  return {
    "/healthz": { GET: () => json({ status: "ok", topics: broker.topics.count }) },
    // 503 while the stored topics load and once shutdown begins, so a load balancer stops
    // sending produces that would only be refused.
    "/readyz": { GET: () => (broker.ready ? json({ status: "ready" }) : json({ status: "not ready" }, 503)) },
  };
}
