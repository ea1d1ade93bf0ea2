/**
 * Consumer groups' committed offsets and owners, kept in memory and written to one file once a
 * second and at shutdown (spec: "Commits are written to disk once a second and at shutdown;
 * after a crash a consumer may read up to a second of records again"):
 *
 *   <data-dir>/groups/offsets.json   {"version": 1, "groups": {group: {owner, offsets: {topic: {partition: offset}}}}}
 *
 * The file is replaced atomically (core/atomic-file.ts), so after kill -9 it holds the state of
 * the last write-out whole. A commit is acknowledged before it is on disk — Kafka's consumers
 * commit as often as they like for the same reason: a lost commit costs a re-read, not data.
 * A group's owner (the key that first joined or committed) is stored with its offsets, so
 * ownership outlives a restart as the offsets do.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { damagedFile, readStoredJson, writeFileAtomicAsync } from "../../core/atomic-file.ts";

interface StoredGroup {
  /** The key that owns the group; null when it was claimed with authentication off. */
  owner: string | null;
  /** topic → partition → the next offset to read. */
  offsets: Map<string, Map<number, number>>;
}

const fileVersion = 1;

export class CommittedOffsets {
  private readonly groups = new Map<string, StoredGroup>();
  private readonly path: string;
  /** Changes not yet written out. */
  private changed = false;
  /** The write-out in progress, if any; the next waits for it (they share a temporary file). */
  private writing: Promise<void> | null = null;

  constructor(dataDir: string) {
    const dir = join(dataDir, "groups");
    this.path = join(dir, "offsets.json");
    mkdirSync(dir, { recursive: true });
    const file = readStoredJson(this.path, fileVersion);
    if (file !== null) this.read(file);
  }

  /** Whether the group has been joined or committed to (since its topics were last all deleted, at most). */
  has(group: string): boolean {
    return this.groups.has(group);
  }

  /** The key that owns the group: null when no key has claimed it. */
  owner(group: string): string | null {
    return this.groups.get(group)?.owner ?? null;
  }

  /**
   * Records `owner` as the group's owner unless it has one. A group used while authentication was
   * off has none (null), and goes to the first key that uses it once keys are required.
   */
  claim(group: string, owner: string | null): void {
    const stored = this.groups.get(group);
    if (stored === undefined) this.groups.set(group, { owner, offsets: new Map() });
    else if (stored.owner === null && owner !== null) stored.owner = owner;
    else return;
    this.changed = true;
  }

  /** Records `offset` as the next offset the group reads from the partition. The group must be claimed. */
  commit(group: string, topic: string, partition: number, offset: number): void {
    const stored = this.groups.get(group);
    if (stored === undefined) throw new Error(`commit to group '${group}' before it was claimed`);
    let partitions = stored.offsets.get(topic);
    if (partitions === undefined) stored.offsets.set(topic, (partitions = new Map()));
    partitions.set(partition, offset);
    this.changed = true;
  }

  /** The group's committed offset of the partition, if any. */
  committed(group: string, topic: string, partition: number): number | undefined {
    return this.groups.get(group)?.offsets.get(topic)?.get(partition);
  }

  /** The group's offsets, topic by topic, partitions in ascending order. */
  offsets(group: string): Map<string, Map<number, number>> {
    return this.groups.get(group)?.offsets ?? new Map();
  }

  /** Every committed offset: what the metrics report. */
  *entries(): Generator<{ group: string; topic: string; partition: number; offset: number }> {
    for (const [group, stored] of this.groups) {
      for (const [topic, partitions] of stored.offsets) {
        for (const [partition, offset] of partitions) yield { group, topic, partition, offset };
      }
    }
  }

  /** The groups that have committed offsets on `topic`, with their partitions. */
  groupsOn(topic: string): { group: string; partitions: number[] }[] {
    const found: { group: string; partitions: number[] }[] = [];
    for (const [group, stored] of this.groups) {
      const partitions = stored.offsets.get(topic);
      if (partitions !== undefined) found.push({ group, partitions: [...partitions.keys()].sort((a, b) => a - b) });
    }
    return found;
  }

  /** A deleted topic's offsets go with it: a topic made later under its name starts unread. */
  dropTopic(topic: string): void {
    for (const stored of this.groups.values()) if (stored.offsets.delete(topic)) this.changed = true;
  }

  /** Writes the offsets out if anything changed since the last write-out. */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing;
    if (!this.changed) return;
    this.changed = false;
    const text = this.serialize();
    this.writing = writeFileAtomicAsync(this.path, text)
      .catch((error: unknown) => {
        // Try again at the next write-out rather than lose the change.
        this.changed = true;
        throw error;
      })
      .finally(() => {
        this.writing = null;
      });
    await this.writing;
  }

  private serialize(): string {
    const groups: Record<string, { owner: string | null; offsets: Record<string, Record<string, number>> }> = {};
    for (const [name, stored] of this.groups) {
      const offsets: Record<string, Record<string, number>> = {};
      for (const [topic, partitions] of stored.offsets) offsets[topic] = Object.fromEntries([...partitions].sort((a, b) => a[0] - b[0]));
      groups[name] = { owner: stored.owner, offsets };
    }
    return JSON.stringify({ version: fileVersion, groups });
  }

  private read(file: Record<string, unknown>): void {
    const damaged = (why: string) => damagedFile(this.path, why);
    if (typeof file.groups !== "object" || file.groups === null) throw damaged("expected groups");
    for (const [name, value] of Object.entries(file.groups as Record<string, unknown>)) {
      const group = value as { owner?: unknown; offsets?: unknown };
      if (
        typeof group !== "object" ||
        group === null ||
        !(group.owner === null || typeof group.owner === "string") ||
        typeof group.offsets !== "object" ||
        group.offsets === null
      ) {
        throw damaged(`group '${name}' lacks an owner or offsets`);
      }
      const offsets = new Map<string, Map<number, number>>();
      for (const [topic, partitions] of Object.entries(group.offsets as Record<string, unknown>)) {
        const map = new Map<number, number>();
        for (const [partition, offset] of Object.entries(partitions as Record<string, unknown>)) {
          if (!/^\d+$/.test(partition) || !Number.isSafeInteger(offset) || (offset as number) < 0)
            throw damaged(`group '${name}' topic '${topic}' partition ${partition}`);
          map.set(Number(partition), offset as number);
        }
        offsets.set(topic, map);
      }
      this.groups.set(name, { owner: group.owner, offsets });
    }
  }
}
