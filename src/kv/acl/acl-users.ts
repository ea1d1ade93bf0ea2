/**
 * The server's ACL users, by name, and what they are refused: Redis 7.0's ACL in memory. There is
 * always a "default" user, the one every client starts as: on, with every command, key and
 * channel, and `requirepass` as its password (none: nopass). Without an ACL file (`--aclfile`,
 * acl-file.ts) users live as long as the process, as in Redis.
 */
import { defaultUser } from "./passwords.ts";
import type { CommandShape } from "../kit/command-info.ts";
import { hasKeys, type KeyRef, keysWithFlags } from "../kit/key-specs.ts";
import { KvError } from "../text/errors.ts";
import { type AclContext, type AclDenial, AclLog } from "./acl-log.ts";
import { AclRuleError, denialRank, type SelectorDefaults, type SelectorRefusal } from "./acl-selector.ts";
import { AclUser } from "./acl-user.ts";
import type { CommandCatalog } from "./command-catalog.ts";

/** What a user was refused, and the command's, key's or channel's name. */
export interface Refusal {
  reason: Exclude<AclDenial, "auth">;
  object: string;
}

export class AclUsers {
  private readonly users = new Map<string, AclUser>();
  readonly defaultUser: AclUser;
  readonly log = new AclLog();
  /** acl-pubsub-default: whether a new user or selector starts with every channel (Redis 7.0's default: none). */
  readonly defaults: SelectorDefaults = { allChannels: false };

  /** `catalog`: the commands rules may name, the server's table (command-catalog.ts says why it is handed in). */
  constructor(readonly catalog: CommandCatalog) {
    this.defaultUser = usualDefaultUser(catalog, this.defaults);
    this.users.set(defaultUser, this.defaultUser);
  }

  /** A new user, as ACL SETUSER or the ACL file makes one: off, nothing allowed. */
  newUser(name: string): AclUser {
    return new AclUser(name, this.catalog, this.defaults);
  }

  /**
   * ACL LOAD, or the ACL file at start: `users` in place of every user. The default user keeps
   * its identity (clients hold it) and takes the file's rules, or the usual ones when the file
   * leaves it out. Returns the users replaced, whose clients Redis disconnects.
   */
  replaceAll(users: ReadonlyMap<string, AclUser>): AclUser[] {
    const replaced = [...this.users.values()].filter((user) => user !== this.defaultUser);
    this.defaultUser.assign(users.get(defaultUser) ?? usualDefaultUser(this.catalog, this.defaults));
    this.users.clear();
    this.users.set(defaultUser, this.defaultUser);
    for (const [name, user] of users) if (name !== defaultUser) this.users.set(name, user);
    return replaced;
  }

  get(name: string): AclUser | undefined {
    return this.users.get(name);
  }

  /** How many users there are, the default one included. */
  get size(): number {
    return this.users.size;
  }

