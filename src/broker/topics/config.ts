/**
 * A topic's config: the spec's fields, every one optional on input. Defaults are Kafka's broker
 * defaults (docs/broker.md has the table), so a client tuned for Kafka sees what it expects:
 * a week of retention by age, no limit by size, delete as the policy, 1 GiB segments, and
 * tombstones kept a day under compaction.
 */
import { logSegmentBytesMax, logSegmentBytesMin } from "../../core/limits.ts";
import { segmentBytesDefault } from "../log/partition.ts";
import { badRequest, describeJson, integerIn, objectFields } from "../requests/fields.ts";

export const cleanupPolicies = ["delete", "compact", "compact,delete"] as const;
export type CleanupPolicy = (typeof cleanupPolicies)[number];

export interface TopicConfig {
  /** -1 keeps records forever. */
  retention_ms: number;
  /** Per partition, as Kafka's retention.bytes; -1 for no limit. */
  retention_bytes: number;
  cleanup_policy: CleanupPolicy;
  /** A change applies from each partition's next segment roll. */
  segment_bytes: number;
  tombstone_retention_ms: number;
}

const dayMs = 24 * 60 * 60 * 1000;

/** Kafka's retention.ms, retention.bytes, cleanup.policy, segment.bytes and delete.retention.ms. */
export const topicConfigDefaults: Readonly<TopicConfig> = Object.freeze({
  retention_ms: 7 * dayMs,
  retention_bytes: -1,
  cleanup_policy: "delete",
  segment_bytes: segmentBytesDefault,
  tombstone_retention_ms: dayMs,
});

const fieldNames = Object.keys(topicConfigDefaults) as (keyof TopicConfig)[];

/** Each numeric field's accepted range; -1 is Kafka's "no limit" where it has one. */
const ranges: Record<Exclude<keyof TopicConfig, "cleanup_policy">, [number, number]> = {
  retention_ms: [-1, Number.MAX_SAFE_INTEGER],
  retention_bytes: [-1, Number.MAX_SAFE_INTEGER],
  segment_bytes: [logSegmentBytesMin, logSegmentBytesMax],
  tombstone_retention_ms: [0, Number.MAX_SAFE_INTEGER],
};

/**
 * The fields a client sent, checked: an object of known fields, each in range. `where` names the
 * object in errors ("'config'" or "the request body").
 */
export function parseConfigChanges(value: unknown, where: string): Partial<TopicConfig> {
  const fields = objectFields(value, fieldNames, where);
  const changes: Partial<TopicConfig> = {};
  for (const [name, raw] of Object.entries(fields)) {
    if (name === "cleanup_policy") {
      if (typeof raw !== "string" || !(cleanupPolicies as readonly string[]).includes(raw)) {
        throw badRequest(
          `'cleanup_policy' must be one of ${cleanupPolicies.map((p) => `"${p}"`).join(", ")}, not ${typeof raw === "string" ? JSON.stringify(raw) : describeJson(raw)}`,
        );
      }
      changes.cleanup_policy = raw as CleanupPolicy;
    } else {
      const [min, max] = ranges[name as keyof typeof ranges];
      changes[name as keyof typeof ranges] = integerIn(raw, min, max, name);
    }
  }
  return changes;
}

/** `base` with `changes` applied: omitted fields keep their value. */
export function resolveConfig(base: Readonly<TopicConfig>, changes: Partial<TopicConfig>): TopicConfig {
  return { ...base, ...changes };
}
