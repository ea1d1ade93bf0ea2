/** The /settings page's view of crm's users and tokens (src/crm/auth), over the store. */
import { createToken, listTokens, revokeToken } from "../auth/tokens.ts";
import type { Db } from "../store/db.ts";
import type { SettingsAccounts } from "./settings-accounts.ts";

/**
 * Checked against when the username is unknown (or has no password), so that answer costs the
 * same argon2id verification as a wrong password.
 */
const absentUserHash = await Bun.password.hash(crypto.randomUUID(), "argon2id");

export function storeAccounts(db: Db): SettingsAccounts {
  return {
    async signIn(username, password) {
      const row = await db.get<{ id: number; username: string; password_hash: string | null }>(
        "SELECT id, username, password_hash FROM users WHERE username = $1", [username]);
      const hash = row?.password_hash ?? absentUserHash;
      const matches = await Bun.password.verify(password, hash);
      if (!matches || row === undefined || row.password_hash === null) return null;
      return { userId: Number(row.id), username: row.username };
    },
    async listTokens(userId) {
      return (await listTokens(db, userId)).map((t) => ({ id: t.id, name: t.name, prefix: t.prefix, createdAt: t.created_at, revokedAt: t.revoked_at }));
    },
    async createToken(userId, name) {
      const created = await db.write((tx) => createToken(tx, userId, name));
      return { id: created.id, token: created.token };
    },
    async revokeToken(userId, tokenId) {
      const revoked = await db.write((tx) => revokeToken(tx, userId, tokenId));
      return revoked !== null;
    },
  };
}
