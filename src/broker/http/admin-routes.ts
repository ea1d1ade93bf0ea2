/**
 * Administration (spec: Endpoints, Administration; all need `admin` on `*`), run through the
 * broker's pipeline. The spec shows no request or response bodies here; ours are in
 * docs/broker.md.
 */
import type { RequestContext, RouteTable } from "../../http/route.ts";
import { json, noContent } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { forgetProducerEverywhere, listProducers } from "../produce/producers-admin.ts";
import { badRequest, objectFields } from "../requests/fields.ts";
import { checkTopicName } from "../topics/names.ts";
import { asGlobalAdmin } from "./principal.ts";

/**
 * These endpoints take no parameters: a body may be left out, and one that is sent must be `{}`,
 * so a client that believes it can pass options (a topic, say) hears otherwise instead of
 * running a pass over everything.
 */
async function noParameters(ctx: RequestContext): Promise<void> {
  const length = ctx.req.headers.get("content-length");
  const hasBody = (length !== null && length !== "0") || ctx.req.headers.has("transfer-encoding");
  if (!hasBody) return;
  const body = await ctx.json();
  const empty = typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
  if (!empty) throw badRequest(`${ctx.url.pathname} takes no parameters: send no body, or {}`);
}

export function adminRoutes(broker: Broker): RouteTable {
  const asAdmin = <T>(req: Request, run: () => T | Promise<T>) => asGlobalAdmin(broker.pipeline, req, run);
  /** POST of a pass over every topic: admin on `*`, no parameters, the pass's summary as the answer. */
  const pass = (run: () => Promise<unknown>): RouteTable[string] => ({
    async POST(ctx) {
      return json(
        await asAdmin(ctx.req, async () => {
          await noParameters(ctx);
          return run();
        }),
      );
    },
  });
  return {
    "/admin/run-retention": pass(() => broker.runRetention()),
    "/admin/run-compaction": pass(() => broker.runCompaction()),
    "/admin/producers": {
      async GET({ req }) {
        return json({ producers: await asAdmin(req, () => listProducers(broker.topics, broker.producerOwners)) });
      },
    },
    "/admin/producers/:id": {
      async DELETE({ req, params }) {
        await asAdmin(req, () => forgetProducerEverywhere(broker.topics, broker.producerOwners, params.id!));
        return noContent();
      },
    },
    "/admin/reset-offsets": {
      async POST(ctx) {
        return json(
          await asAdmin(ctx.req, async () => {
            const fields = objectFields(await ctx.json(), ["topic"], "the request body");
            if (fields.topic === undefined) throw badRequest("'topic' is required");
            const topic = checkTopicName(fields.topic, "'topic'");
            return { topic, groups: broker.groups.resetToStart(topic) };
          }),
        );
      },
    },
  };
}
