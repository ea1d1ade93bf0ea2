/**
 * The crm service's command-line tools, run against the same --db as the server (SQLite's WAL
 * lets them write while it serves):
 *   svc crm role add --name NAME [--parent ROLE]            role list [--json]
 *   svc crm user add --username NAME [--role ROLE] [--admin] [--password-stdin]
 *   svc crm user list [--json]                               user disable|enable --username NAME
 *   svc crm token create --user NAME [--name LABEL]          prints the token, once
 *   svc crm token list [--user NAME] [--json]                token revoke --id ID
 *   svc crm sharing recalculate                              after a bulk import into the database
 */
import type { Command } from "../cli/command.ts";
import { roleTools } from "./cli/role-tools.ts";
import { sharingTools } from "./cli/sharing-tools.ts";
import { tokenTools } from "./cli/token-tools.ts";
import { userTools } from "./cli/user-tools.ts";

export { dbDefault } from "./cli/tool.ts";

export const crmTools: Command[] = [roleTools, userTools, tokenTools, sharingTools];
