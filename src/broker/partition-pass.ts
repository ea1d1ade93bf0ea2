/**
 * The walk every background pass makes (retention, compaction): each partition of each topic
 * that holds data, one at a time, with the topic's config read afresh per partition (a change
 * made during the pass applies from the next partition). A partition whose step fails is logged
 * and counted, and the walk goes on: one damaged partition must not stop the pass everywhere else.
 */
import type { Logger } from "../core/log.ts";
import type { Partition } from "./log/partition.ts";
import type { TopicConfig } from "./topics/config.ts";
import type { TopicRegistry } from "./topics/registry.ts";

/** Where a step is: the topic's name and the partition's number. */
export interface PartitionPlace {
  topic: string;
  partition: number;
}

/** Runs `step` on every partition that holds data; resolves to how many failed. */
export async function forEachPartition(
  topics: TopicRegistry,
  log: Logger,
  what: string,
  step: (partition: Partition, config: Readonly<TopicConfig>, place: PartitionPlace) => Promise<void>,
): Promise<number> {
  let failed = 0;
  for (const topic of topics.list()) {
    for (let partition = 0; partition < topic.partitionCount && !topic.isClosed; partition++) {
      const partitionLog = topic.existingLog(partition);
      if (partitionLog === null) continue;
      try {
        await step(partitionLog, topic.config, { topic: topic.name, partition });
      } catch (error) {
        failed++;
        log.error({ err: error, topic: topic.name, partition }, `${what} failed for a partition`);
      }
    }
  }
  return failed;
}

/** Whether a topic's cleanup_policy ("delete", "compact" or "compact,delete") includes `policy`. */
export function policyIncludes(config: Readonly<TopicConfig>, policy: "delete" | "compact"): boolean {
  return config.cleanup_policy.split(",").includes(policy);
}
