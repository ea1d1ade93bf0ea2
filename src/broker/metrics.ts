/**
 * The broker's metrics (spec: Health, metrics; GET /metrics), over core/metrics.ts. Every series
 * of the spec's table with its type and labels, plus the request counts and latencies of the
 * pipeline and the process's own. Partition and group gauges are read at scrape time from the
 * topics and groups themselves (nothing to keep up to date on the produce path); the counters
 * are bumped where the thing happens: a produce written, a read done, a retention or
 * compaction step on a partition.
 *
 * With authentication on a scrape shows what its key may see: series with a `topic` label only
 * for topics it can read, with a `group` label only for groups it owns; a global admin sees all.
 */
import { type Counter, type Histogram, MetricsRegistry, type SeriesFilter } from "../core/metrics.ts";
import type { PartitionPlace } from "./partition-pass.ts";
import type { ConsumerGroups } from "./groups/groups.ts";
import type { TopicRegistry } from "./topics/registry.ts";
import type { PartitionSummary } from "./topics/topic.ts";

/** Request latency buckets, seconds: a produce synced to disk takes ~0.5–15 ms here, a large consume tens. */
const requestBucketsSeconds = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

export class BrokerMetrics {
  private readonly registry = new MetricsRegistry();
  private readonly recordsProduced: Counter;
  private readonly bytesProduced: Counter;
  private readonly recordsConsumed: Counter;
  private readonly bytesConsumed: Counter;
  private readonly segmentsDeleted: Counter;
  private readonly bytesReclaimed: Counter;
  private readonly compactionRuns: Counter;
  private readonly recordsDropped: Counter;
  private readonly requests: Counter;
  private readonly requestSeconds: Histogram;
  private readonly cpuSeconds: Counter;
  private readonly binaryWaited: Counter;
  /** Open binary connections, kept by the binary listener. */
  binaryConnections = 0;
  private readonly startedAtSeconds = Date.now() / 1000 - process.uptime();

