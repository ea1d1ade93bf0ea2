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

export async function produce(topic: Topic, plan: ProducePlan): Promise<ProduceResult[]> {
  if (plan.producerId !== null) return produceIdempotent(topic, plan, plan.producerId);
  const { records } = plan;
  // The usual batch: every record to one partition, appended as it is, nothing regrouped.
  const partition = records[0]!.partition;
  if (records.every((r) => r.partition === partition)) {
    const appended = await topic.logForWrite(partition).append(records);
    return records.map((_, i) => ({ partition, offset: appended.baseOffset + i }));
  }
  const results = new Array<ProduceResult>(plan.records.length);
  const appends = [...byPartition(plan)].map(async ([partition, batch]) => {
    const appended = await topic.logForWrite(partition).append(batch.records);
    batch.positions.forEach((position, i) => (results[position] = { partition, offset: appended.baseOffset + i }));
  });
  await Promise.all(appends);
  return results;
}