  /** Every user, by name in byte order (ACL USERS, ACL LIST). */
  all(): AclUser[] {
    return [...this.users.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * ACL SETUSER: applies `rules` to the user named `name`, made if new (off, nothing allowed).
   * All of them or none: a bad rule throws Redis's error and changes nothing. A selector may
   * come split over several arguments, "(+get" "~k*)", as Redis allows.
   */
  setUser(name: string, rules: readonly string[]): AclUser {
    if (/[\s\0]/.test(name)) throw new KvError("ERR Usernames can't contain spaces or null characters");
    const merged = mergeSelectors(rules);
    if (typeof merged === "number") throw new KvError(`ERR Unmatched parenthesis in acl selector starting at '${rules[merged]}'.`);
    const existing = this.users.get(name);
    const changed = existing?.copy() ?? this.newUser(name);
    for (const rule of merged) {
      try {
        changed.apply(rule);
      } catch (error) {
        if (!(error instanceof AclRuleError)) throw error;
        throw new KvError(`ERR Error in ACL SETUSER modifier '${rule}': ${error.message}`);
      }
    }
    if (existing === undefined) this.users.set(name, changed);
    else existing.assign(changed);
    return existing ?? changed;
  }

  /** ACL DELUSER: the users deleted (the default user cannot be). */
  deleteUsers(names: readonly string[]): AclUser[] {
    if (names.includes(defaultUser)) throw new KvError("ERR The 'default' user cannot be removed");
    const deleted: AclUser[] = [];
    for (const name of names) {
      const user = this.users.get(name);
      if (user === undefined) continue;
      this.users.delete(name);
      deleted.push(user);
    }
    return deleted;
  }

  /** requirepass: the default user's one password, or nopass for "". */
  setDefaultPassword(password: string): void {
    this.defaultUser.apply("resetpass");
    this.defaultUser.apply(password === "" ? "nopass" : `>${password}`);
  }

  /** The user `name` if it is on and `password` is one of its own (or it is nopass); null otherwise. */
  authenticate(name: string, password: string): AclUser | null {
    const user = this.users.get(name);
    return user?.accepts(password) ? user : null;
  }

  /**
   * What `user` may not do of the command `spec` with `argv`: its command, a key, a channel; null
   * if one of its selectors allows it all. Of the selectors' refusals Redis reports the worst (a
   * channel over a key over the command), and of those the one latest in argv.
   */
  refusal(user: AclUser, spec: CommandShape, argv: readonly string[]): Refusal | null {
    if (user.unrestricted) return null;
    const keysOnce = keysFoundOnce(spec, argv);
    let worst: SelectorRefusal | null = null;
    for (const selector of user.allSelectors) {
      const refused = selector.refusal(spec, argv, keysOnce);
      if (refused === null) return null;
      if (worst === null || denialRank[refused.reason] > denialRank[worst.reason] || (refused.reason === worst.reason && refused.at > worst.at))
        worst = refused;
    }
    return { reason: worst!.reason, object: worst!.reason === "command" ? spec.name : argv[worst!.at]! };
  }

  /**
   * Whether `user` may run `spec` with `argv` in a selector that may also read every key: what
   * SORT's BY and GET need, which read keys no argument names (Redis's
   * ACLUserCheckCmdWithUnrestrictedKeyAccess).
   */
  mayReadEveryKey(user: AclUser, spec: CommandShape, argv: readonly string[]): boolean {
    if (user.unrestricted) return true;
    const keysOnce = keysFoundOnce(spec, argv);
    return user.allSelectors.some((s) => s.readsEveryKey && s.refusal(spec, argv, keysOnce) === null);
  }

  /** Logs a refusal (or, with reason "auth", a failed login) in ACL LOG. */
  logRefusal(reason: AclDenial, context: AclContext, object: string, username: string, clientInfo: string, nowMs: number): void {
    this.log.add({ reason, context, object, username, clientInfo }, nowMs);
  }
}

/** The keys `spec` run with `argv` names, with their flags: found at the first call, for all of a user's selectors. */
function keysFoundOnce(spec: CommandShape, argv: readonly string[]): () => readonly KeyRef[] {
  let keys: readonly KeyRef[] | null = null;
  return () => (keys ??= hasKeys(spec) ? keysWithFlags(spec, argv) : []);
}

/** The default user as a server starts with it: on, any password, every command, key and channel. */
function usualDefaultUser(catalog: CommandCatalog, defaults: SelectorDefaults): AclUser {
  const user = new AclUser(defaultUser, catalog, defaults);
  for (const rule of ["on", "nopass", "allkeys", "allchannels", "+@all"]) user.apply(rule);
  return user;
}

/** NOPERM's words for a refusal of a client's own command, as Redis 7.0 writes them. */
export function noPermission(refusal: Refusal): string {
  if (refusal.reason === "command") return `NOPERM this user has no permissions to run the '${refusal.object}' command`;
  return `NOPERM this user has no permissions to access one of the ${refusal.reason === "key" ? "keys" : "channels"} used as arguments`;
}

/** Why EXEC refuses a queued command its user may no longer run, as Redis 7.0 words it. */
export function noPermissionAtExec(refusal: Refusal): string {
  const reason =
    refusal.reason === "command"
      ? "no permission to execute the command or subcommand"
      : refusal.reason === "key"
        ? "no permission to touch the specified keys"
        : "no permission to access one of the channels used as arguments";
  return `NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: ${reason}`;
}

/** The words for a refusal of a command a script called (the script's error). */
export function scriptNoPermission(refusal: Refusal): string {
  if (refusal.reason === "command") return "ERR The user executing the script can't run this command or subcommand";
  if (refusal.reason === "key") return "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments";
  return "ERR The user executing the script can't publish to the channel mentioned in the command";
}

/** ACL DRYRUN's words for a refusal. */
export function dryRunRefusal(refusal: Refusal): string {
  if (refusal.reason === "command") return `This user has no permissions to run the '${refusal.object}' command`;
  return `This user has no permissions to access the '${refusal.object}' ${refusal.reason}`;
}

/**
 * Rules with a selector split over several of them joined back, as Redis's
 * ACLMergeSelectorArguments joins them: a rule that opens "(" without closing it takes the
 * rules after it, space-separated, up to one that ends with ")" (another such opening rule on
 * the way starts the selector again). Returns the index of the opening rule when none closes it.
 */
export function mergeSelectors(rules: readonly string[]): string[] | number {
  const merged: string[] = [];
  let open = -1;
  let selector = "";
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (rule.startsWith("(") && !rule.endsWith(")")) {
      open = i;
      selector = rule;
    } else if (open >= 0) {
      selector += ` ${rule}`;
      if (rule.endsWith(")")) {
        merged.push(selector);
        open = -1;
      }
    } else merged.push(rule);
  }
  return open >= 0 ? open : merged;
}
