/**
 * The admin's settings: users and roles, custom fields, sharing (default access per object and
 * sharing rules), and the rule definitions the rules engine runs. Every route here is 403 for a
 * user who is not an admin.
 */
import { SvcError } from "../../core/errors.ts";
import { json, noContent } from "../../http/response.ts";
import type { RouteTable } from "../../http/route.ts";
import { addRole, loadRoles, RoleTree } from "../auth/roles.ts";
import { addUser, listUsers, type User } from "../auth/users.ts";
import { addCustomField, listCustomFields, parseCustomFieldSpec } from "../objects/custom-fields.ts";
import { addRuleDefinition, deleteRuleDefinition, listRuleDefinitions } from "../records/rule-definitions.ts";
import type { RuleKind } from "../rules/rule-set.ts";
import {
  addSharingRule,
  addUserToAccess,
  deleteSharingRule,
  loadDefaultAccess,
  loadSharingRules,
  setDefaultAccess,
  sharingRuleView,
} from "../sharing/sharing-rules.ts";
import type { Db } from "../store/db.ts";
import { adminOnly, objectBody, pathId } from "./auth.ts";

const userView = (u: User & { disabledAt?: string | null }, roles: RoleTree) => ({
  id: u.id,
  username: u.username,
  role: roles.roles.find((r) => r.id === u.roleId)?.name ?? null,
  admin: u.isAdmin,
  disabled_at: u.disabledAt ?? null,
});

function only(body: Record<string, unknown>, keys: string[]): void {
  const unknown = Object.keys(body).filter((k) => !keys.includes(k));
  if (unknown.length > 0) throw new SvcError("invalid", "invalid body", { details: unknown.map((field) => ({ field, message: "unknown field" })) });
}

function optionalString(body: Record<string, unknown>, key: string): string | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw new SvcError("invalid", "invalid body", { details: [{ field: key, message: "must be a string" }] });
  return v;
}

function userAndRoleRoutes(db: Db): RouteTable {
  return {
    "/api/v1/settings/roles": {
      GET: adminOnly(db, async () => {
        const tree = new RoleTree(await loadRoles(db));
        return json({ data: tree.roles.map((r) => ({ id: r.id, name: r.name, parent: tree.roles.find((p) => p.id === r.parentId)?.name ?? null })) });
      }),
      POST: adminOnly(db, async (ctx) => {
        const body = await objectBody(ctx);
        only(body, ["name", "parent"]);
        const role = await db.write((tx) => addRole(tx, typeof body.name === "string" ? body.name : "", optionalString(body, "parent")));
        return json({ id: role.id, name: role.name, parent: optionalString(body, "parent") }, 201);
      }),
    },
    "/api/v1/settings/users": {
      GET: adminOnly(db, async () => {
        const roles = new RoleTree(await loadRoles(db));
        return json({ data: (await listUsers(db)).map((u) => userView(u, roles)) });
      }),
      POST: adminOnly(db, async (ctx) => {
        const body = await objectBody(ctx);
        only(body, ["username", "password", "role", "admin"]);
        if (body.admin !== undefined && typeof body.admin !== "boolean") {
          throw new SvcError("invalid", "invalid user", { details: [{ field: "admin", message: "must be true or false" }] });
        }
        const user = await db.write(async (tx) => {
          const added = await addUser(tx, {
            username: typeof body.username === "string" ? body.username : "",
            password: optionalString(body, "password"),
            role: optionalString(body, "role"),
            admin: body.admin === true,
          });
          await addUserToAccess(tx, added);
          return added;
        });
        return json(userView(user, new RoleTree(await loadRoles(db))), 201);
      }),
    },
  };
}

function fieldAndSharingRoutes(db: Db): RouteTable {
  return {
    "/api/v1/settings/fields": {
      GET: adminOnly(db, async () => json({ data: await listCustomFields(db) })),
      POST: adminOnly(db, async (ctx) => {
        const spec = parseCustomFieldSpec(await ctx.json());
        return json(await db.write((tx) => addCustomField(tx, spec)), 201);
      }),
    },
    "/api/v1/settings/sharing": {
      GET: adminOnly(db, async () => {
        const roles = new RoleTree(await loadRoles(db));
        const rules = (await loadSharingRules(db)).map((r) => sharingRuleView(r, roles));
        return json({ defaults: await loadDefaultAccess(db), rules });
      }),
    },
    "/api/v1/settings/sharing/defaults": {
      GET: adminOnly(db, async () => json(await loadDefaultAccess(db))),
      PATCH: adminOnly(db, async (ctx) => {
        const body = await ctx.json();
        await db.write((tx) => setDefaultAccess(tx, body));
        return json(await loadDefaultAccess(db));
      }),
    },
    "/api/v1/settings/sharing/rules": {
      GET: adminOnly(db, async () => {
        const roles = new RoleTree(await loadRoles(db));
        return json({ data: (await loadSharingRules(db)).map((r) => sharingRuleView(r, roles)) });
      }),
      POST: adminOnly(db, async (ctx) => {
        const body = await ctx.json();
        const rule = await db.write((tx) => addSharingRule(tx, body));
        return json(sharingRuleView(rule, new RoleTree(await loadRoles(db))), 201);
      }),
    },
    "/api/v1/settings/sharing/rules/:id": {
      DELETE: adminOnly(db, async (ctx) => {
        const id = pathId(ctx, "sharing rule");
        if (!(await db.write((tx) => deleteSharingRule(tx, id)))) throw new SvcError("not_found", `no sharing rule ${id}`);
        return noContent();
      }),
    },
  };
}

const ruleKinds: [string, RuleKind][] = [
  ["validation-rules", "validation"],
  ["workflow-rules", "workflow"],
  ["flows", "flow"],
];

function ruleDefinitionRoutes(db: Db): RouteTable {
  const routes: RouteTable = {};
  for (const [path, kind] of ruleKinds) {
    routes[`/api/v1/settings/${path}`] = {
      GET: adminOnly(db, async () => json({ data: await listRuleDefinitions(db, kind) })),
      POST: adminOnly(db, async (ctx) => {
        const body = await ctx.json();
        return json(await db.write((tx) => addRuleDefinition(tx, kind, body)), 201);
      }),
    };
    routes[`/api/v1/settings/${path}/:id`] = {
      DELETE: adminOnly(db, async (ctx) => {
        const id = pathId(ctx, kind);
        if (!(await db.write((tx) => deleteRuleDefinition(tx, kind, id)))) throw new SvcError("not_found", `no ${kind} rule ${id}`);
        return noContent();
      }),
    };
  }
  return routes;
}

export function adminRoutes(db: Db): RouteTable {
  return { ...userAndRoleRoutes(db), ...fieldAndSharingRoutes(db), ...ruleDefinitionRoutes(db) };
}
