/**
 * Produce and consume over HTTP (spec: Endpoints, Produce and Consume). A produce is checked
 * whole (produce/request.ts) and answered only once its records are on disk; a consume reads
 * from one partition at an offset.
 */
import { SvcError } from "../../core/errors.ts";
import type { RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { parseConsumeParams } from "../consume/params.ts";
import { consumedRecords } from "../consume/records.ts";
import { produce } from "../produce/produce.ts";
import { planProduce } from "../produce/request.ts";
import type { Topic } from "../topics/topic.ts";

/** The topic, unless it was deleted while the request body arrived. */
function stillThere(topic: Topic): Topic {
  if (topic.isClosed) throw new SvcError("not_found", `topic '${topic.name}' does not exist`);
  return topic;
}

export function dataRoutes(broker: Broker): RouteTable {
  const { authorizer } = broker.options;
  return {
    "/topics/:name/produce": {
      async POST(ctx) {
        authorizer.check(ctx.req, "write", ctx.params.name!);
        const topic = broker.topics.get(ctx.params.name!);
        const plan = planProduce(await ctx.json(), stillThere(topic), broker.options);
        return json({ results: await produce(topic, plan) });
      },
    },
    "/topics/:name/consume": {
      GET({ req, params, url }) {
        authorizer.check(req, "read", params.name!);
        const topic = broker.topics.get(params.name!);
        const p = parseConsumeParams(url.searchParams, broker.options);
        if (p.partition >= topic.partitionCount) {
          throw new SvcError("not_found", `topic '${topic.name}' has no partition ${p.partition}; it has ${topic.partitionCount} (0 to ${topic.partitionCount - 1})`);
        }
        const log = topic.existingLog(p.partition);
        if (log === null) {
          // Never written: an empty log whose high watermark is 0.
          if (p.offset > 0) throw new SvcError("bad_request", `offset ${p.offset} is past the high watermark 0`);
          return json({ records: [], next_offset: 0, high_watermark: 0 });
        }
        const read = log.read(p.offset, p.maxRecords, p.maxBytes);
        return json({
          records: consumedRecords(read.records, p.partition, p.encoding),
          next_offset: read.nextOffset,
          high_watermark: read.highWatermark,
        });
      },
    },
  };
}
