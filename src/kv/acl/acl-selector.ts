/**
 * One ACL selector, as Redis 7.0 keeps one: the commands it allows, the keys and the Pub/Sub
 * channels it may touch. A user has a root selector (its rules written outside parentheses) and
 * any number of others, `(…)`; a command runs when one of them allows all of it — the command,
 * every key and every channel (acl-user.ts, acl-users.ts).
 *
 * Commands are a set of names — a command's, or a subcommand's as "container|sub" — plus whether
 * commands the server does not know yet are allowed (`futureCommands`: what +@all and
 * allcommands give and only -@all, nocommands and reset take away, as Redis's reserved command
 * bit does), plus first arguments allowed of a command otherwise refused (`+select|0`). A
 * category rule adds or takes away every command in the category there and then; a container's
 * rule covers all its subcommands.
 *
 * Keys are every key (allkeys, `~*`) or patterns, each for reading, writing or both (`%R~`,
 * `%W~`, `~`): a key a command reads (its key spec's "access") needs a pattern with R, one it
 * inserts, updates or deletes a pattern with W (key-specs.ts gives the flags, as Redis's key
 * specs do). Channels are every channel (allchannels, `&*`) or patterns.
 */
import type { CommandShape } from "../kit/command-info.ts";
import type { KeyRef } from "../kit/key-specs.ts";
import { globMatch } from "../text/glob.ts";
import type { CommandCatalog } from "./command-catalog.ts";

/** A rule ACL SETUSER cannot take; the message is what Redis says after the modifier's name. */
export class AclRuleError extends Error {
  /** Whether it names a command or category Redis does not know (the ACL file names the rule then). */
  readonly unknownName: boolean;

  constructor(message: string, unknownName = false) {
    super(message);
    this.unknownName = unknownName;
  }
}

export const syntaxError = () => new AclRuleError("Syntax error");
const unknownName = () => new AclRuleError("Unknown command or category name in ACL", true);

/** A key pattern and what it allows: reading (%R~), writing (%W~) or both (~). */
export interface KeyPattern {
  readonly pattern: string;
  read: boolean;
  write: boolean;
}

/** What a selector refuses of a command, worst last: Redis reports the worst any selector found. */
export type Denial = "command" | "key" | "channel";
export const denialRank: Readonly<Record<Denial, number>> = { command: 1, key: 2, channel: 3 };

/** A selector's refusal: why, and the argument refused (0 for the command itself). */
export interface SelectorRefusal {
  reason: Denial;
  at: number;
}

/** What a new selector starts with that CONFIG decides: acl-pubsub-default (resetchannels or allchannels). */
export interface SelectorDefaults {
  allChannels: boolean;
}

/** Commands whose arguments after the name are Pub/Sub channels, and whether they are patterns (Redis's channel specs; unsubscribing is never refused). */
const channelCommands: ReadonlyMap<string, { from: number; to: number; patterns: boolean }> = new Map([
  ["publish", { from: 1, to: 2, patterns: false }],
  ["spublish", { from: 1, to: 2, patterns: false }],
  ["subscribe", { from: 1, to: Number.POSITIVE_INFINITY, patterns: false }],
  ["ssubscribe", { from: 1, to: Number.POSITIVE_INFINITY, patterns: false }],
  ["psubscribe", { from: 1, to: Number.POSITIVE_INFINITY, patterns: true }],
]);

/** Whether a pattern holds what Redis refuses in one: a space or a NUL (isspace and \0). */
const hasSpaces = (text: string) => /[\s\0]/.test(text);

export class AclSelector {
  /** The commands and subcommands allowed, by full name. */
  readonly allowed = new Set<string>();
  futureCommands = false;
  /** First arguments allowed of a command otherwise refused (+select|0), as given, by command name. */
  readonly firstArgs = new Map<string, string[]>();
  allKeys = false;
  keyPatterns: KeyPattern[] = [];
  allChannels: boolean;
  channelPatterns: string[] = [];

  constructor(
    readonly catalog: CommandCatalog,
    allChannels: boolean,
  ) {
    this.allChannels = allChannels;
  }

