/**
 * Who can read which record, materialized. For an object whose default access is private, the
 * table `<object>_access` holds one row (user, record, the record's created_at) for every
 * non-admin user who can read the record; it is rewritten by every write that can change that
 * (a record saved, a user added, a sharing rule or default changed). A list then reads its page
 * and its count from the user's own rows, newest first, instead of testing the sharing predicate
 * on every row of the table — Salesforce keeps share rows for the same reason.
 *
 * The rows are made by accessPredicate itself, user by user, over the record table: a list (rows)
 * and a single read (the predicate on one row) cannot disagree, and the sharing property test
 * checks both against a model. Objects whose default lets everyone read need no rows: their lists
 * read the table itself.
 */
import type { RoleTree } from "../auth/roles.ts";
import type { User } from "../auth/users.ts";
import type { ObjectSchema } from "../objects/schema.ts";
import type { CrmObject } from "../rules/record.ts";
import { type Queryable, SqlParams } from "../store/db.ts";
import { accessPredicate } from "./access.ts";
import type { DefaultAccess, SharingRule } from "./sharing-settings.ts";

/** The table of `object`'s materialized read access. */
export const accessTable = (object: CrmObject) => `${object}_access`;

/** Whether `object`'s lists read materialized rows: only when its default does not let everyone read. */
export const accessIsMaterialized = (defaultAccess: DefaultAccess) => defaultAccess === "private";

/** Everything that decides access to one object's records. */
export interface AccessWorld {
  object: CrmObject;
  schema: ObjectSchema;
  users: readonly User[];
  roles: RoleTree;
  defaultAccess: DefaultAccess;
  rules: readonly SharingRule[];
}

/**
 * Users per INSERT when one record's rows are written: one statement of UNION ALL branches
 * instead of a round trip per user; bounded because SQLite allows 500 compound terms.
 */
const usersPerStatement = 100;

/** `SELECT user, id, created_at FROM object WHERE <scope> AND <user can read>` for one user. */
function readableBy(world: AccessWorld, user: User, scope: string, p: SqlParams): string {
  const predicate = accessPredicate({ user, roles: world.roles, defaultAccess: world.defaultAccess, rules: world.rules }, world.schema, "read", p);
  return `SELECT ${p.add(user.id)}, id, created_at FROM ${world.object} WHERE ${scope} AND ${predicate}`;
}

/** Rows for `users` over the records `scope` (an SQL condition on the record table) selects. */
async function insertRows(tx: Queryable, world: AccessWorld, users: readonly User[], scope: (p: SqlParams) => string): Promise<void> {
  const readers = users.filter((u) => !u.isAdmin);
  for (let i = 0; i < readers.length; i += usersPerStatement) {
    const p = new SqlParams();
    const branches = readers.slice(i, i + usersPerStatement).map((user) => readableBy(world, user, scope(p), p));
    await tx.run(`INSERT INTO ${accessTable(world.object)} (user_id, record_id, record_created_at) ${branches.join(" UNION ALL ")}`, p.values);
  }
}

/**
 * PostgreSQL runs requests' transactions side by side, and a rebuild (DELETE every row, then one
 * INSERT ... SELECT per user) racing a record's save would lose that record's rows or write them
 * twice. So saves hold this lock shared and rebuilds exclusively, each until its transaction
 * ends: saves still run beside one another, and a rebuild waits for the saves in flight and holds
 * off new ones until it commits. A save takes it before it reads the sharing settings. SQLite
 * writes one transaction at a time already.
 */
const accessRowsLockKey = 727_273;

/** Taken by a record's save before it reads anything its access rows depend on. */
export async function lockForRecordAccess(tx: Queryable): Promise<void> {
  if (tx.dialect === "postgres") await tx.run(`SELECT pg_advisory_xact_lock_shared(${accessRowsLockKey})`);
}

async function lockForRebuild(tx: Queryable): Promise<void> {
  if (tx.dialect === "postgres") await tx.run(`SELECT pg_advisory_xact_lock(${accessRowsLockKey})`);
}

/** Rewrites the rows of one record, after it was created or changed (under lockForRecordAccess). */
export async function refreshRecordAccess(tx: Queryable, world: AccessWorld, recordId: number): Promise<void> {
  await tx.run(`DELETE FROM ${accessTable(world.object)} WHERE record_id = $1`, [recordId]);
  if (!accessIsMaterialized(world.defaultAccess)) return;
  await insertRows(tx, world, world.users, (p) => `id = ${p.add(recordId)}`);
}

/** Rewrites every row of the object: after its default or its sharing rules changed. */
export async function rebuildObjectAccess(tx: Queryable, world: AccessWorld): Promise<void> {
  await lockForRebuild(tx);
  await tx.run(`DELETE FROM ${accessTable(world.object)}`);
  if (!accessIsMaterialized(world.defaultAccess)) return;
  // One statement per user: each is one pass over the table with that user's predicate.
  for (const user of world.users) if (!user.isAdmin) await insertRows(tx, world, [user], () => "1 = 1");
}

/** Writes a new user's rows (other users' access does not change: the user owns nothing yet). */
export async function addUserAccess(tx: Queryable, world: AccessWorld, user: User): Promise<void> {
  await lockForRebuild(tx);
  await tx.run(`DELETE FROM ${accessTable(world.object)} WHERE user_id = $1`, [user.id]);
  if (!accessIsMaterialized(world.defaultAccess)) return;
  await insertRows(tx, world, [user], () => "1 = 1");
}
