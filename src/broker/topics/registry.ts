/**
 * Every topic of the broker by name: created, looked up, listed, reconfigured and deleted here,
 * and loaded from the data dir at start.
 */
import { SvcError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { resolveConfig, type TopicConfig, topicConfigDefaults } from "./config.ts";
import { TopicStore } from "./store.ts";
import { type PartitionSettings, Topic } from "./topic.ts";

export class TopicRegistry {
  private readonly topics = new Map<string, Topic>();
  /** Names whose delete is still closing files: not creatable again until it finishes. */
  private readonly deleting = new Set<string>();
  readonly store: TopicStore;

  constructor(
    dataDir: string,
    private readonly settings: PartitionSettings,
  ) {
    this.store = new TopicStore(dataDir);
  }

  /** Loads every stored topic and opens (recovering) its partitions' logs. */
  async load(log: Logger): Promise<void> {
    const { removed } = this.store.prepare();
    if (removed.length > 0) log.warn({ removed }, "removed half-created topics left by a crash");
    for (const meta of this.store.loadAll()) this.topics.set(meta.name, await Topic.load(meta, this.store, this.settings));
  }

  get count(): number {
    return this.topics.size;
  }

  /** Topics sorted by name. */
  list(): Topic[] {
    return [...this.topics.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The topic, or a 404 naming it. */
  get(name: string): Topic {
    const topic = this.topics.get(name);
    if (topic === undefined) throw new SvcError("not_found", `topic '${name}' does not exist`);
    return topic;
  }

  /** The topic, or undefined when it does not exist. */
  find(name: string): Topic | undefined {
    return this.topics.get(name);
  }

  /** Creates a topic from checked input; 409 when the name is taken. */
  create(name: string, partitions: number, changes: Partial<TopicConfig>): Topic {
    if (this.topics.has(name)) throw new SvcError("conflict", `topic '${name}' already exists`);
    if (this.deleting.has(name)) throw new SvcError("conflict", `topic '${name}' is being deleted; create it again once the delete returns`);
    const config = resolveConfig(topicConfigDefaults, changes);
    const topic = Topic.create({ name, partitions, config }, this.store, this.settings);
    this.topics.set(name, topic);
    return topic;
  }

  /**
   * Deletes a topic and its data. The topic is gone for new requests at once; its logs are closed
   * once writes in flight finish, then its directory is moved to the trash in one rename (so a
   * crash cannot leave half a topic) and removed. Its name can be taken again once this returns.
   */
  async delete(name: string): Promise<void> {
    const topic = this.get(name);
    this.topics.delete(name);
    this.deleting.add(name);
    try {
      await topic.close();
      this.store.purge(this.store.moveToTrash(name));
    } finally {
      this.deleting.delete(name);
    }
  }

  async close(): Promise<void> {
    const topics = [...this.topics.values()];
    this.topics.clear();
    await Promise.all(topics.map((t) => t.close()));
  }
}
