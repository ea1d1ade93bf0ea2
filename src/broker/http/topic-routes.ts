/**
 * The topics resource (spec: Endpoints, Topics): create, list, describe, read and change the
 * config, delete. Each route decodes its request and encodes the answer; the operation runs
 * through the broker's pipeline. Bodies are checked whole before anything changes.
 */
import { SvcError } from "../../core/errors.ts";
import { topicPartitionsMax } from "../../core/limits.ts";
import type { RouteTable } from "../../http/route.ts";
import { json, noContent } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { parseConfigChanges, resolveConfig } from "../topics/config.ts";
import { checkTopicName } from "../topics/names.ts";
import type { Topic } from "../topics/topic.ts";
import { badRequest, integerIn, objectFields } from "../requests/fields.ts";
import { principalOf } from "./principal.ts";

function describeTopic(topic: Topic) {
  const partitions = Array.from({ length: topic.partitionCount }, (_, p) => topic.summary(p));
  return {
    name: topic.name,
    partitions: topic.partitionCount,
    config: topic.config,
    size_bytes: partitions.reduce((sum, p) => sum + p.size_bytes, 0),
    partition_details: partitions,
  };
}

export function topicRoutes(broker: Broker): RouteTable {
  const { pipeline } = broker;
  const topics = broker.topics;
  return {
    "/topics": {
      async POST(ctx) {
        const principal = principalOf(pipeline, ctx.req);
        // Admin on the new topic's name (a prefix admin creates the topics its prefix covers),
        // which is known once the body is read.
        const topic = await pipeline.run(principal, {
          action: "read",
          topic: null,
          run: async () => {
            const fields = objectFields(await ctx.json(), ["name", "partitions", "config"], "the request body");
            if (fields.name === undefined) throw badRequest("'name' is required");
            if (fields.partitions === undefined) throw badRequest("'partitions' is required");
            const name = checkTopicName(fields.name);
            pipeline.authorize(principal, "admin", name);
            const partitions = integerIn(fields.partitions, 1, topicPartitionsMax, "partitions");
            const changes = fields.config === undefined ? {} : parseConfigChanges(fields.config, "'config'");
            return topics.create(name, partitions, changes);
          },
        });
        return json({ name: topic.name, partitions: topic.partitionCount, config: topic.config }, 201);
      },
      async GET({ req }) {
        const principal = principalOf(pipeline, req);
        const visible = await pipeline.run(principal, {
          action: "read",
          topic: null,
          run: () => topics.list().filter((t) => pipeline.canRead(principal, t.name)),
        });
        return json({ topics: visible.map((t) => ({ name: t.name, partitions: t.partitionCount })) });
      },
    },
    "/topics/:name": {
      async GET({ req, params }) {
        const name = params.name!;
        return json(await pipeline.run(principalOf(pipeline, req), { action: "read", topic: name, run: () => describeTopic(topics.get(name)) }));
      },
      async DELETE({ req, params }) {
        const name = params.name!;
        await pipeline.run(principalOf(pipeline, req), { action: "admin", topic: name, run: () => broker.deleteTopic(name) });
        return noContent();
      },
    },
    "/topics/:name/config": {
      async GET({ req, params }) {
        const name = params.name!;
        return json(await pipeline.run(principalOf(pipeline, req), { action: "read", topic: name, run: () => topics.get(name).config }));
      },
      async PUT(ctx) {
        const name = ctx.params.name!;
        const config = await pipeline.run(principalOf(pipeline, ctx.req), {
          action: "admin",
          topic: name,
          run: async () => {
            const topic = topics.get(name);
            const changes = parseConfigChanges(await ctx.json(), "the request body");
            // The topic may have been deleted while the body arrived.
            if (topic.isClosed) throw new SvcError("not_found", `topic '${topic.name}' does not exist`);
            topic.setConfig(resolveConfig(topic.config, changes));
            return topic.config;
          },
        });
        return json(config);
      },
    },
  };
}
