/**
 * The idempotent producers as an administrator sees them (spec: Administration): every producer
 * id the broker knows — from its owner record, or from sequence state in a partition — with its
 * owner, its last use and, per partition, the sequence it expects next; and forgetting one.
 */
import { SvcError } from "../../core/errors.ts";
import type { TopicRegistry } from "../topics/registry.ts";
import { forgetProducer } from "./idempotent.ts";
import { producerJournalOf } from "./producer-journal.ts";
import type { ProducerOwners } from "./producer-owners.ts";

export interface ProducerListing {
  producer_id: string;
  /** The owning key's id; null when it has none (authentication off). */
  owner: string | null;
  /** Null for state older than owner records (nothing says when it was last used). */
  last_used_ms: number | null;
  partitions: { topic: string; partition: number; next_sequence: number }[];
}

export function listProducers(topics: TopicRegistry, owners: ProducerOwners): ProducerListing[] {
  const byId = new Map<string, ProducerListing>();
  const entry = (id: string) => {
    let listing = byId.get(id);
    if (listing === undefined) byId.set(id, (listing = { producer_id: id, owner: null, last_used_ms: null, partitions: [] }));
    return listing;
  };
  for (const { producerId, owner, lastUsedMs } of owners.list()) Object.assign(entry(producerId), { owner, last_used_ms: lastUsedMs });
  for (const topic of topics.list()) {
    for (let partition = 0; partition < topic.partitionCount; partition++) {
      const log = topic.existingLog(partition);
      if (log === null) continue;
      for (const [id, window] of producerJournalOf(log).producers) entry(id).partitions.push({ topic: topic.name, partition, next_sequence: window.next });
    }
  }
  return [...byId.values()].sort((a, b) => (a.producer_id < b.producer_id ? -1 : 1));
}

/**
 * Forgets a producer everywhere: its owner (another key may then take the id) and its sequence
 * state in every partition, so its next produce starts at sequence 0. 404 when nothing knows it.
 */
export async function forgetProducerEverywhere(topics: TopicRegistry, owners: ProducerOwners, producerId: string): Promise<void> {
  const owned = owners.forget(producerId);
  if (!owned && !hasSequenceState(topics, producerId)) throw new SvcError("not_found", `producer '${producerId}' is not known`);
  await owners.flush();
  await dropSequenceState(topics, [producerId]);
}

/** Drops the sequence state of `producerIds` from every partition of every topic (ids forgotten). */
export async function dropSequenceState(topics: TopicRegistry, producerIds: readonly string[]): Promise<void> {
  for (const topic of topics.list()) {
    for (const id of producerIds) await forgetProducer(topic, id);
  }
}

function hasSequenceState(topics: TopicRegistry, producerId: string): boolean {
  return topics
    .list()
    .some((topic) =>
      Array.from({ length: topic.partitionCount }, (_, p) => topic.existingLog(p)).some(
        (log) => log !== null && producerJournalOf(log).producers.has(producerId),
      ),
    );
}