  copy(): AclSelector {
    const copy = new AclSelector(this.catalog, this.allChannels);
    for (const name of this.allowed) copy.allowed.add(name);
    copy.futureCommands = this.futureCommands;
    for (const [name, args] of this.firstArgs) copy.firstArgs.set(name, [...args]);
    copy.allKeys = this.allKeys;
    copy.keyPatterns = this.keyPatterns.map((p) => ({ ...p }));
    copy.channelPatterns = [...this.channelPatterns];
    return copy;
  }

  /** Whether it allows every command, key and channel: nothing to check. */
  get unrestricted(): boolean {
    return this.futureCommands && this.allowed.size === this.catalog.every.length && this.readsAndWritesEveryKey && this.allChannels;
  }

  private get readsAndWritesEveryKey(): boolean {
    return this.allKeys || this.keyPatterns.some((p) => p.pattern === "*" && p.read && p.write);
  }

  /** Whether it may read any key at all (allkeys, ~*, %R~*): what SORT's BY and GET need. */
  get readsEveryKey(): boolean {
    return this.allKeys || this.keyPatterns.some((p) => p.pattern === "*" && p.read);
  }

  /** Applies one rule (Redis's ACLSetSelector); throws AclRuleError with Redis's reason. */
  apply(rule: string): void {
    const lower = rule.toLowerCase();
    switch (lower) {
      case "allkeys":
      case "~*":
        this.allKeys = true;
        this.keyPatterns = [];
        return;
      case "resetkeys":
        this.allKeys = false;
        this.keyPatterns = [];
        return;
      case "allchannels":
      case "&*":
        this.allChannels = true;
        this.channelPatterns = [];
        return;
      case "resetchannels":
        this.allChannels = false;
        this.channelPatterns = [];
        return;
      case "allcommands":
      case "+@all":
        return this.allCommands(true);
      case "nocommands":
      case "-@all":
        return this.allCommands(false);
    }
    const first = rule[0];
    if (first === "~" || first === "%") return this.addKeyPattern(rule);
    if (first === "&") return this.addChannelPattern(rule.slice(1));
    if ((first === "+" || first === "-") && rule[1] === "@") return this.categoryRule(rule.slice(2), first === "+");
    if (first === "+") return this.allowRule(rule.slice(1));
    if (first === "-") {
      const spec = this.catalog.commandOrSubcommand(rule.slice(1));
      if (spec === undefined) throw unknownName();
      return this.change(spec, false);
    }
    throw syntaxError();
  }

  private allCommands(allow: boolean): void {
    this.allowed.clear();
    if (allow) for (const spec of this.catalog.every) this.allowed.add(spec.name);
    this.futureCommands = allow;
    this.firstArgs.clear();
  }

  /** ~pattern, or %R~ / %W~ / %RW~pattern: R and W at most once each, in any case and order. */
  private addKeyPattern(rule: string): void {
    if (this.allKeys) {
      throw new AclRuleError(
        "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
      );
    }
    let read = true;
    let write = true;
    let at = 1;
    if (rule[0] === "%") {
      read = write = false;
      // Redis reads permissions up to the "~"; a rule that ends first is an empty pattern ("%R").
      for (; at < rule.length; at++) {
        const c = rule[at]!.toUpperCase();
        if (c === "R" && !read) read = true;
        else if (c === "W" && !write) write = true;
        else if (c === "~") {
          at++;
          break;
        } else throw syntaxError();
      }
      if (!read && !write) throw syntaxError();
    }
    const pattern = rule.slice(at);
    if (hasSpaces(pattern)) throw syntaxError();
    const existing = this.keyPatterns.find((p) => p.pattern === pattern);
    if (existing === undefined) this.keyPatterns.push({ pattern, read, write });
    else {
      existing.read ||= read;
      existing.write ||= write;
    }
  }

  private addChannelPattern(pattern: string): void {
    if (this.allChannels) {
      throw new AclRuleError(
        "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
      );
    }
    if (hasSpaces(pattern)) throw syntaxError();
    if (!this.channelPatterns.includes(pattern)) this.channelPatterns.push(pattern);
  }

