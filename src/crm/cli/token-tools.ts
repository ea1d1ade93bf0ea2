/**
 * `svc crm token create|list|revoke`: an operator's view of every user's API tokens. The secret
 * is printed once, by create; lists show the first characters only, as the settings API does.
 */
import { flag } from "../../core/config.ts";
import { SvcError } from "../../core/errors.ts";
import { crmRecordIdMax } from "../../core/limits.ts";
import { createToken, listAllTokens, revokeAnyToken, type TokenListing } from "../auth/tokens.ts";
import { findUser } from "../auth/users.ts";
import { group, idFlag, jsonFlag, table, tool } from "./tool.ts";

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
    // It would answer 401 until the user is enabled: say so now rather than hand out a dead token.
    if (user.disabledAt !== null) throw new SvcError("conflict", `user ${JSON.stringify(v.user)} is disabled; svc crm user enable first`);
    return (await db.write((tx) => createToken(tx, user.id, v.name))).token;
  },
);

const tokenList = tool(
  "list",
  "token list [--user NAME] [--json]",
  "lists API tokens, every user's or one user's, revoked ones too (never their secrets)",
  { user: flag.string({ help: "only this user's tokens" }), json: jsonFlag },
  async (db, v) => {
    let userId: number | undefined;
    if (v.user !== undefined) {
      const user = await findUser(db, v.user);
      if (user === null) throw new SvcError("not_found", `no user ${JSON.stringify(v.user)}`);
      userId = user.id;
    }
    const tokens = await listAllTokens(db, userId);
    if (v.json) {
      return JSON.stringify(
        tokens.map((t) => ({
          id: t.id,
          user: t.username,
          name: t.name,
          prefix: t.prefix,
          created_at: t.created_at,
          revoked_at: t.revoked_at,
          user_disabled: t.userDisabled,
        })),
      );
    }
    if (tokens.length === 0) return "no tokens";
    const status = (t: TokenListing) => (t.revoked_at !== null ? `revoked ${t.revoked_at}` : t.userDisabled ? "user disabled" : "live");
    return table(
      ["ID", "USER", "NAME", "PREFIX", "STATUS", "CREATED"],
      tokens.map((t) => [String(t.id), t.username, t.name, t.prefix, status(t), t.created_at]),
    );
  },
);

const tokenRevoke = tool(
  "revoke",
  "token revoke --id ID",
  "revokes any user's token by its id (token list shows them): it answers 401 from then on",
  { id: flag.string({ required: true, help: "the token's id" }) },
  async (db, v) => {
    const id = idFlag("id", v.id, crmRecordIdMax);
    const result = await db.write((tx) => revokeAnyToken(tx, id));
    if (result === null) throw new SvcError("not_found", `no token ${id}`);
    const { token, wasRevoked } = result;
    const which = `token ${token.id} (${JSON.stringify(token.name)}, ${token.prefix}…) of user ${token.username}`;
    return wasRevoked ? `${which} was already revoked at ${token.revoked_at}` : `revoked ${which}`;
  },
);

export const tokenTools = group("token", "manage API tokens", [tokenCreate, tokenList, tokenRevoke]);
