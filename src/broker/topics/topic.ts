/**
 * One topic: its description and its partitions' logs. A partition's directory is made on its
 * first write, not at create: a topic may have 10,000 partitions, and each open log holds a file
 * descriptor, so only partitions that hold data are opened (all of them at start, which is when
 * their recovery runs). A partition never written reads as an empty log.
 */
import type { Clock } from "../../core/clock.ts";
import { Partition } from "../log/partition.ts";
import { attachProducerJournal } from "../produce/producer-journal.ts";
import type { TopicConfig } from "./config.ts";
import { fsyncDir } from "../../core/atomic-file.ts";
import type { TopicMeta, TopicStore } from "./store.ts";

export interface PartitionSettings {
  /** Largest key plus value of one record (--max-record-bytes). */
  recordBytesMax: number;
  /** --flush-every-records (see PartitionOptions). */
  flushEveryRecords: number;
  clock: Clock;
}

export interface PartitionSummary {
  partition: number;
  start_offset: number;
  high_watermark: number;
  size_bytes: number;
  segment_count: number;
}

export class Topic {
  private readonly logs: (Partition | null)[];
  private closed = false;
  /** Where round-robin partition choice goes next. */
  roundRobinNext = 0;

  private constructor(
    private meta: TopicMeta,
    private readonly store: TopicStore,
    private readonly settings: PartitionSettings,
  ) {
    this.logs = new Array<Partition | null>(meta.partitions).fill(null);
  }

  /** A new topic, written to disk before it returns. */
  static create(meta: TopicMeta, store: TopicStore, settings: PartitionSettings): Topic {
    store.create(meta);
    return new Topic(meta, store, settings);
  }

  /**
   * A stored topic, with every partition that holds data opened (and so recovered). It lets the
   * event loop run between partitions, so the HTTP listener answers /healthz and /readyz (503)
   * while a large data dir recovers.
   */
  static async load(meta: TopicMeta, store: TopicStore, settings: PartitionSettings): Promise<Topic> {
    const topic = new Topic(meta, store, settings);
    try {
      for (const partition of store.partitionDirs(meta.name, meta.partitions)) {
        topic.open(partition, false);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      void topic.close();
      throw error;
    }
    return topic;
  }

  get name(): string {
    return this.meta.name;
  }

  get partitionCount(): number {
    return this.meta.partitions;
  }

  get config(): Readonly<TopicConfig> {
    return this.meta.config;
  }

  /** The partition's log if it has ever been written, else null (an empty log). */
  existingLog(partition: number): Partition | null {
    return this.logs[partition] ?? null;
  }

  /** The partition's log, made on disk if this is its first write. */
  logForWrite(partition: number): Partition {
    return this.logs[partition] ?? this.open(partition, true);
  }

  private open(partition: number, isNew: boolean): Partition {
    const log = Partition.open(this.store.partitionDir(this.name, partition), {
      segmentBytes: this.meta.config.segment_bytes,
      recordBytesMax: this.settings.recordBytesMax,
      flushEveryRecords: this.settings.flushEveryRecords,
      clock: this.settings.clock,
    });
    // The new partition directory's own entry must survive a crash, or its acknowledged records
    // would vanish with it.
    if (isNew) fsyncDir(this.store.topicDir(this.name));
    // Idempotent producers' state, reconciled with the recovered log before its first write.
    try {
      attachProducerJournal(log);
    } catch (error) {
      void log.close();
      throw error;
    }
    this.logs[partition] = log;
    return log;
  }

  /** Stores the new config, then applies segment_bytes to each open log from its next roll. */
  setConfig(config: TopicConfig): void {
    const meta = { ...this.meta, config };
    this.store.save(meta);
    this.meta = meta;
    for (const log of this.logs) log?.setSegmentBytes(config.segment_bytes);
  }

  summary(partition: number): PartitionSummary {
    const log = this.logs[partition];
    return {
      partition,
      start_offset: log?.logStartOffset ?? 0,
      high_watermark: log?.highWatermark ?? 0,
      size_bytes: log?.sizeBytes ?? 0,
      segment_count: log?.segmentCount ?? 0,
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Waits for queued writes, then closes every open log. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.logs.map((log) => log?.close()));
  }

  dump(): TopicMeta & { open: number[] } {
    return { ...this.meta, open: this.logs.flatMap((log, i) => (log === null ? [] : [i])) };
  }
}
