/**
 * Settings a crm process reads once per change instead of once per request: object schemas, the
 * role tree, users, sharing defaults and rules, rule sets and signed-in tokens. Every write to a
 * settings table replaces the one-row settings_version's random token in the same transaction
 * (migration 4's triggers), whichever process or tool makes it. A request reads the token (one
 * statement) and takes what is kept for it; a different token drops everything kept.
 *
 * Sound under concurrency because the token is what the reading connection sees: a request that
 * reads the committed token gets settings committed with it; a transaction that changed settings
 * sees its own new token, so what it loads is kept under that token — which nobody else sees
 * before it commits, and nobody ever sees if it rolls back (tokens are random, never reused).
 */
import { crmSettingsCacheEntriesMax } from "../../core/limits.ts";

/** What reading the version needs of a connection (db.ts's Queryable has it). */
interface VersionReader {
  get<T>(sql: string): Promise<T | undefined>;
}

/** The settings at one version, as a request uses them. */
export interface SettingsSnapshot {
  /**
   * The value kept under `key` at this version, else `load`'s, kept unless `keep` says no (a
   * failed load is never kept).
   */
  get<T>(key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T>;
}

export class SettingsCache {
  #version: string | null = null;
  #values = new Map<string, Promise<unknown>>();

  /** The settings as `q` sees them now. */
  async snapshot(q: VersionReader): Promise<SettingsSnapshot> {
    const row = await q.get<{ token: string }>("SELECT token FROM settings_version WHERE id = 1");
    const version = row?.token ?? null;
    return { get: (key, load, keep) => this.#get(version, key, load, keep) };
  }

  #get<T>(version: string | null, key: string, load: () => Promise<T>, keep?: (value: T) => boolean): Promise<T> {
    // No version row (a store not yet migrated): nothing can be kept safely.
    if (version === null) return load();
    if (version !== this.#version || this.#values.size >= crmSettingsCacheEntriesMax) {
      this.#version = version;
      this.#values = new Map();
    }
    const values = this.#values;
    const kept = values.get(key) as Promise<T> | undefined;
    if (kept !== undefined) return kept;
    const loading = load();
    values.set(key, loading);
    loading.then(
      (value) => {
        if (keep !== undefined && !keep(value) && values.get(key) === loading) values.delete(key);
      },
      () => {
        if (values.get(key) === loading) values.delete(key);
      },
    );
    return loading;
  }
}
