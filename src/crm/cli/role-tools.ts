/** `svc crm role add|list`: the role hierarchy (docs/crm.md "Users, roles, tokens"). */
import { flag } from "../../core/config.ts";
import { addRole, loadRoles, usersPerRole } from "../auth/roles.ts";
import { group, jsonFlag, table, tool } from "./tool.ts";

const roleAdd = tool(
  "add",
  "role add --name NAME [--parent ROLE]",
  "adds a role to the hierarchy, under --parent or at the top",
  {
    name: flag.string({ required: true, help: "the role's name" }),
    parent: flag.string({ help: "the role it reports to" }),
  },
  async (db, v) => {
    const role = await db.write((tx) => addRole(tx, v.name, v.parent ?? null));
    return `role ${role.name} (id ${role.id})`;
  },
);

const roleList = tool("list", "role list [--json]", "lists the roles: each one's parent and how many users it has", { json: jsonFlag }, async (db, v) => {
  const [roles, users] = await Promise.all([loadRoles(db), usersPerRole(db)]);
  const nameOf = new Map(roles.map((r) => [r.id, r.name]));
  const rows = roles.map((r) => ({
    id: r.id,
    name: r.name,
    parent: r.parentId === null ? null : (nameOf.get(r.parentId) ?? null),
    users: users.get(r.id) ?? 0,
  }));
  if (v.json) return JSON.stringify(rows);
  if (rows.length === 0) return "no roles";
  return table(
    ["ID", "NAME", "PARENT", "USERS"],
    rows.map((r) => [String(r.id), r.name, r.parent ?? "-", String(r.users)]),
  );
});

export const roleTools = group("role", "manage the role hierarchy", [roleAdd, roleList]);
