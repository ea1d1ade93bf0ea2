/**
 * One ACL user, as Redis 7.0 keeps one: whether it is on, its passwords (SHA-256 digests, as
 * ACL GETUSER shows them), the commands it may run, the keys and the Pub/Sub channels it may
 * touch. `apply` takes the rules of ACL SETUSER one by one, with Redis's words for a bad one.
 *
 * Commands are a set of names — a command's, or a subcommand's as "container|sub" — plus
 * whether the user may run commands the server does not know yet (`futureCommands`: what +@all
 * and allcommands give and only -@all, nocommands and reset take away, as Redis's reserved
 * command bit does). A category rule adds or takes away every command in the category there and
 * then; a container's rule covers all its subcommands.
 *
 * What svc does not take (refused as a syntax error, changing nothing; docs/kv.md): selectors
 * ("(…)", clearselectors), read-only and write-only key patterns (%R~, %W~), and a first-argument
 * rule on a command without subcommands (+select|0).
 */
import { passwordDigest, passwordMatchesDigest } from "./passwords.ts";
import type { CommandShape } from "../kit/command-info.ts";
import { globMatch } from "../text/glob.ts";
import type { CommandCatalog } from "./command-catalog.ts";

/** The pattern that matches every key or channel (allkeys, allchannels). */
const everything = "*";

const digestPattern = /^[0-9a-f]{64}$/;

/** A rule ACL SETUSER cannot take; the message is what Redis says after the modifier's name. */
export class AclRuleError extends Error {}

const syntaxError = () => new AclRuleError("Syntax error");

export class AclUser {
  enabled = false;
  /** nopass: any password logs in. */
  nopass = false;
  /** Password digests, in the order they were added. */
  readonly passwords = new Set<string>();
  /** The commands and subcommands the user may run, by full name. */
  readonly allowed = new Set<string>();
  futureCommands = false;
  /** Key patterns; ["*"] is allkeys. */
  keyPatterns: string[] = [];
  /** Channel patterns; ["*"] is allchannels. */
  channelPatterns: string[] = [];
  /**
   * Whether RESTORE checks the user's payloads deeply (Redis's sanitize-payload flags): "" until a
   * rule says. svc checks every payload whole whichever is set, so it is only shown back.
   */
  payloadCheck: "" | "sanitize-payload" | "skip-sanitize-payload" = "";
  /** What `unrestricted` answers, worked out when a rule changes the user rather than per command. */
  private allOpen = false;

  /** `catalog`: the commands its rules may name (the server's table). */
  constructor(
    readonly name: string,
    readonly catalog: CommandCatalog,
  ) {}

  /** A copy, for ACL SETUSER to change and swap in only if every rule took. */
  copy(): AclUser {
    const user = new AclUser(this.name, this.catalog);
    user.assign(this);
    return user;
  }

  /** Takes this user's rules from `other` (same name): ACL SETUSER's all-or-nothing swap. */
  assign(other: AclUser): void {
    this.enabled = other.enabled;
    this.nopass = other.nopass;
    this.passwords.clear();
    for (const digest of other.passwords) this.passwords.add(digest);
    this.allowed.clear();
    for (const name of other.allowed) this.allowed.add(name);
    this.futureCommands = other.futureCommands;
    this.keyPatterns = [...other.keyPatterns];
    this.channelPatterns = [...other.channelPatterns];
    this.payloadCheck = other.payloadCheck;
    this.allOpen = other.allOpen;
  }

  /** Applies one ACL SETUSER rule; throws AclRuleError with Redis's reason. */
  apply(rule: string): void {
    try {
      this.applyRule(rule);
    } finally {
      this.allOpen =
        this.futureCommands && this.allowed.size === this.catalog.every.length && this.keyPatterns[0] === everything && this.channelPatterns[0] === everything;
    }
  }

