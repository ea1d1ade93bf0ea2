/**
 * Which partition a produced record goes to (spec: the named partition, else the key's hash,
 * else round robin).
 *
 * The key hash is XXH64 with seed 0 over the key's UTF-8 bytes, modulo the partition count
 * (Bun.hash.xxHash64, the standard algorithm: test/broker/partitioner.test.ts pins it to the
 * published test vectors). It must never change while data exists — records of one key would
 * split across partitions and lose their order — so changing it means a new topic, not a new
 * version. A topic's partition count never changes either (there is no API to change it).
 */

/** The partition for `key` in a topic of `partitions` partitions. */
export function partitionForKey(key: Uint8Array, partitions: number): number {
  return Number(Bun.hash.xxHash64(key) % BigInt(partitions));
}

/** Round robin over a topic's partitions, one record at a time; `next` is the topic's cursor. */
export function roundRobin(cursor: { roundRobinNext: number }, partitions: number): number {
  const partition = cursor.roundRobinNext % partitions;
  cursor.roundRobinNext = (partition + 1) % partitions;
  return partition;
}
