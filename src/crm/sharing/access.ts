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
  roleIds.length === 0 ? "1 = 0" : `owner_id IN (SELECT id FROM users WHERE role_id IN (${roleIds.map((id) => p.add(id)).join(", ")}))`;

/** The SQL condition under which `ctx.user` has at least `level` access to a row of `schema`. */
export function accessPredicate(ctx: SharingContext, schema: ObjectSchema, level: AccessLevel, p: SqlParams): string {
  const { user, roles } = ctx;
  if (user.isAdmin || grants(ctx.defaultAccess, level)) return "1 = 1";
  const terms = [`owner_id = ${p.add(user.id)}`];
  if (user.roleId !== null) {
    const below = roles.below(user.roleId);
    if (below.length > 0) terms.push(ownedByRoles(below, p));
  }
  for (const rule of ctx.rules) {
    if (!grants(rule.access, level) || !ruleAppliesTo(rule, user, roles)) continue;
    if (rule.ownerRoleId !== null) {
      terms.push(ownedByRoles([rule.ownerRoleId, ...(rule.ownerSubordinates ? roles.below(rule.ownerRoleId) : [])], p));
    } else if (rule.criteria !== null) {
      terms.push(compileCriteria(rule.criteria, schema, p));
    }
  }
  return `(${terms.join(" OR ")})`;
}
