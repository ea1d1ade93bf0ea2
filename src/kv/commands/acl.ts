/**
 * ACL and its subcommands, as Redis 7.0 answers them (src/kv/acl/: the users, their rules, the
 * log). SAVE and LOAD use the ACL file (--aclfile, acl/acl-file.ts); without one they answer
 * Redis's error for a server without one.
 */
import { randomBytes } from "node:crypto";
import { defaultUser } from "../acl/passwords.ts";
import { allCategories } from "../kit/acl-categories.ts";
import { readAclFile, writeAclFile } from "../acl/acl-file.ts";
import { describeChannels, describeCommands, describeKeys, describeUser, userFlags } from "../acl/acl-description.ts";
import type { AclSelector } from "../acl/acl-selector.ts";
import { dryRunRefusal } from "../acl/acl-users.ts";
import { parseInt64 } from "../text/args.ts";
import { KvError, notAnInteger, subcommandSyntaxError } from "../text/errors.ts";
import type { Session } from "../server/session.ts";
import { disconnect } from "./connection.ts";
import { helpReply } from "../kit/help.ts";
import { type CommandFlag, type CommandSpec, type Exec, helpFlags, subcommandsOf } from "../kit/spec.ts";

/** Bits of a password ACL GENPASS makes unless told, and the most it makes. */
const genpassBitsDefault = 256;
const genpassBitsMax = 4096;

const noAclFile = () =>
  new KvError(
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.",
  );

/** CAT, WHOAMI and GENPASS: not administrative. */
const plainFlags: readonly CommandFlag[] = ["noscript", "loading", "stale"];

const sub = subcommandsOf("acl");

/** Disconnects the clients `which` picks (a copy of the list: disconnecting forgets a client). */
function disconnectClients(x: Exec, which: (session: Session) => boolean): void {
  for (const session of [...x.engine.sessions.values()]) if (which(session)) disconnect(x, session);
}

function setUser(x: Exec, argv: string[]): void {
  const user = x.engine.acl.setUser(argv[2]!, argv.slice(3));
  // A client of the user subscribed to a channel or pattern it may no longer use is
  // disconnected, as Redis 7.0 does, rather than left hearing what it is now refused.
  const lost = (channels: Iterable<string>, patterns: boolean) => [...channels].some((c) => !user.mayAccessChannel(c, patterns));
  disconnectClients(x, (s) => s.user === user && (lost(s.channels, false) || lost(s.shardChannels, false) || lost(s.patterns, true)));
  x.reply.simple("OK");
}

function getUser(x: Exec, argv: string[]): void {
  const user = x.engine.acl.get(argv[2]!);
  if (user === undefined) return x.reply.bulk(null);
  const r = x.reply;
  r.map(6);
  r.bulk("flags");
  const flags = userFlags(user);
  r.array(flags.length);
  for (const flag of flags) r.bulk(flag);
  r.bulk("passwords");
  r.array(user.passwords.size);
  for (const digest of user.passwords) r.bulk(digest);
  writeSelectorFields(x, user.root);
  r.bulk("selectors");
  r.array(user.selectors.length);
  for (const selector of user.selectors) {
    r.map(3);
    writeSelectorFields(x, selector);
  }
}

/** A selector's "commands", "keys" and "channels" fields, as GETUSER gives them (the root's at the top). */
function writeSelectorFields(x: Exec, selector: AclSelector): void {
  x.reply.bulk("commands");
  x.reply.bulk(describeCommands(selector));
  x.reply.bulk("keys");
  x.reply.bulk(describeKeys(selector));
  x.reply.bulk("channels");
  x.reply.bulk(describeChannels(selector));
}

function deleteUsers(x: Exec, argv: string[]): void {
  const deleted = x.engine.acl.deleteUsers(argv.slice(2));
  // Their clients are logged out the way Redis does it: disconnected.
  disconnectClients(x, (s) => s.user !== null && deleted.includes(s.user));
  x.reply.integer(deleted.length);
}

/**
 * CAT, GENPASS and LOG take one argument at most; more is refused as Redis words it, naming the
 * subcommand as typed.
 */
function atMostOneArgument(argv: string[]): void {
  if (argv.length > 3) throw subcommandSyntaxError("ACL", argv[1]!);
}

function cat(x: Exec, argv: string[]): void {
  atMostOneArgument(argv);
  if (argv.length === 2) {
    x.reply.array(allCategories.length);
    for (const category of allCategories) x.reply.bulk(category);
    return;
  }
  const commands = x.engine.acl.catalog.category(argv[2]!);
  if (commands === undefined) throw new KvError(`ERR Unknown category '${argv[2]}'`);
  x.reply.array(commands.length);
  for (const spec of commands) x.reply.bulk(spec.name);
}

