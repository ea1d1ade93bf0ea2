/**
 * The data operations as every front runs them through the pipeline: a produce and a read of
 * one partition. A front hands over its principal, the topic and a way to decode the rest of its
 * request; grants, producer id ownership, quotas, idempotence and metrics happen here once, so
 * HTTP and the binary protocol cannot drift apart.
 */
import type { Principal } from "../auth/principal.ts";
import type { Broker } from "../broker.ts";
import { type PartitionRead, type ReadParams, readPartition } from "../consume/consume.ts";
import { produce } from "../produce/produce.ts";
import { keyValueBytesAt, type ProducePlan, type ProduceResult } from "../produce/request.ts";
import type { Topic } from "../topics/topic.ts";
import { SvcError } from "../../core/errors.ts";

/** The topic, unless it was deleted while the request arrived. */
function stillThere(topic: Topic): Topic {
  if (topic.isClosed) throw new SvcError("not_found", `topic '${topic.name}' does not exist`);
  return topic;
}

/**
 * Produces to `topicName` as `principal`: `plan` decodes and checks the request against the
 * topic (after the grant, so a refused request's body is never read). Then ownership of the
 * producer id, the quota by size, the claim of the id — a refused produce claims none — and the
 * write; answered once the records are on disk. `queued`, if given, is called once the produce
 * holds its place in its partitions' order (produce.ts), and not at all if it is refused first.
 */
export function produceOperation(
  broker: Broker,
  principal: Principal,
  topicName: string,
  plan: (topic: Topic) => ProducePlan | Promise<ProducePlan>,
  queued?: () => void,
): Promise<ProduceResult[]> {
  const { pipeline } = broker;
  return pipeline.run(principal, {
    action: "write",
    topic: topicName,
    run: async (meter) => {
      const topic = broker.topics.get(topicName);
      const checked = await plan(topic);
      stillThere(topic);
      const actor = pipeline.actorOf(principal);
      if (checked.producerId !== null) broker.producerOwners.check(checked.producerId, actor);
      const bytes = checked.keyValueBytes;
      meter.admitProduce(bytes);
      if (checked.producerId !== null) await broker.producerOwners.use(checked.producerId, actor);
      const results = await produce(topic, checked, queued);
      if (checked.producerId === null) meter.produced(topicName, checked.run.count, bytes);
      else {
        // Retries an idempotent producer sent again were not written, and do not count.
        const written = results.flatMap((r, position) => (r.duplicate === true ? [] : [position]));
        meter.produced(topicName, written.length, keyValueBytesAt(checked, written));
      }
      return results;
    },
  });
}

/** Reads one partition of `topicName` as `principal`, charged to its consume quota and counted. */
export function readOperation(broker: Broker, principal: Principal, topicName: string, params: () => ReadParams): Promise<PartitionRead> {
  return broker.pipeline.run(principal, {
    action: "read",
    topic: topicName,
    consumes: true,
    run: (meter) => readPartition(broker.topics.get(topicName), params(), (records, bytes) => meter.consumed(topicName, records, bytes)),
  });
}
