/**
 * One numbered database: the keys, their values and their expiry times. Keys and string values
 * are latin1 "byte strings" (one char per byte), which keeps them binary-safe and lets JavaScript
 * store them as compact 8-bit strings. A value's type follows from its representation:
 *
 *   string or MutableString → string   List → list   FieldMap → hash   MemberSet → set   ZSet → zset
 *
 * The keys and values are in a KeyTable (key-table.ts): short keys and short string values as
 * bytes in the table's slabs, everything else as the objects above. get() and read() hand out a
 * short string as a new JS string; GET and INCR work on the bytes in place through ref().
 *
 * Expiry follows Redis: a key past its time is deleted when someone looks it up (lazy), and the
 * active cycle (expire.ts) removes keys nobody touches. Every change to a key is reported through
 * `onModified`, which WATCH relies on; the keyspace itself knows nothing about clients.
 */
import type { Clock } from "../../core/clock.ts";
import type { Value } from "../types/value.ts";
import { blockSlots, KeyTable } from "../types/key-table.ts";
import { accessed, counterOf, type FrequencyConfig, minuteOf, withCounter } from "./access-frequency.ts";
import type { KeyEvent, KeyspaceEvents } from "./keyspace-events.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";

export interface KeyspaceHooks {
  clock: Clock;
  /**
   * While a script runs, busy slices included: the Unix ms it started at, which keys' times are
   * judged against, as Redis 7.0 judges them — a key cannot expire in the middle of a script, so
   * the commands it runs and propagates see one state. noScriptRunning while none runs.
   */
  scriptStartedMs: number;
  /**
   * While a command runs, with the commands it runs itself (EXEC's, a script's): the Unix ms its
   * keys' times are judged against, read the first time one is (commandTimeUnread until then), as
   * Redis's call() fixes the time for a command — so EXEC's commands see one moment, and a
   * command that looks a key up twice sees it the same both times. noCommandRunning otherwise.
   */
  commandStartedMs: number;
  /**
   * While CLIENT PAUSE holds clients: a key read past its time reads as gone but stays, as
   * Redis's expireIfNeeded keeps the data as it is during a pause; it goes when next met after.
   */
  readonly clientsPaused: boolean;
  /**
   * A key's value or existence changed (WATCH's "touched"). `invalidates`: false when a whole
   * database is flushed or swapped, which client-side caching is told of otherwise, or not at all.
   * `expired`: the key was deleted because its time had passed (no client changed it).
   * `swappedWith`: SWAPDB exchanged `db` with that database (which now holds what `db` held).
   */
  onModified(db: Keyspace, key: string, invalidates?: boolean, expired?: boolean, swappedWith?: Keyspace): void;
  /** A key was deleted because its time had passed (INFO's expired_keys, the "expired" event). */
  onExpired(db: Keyspace, key: string): void;
  /** Where keyspace notifications go (keyspace-events.ts). */
  events: KeyspaceEvents;
}

/** KeyspaceHooks.scriptStartedMs while no script runs. */
export const noScriptRunning = -1;
/** KeyspaceHooks.commandStartedMs while no command runs, and while one runs that has not read the time. */
export const noCommandRunning = -1;
export const commandTimeUnread = -2;

/** An access counter read outside an LFU policy does not decay. */
const noDecay: FrequencyConfig = { logFactor: 0, decayMinutes: 0 };

/** Read times are kept in units of 10 ms since the keyspace was created, in an int32. */
const readTimeUnitMs = 10;
/** The latest read time an int32 holds: about 248 days; later reads are recorded as this. */
const readTimeMax = 2 ** 31 - 1;

/** expireStep's refs and expired keys, reused from step to step. */
const stepRefs: number[] = [];
const stepExpired: string[] = [];

/** What one step of the expiry cycle met (Keyspace.expireStep). */
export interface ExpireTally {
  timed: number;
  expired: number;
  /** The time left to the keys met that had not expired, summed, and how many they were. */
  ttlSumMs: number;
  ttlSamples: number;
}

