/**
 * The topics resource (spec: Endpoints, Topics): create, list, describe, read and change the
 * config, delete. Bodies are checked whole before anything changes.
 */
import { SvcError } from "../../core/errors.ts";
import { topicPartitionsMax } from "../../core/limits.ts";
import type { RouteTable } from "../../http/route.ts";
import { json, noContent } from "../../http/response.ts";
import type { Broker } from "../broker.ts";
import { parseConfigChanges, resolveConfig } from "../topics/config.ts";
import { checkTopicName } from "../topics/names.ts";
import type { Topic } from "../topics/topic.ts";
import { badRequest, integerIn, objectFields } from "./fields.ts";

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
  const { authorizer } = broker.options;
  const topics = broker.topics;
  return {
    "/topics": {
      async POST(ctx) {
        authorizer.check(ctx.req, "admin", null);
        const fields = objectFields(await ctx.json(), ["name", "partitions", "config"], "the request body");
        if (fields.name === undefined) throw badRequest("'name' is required");
        if (fields.partitions === undefined) throw badRequest("'partitions' is required");
        const name = checkTopicName(fields.name);
        const partitions = integerIn(fields.partitions, 1, topicPartitionsMax, "partitions");
        const changes = fields.config === undefined ? {} : parseConfigChanges(fields.config, "'config'");
        const topic = topics.create(name, partitions, changes);
        return json({ name: topic.name, partitions: topic.partitionCount, config: topic.config }, 201);
      },
      GET({ req }) {
        authorizer.check(req, "read", null);
        const visible = topics.list().filter((t) => authorizer.canRead(req, t.name));
        return json({ topics: visible.map((t) => ({ name: t.name, partitions: t.partitionCount })) });
      },
    },
    "/topics/:name": {
      GET({ req, params }) {
        authorizer.check(req, "read", params.name!);
        return json(describeTopic(topics.get(params.name!)));
      },
      async DELETE({ req, params }) {
        authorizer.check(req, "admin", params.name!);
        await topics.delete(params.name!);
        return noContent();
      },
    },
    "/topics/:name/config": {
      GET({ req, params }) {
        authorizer.check(req, "read", params.name!);
        return json(topics.get(params.name!).config);
      },
      async PUT(ctx) {
        authorizer.check(ctx.req, "admin", ctx.params.name!);
        const topic = topics.get(ctx.params.name!);
        const changes = parseConfigChanges(await ctx.json(), "the request body");
        // The topic may have been deleted while the body arrived.
        if (topic.isClosed) throw new SvcError("not_found", `topic '${topic.name}' does not exist`);
        topic.setConfig(resolveConfig(topic.config, changes));
        return json(topic.config);
      },
    },
  };
}
