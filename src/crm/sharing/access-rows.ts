/**
 * Who can read which record, materialized. For an object whose default access is private, the
 * table `<object>_access` holds one row (user, record, the record's created_at) for every
 * non-admin user who can read the record; it is rewritten by every write that can change that
 * (a record saved, a user added, a sharing rule or default changed). A list then reads its page
 * and its count from the user's own rows, newest first, instead of testing the sharing predicate
 * on every row of the table — Salesforce keeps share rows for the same reason.
 *
 * A rebuild (a rule or default changed, a user added) makes the rows with accessPredicate itself,
 * user by user, over the record table. One saved record's rows are made by readersOf below, the
 * same rules as accessPredicate's read level asked of that one row: its owner and each
 * criteria-based rule's criteria are read from the row by SQL (the same compiled criteria), the
 * owner and role branches are decided here — one SELECT and one INSERT per save instead of a
 * branch of SQL per user, which cost a third of a create. The sharing property test checks lists
 * (rows), single reads (the predicate) and a model against each other. Objects whose default lets
 * everyone read need no rows: their lists read the table itself.
 */
import type { RoleTree } from "../auth/roles.ts";
import type { User } from "../auth/users.ts";
import type { ObjectSchema } from "../objects/schema.ts";
import type { CrmObject } from "../rules/record.ts";
import { type Queryable, SqlParams } from "../store/db.ts";
import { accessPredicate, ruleAppliesTo } from "./access.ts";
import { compileCriteria } from "./criteria.ts";
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

/** What accessPredicate's read level asks of one record besides who the user is. */
interface RecordFacts {
  ownerId: number;
  /** The owner's role; null for none. */
  ownerRoleId: number | null;
  /** The criteria-based rules (by index in world.rules) whose criteria the record meets. */
  criteriaMet: ReadonlySet<number>;
}

/**
 * The non-admin users who may read a record with `facts`: accessPredicate's read level, branch
 * for branch, for a private default (the only one with rows) — the owner, the users in roles
 * above the owner's, and the users each rule granting read is given to, when the record is in
 * the rule's owner roles or meets its criteria.
 */
function readersOf(world: AccessWorld, facts: RecordFacts): User[] {
  const { roles } = world;
  const ownerRoles = (rule: SharingRule) => [rule.ownerRoleId!, ...(rule.ownerSubordinates ? roles.below(rule.ownerRoleId!) : [])];
  // The rules that open this record, whoever they are given to (every rule grants at least read).
  const opening = world.rules.filter((rule, i) =>
    rule.ownerRoleId !== null ? facts.ownerRoleId !== null && ownerRoles(rule).includes(facts.ownerRoleId) : rule.criteria !== null && facts.criteriaMet.has(i),
  );
  return world.users.filter((user) => {
    if (user.isAdmin) return false;
    if (user.id === facts.ownerId) return true;
    if (user.roleId !== null && facts.ownerRoleId !== null && roles.below(user.roleId).includes(facts.ownerRoleId)) return true;
    return opening.some((rule) => ruleAppliesTo(rule, user, roles));
  });
}

/** Rows per INSERT of one record's readers: three parameters each, far below either store's limit. */
const rowsPerInsert = 500;

/**
 * Rewrites the rows of one record, after it was created (`created`) or changed (under
 * lockForRecordAccess). A new record has no rows to remove: ids are never used twice
 * (AUTOINCREMENT, an identity column) and a rebuild that could have written its rows waits for
 * the lock this transaction holds.
 */
export async function refreshRecordAccess(tx: Queryable, world: AccessWorld, recordId: number, created = false): Promise<void> {
  if (!created) await tx.run(`DELETE FROM ${accessTable(world.object)} WHERE record_id = $1`, [recordId]);
  if (!accessIsMaterialized(world.defaultAccess)) return;
  const p = new SqlParams();
  const id = p.add(recordId);
  // One column per criteria-based rule: 1 when the record meets its criteria, else NULL.
  const criteriaRules = [...world.rules.keys()].filter((i) => world.rules[i]!.ownerRoleId === null && world.rules[i]!.criteria !== null);
  const criteriaColumns = criteriaRules.map((i) => `, CASE WHEN ${compileCriteria(world.rules[i]!.criteria!, world.schema, p)} THEN 1 END AS meets_${i}_`);
  const row = await tx.get<Record<string, unknown>>(
    `SELECT owner_id, created_at, (SELECT role_id FROM users WHERE users.id = owner_id) AS owner_role_${criteriaColumns.join("")} FROM ${world.object} WHERE id = ${id}`,
    p.values,
  );
  if (row === undefined) return;
  const criteriaMet = new Set(criteriaRules.filter((i) => row[`meets_${i}_`] !== null));
  const ownerRole = row.owner_role_ === null ? null : Number(row.owner_role_);
  const readers = readersOf(world, { ownerId: Number(row.owner_id), ownerRoleId: ownerRole, criteriaMet });
  for (let i = 0; i < readers.length; i += rowsPerInsert) {
    const q = new SqlParams();
    const values = readers.slice(i, i + rowsPerInsert).map((user) => `(${q.add(user.id)}, ${q.add(recordId)}, ${q.add(row.created_at)})`);
    await tx.run(`INSERT INTO ${accessTable(world.object)} (user_id, record_id, record_created_at) VALUES ${values.join(", ")}`, q.values);
  }
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