export class Keyspace {
  // Not readonly: SWAPDB exchanges these between two databases.
  table = new KeyTable<Value>();
  /**
   * How many keys have an expiry time (INFO's expires=). The times themselves are in the keys'
   * entries (KeyTable.expiresAt, Infinity for none), which a read reaches anyway; the active
   * expiry cycle walks the table for them (expireStep). No structure lists the keys: a map or set
   * of them cost a GET a third of its speed, and a key ~110 bytes more than one with no time.
   */
  expiringCount = 0;
  /**
   * INFO keyspace's avg_ttl: a running estimate, in ms, of the time left to keys with a time, kept
   * by the active expiry cycle from the keys it meets, as Redis keeps it (0 while none has a time).
   */
  avgTtlMs = 0;
  /**
   * While the append-only file loads, no key expires, as in Redis (keyIsExpired answers no while
   * loading): a replayed command must find a key as it was when the command ran, so the APPEND
   * that followed `SET k v PXAT t` appends even if t has passed since, and the key goes once the
   * load is over. Expiring it mid-load would let the APPEND make a new key with no expiry.
   */
  expiryPaused = false;
  /**
   * Under an LFU maxmemory-policy, the counters' settings: each read then raises the key's access
   * counter (access-frequency.ts) instead of recording its time. Null under any other policy.
   */
  frequency: FrequencyConfig | null = null;
  /**
   * Under LFU, the key whose access the running command has counted already (engine.run clears
   * it before each command): a command that looked the key up and then replaces its value
   * (APPEND, INCR) counts one access, as in Redis.
   */
  countedKey: string | null = null;
  /**
   * Under an LRU maxmemory-policy a write counts as a use too, as in Redis, so that a key just
   * written is not the first to go; otherwise svc spends no clock reading on writes.
   */
  stampsWrites = false;
  /** Monotonic ms when the keyspace was created: the origin of read times, and the idle origin of keys never read. */
  private readonly createdMs: number;

  constructor(
    public index: number,
    private readonly hooks: KeyspaceHooks,
  ) {
    this.createdMs = hooks.clock.monotonicMs();
  }

  get size(): number {
    return this.table.size;
  }

  /** Whether the table holds the key, whether or not its time has passed. Does not delete. */
  contains(key: string): boolean {
    return this.table.find(key) !== -1;
  }

  /** True when the key has a time and it has passed. Does not delete. */
  isExpired(key: string): boolean {
    if (this.expiringCount === 0) return false;
    const ref = this.table.find(key);
    return ref !== -1 && this.passed(ref);
  }

  /**
   * Whether the time of the entry at `ref` has passed. The entry holds the key's time (Infinity
   * for none): checking it costs no second lookup, where a map of times cost a GET over keys with
   * times a third of its speed.
   */
  private passed(ref: number): boolean {
    const at = this.table.expiresAt(ref);
    // Passed means before now, not at it: Redis's keyIsExpired answers `now > when`.
    return at !== Infinity && !this.expiryPaused && at < this.expiryNowMs();
  }

  /** The moment keys' times are judged against: the running script's start, the running command's, or now. */
  private expiryNowMs(): number {
    const hooks = this.hooks;
    if (hooks.scriptStartedMs >= 0) return hooks.scriptStartedMs;
    const command = hooks.commandStartedMs;
    if (command >= 0) return command;
    const now = hooks.clock.nowMs();
    if (command === commandTimeUnread) hooks.commandStartedMs = now;
    return now;
  }

  /** Deletes a key whose time has passed, and reports it. */
  private expire(key: string): void {
    this.remove(key, true);
    this.hooks.onModified(this, key, true, true);
    this.hooks.onExpired(this, key);
  }

  /** Deletes the key if it has a time and it has passed; cheap when no key has a time. Returns whether it did. */
  expireIfDue(key: string): boolean {
    if (!this.isExpired(key)) return false;
    this.expire(key);
    return true;
  }

  /**
   * The ref of a live key's entry in `table` (expiring the key first if its time has passed), or
   * -1. Hot commands read a short string's bytes through it without copying them out.
   */
  ref(key: string): number {
    const ref = this.table.find(key);
    if (ref === -1 || this.expiringCount === 0 || !this.passed(ref)) return ref;
    if (!this.hooks.clientsPaused) this.expire(key);
    return -1;
  }

