/**
 * Who may see and change a record, as one SQL predicate over the object's table: the list
 * endpoint filters with it in the database, and a single read asks it of one row, so the two can
 * never disagree. Access is the widest of (Salesforce's sharing model):
 *   - admin: read_write on everything;
 *   - owner: read_write;
 *   - role hierarchy: read_write on records owned by users in roles below one's own;
 *   - the object's default access (private, read, read_write) for everyone;
 *   - each sharing rule granted to one's role, to a role above which one manages, or to a role
 *     one is below when the rule includes subordinates: its access on the records it opens.
 */
import type { RoleTree } from "../auth/roles.ts";
import type { User } from "../auth/users.ts";
import type { ObjectSchema } from "../objects/schema.ts";
import type { SqlParams } from "../store/db.ts";
import { compileCriteria } from "./criteria.ts";
import type { DefaultAccess, SharingRule } from "./sharing-settings.ts";

export type AccessLevel = "read" | "edit";

export interface SharingContext {
  user: User;
  roles: RoleTree;
  defaultAccess: DefaultAccess;
  rules: readonly SharingRule[];
}

const grants = (access: DefaultAccess | SharingRule["access"], level: AccessLevel) => access === "read_write" || (access === "read" && level === "read");

/** Whether `rule` is granted to `user` (directly, through subordinates, or as a manager above). */
export function ruleAppliesTo(rule: SharingRule, user: User, roles: RoleTree): boolean {
  if (user.roleId === null) return false;
  if (roles.aboveOrSelf(rule.targetRoleId).includes(user.roleId)) return true;
  return rule.targetSubordinates && roles.below(rule.targetRoleId).includes(user.roleId);
}

const ownedByRoles = (roleIds: readonly number[], p: SqlParams) =>
  `owner_id IN (SELECT id FROM users WHERE role_id IN (${roleIds.map((id) => p.add(id)).join(", ")}))`;

/**
 * What gives `ctx.user` `level` access to a row, apart from owning it: everything (an admin, or a
 * default that grants it), the records owned by users in `ownerRoleIds` (the hierarchy below, and
 * owner-based rules), and the records each of `criteria`'s rules opens.
 */
interface Grants {
  everything: boolean;
  ownerRoleIds: number[];
  criteria: SharingRule[];
}

function grantsOf(ctx: SharingContext, level: AccessLevel): Grants {
  const { user, roles } = ctx;
  if (user.isAdmin || grants(ctx.defaultAccess, level)) return { everything: true, ownerRoleIds: [], criteria: [] };
  const ownerRoleIds = new Set(user.roleId === null ? [] : roles.below(user.roleId));
  const criteria: SharingRule[] = [];
  for (const rule of ctx.rules) {
    if (!grants(rule.access, level) || !ruleAppliesTo(rule, user, roles)) continue;
    if (rule.ownerRoleId !== null) {
      for (const id of [rule.ownerRoleId, ...(rule.ownerSubordinates ? roles.below(rule.ownerRoleId) : [])]) ownerRoleIds.add(id);
    } else if (rule.criteria !== null) {
      criteria.push(rule);
    }
  }
  return { everything: false, ownerRoleIds: [...ownerRoleIds], criteria };
}

/** The SQL condition under which `ctx.user` has at least `level` access to a row of `schema`. */
export function accessPredicate(ctx: SharingContext, schema: ObjectSchema, level: AccessLevel, p: SqlParams): string {
  const g = grantsOf(ctx, level);
  if (g.everything) return "1 = 1";
  const terms = [`owner_id = ${p.add(ctx.user.id)}`];
  if (g.ownerRoleIds.length > 0) terms.push(ownedByRoles(g.ownerRoleIds, p));
  for (const rule of g.criteria) terms.push(compileCriteria(rule.criteria!, schema, p));
  return `(${terms.join(" OR ")})`;
}

/**
 * The ids of the users whose records `ctx.user` has `level` access to, when owning is all that
 * decides it (accessPredicate's terms are the owner and owner roles only); null when something
 * else may open a record (a default, a criteria-based rule). `users` is every user.
 */
export function accessibleOwners(ctx: SharingContext, users: readonly User[], level: AccessLevel): number[] | null {
  const g = grantsOf(ctx, level);
  if (g.everything || g.criteria.length > 0) return null;
  const roleIds = new Set(g.ownerRoleIds);
  return users.filter((u) => u.id === ctx.user.id || (u.roleId !== null && roleIds.has(u.roleId))).map((u) => u.id);
}
