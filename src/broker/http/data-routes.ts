/**
 * Produce and consume over HTTP (spec: Endpoints, Produce and Consume): each route decodes its
 * request and encodes the answer; the operation runs through the broker's pipeline. A produce is
 * checked whole (produce/request.ts) and answered only once its records are on disk; a consume
 * reads from one partition at an offset (consume/consume.ts).
 */
import { SvcError } from "../../core/errors.ts";
import type { RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { consume } from "../consume/consume.ts";
import { parseConsumeParams } from "../consume/params.ts";
import { keyValueBytes } from "../log/record.ts";
import { produce } from "../produce/produce.ts";
import { planProduce } from "../produce/request.ts";
import type { Topic } from "../topics/topic.ts";
import { principalOf } from "./principal.ts";

/** The topic, unless it was deleted while the request body arrived. */
function stillThere(topic: Topic): Topic {
  if (topic.isClosed) throw new SvcError("not_found", `topic '${topic.name}' does not exist`);
  return topic;
}

export function dataRoutes(broker: Broker): RouteTable {
  const { pipeline } = broker;
  return {
    "/topics/:name/produce": {
      async POST(ctx) {
        const name = ctx.params.name!;
        const principal = principalOf(pipeline, ctx.req);
        const results = await pipeline.run(principal, {
          action: "write",
          topic: name,
          run: async (meter) => {
            const topic = broker.topics.get(name);
            const plan = planProduce(await ctx.json(), stillThere(topic), broker.options);
            const actor = pipeline.actorOf(principal);
            // Ownership, then the quota, then the claim: a refused produce claims no producer id.
            if (plan.producerId !== null) broker.producerOwners.check(plan.producerId, actor);
            meter.admitProduce(keyValueBytes(plan.records));
            if (plan.producerId !== null) await broker.producerOwners.use(plan.producerId, actor);
            const results = await produce(topic, plan);
            const written = plan.records.filter((_, i) => results[i]!.duplicate !== true);
            meter.produced(name, written.length, keyValueBytes(written));
            return results;
          },
        });
        return json({ results });
      },
    },
    "/topics/:name/consume": {
      async GET({ req, params, url }) {
        const name = params.name!;
        const answer = await pipeline.run(principalOf(pipeline, req), {
          action: "read",
          topic: name,
          consumes: true,
          run: (meter) => {
            const topic = broker.topics.get(name);
            return consume(topic, parseConsumeParams(url.searchParams, broker.options), (records, bytes) => meter.consumed(name, records, bytes));
          },
        });
        return json(answer);
      },
    },
  };
}