  private applyRule(rule: string): void {
    const lower = rule.toLowerCase();
    switch (lower) {
      case "on":
        this.enabled = true;
        return;
      case "off":
        this.enabled = false;
        return;
      case "nopass":
        this.nopass = true;
        this.passwords.clear();
        return;
      case "resetpass":
        this.nopass = false;
        this.passwords.clear();
        return;
      case "allkeys":
        this.keyPatterns = [everything];
        return;
      case "resetkeys":
        this.keyPatterns = [];
        return;
      case "allchannels":
        this.channelPatterns = [everything];
        return;
      case "resetchannels":
        this.channelPatterns = [];
        return;
      case "allcommands":
        return this.allCommands(true);
      case "nocommands":
        return this.allCommands(false);
      case "sanitize-payload":
      case "skip-sanitize-payload":
        this.payloadCheck = lower;
        return;
      case "reset":
        for (const part of ["resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "-@all"]) this.apply(part);
        return;
      case "clearselectors":
        throw syntaxError();
    }
    const first = rule[0];
    const rest = rule.slice(1);
    if (first === ">") return this.addDigest(passwordDigest(rest));
    if (first === "<") return this.removeDigest(passwordDigest(rest));
    if (first === "#") return this.addDigest(checkedDigest(rest));
    if (first === "!") return this.removeDigest(checkedDigest(rest));
    if (first === "~") return addPattern(this.keyPatterns, rest, "allkeys", "resetkeys", "patterns");
    if (first === "&") return addPattern(this.channelPatterns, rest, "allchannels", "resetchannels", "channels");
    if (first === "+" || first === "-") return this.commandRule(rest, first === "+");
    throw syntaxError();
  }

  private addDigest(digest: string): void {
    this.passwords.add(digest);
    this.nopass = false;
  }

  private removeDigest(digest: string): void {
    if (!this.passwords.delete(digest)) throw new AclRuleError("The password you are trying to remove from the user does not exist");
  }

  private allCommands(allow: boolean): void {
    this.allowed.clear();
    if (allow) for (const spec of this.catalog.every) this.allowed.add(spec.name);
    this.futureCommands = allow;
  }

  /** +name / -name: a command, a container's subcommand, or @category. */
  private commandRule(name: string, allow: boolean): void {
    if (name.startsWith("@")) {
      if (name.toLowerCase() === "@all") return this.allCommands(allow);
      const commands = this.catalog.category(name.slice(1));
      if (commands === undefined) throw new AclRuleError("Unknown command or category name in ACL");
      for (const spec of commands) this.set(spec, allow);
      return;
    }
    const bar = name.indexOf("|");
    const spec = this.catalog.command(bar < 0 ? name : name.slice(0, bar));
    if (spec === undefined) throw new AclRuleError("Unknown command or category name in ACL");
    if (bar < 0) {
      this.set(spec, allow);
      for (const sub of spec.subcommands ?? []) this.set(sub, allow);
      return;
    }
    const sub = this.catalog.commandOrSubcommand(name);
    if (sub !== undefined) return this.set(sub, allow);
    // Redis takes +cmd|arg for a command without subcommands (a first-argument rule, 7.0); svc
    // does not (see the top). Both refuse -cmd|arg, and an unknown subcommand.
    if (spec.subcommands === undefined && allow) throw syntaxError();
    throw new AclRuleError("Unknown command or category name in ACL");
  }

  private set(spec: CommandShape, allow: boolean): void {
    if (allow) this.allowed.add(spec.name);
    else this.allowed.delete(spec.name);
  }

  /** Whether the user may run every command and touch every key and channel: nothing to check (asked for every command). */
  get unrestricted(): boolean {
    return this.allOpen;
  }

  /** Whether the user may run `spec` (a subcommand when the command has them). */
  mayRun(spec: CommandShape): boolean {
    return this.allowed.has(spec.name);
  }

  /** Whether the user may touch any key at all (allkeys, ~*): what SORT's BY and GET need. */
  get mayAccessEveryKey(): boolean {
    return this.keyPatterns[0] === everything;
  }

  /** Whether `key` matches one of the user's key patterns. */
  mayAccessKey(key: string): boolean {
    return matchesAny(this.keyPatterns, key);
  }

  /**
   * Whether the user may use `channel`; a PSUBSCRIBE pattern (`isPattern`) must be one of the
   * user's patterns as written, as Redis requires, unless the user has every channel.
   */
  mayAccessChannel(channel: string, isPattern: boolean): boolean {
    if (this.channelPatterns[0] === everything) return true;
    return isPattern ? this.channelPatterns.includes(channel) : matchesAny(this.channelPatterns, channel);
  }

  /**
   * The password check of AUTH: on, and nopass or one of its passwords — every digest compared,
   * each in constant time, so the time shows neither which matched nor where one differed.
   */
  accepts(password: string): boolean {
    if (!this.enabled) return false;
    if (this.nopass) return true;
    let matched = false;
    for (const digest of this.passwords) matched = passwordMatchesDigest(password, digest) || matched;
    return matched;
  }
}

function matchesAny(patterns: readonly string[], text: string): boolean {
  for (const pattern of patterns) if (pattern === everything || globMatch(pattern, text)) return true;
  return false;
}

/** A digest given with # or !: 64 lower-case hex digits. */
function checkedDigest(text: string): string {
  if (!digestPattern.test(text)) {
    throw new AclRuleError("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
  }
  return text;
}

/** Adds a key (~) or channel (&) pattern; * means all, and nothing may follow it but a reset. */
function addPattern(patterns: string[], pattern: string, allFlag: string, reset: string, noun: string): void {
  if (patterns[0] === everything) {
    throw new AclRuleError(
      `Adding a pattern after the * pattern (or the '${allFlag}' flag) is not valid and does not have any effect. Try '${reset}' to start with an empty list of ${noun}`,
    );
  }
  if (pattern === everything) patterns.splice(0, patterns.length, everything);
  else if (!patterns.includes(pattern)) patterns.push(pattern);
}
