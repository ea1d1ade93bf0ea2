/**
 * Produce with a producer_id (spec: "Idempotent produce, per partition"). Each record's sequence
 * is judged against its producer's window in its partition, in request order, per the spec's table:
 * the next expected is written, one of the last 128 is a duplicate answered with its original
 * offset, one ahead is a 400 gap, one older than the window a 400 "too low". The whole request is
 * judged before anything is written: one 400 and nothing of it is written.
 *
 * A producer's requests to a topic run one at a time (a queue per producer id). That orders two
 * requests of one producer for one partition, and more: the judgement of a request that spans
 * several partitions sees a state no other request of that producer is changing, and a retry sent
 * while its original is still being written waits for it and is then answered as a duplicate.
 * Holding the partitions' write locks instead would stall every producer of those partitions and
 * could not span the group commit that the append itself waits for. The window is advanced only
 * inside the partition's flush, once the records are synced (producer-journal.ts).
 */
import { SvcError } from "../../core/errors.ts";
import { selectFrames } from "../log/record.ts";
import type { Topic } from "../topics/topic.ts";
import { producerJournalOf, type SequenceTag } from "./producer-journal.ts";
import { SequenceWindow } from "./producer-state.ts";
import type { ProducePlan, ProduceResult } from "./request.ts";

/** The spec's wording for the two refusals (spec: Errors, 400). */
export const sequenceGapMessage = "sequence gap; send the missing records first";
export const sequenceTooLowMessage = "sequence too low";

const queues = new WeakMap<Topic, Map<string, Promise<unknown>>>();

/** Runs `work` after every earlier request of `producerId` to `topic` has finished. */
function inProducerOrder<T>(topic: Topic, producerId: string, work: () => Promise<T>): Promise<T> {
  let byProducer = queues.get(topic);
  if (byProducer === undefined) queues.set(topic, (byProducer = new Map()));
  const previous = byProducer.get(producerId) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  byProducer.set(producerId, tail);
  void tail.then(() => {
    if (byProducer.get(producerId) === tail) byProducer.delete(producerId);
  });
  return run;
}

/** One partition's part of the request, judged. */
interface PartitionPart {
  partition: number;
  /** Records to write: their positions in the request, in sequence order. */
  writePositions: number[];
  firstSequence: number;
  /** Duplicates: position → original offset, or −(k+1) for the k-th record written by this request. */
  duplicates: Map<number, number>;
}

export function produceIdempotent(topic: Topic, plan: ProducePlan, producerId: string): Promise<ProduceResult[]> {
  return inProducerOrder(topic, producerId, async () => {
    const parts = judge(topic, plan, producerId);
    const results = new Array<ProduceResult>(plan.run.count);
    await Promise.all(
      parts.map(async (part) => {
        let baseOffset = 0;
        if (part.writePositions.length > 0) {
          const tag: SequenceTag = { producerId, firstSequence: part.firstSequence };
          const frames = selectFrames(plan.run, plan.starts, part.writePositions);
          baseOffset = (await topic.logForWrite(part.partition).append(frames, tag)).baseOffset;
          part.writePositions.forEach((position, i) => (results[position] = { partition: part.partition, offset: baseOffset + i }));
        }
        for (const [position, offset] of part.duplicates) {
          results[position] = { partition: part.partition, offset: offset >= 0 ? offset : baseOffset - offset - 1, duplicate: true };
        }
      }),
    );
    return results;
  });
}

/** Decides every record of the request; throws a 400 (nothing written) at the first refusal. */
function judge(topic: Topic, plan: ProducePlan, producerId: string): PartitionPart[] {
  const parts = new Map<number, { part: PartitionPart; trial: SequenceWindow }>();
  plan.partitions.forEach((partition, position) => {
    let entry = parts.get(partition);
    if (entry === undefined) {
      const log = topic.existingLog(partition);
      // A trial copy: the committed window changes only once records are on disk.
      const trial = log === null ? undefined : producerJournalOf(log).window(producerId).clone();
      entry = { part: { partition, writePositions: [], firstSequence: 0, duplicates: new Map() }, trial: trial ?? new SequenceWindow() };
      entry.part.firstSequence = entry.trial.next;
      parts.set(partition, entry);
    }
    const { part, trial } = entry;
    const sequence = plan.sequences[position]!;
    const decision = trial.decide(sequence);
    const where = `records[${position}] (partition ${partition}, sequence ${sequence})`;
    switch (decision.kind) {
      case "accept":
        // Placeholder offset −(k+1): a later record of this request may repeat this sequence.
        trial.accept(-(part.writePositions.length + 1));
        part.writePositions.push(position);
        break;
      case "duplicate":
        part.duplicates.set(position, decision.offset);
        break;
      case "gap":
        throw new SvcError("bad_request", `${sequenceGapMessage}: ${where}: producer '${producerId}' expects sequence ${decision.expected} next`);
      case "too_low":
        throw new SvcError("bad_request", `${sequenceTooLowMessage}: ${where}: producer '${producerId}' is answered for sequences from ${decision.lowest} on`);
    }
  });
  return [...parts.values()].map((e) => e.part);
}

/**
 * Drops a forgotten producer's sequence state in every partition of `topic`, after its requests
 * in flight (if any) finish: a later produce with its id starts at sequence 0, as a new one.
 */
export function forgetProducer(topic: Topic, producerId: string): Promise<void> {
  return inProducerOrder(topic, producerId, async () => {
    for (let p = 0; p < topic.partitionCount; p++) {
      const log = topic.existingLog(p);
      if (log !== null && !topic.isClosed) await producerJournalOf(log).forget(producerId);
    }
  });
}
