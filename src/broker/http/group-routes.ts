/**
 * Consumer groups over HTTP (spec: Endpoints, Consumer groups): each route decodes its request,
 * hands the operation to the pipeline, and encodes the answer of groups/groups.ts. Bodies the
 * spec leaves open are in docs/broker.md ("Consumer groups").
 *
 * Grants: every group route needs an authenticated principal; the topics a route names — a
 * join's topics, a commit's or a consume's topic — each need `read`, checked once the request
 * is decoded and before anything changes. Ownership of the group and of its members is checked
 * by the groups themselves.
 */
import { groupJoinTopicsMax } from "../../core/limits.ts";
import type { RequestContext, RouteTable } from "../../http/route.ts";
import { json } from "../../http/response.ts";
import type { Principal } from "../auth/principal.ts";
import type { Broker } from "../broker.ts";
import { parseGroupConsumeParams } from "../consume/params.ts";
import { consumeAnswer } from "../consume/records.ts";
import type { CommitRequest } from "../groups/groups.ts";
import { readOperation } from "../requests/operations.ts";
import { badRequest, describeJson, integerIn, objectFields, textField } from "../requests/fields.ts";
import { checkTopicName } from "../topics/names.ts";
import { principalOf } from "./principal.ts";

/** Member ids are ours (UUIDs), but a client may send anything: bound what is echoed back in errors. */
const memberIdLengthMax = 200;

function memberIdField(value: unknown, where = "member_id"): string {
  const id = textField(value, where);
  if (id.length === 0 || id.length > memberIdLengthMax) throw badRequest(`'${where}' must be 1 to ${memberIdLengthMax} characters`);
  return id;
}

function required<T>(fields: Record<string, unknown>, name: string, decode: (value: unknown) => T): T {
  if (fields[name] === undefined) throw badRequest(`'${name}' is required`);
  return decode(fields[name]);
}

const generationField = (value: unknown) => integerIn(value, 0, Number.MAX_SAFE_INTEGER, "generation");
const offsetField = (value: unknown) => integerIn(value, 0, Number.MAX_SAFE_INTEGER, "offset");
const partitionField = (value: unknown) => integerIn(value, 0, Number.MAX_SAFE_INTEGER, "partition");

function decodeJoin(body: unknown): { topics: string[]; memberId: string | null } {
  const fields = objectFields(body, ["topics", "member_id"], "the request body");
  const topics = required(fields, "topics", (value) => {
    if (!Array.isArray(value)) throw badRequest(`'topics' must be an array of topic names, not ${describeJson(value)}`);
    if (value.length < 1 || value.length > groupJoinTopicsMax)
      throw badRequest(`'topics' names ${value.length} topics; a join names 1 to ${groupJoinTopicsMax}`);
    return value.map((topic, i) => checkTopicName(topic, `'topics[${i}]'`));
  });
  const memberId = fields.member_id === undefined || fields.member_id === null ? null : memberIdField(fields.member_id);
  return { topics, memberId };
}

function decodeCommit(body: unknown): CommitRequest {
  const fields = objectFields(body, ["topic", "partition", "offset", "member_id", "generation"], "the request body");
  const request: CommitRequest = {
    topic: required(fields, "topic", (value) => checkTopicName(value, "'topic'")),
    partition: required(fields, "partition", partitionField),
    offset: required(fields, "offset", offsetField),
  };
  if ((fields.member_id === undefined) !== (fields.generation === undefined)) {
    throw badRequest("'member_id' and 'generation' go together: send both to fence a stale member, or neither");
  }
  if (fields.member_id !== undefined) request.member = { id: memberIdField(fields.member_id), generation: generationField(fields.generation) };
  return request;
}

export function groupRoutes(broker: Broker): RouteTable {
  const { pipeline, groups } = broker;
  const groupName = (ctx: RequestContext) => checkTopicName(ctx.params.group!, "group name");
  /** Runs `work` for an authenticated principal, after checking the group's name. */
  const asMember = <T>(ctx: RequestContext, work: (principal: Principal, group: string) => T | Promise<T>) => {
    const principal = principalOf(pipeline, ctx.req);
    return pipeline.run(principal, { action: "read", topic: null, run: () => work(principal, groupName(ctx)) });
  };
  return {
    "/groups/:group/join": {
      async POST(ctx) {
        return json(
          await asMember(ctx, async (principal, group) => {
            const { topics, memberId } = decodeJoin(await ctx.json());
            for (const topic of topics) pipeline.authorize(principal, "read", topic);
            return groups.join(group, pipeline.actorOf(principal), memberId, topics);
          }),
        );
      },
    },
    "/groups/:group/heartbeat": {
      async POST(ctx) {
        return json(
          await asMember(ctx, async (principal, group) => {
            const fields = objectFields(await ctx.json(), ["member_id", "generation"], "the request body");
            const memberId = required(fields, "member_id", memberIdField);
            const generation = required(fields, "generation", generationField);
            return groups.heartbeat(group, pipeline.actorOf(principal), memberId, generation);
          }),
        );
      },
    },
    "/groups/:group/leave": {
      async POST(ctx) {
        return json(
          await asMember(ctx, async (principal, group) => {
            const fields = objectFields(await ctx.json(), ["member_id"], "the request body");
            const memberId = required(fields, "member_id", memberIdField);
            return { member_id: memberId, ...groups.leave(group, pipeline.actorOf(principal), memberId) };
          }),
        );
      },
    },
    "/groups/:group/assignment": {
      async GET(ctx) {
        return json(
          await asMember(ctx, (principal, group) => {
            for (const name of new Set(ctx.url.searchParams.keys())) {
              if (name !== "member_id") throw badRequest(`unknown query parameter '${name}'; expected member_id`);
            }
            const ids = ctx.url.searchParams.getAll("member_id");
            if (ids.length !== 1)
              throw badRequest(
                ids.length === 0 ? "query parameter 'member_id' is required" : "query parameter 'member_id' is given more than once; give it once",
              );
            return groups.assignment(group, pipeline.actorOf(principal), memberIdField(ids[0], "member_id"));
          }),
        );
      },
    },
    "/groups/:group/commit": {
      async POST(ctx) {
        return json(
          await asMember(ctx, async (principal, group) => {
            const request = decodeCommit(await ctx.json());
            pipeline.authorize(principal, "read", request.topic);
            groups.commit(group, pipeline.actorOf(principal), request);
            return { topic: request.topic, partition: request.partition, offset: request.offset };
          }),
        );
      },
    },
    "/groups/:group/offsets": {
      async GET(ctx) {
        return json(
          await asMember(ctx, (principal, group) => {
            if ([...ctx.url.searchParams.keys()].length > 0) throw badRequest("GET /groups/{group}/offsets takes no query parameters");
            return { offsets: groups.committedOffsets(group, pipeline.actorOf(principal), (topic) => pipeline.canRead(principal, topic)) };
          }),
        );
      },
    },
    "/groups/:group/consume": {
      // The topic is in the query, so the read is the topic consume's own operation, reading from
      // where the group is.
      async GET(ctx) {
        const principal = principalOf(pipeline, ctx.req);
        const group = groupName(ctx);
        const { topic, ...params } = parseGroupConsumeParams(ctx.url.searchParams, broker.options);
        const name = checkTopicName(topic, "query parameter 'topic'");
        const read = await readOperation(broker, principal, name, () => groups.readParams(group, pipeline.actorOf(principal), name, params));
        return json(consumeAnswer(read, params.partition, params.encoding));
      },
    },
  };
}
