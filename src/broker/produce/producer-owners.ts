/**
 * Who owns each idempotent producer id (spec: Producer; Ownership; Limits): the key that first
 * produced with it. Another key is refused (403), a key owns at most 10,000 ids, and an id not
 * used for 7 days is forgotten — its owner record here, and its sequence state in every partition
 * (the caller does that part, producer-journal.ts). Two files in the data dir:
 *
 *   producers.json      {"version": 1, "producers": {id: {owner, last_used_ms}}}, replaced atomically
 *   producers.journal   one line {"p": id, "k": key, "t": ms} per id a key claimed since the snapshot
 *
 * A new id's owner is on disk before its first produce is written (a crash must not let another
 * key take an id whose records exist): its journal line is appended and synced, and the lines of
 * ids claimed at the same moment share one write and one sync. The snapshot — with when each id
 * was last used, which only decides a forgetting a week away — is written once a minute when
 * something changed, at shutdown and after a forgetting, and empties the journal. File work runs
 * one operation at a time, so a snapshot never drops a line appended while it was written.
 */
import { existsSync, readFileSync, truncateSync } from "node:fs";
import { appendFile, open, truncate } from "node:fs/promises";
import { join } from "node:path";
import { damagedFile, readStoredJson, writeFileAtomicAsync } from "../../core/atomic-file.ts";
import type { Clock } from "../../core/clock.ts";
import { SvcError } from "../../core/errors.ts";
import { producerIdleCheckIntervalMs, producerIdleMs, producerIdsPerKeyMax, producerLastUsedFlushIntervalMs } from "../../core/limits.ts";
import type { Logger } from "../../core/log.ts";
import type { Actor } from "../auth/principal.ts";

interface Owned {
  /** The owning key; null for ids first used while authentication was off (anyone may use them). */
  owner: string | null;
  lastUsedMs: number;
}

/** Claims waiting for their turn to be written, and the promise of that write. */
interface ClaimBatch {
  lines: string[];
  written: Promise<void>;
}

const fileVersion = 1;

export class ProducerOwners {
  private readonly ids = new Map<string, Owned>();
  private readonly countByKey = new Map<string, number>();
  private readonly snapshotPath: string;
  private readonly journalPath: string;
  /** Something changed that only the snapshot records (a last use, an id without a key). */
  private touched = false;
  /** Lines in the journal the next snapshot folds in. */
  private journalLines = 0;
  /** The file operations, one at a time. */
  private fileWork: Promise<unknown> = Promise.resolve();
  private batch: ClaimBatch | null = null;
  private timers: ReturnType<typeof setInterval>[] = [];

  constructor(
    dataDir: string,
    private readonly clock: Clock,
  ) {
    this.snapshotPath = join(dataDir, "producers.json");
    this.journalPath = join(dataDir, "producers.journal");
    const snapshot = readStoredJson(this.snapshotPath, fileVersion);
    if (snapshot !== null) this.readSnapshot(snapshot);
    if (existsSync(this.journalPath)) this.readJournal(readFileSync(this.journalPath, "utf8"));
  }

  /**
   * Starts writing the snapshot once a minute and forgetting idle ids once an hour;
   * `dropState` removes a forgotten id's sequence state from the partitions.
   */
  start(log: Logger, dropState: (producerIds: string[]) => Promise<void>): void {
    const flush = setInterval(() => {
      this.flush().catch((error: unknown) => log.error({ err: error }, "writing producer ids' owners failed; trying again later"));
    }, producerLastUsedFlushIntervalMs);
    const expire = setInterval(() => {
      const ids = this.forgetIdle();
      if (ids.length === 0) return;
      log.info({ producers: ids.length }, "forgot producer ids unused for 7 days");
      this.flush()
        .then(() => dropState(ids))
        .catch((error: unknown) => log.error({ err: error }, "forgetting idle producer ids failed"));
    }, producerIdleCheckIntervalMs);
    this.timers = [flush, expire];
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.flush();
  }

  /** Refuses (403) an id another key owns, or a new id past the key's limit. Changes nothing. */
  check(producerId: string, actor: Actor): void {
    const owned = this.ids.get(producerId);
    if (owned !== undefined) {
      if (owned.owner !== null && owned.owner !== actor.key && !actor.actsForAnyKey) {
        throw new SvcError("forbidden", `producer id '${producerId}' belongs to another key`);
      }
      return;
    }
    if (actor.key !== null && this.ownedBy(actor.key) >= producerIdsPerKeyMax) {
      throw new SvcError("forbidden", `this key already owns ${producerIdsPerKeyMax} producer ids, the most a key may; ids unused for 7 days are forgotten`);
    }
  }

  /**
   * Records a use of an id; resolves once a new owner is on disk. Checks again (another key may
   * have claimed the id since `check`), so two first uses at once cannot both own it.
   */
  async use(producerId: string, actor: Actor): Promise<void> {
    this.check(producerId, actor);
    const now = this.clock.nowMs();
    const owned = this.ids.get(producerId);
    if (owned !== undefined && (owned.owner !== null || actor.key === null)) {
      owned.lastUsedMs = now;
      this.touched = true;
      return;
    }
    // A new id, or one first used with authentication off that a key now takes.
    if (actor.key === null) {
      this.ids.set(producerId, { owner: null, lastUsedMs: now });
      this.touched = true;
      return;
    }
    this.setOwner(producerId, actor.key, now);
    await this.appendClaim(`${JSON.stringify({ p: producerId, k: actor.key, t: now })}\n`);
  }

