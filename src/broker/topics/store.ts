/**
 * Where topics live in the data dir, and the one file that describes each:
 *
 *   <data-dir>/topics/<name>/topic.json     name, partition count and resolved config
 *   <data-dir>/topics/<name>/<partition>/   that partition's segments (src/broker/log), made on first write
 *   <data-dir>/trash/                       topics being deleted; emptied at start
 *
 * topic.json is written atomically (atomic-file.ts), so a topic exists exactly when its file does:
 * a topic directory without one is the leftover of a create that crashed before it was
 * acknowledged, and is removed at start.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SvcError } from "../../core/errors.ts";
import { topicPartitionsMax } from "../../core/limits.ts";
import { fsyncDir, tempSuffix, writeFileAtomic } from "../../core/atomic-file.ts";
import { parseConfigChanges, resolveConfig, type TopicConfig, topicConfigDefaults } from "./config.ts";
import { topicNameProblem } from "./names.ts";

/** What topic.json holds. */
export interface TopicMeta {
  name: string;
  partitions: number;
  config: TopicConfig;
}

const metaFileName = "topic.json";

export class TopicStore {
  readonly topicsDir: string;
  readonly trashDir: string;
  private trashed = 0;

  constructor(readonly dataDir: string) {
    this.topicsDir = join(dataDir, "topics");
    this.trashDir = join(dataDir, "trash");
  }

  topicDir(name: string): string {
    return join(this.topicsDir, name);
  }

  partitionDir(name: string, partition: number): string {
    return join(this.topicDir(name), String(partition));
  }

  /** Creates the layout if missing, empties the trash and removes half-created topics. */
  prepare(): { removed: string[] } {
    mkdirSync(this.topicsDir, { recursive: true });
    rmSync(this.trashDir, { recursive: true, force: true });
    mkdirSync(this.trashDir, { recursive: true });
    const removed: string[] = [];
    for (const name of readdirSync(this.topicsDir)) {
      const dir = this.topicDir(name);
      rmSync(join(dir, `${metaFileName}${tempSuffix}`), { force: true });
      if (!existsSync(join(dir, metaFileName))) {
        rmSync(dir, { recursive: true, force: true });
        removed.push(name);
      }
    }
    if (removed.length > 0) fsyncDir(this.topicsDir);
    return { removed };
  }

  /** Every stored topic's description, checked as strictly as a request would be. */
  loadAll(): TopicMeta[] {
    return readdirSync(this.topicsDir)
      .sort()
      .map((name) => this.load(name));
  }

  private load(name: string): TopicMeta {
    const path = join(this.topicDir(name), metaFileName);
    const corrupt = (why: string) => new SvcError("data_corrupt", `${path}: ${why}`);
    let meta: Partial<TopicMeta>;
    try {
      meta = JSON.parse(readFileSync(path, "utf8")) as Partial<TopicMeta>;
    } catch (error) {
      throw corrupt(`not readable JSON (${(error as Error).message})`);
    }
    if (meta.name !== name || topicNameProblem(meta.name) !== null) throw corrupt(`names topic ${JSON.stringify(meta.name)}, not ${JSON.stringify(name)}`);
    if (!Number.isSafeInteger(meta.partitions) || meta.partitions! < 1 || meta.partitions! > topicPartitionsMax) {
      throw corrupt(`partition count ${meta.partitions} is out of range`);
    }
    let config: TopicConfig;
    try {
      config = resolveConfig(topicConfigDefaults, parseConfigChanges(meta.config, "'config'"));
    } catch (error) {
      throw corrupt((error as Error).message);
    }
    return { name, partitions: meta.partitions!, config };
  }

  /** Writes a new topic's directory and description durably; the topic exists once this returns. */
  create(meta: TopicMeta): void {
    const dir = this.topicDir(meta.name);
    mkdirSync(dir);
    fsyncDir(this.topicsDir);
    this.save(meta);
  }

  /** Replaces a topic's description atomically. */
  save(meta: TopicMeta): void {
    writeFileAtomic(join(this.topicDir(meta.name), metaFileName), `${JSON.stringify(meta, null, 2)}\n`);
  }

  /** Moves a closed topic out of the way in one rename; returns where it went, for `purge`. */
  moveToTrash(name: string): string {
    const moved = join(this.trashDir, `${name}.${process.pid}.${++this.trashed}`);
    renameSync(this.topicDir(name), moved);
    fsyncDir(this.topicsDir);
    return moved;
  }

  purge(movedDir: string): void {
    rmSync(movedDir, { recursive: true, force: true });
  }

  /** Numbers of the partition directories a topic has (those written at least once). */
  partitionDirs(name: string, partitions: number): number[] {
    const found: number[] = [];
    for (const entry of readdirSync(this.topicDir(name))) {
      if (!/^\d+$/.test(entry)) continue;
      const partition = Number(entry);
      if (String(partition) !== entry || partition >= partitions) {
        throw new SvcError("data_corrupt", `${this.topicDir(name)}/${entry}: not a partition of a ${partitions}-partition topic`);
      }
      found.push(partition);
    }
    return found.sort((a, b) => a - b);
  }
}
