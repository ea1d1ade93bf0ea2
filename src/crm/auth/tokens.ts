/**
 * API tokens. A token is 32 random bytes (base64url) behind a `crm_` prefix; only its SHA-256 is
 * stored, so a copy of the database does not hand out working tokens. With that much entropy a
 * plain hash is enough — a slow password hash would only slow every request. A token lives until
 * revoked (the spec leaves lifetime and scopes open; Salesforce's are the same: no expiry, the
 * user's full access).
 */
import { SvcError } from "../../core/errors.ts";
import { crmRecordIdMax, crmTokenNameCharsMax, crmTokensPerUserMax } from "../../core/limits.ts";
import { storableTextProblem } from "../objects/text.ts";
import type { Queryable } from "../store/db.ts";
import { type User, userFromRow } from "./users.ts";

const tokenBytes = 32;
/** Characters of a token kept in clear to tell tokens apart in a list. */
const prefixChars = 10;

export interface TokenInfo {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/** An id the store can hold (the web page passes any number it parsed). */
const isStoredId = (id: number) => Number.isInteger(id) && id >= 1 && id <= crmRecordIdMax;

export const hashToken = (token: string) => new Bun.CryptoHasher("sha256").update(token).digest("hex");

/** Why `name` cannot name a token, or null when it can: 1 to crmTokenNameCharsMax characters of storable text. */
export function tokenNameProblem(name: unknown): string | null {
  if (typeof name !== "string" || name.trim() === "" || name.length > crmTokenNameCharsMax) return `1 to ${crmTokenNameCharsMax} characters`;
  return storableTextProblem(name);
}

export async function createToken(tx: Queryable, userId: number, name: string): Promise<TokenInfo & { token: string }> {
  const problem = tokenNameProblem(name);
  if (problem !== null) throw new SvcError("invalid", "invalid token", { details: [{ field: "name", message: problem }] });
  const live = await tx.get<{ n: number }>("SELECT count(*) AS n FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL", [userId]);
  if (Number(live!.n) >= crmTokensPerUserMax) throw new SvcError("conflict", `at most ${crmTokensPerUserMax} live tokens per user; revoke one first`);
  const token = `crm_${Buffer.from(crypto.getRandomValues(new Uint8Array(tokenBytes))).toString("base64url")}`;
  const prefix = token.slice(0, prefixChars);
  const createdAt = new Date().toISOString();
  const row = await tx.get<{ id: number }>("INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id", [
    userId,
    name,
    hashToken(token),
    prefix,
    createdAt,
  ]);
  return { id: Number(row!.id), name, prefix, created_at: createdAt, revoked_at: null, token };
}

type TokenRow = { id: number; name: string; prefix: string; created_at: string; revoked_at: string | null };
const tokenInfo = (r: TokenRow): TokenInfo => ({ id: Number(r.id), name: r.name, prefix: r.prefix, created_at: r.created_at, revoked_at: r.revoked_at });

export async function listTokens(q: Queryable, userId: number): Promise<TokenInfo[]> {
  const rows = await q.all<TokenRow>("SELECT id, name, prefix, created_at, revoked_at FROM api_tokens WHERE user_id = $1 ORDER BY id DESC", [userId]);
  return rows.map(tokenInfo);
}

/** Revokes one of `userId`'s tokens; null when it has no such token. Revoking twice is a no-op. */
export async function revokeToken(tx: Queryable, userId: number, tokenId: number): Promise<TokenInfo | null> {
  if (!isStoredId(tokenId)) return null;
  const row = await tx.get<TokenRow>(
    `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 AND user_id = $3
     RETURNING id, name, prefix, created_at, revoked_at`,
    [new Date().toISOString(), tokenId, userId],
  );
  return row === undefined ? null : tokenInfo(row);
}

/** The user a bearer token acts as, or null for an unknown or revoked token, or a disabled user's. */
export async function userForToken(q: Queryable, token: string): Promise<User | null> {
  const row = await q.get<{ id: number; username: string; role_id: number | null; is_admin: number }>(
    `SELECT u.id, u.username, u.role_id, u.is_admin FROM api_tokens t JOIN users u ON u.id = t.user_id
     WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.disabled_at IS NULL`,
    [hashToken(token)],
  );
  return row === undefined ? null : userFromRow(row);
}

/** A token as an operator's list shows it: whose it is and whether that user is disabled, never its secret. */
export interface TokenListing extends TokenInfo {
  username: string;
  userDisabled: boolean;
}

type ListingRow = TokenRow & { username: string; disabled_at: string | null };
const listing = (r: ListingRow): TokenListing => ({ ...tokenInfo(r), username: r.username, userDisabled: r.disabled_at !== null });
const listingColumns = "t.id, t.name, t.prefix, t.created_at, t.revoked_at, u.username, u.disabled_at";

/** Every user's tokens (or one user's), oldest first, revoked ones included: `svc crm token list`. */
export async function listAllTokens(q: Queryable, userId?: number): Promise<TokenListing[]> {
  const where = userId === undefined ? "" : "WHERE t.user_id = $1";
  const rows = await q.all<ListingRow>(
    `SELECT ${listingColumns} FROM api_tokens t JOIN users u ON u.id = t.user_id ${where} ORDER BY t.id`,
    userId === undefined ? [] : [userId],
  );
  return rows.map(listing);
}

/**
 * Revokes any user's token by id (`svc crm token revoke`): the token as it now is, and whether it
 * was revoked already (then nothing changes: the first revocation time stays); null when there is
 * no such token.
 */
export async function revokeAnyToken(tx: Queryable, tokenId: number): Promise<{ token: TokenListing; wasRevoked: boolean } | null> {
  if (!isStoredId(tokenId)) return null;
  const row = await tx.get<ListingRow>(`SELECT ${listingColumns} FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = $1`, [tokenId]);
  if (row === undefined) return null;
  if (row.revoked_at !== null) return { token: listing(row), wasRevoked: true };
  const revokedAt = new Date().toISOString();
  await tx.run("UPDATE api_tokens SET revoked_at = $1 WHERE id = $2", [revokedAt, tokenId]);
  return { token: { ...listing(row), revoked_at: revokedAt }, wasRevoked: false };
}

/** How many live (unrevoked) tokens each user has (users without any are absent): `svc crm user list`. */
export async function liveTokensPerUser(q: Queryable): Promise<Map<number, number>> {
  const rows = await q.all<{ user_id: number; n: number }>("SELECT user_id, count(*) AS n FROM api_tokens WHERE revoked_at IS NULL GROUP BY user_id");
  return new Map(rows.map((r) => [Number(r.user_id), Number(r.n)]));
}
