/**
 * API keys (spec: API key; Authentication): created with a secret shown once, stored by the
 * secret's SHA-256 only, listed without secrets, revoked at once. One file in the data dir,
 * replaced atomically before a change is answered:
 *
 *   <data-dir>/keys.json       {"version": 1, "bootstrapped": bool, "keys": [key record + secret_sha256]}
 *   <data-dir>/bootstrap.key   the first admin key's secret, mode 0600 (written once, see bootstrap)
 *
 * A secret is 32 random bytes, so a plain SHA-256 is enough to store it: there is nothing to
 * guess that a slow hash would protect. Lookups go by the hash, so a wrong secret costs one hash.
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { damagedFile, fsyncDir, readStoredJson, writeFileAtomic } from "../../core/atomic-file.ts";
import { SvcError } from "../../core/errors.ts";
import { writeAll } from "../../core/write-all.ts";
import { everyTopic, type Grant } from "./grants.ts";
import type { Principal } from "./principal.ts";

/** A key as GET /admin/keys shows it (no secret). */
export interface ApiKey {
  key_id: string;
  name: string;
  acls: Grant[];
  /** Bytes per second the key may produce; null for no limit. */
  produce_bytes_per_sec: number | null;
  /** Bytes per second the key may consume; null for no limit. */
  consume_bytes_per_sec: number | null;
  created_at: string;
}

/** What POST /admin/keys asks for, checked. */
export type NewKey = Omit<ApiKey, "key_id" | "created_at">;

interface StoredKey extends ApiKey {
  secret_sha256: string;
}

/** Secrets start with this, so one found in a log or a repository is recognisable (as GitHub's `ghp_`). */
const secretPrefix = "svck_";
const secretBytes = 32;
const fileVersion = 1;
/** Mode of bootstrap.key: readable and writable by the broker's user only (spec: Authentication 2). */
const bootstrapFileMode = 0o600;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export class KeyStore {
  private readonly keys = new Map<string, StoredKey>();
  private readonly bySecret = new Map<string, StoredKey>();
  private bootstrapped = false;
  private readonly revokeListeners: ((keyId: string) => void)[] = [];
  private readonly path: string;
  readonly bootstrapPath: string;

  constructor(
    dataDir: string,
    private readonly nowMs: () => number,
  ) {
    this.path = join(dataDir, "keys.json");
    this.bootstrapPath = join(dataDir, "bootstrap.key");
    mkdirSync(dataDir, { recursive: true });
    const file = readStoredJson(this.path, fileVersion);
    if (file !== null) this.read(file);
  }

  get size(): number {
    return this.keys.size;
  }

  /**
   * The first start with `--auth required` and no keys: an admin key on `*`, its secret written to
   * bootstrap.key (mode 0600) for the operator. Never again once it happened — deleting the file,
   * or every key, does not bring it back (the store remembers). Answers the file's path when it
   * made one.
   */
  bootstrap(): string | null {
    if (this.bootstrapped || this.keys.size > 0) {
      if (!this.bootstrapped) {
        this.bootstrapped = true;
        this.save();
      }
      return null;
    }
    const { secret, key } = this.make({
      name: "bootstrap",
      acls: [{ action: "admin", topic_prefix: everyTopic }],
      produce_bytes_per_sec: null,
      consume_bytes_per_sec: null,
    });
    // The secret's file first: a crash before keys.json is written leaves a file that names no
    // key, replaced at the next start; the other order could store a key no one can read.
    writePrivateFile(this.bootstrapPath, `${secret}\n`);
    this.add(key);
    this.bootstrapped = true;
    this.save();
    return this.bootstrapPath;
  }

  /** Creates a key; its secret is in the answer and nowhere else. */
  create(spec: NewKey): { key: ApiKey; secret: string } {
    const { secret, key } = this.make(spec);
    this.add(key);
    this.save();
    return { key: publicView(key), secret };
  }

  list(): ApiKey[] {
    return [...this.keys.values()]
      .map(publicView)
      .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.key_id < b.key_id ? -1 : 1));
  }

  /** The live key `keyId`, or undefined once revoked. */
  get(keyId: string): ApiKey | undefined {
    return this.keys.get(keyId);
  }

  /** The live key a principal acts as; null for anonymous (authentication off); 401 once revoked. */
  liveKey(principal: Principal): ApiKey | null {
    if (principal.kind === "anonymous") return null;
    const key = this.keys.get(principal.keyId);
    if (key === undefined) throw new SvcError("unauthorized", "this API key was revoked");
    return key;
  }

  /** The key whose secret this is, or undefined. */
  authenticate(secret: string): ApiKey | undefined {
    return this.bySecret.get(sha256(secret));
  }

  /** Revokes a key: stored at once, then every listener (open connections) told. 404 when unknown. */
  revoke(keyId: string): void {
    const key = this.keys.get(keyId);
    if (key === undefined) throw new SvcError("not_found", `key '${keyId}' does not exist`);
    this.keys.delete(keyId);
    this.bySecret.delete(key.secret_sha256);
    try {
      this.save();
    } catch (error) {
      this.add(key);
      throw error;
    }
    for (const listener of this.revokeListeners) listener(keyId);
  }

  /** Calls `listener` with each key revoked from now on (the binary protocol closes its connections). */
  onRevoke(listener: (keyId: string) => void): void {
    this.revokeListeners.push(listener);
  }

  private make(spec: NewKey): { secret: string; key: StoredKey } {
    const secret = `${secretPrefix}${randomBytes(secretBytes).toString("base64url")}`;
    const key: StoredKey = {
      key_id: `k_${randomBytes(8).toString("hex")}`,
      name: spec.name,
      acls: spec.acls.map((g) => ({ ...g })),
      produce_bytes_per_sec: spec.produce_bytes_per_sec,
      consume_bytes_per_sec: spec.consume_bytes_per_sec,
      created_at: new Date(this.nowMs()).toISOString(),
      secret_sha256: sha256(secret),
    };
    return { secret, key };
  }

  private add(key: StoredKey): void {
    this.keys.set(key.key_id, key);
    this.bySecret.set(key.secret_sha256, key);
  }

  private save(): void {
    writeFileAtomic(this.path, JSON.stringify({ version: fileVersion, bootstrapped: this.bootstrapped, keys: [...this.keys.values()] }));
  }

  private read(file: Record<string, unknown>): void {
    if (typeof file.bootstrapped !== "boolean" || !Array.isArray(file.keys)) throw damagedFile(this.path, "expected bootstrapped and keys");
    this.bootstrapped = file.bootstrapped;
    for (const value of file.keys as StoredKey[]) {
      if (typeof value?.key_id !== "string" || typeof value.secret_sha256 !== "string" || !Array.isArray(value.acls))
        throw damagedFile(this.path, "a key lacks its id, secret hash or acls");
      this.add(value);
    }
  }
}

function publicView(key: StoredKey): ApiKey {
  const { secret_sha256: _, ...rest } = key;
  return { ...rest, acls: rest.acls.map((g) => ({ ...g })) };
}

/** Writes `text` to a new file only its owner can read, durably. */
function writePrivateFile(path: string, text: string): void {
  const fd = openSync(path, "w", bootstrapFileMode);
  try {
    // An old file keeps its mode through "w": set it whatever it was.
    fchmodSync(fd, bootstrapFileMode);
    writeAll(fd, Buffer.from(text));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(join(path, ".."));
}