  /** Like ref, and records the read, made at monotonic `atMs`, for OBJECT IDLETIME. */
  readRef(key: string, atMs: number): number {
    const ref = this.ref(key);
    if (ref === -1) return ref;
    if (this.frequency !== null) this.countAccess(ref);
    else this.stampRead(ref, atMs);
    return ref;
  }

  /** Records a read of the entry at `ref` made at monotonic `atMs` (+ 1: 0 means never read). */
  private stampRead(ref: number, atMs: number): void {
    this.table.setReadTime(ref, Math.min(readTimeMax, Math.floor((atMs - this.createdMs) / readTimeUnitMs) + 1));
  }

  /**
   * Under LFU, replacing a key's value is an access to it, and the new value keeps the counter,
   * as Redis's setKey looks the key up and its dbOverwrite keeps the old object's counter.
   */
  private countOverwrite(key: string): void {
    if (key === this.countedKey) return;
    const ref = this.table.find(key);
    if (ref !== -1) this.countAccess(ref);
  }

  private countAccess(ref: number): void {
    this.countedKey = this.table.keyOf(ref);
    const minute = minuteOf(this.hooks.clock.nowMs());
    this.table.setReadTime(ref, accessed(this.table.readTime(ref), minute, this.frequency!, Math.random()));
  }

  /** The key's access counter under an LFU policy, decayed to now (OBJECT FREQ); null for a missing key. */
  accessCounter(key: string): number | null {
    const ref = this.table.find(key);
    if (ref === -1) return null;
    return counterOf(this.table.readTime(ref), minuteOf(this.hooks.clock.nowMs()), this.frequency ?? noDecay);
  }

  /** Sets the key's access counter (RESTORE … FREQ under an LFU policy). */
  setAccessCounter(key: string, counter: number): void {
    const ref = this.table.find(key);
    if (ref !== -1) this.table.setReadTime(ref, withCounter(counter, minuteOf(this.hooks.clock.nowMs())));
  }

  /** The live value of a key, expiring it first if its time has passed. */
  get(key: string): Value | undefined {
    const ref = this.ref(key);
    return ref === -1 ? undefined : this.table.valueOf(ref);
  }

  /**
   * Like get, and records the read, made at monotonic `atMs`, for OBJECT IDLETIME (a client's
   * lookup, or TOUCH).
   */
  read(key: string, atMs: number): Value | undefined {
    const ref = this.readRef(key, atMs);
    return ref === -1 ? undefined : this.table.valueOf(ref);
  }

  has(key: string): boolean {
    return this.ref(key) !== -1;
  }

  /** Sets a key's value; a new value drops the old time to live unless `keepTtl`. */
  set(key: string, value: Value, keepTtl = false): void {
    const ref = this.put(key, value);
    // A moved entry took its header, time included, along: dropping the time is the one change.
    if (!keepTtl && this.table.expiresAt(ref) !== Infinity) this.dropExpiry(ref);
    this.modified(key);
  }

  /**
   * The loader's MSET (aof/load.ts): sets each pair of `ranges` (key from, key to, value from,
   * value to, … in `bytes`) in order. A new key whose key and value fit in an entry goes in
   * straight from the bytes (KeyTable.addBytes) and is reported to no one — no client is connected
   * while the file loads to watch or wait on a key; any other pair is set as strings, as MSET sets
   * it. Returns how many went in from bytes: changes the caller counts.
   */
  loadStrings(bytes: Latin1Buffer, ranges: readonly number[]): number {
    // Their slots' cache misses overlap (measured: 636–642 → 571–575 ms for the bench's file).
    this.table.warmBytes(bytes, ranges);
    let added = 0;
    for (let i = 0; i < ranges.length; i += 4) {
      const keyFrom = ranges[i]!;
      const keyTo = ranges[i + 1]!;
      const valueFrom = ranges[i + 2]!;
      const valueTo = ranges[i + 3]!;
      if (this.table.addBytes(bytes, keyFrom, keyTo, valueFrom, valueTo)) added++;
      else this.set(bytes.latin1Slice(keyFrom, keyTo), bytes.latin1Slice(valueFrom, valueTo));
    }
    return added;
  }

