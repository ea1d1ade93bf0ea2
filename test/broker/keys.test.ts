// The key store (src/broker/auth/keys.ts) on its own: secrets are returned once and stored only
// as their hash, keys outlive a restart, a revocation is stored at once and announced to
// listeners (the binary protocol closes a revoked key's connections on it), the bootstrap key
// is made once, and a damaged keys file stops the broker rather than starting it open.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SvcError } from "../../src/core/errors.ts";
import { KeyStore } from "../../src/broker/auth/keys.ts";

const root = mkdtempSync(join(tmpdir(), "svc-keys-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `d${++dirs}`);
const now = () => 1_700_000_000_000;
const spec = { name: "app", acls: [{ action: "read" as const, topic_prefix: "orders" }], produce_bytes_per_sec: 1000, consume_bytes_per_sec: null };

describe("the key store", () => {
  test("a secret authenticates its key, is never stored, and the key outlives a restart", () => {
    const dir = freshDir();
    const store = new KeyStore(dir, now);
    const { key, secret } = store.create(spec);
    expect(store.authenticate(secret)?.key_id).toBe(key.key_id);
    expect(store.authenticate(`${secret}x`)).toBeUndefined();
    expect(readFileSync(join(dir, "keys.json"), "utf8")).not.toContain(secret);
    const reopened = new KeyStore(dir, now);
    expect(reopened.authenticate(secret)).toMatchObject(key);
    expect(reopened.list()).toEqual([key]);
  });

  test("a revocation is stored before listeners hear of it, and outlives a restart", () => {
    const dir = freshDir();
    const store = new KeyStore(dir, now);
    const { key, secret } = store.create(spec);
    const heard: string[] = [];
    store.onRevoke((id) => {
      heard.push(id);
      expect(new KeyStore(dir, now).get(id)).toBeUndefined();
    });
    store.revoke(key.key_id);
    expect(heard).toEqual([key.key_id]);
    expect(store.authenticate(secret)).toBeUndefined();
    expect(new KeyStore(dir, now).authenticate(secret)).toBeUndefined();
    expect(() => store.revoke(key.key_id)).toThrow(SvcError);
  });

  test("the bootstrap key is made once: not again after every key is gone", () => {
    const dir = freshDir();
    const store = new KeyStore(dir, now);
    expect(store.bootstrap()).toBe(join(dir, "bootstrap.key"));
    const secret = readFileSync(join(dir, "bootstrap.key"), "utf8").trim();
    const key = store.authenticate(secret)!;
    expect(key.acls).toEqual([{ action: "admin", topic_prefix: "*" }]);
    store.revoke(key.key_id);
    rmSync(join(dir, "bootstrap.key"));
    expect(new KeyStore(dir, now).bootstrap()).toBeNull();
  });

  test("keys made before authentication was required mean no bootstrap key", () => {
    const dir = freshDir();
    new KeyStore(dir, now).create(spec);
    expect(new KeyStore(dir, now).bootstrap()).toBeNull();
  });

  test("a damaged keys file is refused at start", () => {
    const dir = freshDir();
    new KeyStore(dir, now).create(spec);
    writeFileSync(join(dir, "keys.json"), '{"version": 1, "keys": [');
    expect(() => new KeyStore(dir, now)).toThrow(/damaged/);
  });
});
