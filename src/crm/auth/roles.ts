/**
 * The role hierarchy: each role has at most one parent. A user in a role sees the records owned
 * by users in the roles below it (Salesforce's "grant access using hierarchies"). The tree is
 * small (crmRolesMax) and read whole per request.
 */
import { SvcError } from "../../core/errors.ts";
import { crmRolesMax } from "../../core/limits.ts";
import type { Queryable } from "../store/db.ts";

export interface Role {
  id: number;
  name: string;
  parentId: number | null;
}

export const roleNamePattern = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

export async function loadRoles(q: Queryable): Promise<Role[]> {
  const rows = await q.all<{ id: number; name: string; parent_id: number | null }>("SELECT id, name, parent_id FROM roles ORDER BY id");
  return rows.map((r) => ({ id: Number(r.id), name: r.name, parentId: r.parent_id === null ? null : Number(r.parent_id) }));
}

export class RoleTree {
  readonly #children = new Map<number, number[]>();
  readonly #parent = new Map<number, number | null>();
  readonly byName = new Map<string, Role>();

  constructor(readonly roles: readonly Role[]) {
    for (const role of roles) {
      this.#parent.set(role.id, role.parentId);
      this.byName.set(role.name, role);
      if (role.parentId !== null) this.#children.set(role.parentId, [...(this.#children.get(role.parentId) ?? []), role.id]);
    }
  }

  /** Every role below `id`, not `id` itself. */
  below(id: number): number[] {
    const out: number[] = [];
    const stack = [...(this.#children.get(id) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop()!;
      out.push(next);
      stack.push(...(this.#children.get(next) ?? []));
    }
    return out;
  }

  /** `id` and every role above it. */
  aboveOrSelf(id: number): number[] {
    const out: number[] = [];
    // The parent chain is acyclic (a parent must exist before its child), bounded by the count.
    for (let at: number | null | undefined = id; at !== null && at !== undefined && out.length <= this.roles.length; at = this.#parent.get(at)) {
      out.push(at);
    }
    return out;
  }
}

/** Adds a role under `parentName` (or at the top). */
export async function addRole(tx: Queryable, name: string, parentName: string | null): Promise<Role> {
  if (!roleNamePattern.test(name))
    throw new SvcError("invalid", "invalid role", { details: [{ field: "name", message: "1 to 64 letters, digits, spaces, '.', '_' or '-'" }] });
  const tree = new RoleTree(await loadRoles(tx));
  if (tree.roles.length >= crmRolesMax) throw new SvcError("conflict", `at most ${crmRolesMax} roles`);
  if (tree.byName.has(name)) throw new SvcError("conflict", `role ${JSON.stringify(name)} exists`);
  let parentId: number | null = null;
  if (parentName !== null) {
    const parent = tree.byName.get(parentName);
    if (parent === undefined)
      throw new SvcError("invalid", "invalid role", { details: [{ field: "parent", message: `no role ${JSON.stringify(parentName)}` }] });
    parentId = parent.id;
  }
  const row = await tx.get<{ id: number }>("INSERT INTO roles (name, parent_id, created_at) VALUES ($1, $2, $3) RETURNING id", [
    name,
    parentId,
    new Date().toISOString(),
  ]);
  return { id: Number(row!.id), name, parentId };
}

/** How many users each role has (roles without users are absent): `svc crm role list`. */
export async function usersPerRole(q: Queryable): Promise<Map<number, number>> {
  const rows = await q.all<{ role_id: number; n: number }>("SELECT role_id, count(*) AS n FROM users WHERE role_id IS NOT NULL GROUP BY role_id");
  return new Map(rows.map((r) => [Number(r.role_id), Number(r.n)]));
}