function genpass(x: Exec, argv: string[]): void {
  atMostOneArgument(argv);
  const bits = argv.length === 3 ? parseInt64(argv[2]!) : BigInt(genpassBitsDefault);
  if (bits === null) throw notAnInteger();
  if (bits <= 0n || bits > BigInt(genpassBitsMax)) {
    throw new KvError("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
  }
  const hexDigits = Math.ceil(Number(bits) / 4);
  x.reply.bulk(
    randomBytes(Math.ceil(hexDigits / 2))
      .toString("hex")
      .slice(0, hexDigits),
  );
}

function log(x: Exec, argv: string[]): void {
  atMostOneArgument(argv);
  const acl = x.engine.acl;
  let count = acl.log.entries.length;
  if (argv.length === 3) {
    if (argv[2]!.toUpperCase() === "RESET") {
      acl.log.reset();
      return x.reply.simple("OK");
    }
    const n = parseInt64(argv[2]!);
    if (n === null) throw notAnInteger();
    // A count below zero lists nothing, as in Redis.
    count = n < 0n ? 0 : Math.min(count, Number(n));
  }
  const nowMs = Date.now();
  x.reply.array(count);
  for (const entry of acl.log.entries.slice(0, count)) {
    x.reply.map(7);
    x.reply.bulk("count");
    x.reply.integer(entry.count);
    x.reply.bulk("reason");
    x.reply.bulk(entry.reason);
    x.reply.bulk("context");
    x.reply.bulk(entry.context);
    x.reply.bulk("object");
    x.reply.bulk(entry.object);
    x.reply.bulk("username");
    x.reply.bulk(entry.username);
    x.reply.bulk("age-seconds");
    x.reply.double((nowMs - entry.createdMs) / 1000);
    x.reply.bulk("client-info");
    x.reply.bulk(entry.clientInfo);
  }
}

/** The ACL file's path (--aclfile); throws Redis's error when there is none. */
function aclFile(x: Exec): string {
  const path = x.engine.config.get("aclfile") ?? "";
  if (path === "") throw noAclFile();
  return path;
}

/** ACL LOAD: the file's users replace all of them; clients of the users replaced are disconnected, as in Redis. */
function load(x: Exec): void {
  const replaced = x.engine.acl.replaceAll(readAclFile(aclFile(x), x.engine.acl));
  disconnectClients(x, (s) => s.user !== null && replaced.includes(s.user));
  x.reply.simple("OK");
}

function save(x: Exec): void {
  const path = aclFile(x);
  try {
    writeAclFile(path, x.engine.acl);
  } catch (error) {
    x.engine.log.error({ path, err: error }, "could not save the ACL file");
    throw new KvError("ERR There was an error trying to save the ACLs. Please check the server logs for more information");
  }
  x.reply.simple("OK");
}

function dryRun(x: Exec, argv: string[]): void {
  const user = x.engine.acl.get(argv[2]!);
  if (user === undefined) throw new KvError(`ERR User '${argv[2]}' not found`);
  const commandArgv = argv.slice(3);
  const resolved = x.engine.resolve(commandArgv);
  if (typeof resolved === "string") {
    // An unknown command or subcommand is "not found"; a wrong count of arguments says so.
    if (/^ERR unknown (sub)?command/.test(resolved)) throw new KvError(`ERR Command '${commandArgv[0]}' not found`);
    throw new KvError(resolved);
  }
  const refusal = x.engine.acl.refusal(user, resolved, commandArgv);
  if (refusal === null) x.reply.simple("OK");
  else x.reply.bulk(dryRunRefusal(refusal));
}

export const aclCommands: readonly CommandSpec[] = [
  {
    name: "acl",
    arity: -2,
    flags: [],
    group: "server",
    summary: "Users, their permissions, and what they were refused.",
    subcommands: [
      sub("setuser", -3, "Makes or changes a user by its rules.", setUser),
      sub("getuser", 3, "Shows a user's rules.", getUser),
      sub("log", -2, "Shows what users were refused, newest first.", log),
      sub("users", 2, "Lists the users' names.", (x) => {
        const users = x.engine.acl.all();
        x.reply.array(users.length);
        for (const user of users) x.reply.bulk(user.name);
      }),
      sub("list", 2, "Lists the users, one line of rules each.", (x) => {
        const users = x.engine.acl.all();
        x.reply.array(users.length);
        for (const user of users) x.reply.bulk(describeUser(user));
      }),
      sub("deluser", -3, "Deletes users, disconnecting their clients.", deleteUsers),
      sub("cat", -2, "Lists the categories, or a category's commands.", cat, plainFlags),
      sub("load", 2, "Loads the users from the ACL file, all or none.", load),
      sub("save", 2, "Saves the users to the ACL file.", save),
      sub("dryrun", -4, "Whether a user may run a command, without running it.", dryRun),
      sub("whoami", 2, "The client's user.", (x) => x.reply.bulk(x.session.user?.name ?? defaultUser), plainFlags),
      sub("genpass", -2, "Makes a random password.", genpass, plainFlags),
      sub(
        "help",
        2,
        "Shows ACL's subcommands.",
        (x) =>
          helpReply(x, "ACL", [
            "CAT [<category>]",
            "    Return the command categories, or the commands of <category>.",
            "DELUSER <username> [<username> ...]",
            "    Delete the users and disconnect their clients.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Return OK if the user may run the command, or why not; nothing is run.",
            "GETUSER <username>",
            "    Return the user's flags, passwords, commands, keys and channels.",
            "GENPASS [<bits>]",
            "    Return a random password of <bits> bits as hex (default 256).",
            "LIST",
            "    Return each user as one line of rules, as the ACL file holds it.",
            "LOAD",
            "    Replace every user with the ACL file's, or none if a line is bad.",
            "LOG [<count> | RESET]",
            "    Return the newest <count> refusals and failed logins, or empty the log.",
            "SAVE",
            "    Write every user to the ACL file.",
            "SETUSER <username> <rule> [<rule> ...]",
            "    Make or change the user by its rules, all of them or none.",
            "USERS",
            "    Return the users' names.",
            "WHOAMI",
            "    Return the name of this connection's user.",
          ]),
        helpFlags,
      ),
    ],
  },
];