  /** Sets a key's value and its expiry time `atMs` (Unix ms) in one lookup: SET … EX and its kin. */
  setExpiring(key: string, value: Value, atMs: number): void {
    this.giveExpiry(this.put(key, value), atMs);
    this.modified(key);
  }

  /**
   * Writes `value` under `key` and returns its entry's ref, with what every write does first and
   * after: a key past its time expires first, as Redis's setKey looks the key up ("expired", then
   * "new"); under LFU the overwrite counts as an access, under LRU as a use.
   */
  private put(key: string, value: Value): number {
    this.expireIfDue(key);
    if (this.frequency !== null) this.countOverwrite(key);
    const sizeBefore = this.table.size;
    const ref = this.table.setRef(key, value);
    if (this.stampsWrites) this.stampRead(ref, this.hooks.clock.monotonicMs());
    if (this.table.size > sizeBefore) this.notify("new", key);
    return ref;
  }

  /** Gives the entry at `ref` the time `atMs`, counting it if it had none. */
  private giveExpiry(ref: number, atMs: number): void {
    if (this.table.expiresAt(ref) === Infinity) this.expiringCount++;
    this.table.setExpiresAt(ref, atMs);
  }

  private dropExpiry(ref: number): void {
    this.expiringCount--;
    this.table.setExpiresAt(ref, Infinity);
  }

  /**
   * Gives the live key at `ref` (from ref or readRef, with no change to the keyspace since) a new
   * value, keeping its time to live: a read-modify-write such as INCR without a second lookup
   * when the entry keeps its size.
   */
  overwrite(ref: number, key: string, value: Value): void {
    if (!this.table.setValueInPlace(ref, value)) this.table.set(key, value);
    this.modified(key);
  }

  /** Deletes a live key; returns whether one existed. */
  delete(key: string): boolean {
    return this.removeAt(key, this.ref(key));
  }

  /**
   * Publishes a keyspace notification for `key` (keyspace-events.ts), when its class is on. A
   * command calls it after the change, with Redis's event name for what it did; a new key's "new"
   * is published here, by set, before the command's own event, as Redis publishes it.
   */
  notify(event: KeyEvent, key: string): void {
    this.hooks.events.notify(this.index, event, key);
  }

  /**
   * Deletes the key's entry whether or not its time has passed, as Redis's dbDelete does where a
   * command deletes without looking the key up (an empty *STORE result, RESTORE … REPLACE):
   * a key past its time is deleted, not expired. Returns whether there was an entry.
   */
  deleteAsIs(key: string): boolean {
    return this.removeAt(key, this.table.find(key));
  }

  /** Deletes the entry at `ref` (-1: none) of `key` and reports it; returns whether there was one. */
  private removeAt(key: string, ref: number): boolean {
    if (ref === -1) return false;
    this.remove(key, this.table.expiresAt(ref) !== Infinity);
    this.modified(key);
    return true;
  }

  /** Reports an in-place change to a key's value (LPUSH into an existing list, ...). */
  modified(key: string): void {
    this.hooks.onModified(this, key);
  }

  /** Deletes a key that exists; `timed` says whether it has a time (the caller has its entry). */
  private remove(key: string, timed: boolean): void {
    if (timed) this.expiringCount--;
    this.table.delete(key);
  }

  /**
   * One step of the active expiry cycle's walk of the table (KeyTable.blockRefsStep: SCAN's cursor
   * over blocks of home slots, so a walk that spans resizes still visits every key): looks at the
   * keys homed at `homes` slots (whole blocks) from `cursor`, deletes those whose time has passed, adds to `tally` how many had a time, how many
   * it deleted, and the time left to the others (for INFO's avg_ttl), and returns the next cursor
   * (0 once the walk is complete).
   */
  expireStep(cursor: number, homes: number, tally: ExpireTally): number {
    const refs = stepRefs;
    let next = cursor;
    for (let home = 0; home < homes; home += blockSlots) {
      next = this.table.blockRefsStep(next, refs);
      if (next === 0) break;
    }
    const now = this.hooks.clock.nowMs();
    for (const ref of refs) {
      const at = this.table.expiresAt(ref);
      if (at === Infinity) continue;
      tally.timed++;
      // As passed(): Redis's cycle deletes a key once `now > when`.
      if (at < now) {
        if (!this.expiryPaused) stepExpired.push(this.table.keyOf(ref));
      } else {
        tally.ttlSumMs += at - now;
        tally.ttlSamples++;
      }
    }
    refs.length = 0;
    // Deleted after the look: a delete moves other entries' slots.
    for (const key of stepExpired) this.expire(key);
    tally.expired += stepExpired.length;
    stepExpired.length = 0;
    return next;
  }

