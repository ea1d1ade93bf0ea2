/**
 * Carrying out a checked produce plan: one append per partition per request (so a request's
 * records for a partition land in one write, and group commit in src/broker/log/partition.ts
 * shares its fdatasync with other requests), answered once every append is on disk, with the
 * results in the request's order.
 */
import type { ProduceRecord } from "../log/partition.ts";
import type { Topic } from "../topics/topic.ts";
import { produceIdempotent } from "./idempotent.ts";
import type { ProducePlan, ProduceResult } from "./request.ts";

interface PartitionBatch {
  /** Positions in the request of this partition's records, in order. */
  positions: number[];
  records: ProduceRecord[];
}

function byPartition(plan: ProducePlan): Map<number, PartitionBatch> {
  const batches = new Map<number, PartitionBatch>();
  plan.records.forEach((record, position) => {
    let batch = batches.get(record.partition);
    if (batch === undefined) batches.set(record.partition, (batch = { positions: [], records: [] }));
    batch.positions.push(position);
    batch.records.push({ key: record.key, value: record.value });
  });
  return batches;
}

/**
 * Writes `plan`. `queued` is called once the produce holds its place in line: its appends are in
 * their partitions' group-commit queues (or, for an idempotent producer, it is in that producer's
 * queue, which appends in the same order). A later produce started after that lands after it, so
 * a front that must keep a connection's produces in order waits for this, not for the disk —
 * and the produces it has in flight share one fdatasync.
 */
export async function produce(topic: Topic, plan: ProducePlan, queued?: () => void): Promise<ProduceResult[]> {
  if (plan.producerId !== null) {
    const written = produceIdempotent(topic, plan, plan.producerId);
    queued?.();
    return written;
  }
  const { records } = plan;
  // The usual batch: every record to one partition, appended as it is, nothing regrouped.
  const partition = records[0]!.partition;
  if (records.every((r) => r.partition === partition)) {
    const append = topic.logForWrite(partition).append(records);
    queued?.();
    const appended = await append;
    return records.map((_, i) => ({ partition, offset: appended.baseOffset + i }));
  }
  const results = new Array<ProduceResult>(plan.records.length);
  // Each async callback runs up to its first await at once: every append is queued before map returns.
  const appends = [...byPartition(plan)].map(async ([partition, batch]) => {
    const appended = await topic.logForWrite(partition).append(batch.records);
    batch.positions.forEach((position, i) => (results[position] = { partition, offset: appended.baseOffset + i }));
  });
  queued?.();
  await Promise.all(appends);
  return results;
}
