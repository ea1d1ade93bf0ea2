/**
 * GET /metrics (spec: Health, metrics): the Prometheus text exposition. With authentication on it
 * needs a key and shows only the series of topics the key can read and groups it owns (a global
 * admin sees all); series about neither (the process, request counts) are shown to every key.
 */
import { metricsContentType } from "../../core/metrics.ts";
import type { RouteTable } from "../../http/route.ts";
import type { Broker } from "../broker.ts";
import { principalOf } from "./principal.ts";

export function metricsRoutes(broker: Broker): RouteTable {
  const { pipeline } = broker;
  return {
    "/metrics": {
      async GET({ req }) {
        const principal = principalOf(pipeline, req);
        const text = await pipeline.run(principal, {
          action: "read",
          topic: null,
          run: () => {
            const actor = pipeline.actorOf(principal);
            if (actor.actsForAnyKey) return broker.metrics.expose();
            // Judged once per scrape per name, not once per series: a topic has many partitions.
            const readable = new Map<string, boolean>();
            const owned = new Map<string, boolean>();
            const canRead = (topic: string) => readable.get(topic) ?? readable.set(topic, pipeline.canRead(principal, topic)).get(topic)!;
            const owns = (group: string) => owned.get(group) ?? owned.set(group, broker.groups.isVisibleTo(group, actor)).get(group)!;
            return broker.metrics.expose(
              (labels) => (labels.topic === undefined || canRead(labels.topic)) && (labels.group === undefined || owns(labels.group)),
            );
          },
        });
        return new Response(text, { headers: { "content-type": metricsContentType } });
      },
    },
  };
}