  /** Milliseconds to live, -1 without an expiry, -2 for a missing key (PTTL's answers). */
  pttl(key: string): number {
    const at = this.expiryTime(key);
    return at < 0 ? at : Math.max(0, at - this.hooks.clock.nowMs());
  }

  /** A live key's expiry time in Unix ms, -1 without one, -2 for a missing key (PEXPIRETIME's answers). */
  expiryTime(key: string): number {
    const ref = this.ref(key);
    if (ref === -1) return -2;
    const at = this.table.expiresAt(ref);
    return at === Infinity ? -1 : at;
  }

  /** A key's expiry time (Unix ms), undefined when it has none or does not exist. Expires nothing. */
  expiryOf(key: string): number | undefined {
    const ref = this.table.find(key);
    const at = ref === -1 ? Infinity : this.table.expiresAt(ref);
    return at === Infinity ? undefined : at;
  }

  /** Gives a live key the expiry time `atMs` (Unix ms). */
  setExpire(key: string, atMs: number): void {
    const ref = this.table.find(key);
    if (ref === -1) return;
    this.giveExpiry(ref, atMs);
    this.modified(key);
  }

  /** Removes a key's time to live; returns whether it had one. */
  persist(key: string): boolean {
    const ref = this.ref(key);
    if (ref === -1 || this.table.expiresAt(ref) === Infinity) return false;
    this.dropExpiry(ref);
    this.modified(key);
    return true;
  }

  /**
   * Milliseconds since the key's last read (to 10 ms); for a key not read since it was written,
   * since the keyspace was created (svc does not spend time on write times; docs/kv.md).
   */
  idleMs(key: string): number {
    const ref = this.table.find(key);
    const readTime = ref === -1 ? 0 : this.table.readTime(ref);
    const readMs = readTime === 0 ? 0 : (readTime - 1) * readTimeUnitMs;
    return Math.max(0, this.hooks.clock.monotonicMs() - this.createdMs - readMs);
  }

  /**
   * Makes the key read `idleMs` ago (RESTORE ... IDLETIME). A read before the keyspace was created
   * is a negative read time (0 stays "never read"), back to about 248 days before.
   */
  setIdleMs(key: string, idleMs: number): void {
    const ref = this.table.find(key);
    if (ref === -1) return;
    const readMs = this.hooks.clock.monotonicMs() - this.createdMs - idleMs;
    const readTime = Math.floor(readMs / readTimeUnitMs) + 1;
    this.table.setReadTime(ref, Math.max(-readTimeMax, Math.min(readTimeMax, readTime === 0 ? -1 : readTime)));
  }

  /** Removes every key, reporting each to watchers first. */
  clear(): void {
    for (const key of this.table.keys()) this.hooks.onModified(this, key, false);
    this.table.clear();
    this.expiringCount = 0;
    this.avgTtlMs = 0;
  }

  /** Live keys, skipping (without deleting) expired ones. */
  *liveKeys(): Generator<string> {
    const now = this.expiryNowMs();
    // Nothing changes the table while the caller takes the keys (KEYS): walked as it stands.
    for (const ref of this.table.walkRefs()) if (this.table.expiresAt(ref) >= now) yield this.table.keyOf(ref);
  }

  /** Exchanges contents with another database (SWAPDB); clients stay on their index. */
  swapWith(other: Keyspace): void {
    const keys = new Set([...this.table.keys(), ...other.table.keys()]);
    [this.table, other.table] = [other.table, this.table];
    [this.expiringCount, other.expiringCount] = [other.expiringCount, this.expiringCount];
    [this.avgTtlMs, other.avgTtlMs] = [other.avgTtlMs, this.avgTtlMs];
    for (const key of keys) {
      this.hooks.onModified(this, key, false, false, other);
      this.hooks.onModified(other, key, false, false, this);
    }
  }
}
