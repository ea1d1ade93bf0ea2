/**
 * The crm service's command-line tools, run against the same --db as the server (SQLite's WAL
 * lets them write while it serves):
 *   svc crm role add --name NAME [--parent ROLE]
 *   svc crm user add --username NAME [--role ROLE] [--admin] [--password-stdin]
 *   svc crm token create --user NAME [--name LABEL]     prints the token, once
 */
import type { Command } from "../cli/command.ts";
import { usageExitCode } from "../cli/command.ts";
import { type ConfigValues, flag, type FlagSpec, formatHelp, parseConfig } from "../core/config.ts";
import { isSvcError, SvcError } from "../core/errors.ts";
import { addRole } from "./auth/roles.ts";
import { createToken } from "./auth/tokens.ts";
import { addUser, findUser } from "./auth/users.ts";
import { addUserToAccess, rebuildAllAccess } from "./sharing/sharing-rules.ts";
import { openStore } from "./store/open.ts";
import type { Db } from "./store/db.ts";

export const dbDefault = "sqlite:data/crm/crm.db";
const envPrefix = "SVC_CRM";
const dbFlag = flag.string({ default: dbDefault, help: "the store: sqlite:PATH or postgres://user@host:port/db" });

function tool<S extends FlagSpec>(name: string, usage: string, summary: string, flags: S, run: (db: Db, values: ConfigValues<S>) => Promise<string>): Command {
  const spec = { db: dbFlag, ...flags };
  return {
    name,
    summary,
    help: () => `usage: svc crm ${usage}\n\n${summary}\n\nflags:\n${formatHelp(spec, envPrefix)}`,
    async run(args) {
      const { values, positionals } = parseConfig(spec, args, process.env, envPrefix);
      if (positionals.length > 0) throw new SvcError("bad_config", `unexpected argument ${JSON.stringify(positionals[0])}`);
      const db = await openStore(values.db);
      try {
        process.stdout.write(`${await run(db, values as ConfigValues<S>)}\n`);
        return 0;
      } catch (error) {
        if (!isSvcError(error) || error.code === "bad_config") throw error;
        const details = Array.isArray(error.details)
          ? `: ${error.details.map((d: { field: string; message: string }) => `${d.field} ${d.message}`).join("; ")}`
          : "";
        process.stderr.write(`svc crm ${usage.split(" ").slice(0, 2).join(" ")}: ${error.message}${details}\n`);
        return 1;
      } finally {
        await db.close();
      }
    },
  };
}

/** A command that only groups subcommands: run bare, it shows them. */
function group(name: string, summary: string, subcommands: Command[]): Command {
  const help = () =>
    `usage: svc crm ${name} <${subcommands.map((c) => c.name).join("|")}> [flags]\n\n${summary}\n\n${subcommands.map((c) => `  ${c.name}  ${c.summary}`).join("\n")}`;
  return {
    name,
    summary,
    help,
    subcommands,
    async run() {
      process.stderr.write(`${help()}\n`);
      return usageExitCode;
    },
  };
}

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

async function readStdin(): Promise<string> {
  return (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, "");
}

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
    if (password !== null && password.length < 8) throw new SvcError("bad_config", "--password-stdin: a password needs at least 8 characters");
    const user = await db.write(async (tx) => {
      const added = await addUser(tx, { username: v.username, role: v.role ?? null, admin: v.admin, password });
      await addUserToAccess(tx, added);
      return added;
    });
    return `user ${user.username} (id ${user.id}${user.isAdmin ? ", admin" : ""})`;
  },
);

const tokenCreate = tool(
  "create",
  "token create --user NAME [--name LABEL]",
  "creates an API token for a user and prints it once (only its hash is kept)",
  {
    user: flag.string({ required: true, help: "the user the token acts as" }),
    name: flag.string({ default: "cli", help: "a label shown when tokens are listed" }),
  },
  async (db, v) => {
    const user = await findUser(db, v.user);
    if (user === null) throw new SvcError("not_found", `no user ${JSON.stringify(v.user)}`);
    return (await db.write((tx) => createToken(tx, user.id, v.name))).token;
  },
);

const sharingRecalculate = tool(
  "recalculate",
  "sharing recalculate",
  "rewrites who-can-read-what for every object: run it after loading records straight into the database",
  {},
  async (db) => {
    const start = performance.now();
    await db.write((tx) => rebuildAllAccess(tx));
    return `sharing recalculated in ${((performance.now() - start) / 1000).toFixed(1)} s`;
  },
);

export const crmTools: Command[] = [
  group("role", "manage the role hierarchy", [roleAdd]),
  group("user", "manage users", [userAdd]),
  group("token", "manage API tokens", [tokenCreate]),
  group("sharing", "maintain sharing", [sharingRecalculate]),
];
