/**
 * A user's rules written back, as ACL LIST and ACL GETUSER show them (Redis 7.0's forms).
 *
 * The commands are described from what the user may run, not from the rules that got it there,
 * the way Redis 7.0 does: +@all or -@all first (whether commands added later are allowed), then
 * categories chosen greedily — each time the category most like the user's commands, by more
 * commands in common than not and then by fewest differences — and then the single commands
 * (and subcommands) that still differ. So `+get -get` reads `-@all`, and `+get +@string` reads
 * `-@all +@string`.
 *
 * Redis lists those single commands in its command table's hash order, which is random per
 * process; svc lists them in its table's order (docs/kv.md). A first argument allowed of a
 * command otherwise refused follows the command, `-select +select|0`.
 *
 * Each selector is described so; a user is its root selector, then each other one in
 * parentheses: "user alice on ~k* resetchannels -@all +get (%R~r* resetchannels -@all +@read)".
 */
import { allCategories } from "../kit/acl-categories.ts";
import type { AclSelector } from "./acl-selector.ts";
import type { AclUser } from "./acl-user.ts";

/** The command rules: "-@all +@list -lpush +get", "+@all -@dangerous". */
export function describeCommands(selector: AclSelector): string {
  const additive = !selector.futureCommands;
  const rules = [additive ? "-@all" : "+@all"];
  // What the rules written so far allow: starts as the first rule does.
  const described = new Set<string>(additive ? [] : selector.catalog.every.map((spec) => spec.name));
  // The selector's commands less those a category written covers (additive), or plus them: what
  // is left to describe, and what the next category is measured against.
  const left = new Set(selector.allowed);
  const applied = new Set<string>();
  for (;;) {
    let best: string | null = null;
    let fewestDiffering = Number.POSITIVE_INFINITY;
    let mostSame = 0;
    for (const category of allCategories) {
      if (applied.has(category)) continue;
      const commands = selector.catalog.category(category)!;
      let allowed = 0;
      for (const spec of commands) if (left.has(spec.name)) allowed++;
      const same = additive ? allowed : commands.length - allowed;
      const diff = commands.length - same;
      if (same > diff && (diff < fewestDiffering || (diff === fewestDiffering && same > mostSame))) {
        best = category;
        fewestDiffering = diff;
        mostSame = same;
      }
    }
    if (best === null) break;
    applied.add(best);
    rules.push(`${additive ? "+" : "-"}@${best}`);
    for (const spec of selector.catalog.category(best)!) {
      if (additive) {
        described.add(spec.name);
        left.delete(spec.name);
      } else {
        described.delete(spec.name);
        left.add(spec.name);
      }
    }
  }
  for (const spec of selector.catalog.every) {
    const allowed = selector.allowed.has(spec.name);
    if (allowed !== described.has(spec.name)) {
      rules.push(`${allowed ? "+" : "-"}${spec.name}`);
      described[allowed ? "add" : "delete"](spec.name);
      // A container's rule covers its subcommands: the ones that differ from it follow it.
      for (const sub of spec.subcommands ?? []) {
        if (allowed) described.add(sub.name);
        else described.delete(sub.name);
      }
    }
    // The first arguments a refused command still allows follow it, as Redis writes them.
    if (!allowed) for (const arg of selector.firstArgs.get(spec.name) ?? []) rules.push(`+${spec.name}|${arg}`);
  }
  return rules.join(" ");
}

/** The key patterns as GETUSER's "keys" shows them: "~k* %R~a %W~b", "~*" for allkeys, "" for none. */
export function describeKeys(selector: AclSelector): string {
  if (selector.allKeys) return "~*";
  return selector.keyPatterns.map((p) => `${p.read && p.write ? "" : p.read ? "%R" : "%W"}~${p.pattern}`).join(" ");
}

/** The channel patterns as GETUSER's "channels" shows them: "&c*", "&*", "". */
export function describeChannels(selector: AclSelector): string {
  if (selector.allChannels) return "&*";
  return selector.channelPatterns.map((pattern) => `&${pattern}`).join(" ");
}

/** A selector as its rules: "~k* resetchannels &c -@all +get"; without every channel, the list starts from none. */
function describeSelector(selector: AclSelector): string {
  const parts: string[] = [];
  const keys = describeKeys(selector);
  if (keys !== "") parts.push(keys);
  if (!selector.allChannels) parts.push("resetchannels");
  const channels = describeChannels(selector);
  if (channels !== "") parts.push(channels);
  parts.push(describeCommands(selector));
  return parts.join(" ");
}

/** GETUSER's flags: on or off, then nopass and the payload check when set. */
export function userFlags(user: AclUser): string[] {
  const flags = [user.enabled ? "on" : "off"];
  if (user.nopass) flags.push("nopass");
  if (user.payloadCheck !== "") flags.push(user.payloadCheck);
  return flags;
}

/** The user as one ACL LIST line: "user alice on #… ~k* resetchannels &c* -@all +get (~s* resetchannels -@all +set)". */
export function describeUser(user: AclUser): string {
  const parts = ["user", user.name, ...userFlags(user)];
  for (const digest of user.passwords) parts.push(`#${digest}`);
  parts.push(describeSelector(user.root));
  for (const selector of user.selectors) parts.push(`(${describeSelector(selector)})`);
  return parts.join(" ");
}
