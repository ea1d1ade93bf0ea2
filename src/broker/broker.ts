/**
 * The broker's state behind its fronts: its topics, groups, keys, producer ids, schemas, limits, and the
 * request pipeline every operation runs through (requests/pipeline.ts). Fronts decode their
 * input and hand the operation to the pipeline; nothing in this object knows HTTP.
 */
import type { Clock } from "../core/clock.ts";
import { retentionCheckIntervalMs } from "../core/limits.ts";
import type { Logger } from "../core/log.ts";
import type { Authorizer } from "./auth/authorizer.ts";
import { KeyAuthorizer } from "./auth/key-authorizer.ts";
import { KeyStore } from "./auth/keys.ts";
import type { ConsumeLimits } from "./consume/params.ts";
import type { ProduceLimits } from "./produce/request.ts";
import { type CompactionSummary, runCompactionPass } from "./compaction-pass.ts";
import { ConsumerGroups } from "./groups/groups.ts";
import { BrokerMetrics } from "./metrics.ts";
import { ProducerOwners } from "./produce/producer-owners.ts";
import { dropSequenceState } from "./produce/producers-admin.ts";
import { Quotas } from "./quotas/quotas.ts";
import { RetentionScheduler, type RetentionSummary, runRetentionPass } from "./retention-scheduler.ts";
import { RequestPipeline } from "./requests/pipeline.ts";
import { SchemaRegistry } from "./schemas/registry.ts";
import { TopicRegistry } from "./topics/registry.ts";

export interface BrokerOptions extends ProduceLimits, ConsumeLimits {
  dataDir: string;
  /** --flush-every-records: how many records a partition writes between syncs. */
  flushEveryRecords: number;
  clock: Clock;
  /** --auth required: every request needs an API key. */
  authRequired: boolean;
  /** Judges grants; by default the keys' own (KeyAuthorizer). Tests may watch the pipeline with another. */
  authorizer?: Authorizer;
  /** --coord-member-timeout: a group member silent this long is removed. */
  memberTimeoutMs: number;
}

export class Broker {
  readonly topics: TopicRegistry;
  readonly keys: KeyStore;
  readonly quotas: Quotas;
  readonly pipeline: RequestPipeline;
  readonly groups: ConsumerGroups;
  readonly producerOwners: ProducerOwners;
  readonly schemas: SchemaRegistry;
  readonly metrics: BrokerMetrics;
  /** False until the stored topics are loaded, and again once stopping: /readyz answers 503. */
  ready = false;
  /** Made by `open`, which has the logger the passes report to. */
  private retention: RetentionScheduler | null = null;
  private compactionPass: (() => Promise<CompactionSummary>) | null = null;

  constructor(readonly options: BrokerOptions) {
    const { clock } = options;
    this.keys = new KeyStore(options.dataDir, () => clock.nowMs());
    this.quotas = new Quotas(clock);
    // A revoked key's budgets go with it (a key id is never made again).
    this.keys.onRevoke((keyId) => this.quotas.forget(keyId));
    this.topics = new TopicRegistry(options.dataDir, {
      recordBytesMax: options.recordBytesMax,
      flushEveryRecords: options.flushEveryRecords,
      clock,
    });
    this.groups = new ConsumerGroups(options.dataDir, clock, options.memberTimeoutMs, this.topics);
    this.metrics = new BrokerMetrics(this.topics, this.groups);
    this.pipeline = new RequestPipeline({
      authorizer: options.authorizer ?? new KeyAuthorizer(this.keys),
      keys: this.keys,
      quotas: this.quotas,
      metrics: this.metrics,
      authRequired: options.authRequired,
      isReady: () => this.ready,
    });
    this.producerOwners = new ProducerOwners(options.dataDir, clock);
    this.schemas = new SchemaRegistry(options.dataDir);
  }

  /**
   * Loads and recovers every stored topic, makes the bootstrap key if this is the first start
   * with --auth required, starts the background passes and timers, then reports ready.
   */
  async open(log: Logger): Promise<void> {
    await this.topics.load(log);
    if (this.options.authRequired) {
      const bootstrap = this.keys.bootstrap();
      if (bootstrap !== null)
        log.warn({ file: bootstrap }, "no API keys yet: wrote an admin key's secret to this file; create real keys with it, then delete the file");
    }
    const pass = () => runRetentionPass(this.topics, this.options.clock, log, (place, segments, bytes) => this.metrics.retention(place, segments, bytes));
    this.compactionPass = () => runCompactionPass(this.topics, this.options.clock, log, (place, dropped) => this.metrics.compaction(place, dropped));
    this.retention = new RetentionScheduler(pass, retentionCheckIntervalMs, log, this.compactionPass);
    this.retention.start();
    this.groups.start(log);
    this.producerOwners.start(log, (ids) => dropSequenceState(this.topics, ids));
    this.ready = true;
  }

  /** A retention pass over every topic now (POST /admin/run-retention); resolves when it is done. */
  runRetention(): Promise<RetentionSummary> {
    if (this.retention === null) throw new Error("the broker is not open");
    return this.retention.runNow();
  }

  /**
   * A compaction pass over every topic now (POST /admin/run-compaction), queued with the
   * retention passes so the two never interleave; resolves when it is done.
   */
  runCompaction(): Promise<CompactionSummary> {
    if (this.retention === null || this.compactionPass === null) throw new Error("the broker is not open");
    return this.retention.runOther(this.compactionPass);
  }

  /** Deletes a topic and its data; groups forget its offsets and stop reading it. */
  async deleteTopic(name: string): Promise<void> {
    const partitions = this.topics.get(name).partitionCount;
    await this.topics.delete(name);
    this.groups.topicDeleted(name);
    this.metrics.topicDeleted(name, partitions);
  }

  /** Stops reporting ready, waits for writes in flight and closes every log. */
  async close(): Promise<void> {
    this.ready = false;
    // Let a pass in progress finish before its partitions close under it.
    await this.retention?.stop();
    await this.groups.stop();
    await this.producerOwners.stop();
    await this.topics.close();
  }
}
