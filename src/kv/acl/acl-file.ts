/**
 * The ACL file (`--aclfile`): the users, one `user <name> <rules…>` line each, as ACL LIST writes
 * them. Redis 7.0's format and its words: loaded at start (a bad file stops the start) and by ACL
 * LOAD, all or nothing; written by ACL SAVE, whole, into a new file renamed over the old.
 *
 * As Redis 7.0 reads it: each line trimmed, blank lines skipped, no comments, the words split at
 * single spaces (so two spaces in a row make an empty rule, a syntax error). A user is made fresh
 * from its line; a default user the file leaves out is the usual one (on, nopass, everything).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { systemErrorText } from "../../core/system-error.ts";
import { KvError } from "../text/errors.ts";
import { describeUser } from "./acl-description.ts";
import { AclRuleError } from "./acl-selector.ts";
import type { AclUser } from "./acl-user.ts";
import { type AclUsers, mergeSelectors } from "./acl-users.ts";

/** The users `path` holds, by name, made as `acl` makes new users; throws Redis's error naming every bad line. */
export function readAclFile(path: string, acl: AclUsers): Map<string, AclUser> {
  let text: string;
  try {
    text = readFileSync(path, "latin1");
  } catch (error) {
    throw new KvError(`ERR Error loading ACLs, opening file '${path}': ${systemErrorText(error)}`);
  }
  const users = new Map<string, AclUser>();
  let errors = "";
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, "");
    if (line === "") continue;
    const words = line.split(" ");
    const at = `${path}:${i + 1}`;
    if (words[0] !== "user" || words.length < 2) {
      errors += `${at} should start with user keyword followed by the username. `;
      continue;
    }
    const name = words[1]!;
    if (users.has(name)) {
      errors += `WARNING: Duplicate user '${name}' found on line ${i + 1}. `;
      continue;
    }
    const user = acl.newUser(name);
    const rules = mergeSelectors(words.slice(2));
    const failure = typeof rules === "number" ? "Unmatched parenthesis in selector definition" : applyRules(user, rules);
    if (failure !== null) errors += `${at}: ${failure}. `;
    else users.set(name, user);
  }
  if (errors !== "") throw new KvError(`ERR ${errors}WARNING: ACL errors detected, no change to the previously active ACL rules was performed`);
  return users;
}

/** Applies `rules` to `user`; the first one's failure in Redis's words, or null. */
function applyRules(user: AclUser, rules: readonly string[]): string | null {
  for (const rule of rules) {
    try {
      user.apply(rule);
    } catch (error) {
      if (!(error instanceof AclRuleError)) throw error;
      // Redis names the rule for a command or category it does not know, and only then.
      return error.unknownName ? `Error in applying operation '${rule}': ${error.message}` : error.message;
    }
  }
  return null;
}

/** ACL SAVE: every user as its ACL LIST line, into a new file that then replaces `path`. */
export function writeAclFile(path: string, acl: AclUsers): void {
  const temporary = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(
      temporary,
      acl
        .all()
        .map((user) => `${describeUser(user)}\n`)
        .join(""),
      { encoding: "latin1", mode: 0o600 },
    );
    renameSync(temporary, path);
  } catch (error) {
    // The old file stays as it was; what was written of the new one goes.
    rmSync(temporary, { force: true });
    throw error;
  }
}
