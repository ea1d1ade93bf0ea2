/**
 * One ACL user, as Redis 7.0 keeps one: whether it is on, its passwords (SHA-256 digests, as
 * ACL GETUSER shows them), and its selectors — the root one, which the rules outside
 * parentheses change, and the others, each made whole by one `(…)` rule (acl-selector.ts says
 * what a selector allows). `apply` takes the rules of ACL SETUSER one by one, with Redis's words
 * for a bad one.
 */
import { passwordDigest, passwordMatchesDigest } from "./passwords.ts";
import { splitInlineArgs } from "../text/split-args.ts";
import { AclRuleError, AclSelector, type SelectorDefaults } from "./acl-selector.ts";
import type { CommandCatalog } from "./command-catalog.ts";

const digestPattern = /^[0-9a-f]{64}$/;

/** Redis 7.0's default acl-pubsub-default: a new selector has no channels. */
const resetChannelsByDefault: SelectorDefaults = { allChannels: false };

export class AclUser {
  enabled = false;
  /** nopass: any password logs in. */
  nopass = false;
  /** Password digests, in the order they were added. */
  readonly passwords = new Set<string>();
  /**
   * Whether RESTORE checks the user's payloads deeply (Redis's sanitize-payload flags): "" until a
   * rule says. svc checks every payload whole whichever is set, so it is only shown back.
   */
  payloadCheck: "" | "sanitize-payload" | "skip-sanitize-payload" = "";
  /**
   * The root selector (the one the rules outside parentheses change), then each `(…)` added, in
   * order: the order Redis checks them in, at every command of a limited user.
   */
  allSelectors: AclSelector[];
  /** What `unrestricted` answers, worked out when a rule changes the user rather than per command. */
  private allOpen = false;

  /** `catalog`: the commands its rules may name (the server's table); `defaults`: CONFIG's say in new selectors. */
  constructor(
    readonly name: string,
    readonly catalog: CommandCatalog,
    readonly defaults: SelectorDefaults = resetChannelsByDefault,
  ) {
    this.allSelectors = [new AclSelector(catalog, defaults.allChannels)];
  }

  /** A copy, for ACL SETUSER to change and swap in only if every rule took. */
  copy(): AclUser {
    const user = new AclUser(this.name, this.catalog, this.defaults);
    user.assign(this);
    return user;
  }

  /** Takes this user's rules from `other` (same name): ACL SETUSER's all-or-nothing swap. */
  assign(other: AclUser): void {
    this.enabled = other.enabled;
    this.nopass = other.nopass;
    this.passwords.clear();
    for (const digest of other.passwords) this.passwords.add(digest);
    this.payloadCheck = other.payloadCheck;
    this.allSelectors = other.allSelectors.map((s) => s.copy());
    this.allOpen = other.allOpen;
  }

  /** The selector the rules outside parentheses change. */
  get root(): AclSelector {
    return this.allSelectors[0]!;
  }

  /** The selectors `(…)` added, in order. */
  get selectors(): readonly AclSelector[] {
    return this.allSelectors.slice(1);
  }

  /** Applies one ACL SETUSER rule; throws AclRuleError with Redis's reason. */
  apply(rule: string): void {
    try {
      this.applyRule(rule);
    } finally {
      this.allOpen = this.allSelectors.some((s) => s.unrestricted);
    }
  }

  private applyRule(rule: string): void {
    // An empty rule does nothing, as in Redis.
    if (rule === "") return;
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
      case "sanitize-payload":
      case "skip-sanitize-payload":
        this.payloadCheck = lower;
        return;
      case "clearselectors":
        this.allSelectors.length = 1;
        return;
      case "reset":
        for (const part of ["resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors", "-@all"]) this.applyRule(part);
        if (this.defaults.allChannels) this.applyRule("allchannels");
        return;
    }
    const first = rule[0];
    const rest = rule.slice(1);
    if (first === ">") return this.addDigest(passwordDigest(rest));
    if (first === "<") return this.removeDigest(passwordDigest(rest));
    if (first === "#") return this.addDigest(checkedDigest(rest));
    if (first === "!") return this.removeDigest(checkedDigest(rest));
    if (first === "(" && rule.endsWith(")")) return this.addSelector(rule.slice(1, -1));
    this.root.apply(rule);
  }

  /** A selector made from the rules between the parentheses, split as Redis's sdssplitargs splits (quotes allowed). */
  private addSelector(inner: string): void {
    const selector = new AclSelector(this.catalog, this.defaults.allChannels);
    // Unbalanced quotes split to no words in Redis: an empty selector is added.
    // A user's own rules (on, >password, reset …) are no selector's: a syntax error inside one.
    for (const rule of splitInlineArgs(inner) ?? []) selector.apply(rule);
    this.allSelectors.push(selector);
  }

  private addDigest(digest: string): void {
    this.passwords.add(digest);
    this.nopass = false;
  }

  private removeDigest(digest: string): void {
    if (!this.passwords.delete(digest)) throw new AclRuleError("The password you are trying to remove from the user does not exist");
  }

  /** Whether the user may run every command and touch every key and channel: nothing to check (asked for every command). */
  get unrestricted(): boolean {
    return this.allOpen;
  }

  /**
   * Whether the user may use `channel` in one of its selectors (a subscriber's channels when
   * its rules change; a PSUBSCRIBE pattern must be one of the patterns as written).
   */
  mayAccessChannel(channel: string, isPattern: boolean): boolean {
    return this.allSelectors.some((s) => s.mayAccessChannel(channel, isPattern));
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

/** A digest given with # or !: 64 lower-case hex digits. */
function checkedDigest(text: string): string {
  if (!digestPattern.test(text)) {
    throw new AclRuleError("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters");
  }
  return text;
}