  /** Forgets every id unused for `producerIdleMs` (7 days); answers them so their state can go too. */
  forgetIdle(): string[] {
    const deadline = this.clock.nowMs() - producerIdleMs;
    const forgotten: string[] = [];
    for (const [id, owned] of this.ids) {
      if (owned.lastUsedMs > deadline) continue;
      this.forget(id);
      forgotten.push(id);
    }
    return forgotten;
  }

  /** Every known id with its owner and last use, sorted by id. */
  list(): { producerId: string; owner: string | null; lastUsedMs: number }[] {
    return [...this.ids]
      .map(([producerId, owned]) => ({ producerId, owner: owned.owner, lastUsedMs: owned.lastUsedMs }))
      .sort((a, b) => (a.producerId < b.producerId ? -1 : 1));
  }

  /** Forgets one id now (DELETE /admin/producers/{id}); false when it was not known. */
  forget(producerId: string): boolean {
    const owned = this.ids.get(producerId);
    if (owned === undefined) return false;
    this.ids.delete(producerId);
    if (owned.owner !== null) this.countByKey.set(owned.owner, this.ownedBy(owned.owner) - 1);
    this.touched = true;
    return true;
  }

  /** How many ids `key` owns. */
  ownedBy(key: string): number {
    return this.countByKey.get(key) ?? 0;
  }

  /** Writes the snapshot (and empties the journal) if anything changed since the last one. */
  flush(): Promise<void> {
    return this.exclusive(async () => {
      if (!this.touched && this.journalLines === 0) return;
      const folded = this.journalLines;
      this.touched = false;
      try {
        await writeFileAtomicAsync(this.snapshotPath, this.serialize());
        if (folded > 0) await truncate(this.journalPath, 0);
        this.journalLines -= folded;
      } catch (error) {
        this.touched = true;
        throw error;
      }
    });
  }

  private setOwner(producerId: string, key: string, now: number): void {
    this.ids.set(producerId, { owner: key, lastUsedMs: now });
    this.countByKey.set(key, this.ownedBy(key) + 1);
  }

  /** Appends a claim's line with the others waiting (one write, one sync); resolves once it is synced. */
  private appendClaim(line: string): Promise<void> {
    if (this.batch === null) {
      const batch: ClaimBatch = { lines: [], written: Promise.resolve() };
      batch.written = this.exclusive(async () => {
        // From here new claims start the next batch.
        this.batch = null;
        const text = batch.lines.join("");
        await appendFile(this.journalPath, text);
        const file = await open(this.journalPath, "r");
        try {
          await file.datasync();
        } finally {
          await file.close();
        }
        this.journalLines += batch.lines.length;
      });
      this.batch = batch;
    }
    this.batch.lines.push(line);
    return this.batch.written;
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.fileWork.then(work, work);
    this.fileWork = run.catch(() => undefined);
    return run;
  }

  private serialize(): string {
    const producers: Record<string, { owner: string | null; last_used_ms: number }> = {};
    for (const [id, owned] of this.ids) producers[id] = { owner: owned.owner, last_used_ms: owned.lastUsedMs };
    return JSON.stringify({ version: fileVersion, producers });
  }

  private readSnapshot(file: Record<string, unknown>): void {
    if (typeof file.producers !== "object" || file.producers === null) throw damagedFile(this.snapshotPath, "expected producers");
    for (const [id, value] of Object.entries(file.producers as Record<string, { owner?: unknown; last_used_ms?: unknown }>)) {
      if (!(value?.owner === null || typeof value?.owner === "string") || !Number.isSafeInteger(value.last_used_ms))
        throw damagedFile(this.snapshotPath, `producer '${id}'`);
      if (value.owner === null) this.ids.set(id, { owner: null, lastUsedMs: value.last_used_ms as number });
      else this.setOwner(id, value.owner as string, value.last_used_ms as number);
    }
  }

  private readJournal(text: string): void {
    const lines = text.split("\n");
    // After the last newline: nothing, or a line torn by a crash before its sync — never
    // acknowledged. It is cut off, or the next line appended would be glued to it.
    const torn = lines.pop()!;
    if (torn.length > 0) truncateSync(this.journalPath, Buffer.byteLength(text) - Buffer.byteLength(torn));
    lines.forEach((line, i) => {
      let claim: { p?: unknown; k?: unknown; t?: unknown };
      try {
        claim = JSON.parse(line);
      } catch {
        throw damagedFile(this.journalPath, `line ${i + 1} is not JSON`);
      }
      if (typeof claim.p !== "string" || typeof claim.k !== "string" || !Number.isSafeInteger(claim.t)) throw damagedFile(this.journalPath, `line ${i + 1}`);
      const owned = this.ids.get(claim.p);
      if (owned?.owner === claim.k) return; // already in the snapshot
      if (owned !== undefined && owned.owner !== null) this.countByKey.set(owned.owner, this.ownedBy(owned.owner) - 1);
      this.setOwner(claim.p, claim.k, claim.t as number);
    });
    this.journalLines = lines.length;
  }
}
