/**
 * Produce and consume over HTTP (spec: Endpoints, Produce and Consume): each route decodes its
 * request and encodes the answer; the operation itself (requests/operations.ts) is the one the
 * binary protocol runs too. A produce is checked whole (produce/request.ts) and answered only
 * once its records are on disk; a consume reads from one partition at an offset.
 */
import type { RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { type ConsumeParams, parseConsumeParams } from "../consume/params.ts";
import { consumeAnswer } from "../consume/records.ts";
import { planProduce } from "../produce/request.ts";
import { produceOperation, readOperation } from "../requests/operations.ts";
import { principalOf } from "./principal.ts";

export function dataRoutes(broker: Broker): RouteTable {
  const { pipeline } = broker;
  return {
    "/topics/:name/produce": {
      async POST(ctx) {
        const results = await produceOperation(broker, principalOf(pipeline, ctx.req), ctx.params.name!, async (topic) =>
          planProduce(await ctx.json(), topic, broker.options),
        );
        return json({ results });
      },
    },
    "/topics/:name/consume": {
      async GET({ req, params, url }) {
        // The query is read inside the operation, after the grant.
        let asked: ConsumeParams | null = null;
        const read = await readOperation(
          broker,
          principalOf(pipeline, req),
          params.name!,
          () => (asked = parseConsumeParams(url.searchParams, broker.options)),
        );
        const { partition, encoding } = asked!;
        return json(consumeAnswer(read, partition, encoding));
      },
    },
  };
}
