/**
 * Users: who a token acts as. A user has a role in the hierarchy (or none: then they see only
 * what they own and what defaults and sharing rules open) and may be an admin, who sees and
 * changes everything. Passwords (for the settings page's sign-in) are argon2id hashes.
 */
import { SvcError } from "../../core/errors.ts";
import { crmPasswordCharsMax, crmPasswordCharsMin } from "../../core/limits.ts";
import type { Queryable } from "../store/db.ts";
import { loadRoles, RoleTree } from "./roles.ts";

export interface User {
  id: number;
  username: string;
  roleId: number | null;
  isAdmin: boolean;
}

export const usernamePattern = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

type UserRow = { id: number; username: string; role_id: number | null; is_admin: number };

export const userFromRow = (r: UserRow): User => ({
  id: Number(r.id),
  username: r.username,
  roleId: r.role_id === null ? null : Number(r.role_id),
  isAdmin: Number(r.is_admin) === 1,
});

/** A user as lists show them: whether they are disabled, and since when. */
export interface UserListing extends User {
  createdAt: string;
  disabledAt: string | null;
}

type ListingRow = UserRow & { created_at: string; disabled_at: string | null };
const listingColumns = "id, username, role_id, is_admin, created_at, disabled_at";
const listing = (r: ListingRow): UserListing => ({ ...userFromRow(r), createdAt: r.created_at, disabledAt: r.disabled_at });

export async function findUser(q: Queryable, username: string): Promise<UserListing | null> {
  const row = await q.get<ListingRow>(`SELECT ${listingColumns} FROM users WHERE username = $1`, [username]);
  return row === undefined ? null : listing(row);
}

/**
 * Checked against when the username is unknown (or has no password), so that answer costs the
 * same argon2id verification as a wrong password and does not reveal who has an account. Made on
 * first use: the CLI tools that import this module never need it.
 */
let absentUserHash: Promise<string> | undefined;

/**
 * The user with this username and password (the /settings page's sign-in), or null — also for a
 * disabled user, and for a name no user can have (not even asked of the store: PostgreSQL refuses
 * a NUL in text).
 */
export async function userForPassword(q: Queryable, username: string, password: string): Promise<User | null> {
  const row = usernamePattern.test(username)
    ? await q.get<UserRow & { password_hash: string | null; disabled_at: string | null }>(
        "SELECT id, username, role_id, is_admin, password_hash, disabled_at FROM users WHERE username = $1",
        [username],
      )
    : undefined;
  const hash = row?.password_hash ?? (await (absentUserHash ??= Bun.password.hash(crypto.randomUUID(), "argon2id")));
  const matches = await Bun.password.verify(password, hash);
  return matches && row !== undefined && row.password_hash !== null && row.disabled_at === null ? userFromRow(row) : null;
}

export async function listUsers(q: Queryable): Promise<UserListing[]> {
  return (await q.all<ListingRow>(`SELECT ${listingColumns} FROM users ORDER BY id`)).map(listing);
}

/** The user `id` if they exist and are not disabled: a signed-in browser session asks on every request. */
export async function activeUser(q: Queryable, id: number): Promise<User | null> {
  const row = await q.get<UserRow>("SELECT id, username, role_id, is_admin FROM users WHERE id = $1 AND disabled_at IS NULL", [id]);
  return row === undefined ? null : userFromRow(row);
}

export interface NewUser {
  username: string;
  password?: string | null;
  role?: string | null;
  admin?: boolean;
}

const invalid = (field: string, message: string) => new SvcError("invalid", "invalid user", { details: [{ field, message }] });

export async function addUser(tx: Queryable, spec: NewUser): Promise<User> {
  if (!usernamePattern.test(spec.username)) throw invalid("username", "1 to 64 letters, digits, '.', '_', '@' or '-'");
  if ((await findUser(tx, spec.username)) !== null) throw new SvcError("conflict", `user ${JSON.stringify(spec.username)} exists`);
  let roleId: number | null = null;
  if (spec.role !== undefined && spec.role !== null) {
    const role = new RoleTree(await loadRoles(tx)).byName.get(spec.role);
    if (role === undefined) throw invalid("role", `no role ${JSON.stringify(spec.role)}`);
    roleId = role.id;
  }
  if (spec.password !== undefined && spec.password !== null) {
    const length = spec.password.length;
    if (length < crmPasswordCharsMin || length > crmPasswordCharsMax) throw invalid("password", `${crmPasswordCharsMin} to ${crmPasswordCharsMax} characters`);
  }
  const hash = spec.password ? await Bun.password.hash(spec.password, "argon2id") : null;
  const row = await tx.get<{ id: number }>(
    "INSERT INTO users (username, password_hash, role_id, is_admin, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    [spec.username, hash, roleId, spec.admin ? 1 : 0, new Date().toISOString()],
  );
  return { id: Number(row!.id), username: spec.username, roleId, isAdmin: spec.admin === true };
}

/**
 * Disables (or enables again) a user: the user as they now are and whether this changed anything
 * (disabling twice keeps the first time); null when there is no such user. A disabled user's tokens
 * and password stop working at once but stay stored, so enabling them restores their access as it
 * was; the records they own keep them as owner (docs/crm.md).
 */
export async function setUserDisabled(tx: Queryable, username: string, disabled: boolean): Promise<{ user: UserListing; changed: boolean } | null> {
  const before = await findUser(tx, username);
  if (before === null) return null;
  if ((before.disabledAt !== null) === disabled) return { user: before, changed: false };
  const disabledAt = disabled ? new Date().toISOString() : null;
  await tx.run("UPDATE users SET disabled_at = $1 WHERE id = $2", [disabledAt, before.id]);
  return { user: { ...before, disabledAt }, changed: true };
}