  constructor(topics: TopicRegistry, groups: ConsumerGroups) {
    const r = this.registry;
    const partitionGauge = (name: string, help: string, read: (summary: PartitionSummary) => number) =>
      r.gauge({
        name,
        help,
        labelNames: ["topic", "partition"],
        collect: (set) => {
          for (const topic of topics.list()) {
            for (let p = 0; p < topic.partitionCount; p++) set([topic.name, String(p)], read(topic.summary(p)));
          }
        },
      });
    partitionGauge("svc_partition_start_offset", "First offset still in the partition's log (retention and compaction move it).", (s) => s.start_offset);
    partitionGauge("svc_partition_end_offset", "The partition's high watermark: the offset the next record gets.", (s) => s.high_watermark);
    partitionGauge("svc_partition_size_bytes", "Bytes of the partition's segments on disk.", (s) => s.size_bytes);
    partitionGauge("svc_partition_segment_count", "Segments of the partition, the active one included.", (s) => s.segment_count);
    r.counter({
      name: "svc_partition_flushes_total",
      help: "Writes of the partition's log since it was opened: each is one write and at most one fdatasync, shared by every produce waiting (group commit).",
      labelNames: ["topic", "partition"],
      collect: (set) => {
        for (const topic of topics.list()) {
          for (let p = 0; p < topic.partitionCount; p++) set([topic.name, String(p)], topic.existingLog(p)?.flushCount ?? 0);
        }
      },
    });
    this.recordsProduced = r.counter({
      name: "svc_topic_records_produced_total",
      help: "Records written to the topic (duplicates of idempotent retries not counted).",
      labelNames: ["topic"],
    });
    this.bytesProduced = r.counter({ name: "svc_topic_bytes_produced_total", help: "Bytes of keys and values written to the topic.", labelNames: ["topic"] });
    this.recordsConsumed = r.counter({
      name: "svc_topic_records_consumed_total",
      help: "Records read from the topic, by topic and group consumes.",
      labelNames: ["topic"],
    });
    this.bytesConsumed = r.counter({ name: "svc_topic_bytes_consumed_total", help: "Bytes of keys and values read from the topic.", labelNames: ["topic"] });
    r.gauge({
      name: "svc_group_committed_offset",
      help: "The group's committed offset: the next offset it reads.",
      labelNames: ["group", "topic", "partition"],
      collect: (set) => {
        for (const e of groups.lag()) set([e.group, e.topic, String(e.partition)], e.offset);
      },
    });
    r.gauge({
      name: "svc_group_lag",
      help: "Records between the group's committed offset and the partition's high watermark.",
      labelNames: ["group", "topic", "partition"],
      collect: (set) => {
        for (const e of groups.lag()) set([e.group, e.topic, String(e.partition)], e.lag);
      },
    });
    this.segmentsDeleted = r.counter({
      name: "svc_retention_segments_deleted_total",
      help: "Sealed segments retention deleted.",
      labelNames: ["topic", "partition"],
    });
    this.bytesReclaimed = r.counter({ name: "svc_retention_bytes_reclaimed_total", help: "Bytes retention freed.", labelNames: ["topic", "partition"] });
    this.compactionRuns = r.counter({
      name: "svc_compaction_runs_total",
      help: "Compactions of the partition (one per pass that visits it).",
      labelNames: ["topic", "partition"],
    });
    this.recordsDropped = r.counter({
      name: "svc_compaction_records_dropped_total",
      help: "Records compaction dropped (superseded by a newer record of their key, or expired tombstones).",
      labelNames: ["topic", "partition"],
    });
    this.requests = r.counter({
      name: "svc_broker_requests_total",
      help: "Operations run through the request pipeline, by grant action and outcome (ok or the error code).",
      labelNames: ["action", "outcome"],
    });
    this.requestSeconds = r.histogram({
      name: "svc_broker_request_duration_seconds",
      help: "Time an operation took in the pipeline, its grant check to its answer.",
      labelNames: ["action"],
      buckets: requestBucketsSeconds,
    });
    r.gauge({ name: "svc_topics", help: "Topics the broker holds.", collect: (set) => set([], topics.count) });
    r.gauge({ name: "svc_binary_connections", help: "Open connections of the binary protocol.", collect: (set) => set([], this.binaryConnections) });
    this.binaryWaited = r.counter({
      name: "svc_binary_requests_waited_total",
      help: "Binary requests that waited to start: their connection had 32 running, or the shared in-flight byte budget was spent.",
    });
    this.cpuSeconds = r.counter({ name: "process_cpu_seconds_total", help: "User and system CPU time the broker process has used." });
    r.gauge({ name: "process_resident_memory_bytes", help: "Resident memory of the broker process.", collect: (set) => set([], process.memoryUsage.rss()) });
    r.gauge({
      name: "process_start_time_seconds",
      help: "When the broker process started, seconds since the Unix epoch.",
      collect: (set) => set([], this.startedAtSeconds),
    });
  }

  produced(topic: string, records: number, bytes: number): void {
    this.recordsProduced.labels(topic).inc(records);
    this.bytesProduced.labels(topic).inc(bytes);
  }

  consumed(topic: string, records: number, bytes: number): void {
    this.recordsConsumed.labels(topic).inc(records);
    this.bytesConsumed.labels(topic).inc(bytes);
  }

  retention({ topic, partition }: PartitionPlace, segments: number, bytes: number): void {
    this.segmentsDeleted.labels(topic, String(partition)).inc(segments);
    this.bytesReclaimed.labels(topic, String(partition)).inc(bytes);
  }

  compaction({ topic, partition }: PartitionPlace, recordsDropped: number): void {
    this.compactionRuns.labels(topic, String(partition)).inc();
    this.recordsDropped.labels(topic, String(partition)).inc(recordsDropped);
  }

  request(action: string, outcome: string, seconds: number): void {
    this.requests.labels(action, outcome).inc();
    this.requestSeconds.labels(action).observe(seconds);
  }

  /** A binary request waited for room before it started. */
  binaryRequestWaited(): void {
    this.binaryWaited.inc();
  }

  /** A deleted topic's counters go with it; one made later under its name starts from zero. */
  topicDeleted(topic: string, partitions: number): void {
    for (const counter of [this.recordsProduced, this.bytesProduced, this.recordsConsumed, this.bytesConsumed]) counter.remove(topic);
    for (let p = 0; p < partitions; p++) {
      for (const counter of [this.segmentsDeleted, this.bytesReclaimed, this.compactionRuns, this.recordsDropped]) counter.remove(topic, String(p));
    }
  }

  /** The exposition, with only the series `filter` admits. */
  expose(filter?: SeriesFilter): string {
    const { user, system } = process.cpuUsage();
    const cpu = this.cpuSeconds.labels();
    cpu.value = (user + system) / 1e6;
    return this.registry.expose(filter);
  }
}
