/**
 * Eviction past `maxmemory`, by CONFIG `maxmemory-policy`, as Redis does it: when used memory is
 * past the limit, keys are deleted until it is under again, and only when no key can go
 * (noeviction, or a volatile-* policy with no key that has a time) are commands that may grow
 * the data refused with OOM.
 *
 * Which key goes: `maxmemory-samples` keys are drawn at random from each database, and of those
 * the one the policy likes least goes — the longest idle (lru), the one whose time runs out first
 * (ttl), the least often read (lfu), any (random) — among all keys (allkeys-*) or keys with a time (volatile-*). Redis
 * approximates LRU the same way, by sampling. An evicted key is deleted as Redis deletes it: the
 * file records a DEL, WATCH and client-side caches see a change, and the "evicted" keyspace event
 * goes out.
 *
 * How much goes: Redis asks its allocator what is in use, which falls the moment a key is freed.
 * Here the measurement is the JavaScript heap, which falls only when the garbage collector next
 * runs a full collection (hundreds of ms on a large heap) and which meanwhile also holds every
 * reply and argument already dropped. Evicting against it evicts far too much: the keys deleted
 * do not show as freed, so the next reading evicts again. So an evicting policy compares the
 * limit with an estimate instead: the memory used at start plus, per key, the mean of MEMORY
 * USAGE over keys sampled at random (`sizeSamplesPerCheck` per check, averaged with the earlier
 * ones). Garbage is left to the collector, as Redis leaves fragmentation to its allocator.
 *
 * Under the LFU policies, the key with the lowest access counter of the sample goes
 * (access-frequency.ts keeps the counters).
 */
import type { Keyspace } from "./keyspace.ts";
import { keyMemoryBytes } from "./memory-usage.ts";
import { counterMax } from "./access-frequency.ts";

export type EvictionPolicy =
  | "noeviction"
  | "allkeys-lru"
  | "allkeys-random"
  | "volatile-lru"
  | "volatile-random"
  | "volatile-ttl"
  | "allkeys-lfu"
  | "volatile-lfu";

/** maxmemory-policy's words, in the order Redis's error lists them. */
export const evictionPolicies: readonly EvictionPolicy[] = [
  "volatile-lru",
  "volatile-lfu",
  "volatile-random",
  "volatile-ttl",
  "allkeys-lru",
  "allkeys-lfu",
  "allkeys-random",
  "noeviction",
];

/** Keys sized per check to keep the mean key size current. */
const sizeSamplesPerCheck = 16;
/** Weight of one check's sample in the running mean key size. */
const sizeSampleWeight = 0.2;
/** Random draws per key wanted, for a volatile policy: keys with a time may be few among many. */
const volatileDrawsPerSample = 8;
/** Keys evicted per check at most, so that one command never waits on a long eviction. */
const evictionsPerCheckMax = 10_000;

export interface EvictionHost {
  readonly dbs: readonly Keyspace[];
  /** Deletes an evicted key the way a command's DEL would be seen (the file, WATCH, events), and counts it. */
  evicted(db: Keyspace, key: string): void;
}

export class Eviction {
  policy: EvictionPolicy = "noeviction";
  samples = 5;
  /** The running mean of a key's MEMORY USAGE; 0 until keys were sized. */
  private meanKeyBytes = 0;

  constructor(private readonly host: EvictionHost) {}

  get evicts(): boolean {
    return this.policy !== "noeviction";
  }

  /** The memory the data is estimated to take: keys times the mean key size, plus `startBytes`. */
  estimatedBytes(startBytes: number): number {
    this.sizeSample();
    let keys = 0;
    for (const db of this.host.dbs) keys += db.size;
    return startBytes + keys * this.meanKeyBytes;
  }

  /**
   * Evicts keys until the estimate is `overBytes` lower; false when no key could go (then the
   * caller refuses what would grow the data).
   */
  evict(overBytes: number): boolean {
    if (!this.evicts) return false;
    const keys = Math.min(evictionsPerCheckMax, Math.ceil(overBytes / Math.max(1, this.meanKeyBytes)));
    for (let n = 0; n < keys; n++) {
      const victim = this.pick();
      if (victim === null) return false;
      this.host.evicted(victim.db, victim.key);
    }
    return true;
  }

  /** Sizes a few random keys into the running mean. */
  private sizeSample(): void {
    let bytes = 0;
    let sized = 0;
    for (const db of this.host.dbs) {
      for (let i = 0; i < sizeSamplesPerCheck && db.size > 0; i++) {
        bytes += keyMemoryBytes(db, db.table.randomKey()!, this.samples) ?? 0;
        sized++;
      }
      if (sized >= sizeSamplesPerCheck) break;
    }
    if (sized === 0) return;
    const mean = bytes / sized;
    this.meanKeyBytes = this.meanKeyBytes === 0 ? mean : this.meanKeyBytes + sizeSampleWeight * (mean - this.meanKeyBytes);
  }

  /** The key the policy evicts next, from a sample of each database; null when none can go. */
  private pick(): { db: Keyspace; key: string } | null {
    const volatile = this.policy.startsWith("volatile-");
    const random = this.policy.endsWith("-random");
    let best: { db: Keyspace; key: string; score: number } | null = null;
    for (const db of this.host.dbs) {
      if (db.size === 0 || (volatile && db.expiringCount === 0)) continue;
      const draws = volatile ? this.samples * volatileDrawsPerSample : this.samples;
      let taken = 0;
      for (let i = 0; i < draws && taken < this.samples; i++) {
        const key = db.table.randomKey()!;
        const expiresAt = db.expiryOf(key);
        if (volatile && expiresAt === undefined) continue;
        if (random) return { db, key };
        taken++;
        const score = this.score(db, key, expiresAt);
        if (best === null || score > best.score) best = { db, key, score };
      }
    }
    return best;
  }

  /** Higher goes first: the idle time for LRU, the nearness of the expiry for TTL, rarity for LFU. */
  private score(db: Keyspace, key: string, expiresAt: number | undefined): number {
    if (this.policy === "volatile-ttl") return -expiresAt!;
    if (this.policy.endsWith("-lfu")) return counterMax - db.accessCounter(key)!;
    return db.idleMs(key);
  }
}
