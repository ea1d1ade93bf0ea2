/**
 * `svc crm user add|list|disable|enable`. Disabling is Salesforce's deactivation: the user can no
 * longer authenticate (tokens answer 401 as revoked ones do, the password no longer signs in, a
 * browser session ends), and the records they own keep them as owner; enabling restores it all.
 */
import { flag } from "../../core/config.ts";
import { SvcError } from "../../core/errors.ts";
import { crmPasswordCharsMin } from "../../core/limits.ts";
import { loadRoles } from "../auth/roles.ts";
import { liveTokensPerUser } from "../auth/tokens.ts";
import { addUser, listUsers, setUserDisabled } from "../auth/users.ts";
import { addUserToAccess } from "../sharing/sharing-rules.ts";
import { group, jsonFlag, readStdin, table, tool } from "./tool.ts";

const userAdd = tool(
  "add",
  "user add --username NAME [--role ROLE] [--admin] [--password-stdin]",
  "adds a user",
  {
    username: flag.string({ required: true, help: "the user's sign-in name" }),
    role: flag.string({ help: "the user's role in the hierarchy" }),
    admin: flag.bool({ default: false, help: "an admin sees and changes everything, and manages settings" }),
    passwordStdin: flag.bool({ default: false, help: "read a sign-in password from standard input (hashed with argon2id)" }),
  },
  async (db, v) => {
    const password = v.passwordStdin ? await readStdin() : null;
    if (password !== null && password.length < crmPasswordCharsMin) {
      throw new SvcError("bad_config", `--password-stdin: a password needs at least ${crmPasswordCharsMin} characters`);
    }
    const user = await db.write(async (tx) => {
      const added = await addUser(tx, { username: v.username, role: v.role ?? null, admin: v.admin, password });
      await addUserToAccess(tx, added);
      return added;
    });
    return `user ${user.username} (id ${user.id}${user.isAdmin ? ", admin" : ""})`;
  },
);

const userList = tool(
  "list",
  "user list [--json]",
  "lists the users: role, admin, whether disabled, and how many live API tokens each has",
  { json: jsonFlag },
  async (db, v) => {
    const [users, roles, tokens] = await Promise.all([listUsers(db), loadRoles(db), liveTokensPerUser(db)]);
    const roleName = new Map(roles.map((r) => [r.id, r.name]));
    const rows = users.map((u) => ({
      id: u.id,
      username: u.username,
      role: u.roleId === null ? null : (roleName.get(u.roleId) ?? null),
      admin: u.isAdmin,
      created_at: u.createdAt,
      disabled_at: u.disabledAt,
      live_tokens: tokens.get(u.id) ?? 0,
    }));
    if (v.json) return JSON.stringify(rows);
    if (rows.length === 0) return "no users";
    return table(
      ["ID", "USERNAME", "ROLE", "ADMIN", "STATUS", "TOKENS", "CREATED"],
      rows.map((u) => [
        String(u.id),
        u.username,
        u.role ?? "-",
        u.admin ? "yes" : "no",
        u.disabled_at === null ? "active" : `disabled ${u.disabled_at}`,
        String(u.live_tokens),
        u.created_at,
      ]),
    );
  },
);

/** `disable` and `enable`: one tool each, the same change the other way. */
function disableTool(disabled: boolean) {
  const verb = disabled ? "disable" : "enable";
  const summary = disabled
    ? "stops a user from authenticating (tokens answer 401, no sign-in); their records keep them as owner"
    : "lets a disabled user authenticate again, with the tokens and password they had";
  return tool(verb, `user ${verb} --username NAME`, summary, { username: flag.string({ required: true, help: "the user's sign-in name" }) }, async (db, v) => {
    const result = await db.write((tx) => setUserDisabled(tx, v.username, disabled));
    if (result === null) throw new SvcError("not_found", `no user ${JSON.stringify(v.username)}`);
    const { user, changed } = result;
    if (!changed) return disabled ? `user ${user.username} was already disabled (since ${user.disabledAt})` : `user ${user.username} was not disabled`;
    return disabled
      ? `user ${user.username} (id ${user.id}) disabled: their API tokens and password no longer work; the records they own keep them as owner`
      : `user ${user.username} (id ${user.id}) enabled`;
  });
}

export const userTools = group("user", "manage users", [userAdd, userList, disableTool(true), disableTool(false)]);