  private categoryRule(category: string, allow: boolean): void {
    const commands = this.catalog.category(category);
    if (commands === undefined) throw unknownName();
    for (const spec of commands) {
      if (allow) this.allowed.add(spec.name);
      else this.allowed.delete(spec.name);
      this.firstArgs.delete(spec.name);
    }
  }

  /** +command, +container|subcommand, or +command|first-arg for a command without subcommands. */
  private allowRule(name: string): void {
    const bar = name.lastIndexOf("|");
    if (bar < 0) {
      const spec = this.catalog.command(name);
      if (spec === undefined) throw unknownName();
      return this.change(spec, true);
    }
    const spec = this.catalog.commandOrSubcommand(name.slice(0, bar));
    if (spec === undefined) throw unknownName();
    if (spec.name.includes("|")) throw new AclRuleError("Allowing first-arg of a subcommand is not supported");
    const arg = name.slice(bar + 1);
    if (arg === "") throw syntaxError();
    if (spec.subcommands !== undefined) {
      const sub = this.catalog.commandOrSubcommand(name);
      if (sub === undefined) throw unknownName();
      return this.change(sub, true);
    }
    // Redis 7.0 logs this form as deprecated, and takes it.
    const args = this.firstArgs.get(spec.name) ?? [];
    if (!args.some((a) => a.toLowerCase() === arg.toLowerCase())) args.push(arg);
    this.firstArgs.set(spec.name, args);
  }

  /** Allows or refuses a command, and with a container all its subcommands; its first arguments go. */
  private change(spec: CommandShape, allow: boolean): void {
    for (const each of [spec, ...(spec.subcommands ?? [])]) {
      if (allow) this.allowed.add(each.name);
      else this.allowed.delete(each.name);
    }
    this.firstArgs.delete(spec.name);
  }

  /**
   * What it refuses of `spec` run with `argv`, as Redis's ACLSelectorCheckCmd decides: the
   * command, then each key in turn, then each channel; null if nothing. `keys`: the command's
   * keys with their flags, found once for all of a user's selectors.
   */
  refusal(spec: CommandShape, argv: readonly string[], keys: () => readonly KeyRef[]): SelectorRefusal | null {
    if (!this.mayRun(spec, argv)) return { reason: "command", at: 0 };
    if (!this.allKeys) {
      for (const key of keys()) {
        if (
          !this.mayAccessKey(
            argv[key.at]!,
            key.flags.includes("access"),
            key.flags.some((f) => f === "insert" || f === "update" || f === "delete"),
          )
        ) {
          return { reason: "key", at: key.at };
        }
      }
    }
    const channels = this.allChannels ? undefined : channelCommands.get(spec.name);
    if (channels !== undefined) {
      for (let i = channels.from; i < Math.min(channels.to, argv.length); i++) {
        if (!this.mayAccessChannel(argv[i]!, channels.patterns)) return { reason: "channel", at: i };
      }
    }
    return null;
  }

  /** Whether it allows the command (a subcommand when the command has them), or its first argument. AUTH and HELLO always. */
  private mayRun(spec: CommandShape, argv: readonly string[]): boolean {
    if (this.allowed.has(spec.name) || spec.flags.includes("no_auth")) return true;
    const args = this.firstArgs.get(spec.name);
    if (args === undefined || argv.length < 2) return false;
    const first = argv[1]!.toLowerCase();
    return args.some((a) => a.toLowerCase() === first);
  }

  /** Whether `key` matches a pattern that allows reading it (`read`) and writing it (`write`) as asked. */
  mayAccessKey(key: string, read: boolean, write: boolean): boolean {
    if (this.allKeys) return true;
    for (const p of this.keyPatterns) {
      if ((read && !p.read) || (write && !p.write)) continue;
      if (p.pattern === "*" || globMatch(p.pattern, key)) return true;
    }
    return false;
  }

  /**
   * Whether it may use `channel`; a PSUBSCRIBE pattern (`isPattern`) must be one of its patterns
   * as written, as Redis requires, unless it has every channel.
   */
  mayAccessChannel(channel: string, isPattern: boolean): boolean {
    if (this.allChannels) return true;
    for (const pattern of this.channelPatterns) {
      if (isPattern ? pattern === channel : globMatch(pattern, channel)) return true;
    }
    return false;
  }
}
