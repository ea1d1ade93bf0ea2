/**
 * Connection commands: PING, ECHO, SELECT, SWAPDB, QUIT, RESET, HELLO and CLIENT.
 */
import { parseInt64 } from "../text/args.ts";
import type { Server } from "../kit/server.ts";
import { defaultUser } from "../acl/passwords.ts";
import { arityError, KvError, notAnInteger, subcommandSyntaxError, syntaxError } from "../text/errors.ts";
import { answerBlocked, argvBytesOf, type Session } from "../server/session.ts";
import { dbIndex } from "../kit/lookup.ts";
import { helpReply } from "../kit/help.ts";
import { helpFlags } from "../kit/spec.ts";
import { redisCompatibleVersion } from "../server/version.ts";
import type { CommandSpec, Exec } from "../kit/spec.ts";
import { endTransaction } from "./transactions.ts";
import { clientCaching, clientTracking, clientTrackingInfo } from "./client-tracking.ts";

function ping(x: Exec, argv: string[]): void {
  if (argv.length > 2) throw arityError("ping");
  // A subscribed RESP2 client gets PING's answer as a pub/sub style array; over RESP3 pushes are
  // told apart by their type, so PING answers as usual.
  if (x.session.subscribed && x.session.reply.protocol === 2) {
    x.reply.array(2);
    x.reply.bulk("pong");
    x.reply.bulk(argv[1] ?? "");
    return;
  }
  if (argv.length === 2) x.reply.bulk(argv[1]!);
  else x.reply.simple("PONG");
}

const wrongPass = () => new KvError("WRONGPASS invalid username-password pair or user is disabled.");

/**
 * Logs the client in as `username` (AUTH, HELLO AUTH: `command`), or throws WRONGPASS and logs
 * the attempt in ACL LOG. A failed attempt leaves a client logged in as it was, as in Redis.
 */
function logIn(x: Exec, command: string, username: string, password: string): void {
  const user = x.engine.acl.authenticate(username, password);
  if (user === null) {
    // The command is logged as the client typed its name, as Redis does.
    x.engine.acl.logRefusal("auth", "toplevel", command, username, clientLine(x.engine, x.session), Date.now());
    throw wrongPass();
  }
  x.session.user = user;
  x.session.authenticated = true;
}

function auth(x: Exec, argv: string[]): void {
  if (argv.length > 3) throw syntaxError();
  const password = argv.at(-1)!;
  if (argv.length === 2 && x.engine.acl.defaultUser.nopass) {
    throw new KvError("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
  }
  logIn(x, argv[0]!, argv.length === 3 ? argv[1]! : defaultUser, password);
  x.reply.simple("OK");
}

function hello(x: Exec, argv: string[]): void {
  let i = 1;
  if (argv.length > 1) {
    const version = parseInt64(argv[1]!);
    if (version === null) throw new KvError("ERR Protocol version is not an integer or out of range");
    if (version !== 2n && version !== 3n) throw new KvError("NOPROTO unsupported protocol version");
    i = 2;
  }
  // As in Redis, AUTH takes effect where it stands among the options: a login before a bad
  // option sticks, one after it never happens. The name is checked and set only at the end.
  let name: string | null = null;
  for (; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "SETNAME" && i + 1 < argv.length) name = argv[++i]!;
    else if (word === "AUTH" && i + 2 < argv.length) {
      logIn(x, argv[0]!, argv[i + 1]!, argv[i + 2]!);
      i += 2;
    } else throw new KvError(`ERR Syntax error in HELLO option '${argv[i]}'`);
  }
  if (!x.session.authenticated) {
    throw new KvError(
      "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
    );
  }
  if (name !== null) setName(x.session, name);
  // The reply to HELLO is already in the protocol it switches to, as in Redis.
  if (argv.length > 1) x.reply.protocol = Number(argv[1]) as 2 | 3;
  const fields: [string, string | number][] = [
    ["server", "redis"],
    ["version", redisCompatibleVersion],
    ["proto", x.reply.protocol],
    ["id", x.session.id],
    ["mode", "standalone"],
    ["role", "master"],
  ];
  x.reply.map(fields.length + 1);
  for (const [name, value] of fields) {
    x.reply.bulk(name);
    if (typeof value === "number") x.reply.integer(value);
    else x.reply.bulk(value);
  }
  x.reply.bulk("modules");
  x.reply.array(0);
}

function setName(session: Session, name: string): void {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 33 || c > 126) throw new KvError("ERR Client names cannot contain spaces, newlines or special characters.");
  }
  session.name = name;
}

/** What Redis counts for each argument of a command queued in MULTI besides its bytes: a pointer (sizeof(robj*)). */
const queuedArgPointerBytes = 8;

/**
 * CLIENT LIST's flags, in Redis 7.0's order: O monitor, P subscribed, x in MULTI, b blocked,
 * t tracking (R its redirect gone, B broadcast), d a watched key changed, c closing after the
 * reply, e CLIENT NO-EVICT on; N for none.
 */
function clientFlags(engine: Server, s: Session): string {
  const t = s.tracking;
  let flags = "";
  if (engine.monitors.has(s)) flags += "O";
  if (s.subscribed) flags += "P";
  if (s.multi !== null || s.execQueue !== null) flags += "x";
  if (s.blocked !== null) flags += "b";
  if (t !== null) flags += `t${t.brokenRedirect ? "R" : ""}${t.bcast ? "B" : ""}`;
  if (s.watchDirty) flags += "d";
  if (s.closing) flags += "c";
  if (s.noEvict) flags += "e";
  return flags || "N";
}

/**
 * One line of CLIENT LIST for a session: Redis 7.0's fields in its order. What the connection
 * holds is counted as Redis counts it — qbuf its query buffer (a read's bytes while its commands
 * run), argv-mem the arguments of the command running, blocked or half read, multi-mem what MULTI
 * queued — while the sizes of buffers (qbuf-free, rbs, rbp, tot-mem) are svc's own, and fd, obl
 * and oll, which have no counterpart, read -1 and 0.
 */
export function clientLine(engine: Server, s: Session): string {
  const now = engine.clock.nowMs();
  const t = s.tracking;
  const mem = s.transport?.memory?.() ?? { queryBytes: 0, queryFreeBytes: 0, argvBytes: 0, outputBytes: 0, replyBufferBytes: 0 };
  let multiBytes = 0;
  const multi = s.multi ?? s.execQueue;
  for (const queued of multi ?? []) multiBytes += argvBytesOf(queued.argv) + queued.argv.length * queuedArgPointerBytes;
  return [
    `id=${s.id}`,
    `addr=${s.transport?.peer ?? ""}`,
    `laddr=${s.transport?.local ?? ""}`,
    "fd=-1",
    `name=${s.name}`,
    `age=${Math.floor((now - s.createdMs) / 1000)}`,
    `idle=${Math.floor((now - s.lastInteractionMs) / 1000)}`,
    `flags=${clientFlags(engine, s)}`,
    `db=${s.dbIndex}`,
    `sub=${s.channels.size}`,
    `psub=${s.patterns.size}`,
    `ssub=${s.shardChannels.size}`,
    `multi=${multi === null ? -1 : multi.length}`,
    `qbuf=${mem.queryBytes}`,
    `qbuf-free=${mem.queryFreeBytes}`,
    `argv-mem=${mem.argvBytes}`,
    `multi-mem=${multiBytes}`,
    `rbs=${mem.replyBufferBytes}`,
    `rbp=${mem.replyBufferBytes}`,
    "obl=0",
    "oll=0",
    `omem=${mem.outputBytes}`,
    `tot-mem=${mem.queryBytes + mem.queryFreeBytes + mem.argvBytes + multiBytes + mem.outputBytes + mem.replyBufferBytes}`,
    "events=r",
    `cmd=${s.lastCommand}`,
    `user=${s.user?.name ?? defaultUser}`,
    `redir=${t === null ? -1 : t.redirect}`,
    `resp=${s.reply.protocol}`,
  ].join(" ");
}

function clientKill(x: Exec, argv: string[]): void {
  const sessions = [...x.engine.sessions.values()];
  if (argv.length === 3) {
    // The old form: CLIENT KILL addr:port, answering OK or an error.
    const target = sessions.find((s) => s.transport?.peer === argv[2]);
    if (target === undefined) throw new KvError("ERR No such client");
    disconnect(x, target);
    return x.reply.simple("OK");
  }
  const filters: ((s: Session) => boolean)[] = [];
  let skipMe = true;
  for (let i = 2; i < argv.length; i += 2) {
    const word = argv[i]!.toUpperCase();
    const value = argv[i + 1];
    if (value === undefined) throw syntaxError();
    if (word === "ID") {
      const id = parseInt64(value);
      if (id === null || id <= 0n) throw new KvError("ERR client-id should be greater than 0");
      filters.push((s) => BigInt(s.id) === id);
    } else if (word === "ADDR") filters.push((s) => s.transport?.peer === value);
    else if (word === "LADDR") filters.push((s) => s.transport?.local === value);
    else if (word === "SKIPME") {
      const v = value.toLowerCase();
      if (v !== "yes" && v !== "no") throw syntaxError();
      skipMe = v === "yes";
    } else if (word === "TYPE") {
      const type = value.toLowerCase();
      if (!["normal", "pubsub", "master", "replica", "slave"].includes(type)) throw new KvError(`ERR Unknown client type '${value}'`);
      filters.push((s) => (type === "pubsub" ? s.subscribed : type === "normal" && !s.subscribed));
    } else if (word === "USER") {
      const user = x.engine.acl.get(value);
      if (user === undefined) throw new KvError(`ERR No such user '${value}'`);
      filters.push((s) => (s.user ?? x.engine.acl.defaultUser) === user);
    } else throw syntaxError();
  }
  const victims = sessions.filter((s) => (!skipMe || s !== x.session) && filters.every((f) => f(s)));
  for (const s of victims) disconnect(x, s);
  x.reply.integer(victims.length);
}

/**
 * CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking command (BLPOP, WAIT ...) as
 * if it had timed out — its own timeout reply — or with an UNBLOCKED error; 1 if it was blocked.
 */
function clientUnblock(x: Exec, argv: string[]): void {
  if (argv.length > 4) throw subcommandSyntaxError("CLIENT", argv[1]!);
  // The reason is checked before the id is read, as Redis's clientCommand does.
  const reason = argv.length === 4 ? argv[3]!.toUpperCase() : "TIMEOUT";
  if (reason !== "TIMEOUT" && reason !== "ERROR") throw new KvError("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
  const id = parseInt64(argv[2]!);
  if (id === null) throw notAnInteger();
  const target = id > 0n && id <= BigInt(Number.MAX_SAFE_INTEGER) ? x.engine.sessions.get(Number(id)) : undefined;
  const state = target?.blocked ?? null;
  if (target === undefined || state === null) return x.reply.integer(0);
  x.engine.blocking.unblock(target);
  if (reason === "TIMEOUT") answerBlocked(target, () => state.timeout());
  else {
    answerBlocked(target, () => target.reply.error("UNBLOCKED client unblocked via CLIENT UNBLOCK"));
    target.transport?.flush();
    // Redis counts the error reply it sent the target against the command that sent it: CLIENT
    // UNBLOCK … ERROR is itself a failed call in 7.0.15's commandstats.
    x.failed = true;
  }
  x.engine.unblockedByClient(target, state);
  x.reply.integer(1);
}

/**
 * Closes a session's connection once its pending replies are written. Another client is also
 * forgotten at once — its blocking, subscriptions and watches — as Redis frees it on the spot: a
 * push or a PUBLISH later in the same pipeline must not go to a client that is already gone.
 */
export function disconnect(x: Exec, target: Session): void {
  target.closing = true;
  if (target === x.session) return;
  x.engine.unregister(target);
  target.transport?.close();
}

function client(x: Exec, argv: string[]): void {
  const sub = argv[1]!.toLowerCase();
  const s = x.session;
  switch (sub) {
    case "id":
      return x.reply.integer(s.id);
    case "getname":
      return x.reply.bulk(s.name === "" ? null : s.name);
    case "setname":
      setName(s, argv[2]!);
      return x.reply.simple("OK");
    case "list":
      return x.reply.verbatim(
        listedClients(x, argv)
          .map((t) => `${clientLine(x.engine, t)}\n`)
          .join(""),
      );
    case "info":
      return x.reply.verbatim(`${clientLine(x.engine, s)}\n`);
    case "kill":
      return clientKill(x, argv);
    case "unblock":
      return clientUnblock(x, argv);
    case "tracking":
      return clientTracking(x, argv);
    case "trackinginfo":
      return clientTrackingInfo(x);
    case "getredir":
      return x.reply.integer(s.tracking === null ? -1 : s.tracking.redirect);
    case "caching":
      return clientCaching(x, argv);
    case "pause":
      return clientPause(x, argv);
    case "reply":
      return clientReply(x, argv);
    case "unpause":
      x.engine.clientPause.unpause();
      return x.reply.simple("OK");
    case "no-evict": {
      const v = argv[2]!.toLowerCase();
      if (v !== "on" && v !== "off") throw syntaxError();
      s.noEvict = v === "on";
      return x.reply.simple("OK");
    }
    default:
      return helpReply(x, "CLIENT", [
        "ID",
        "GETNAME",
        "SETNAME <name>",
        "LIST",
        "INFO",
        "KILL <ip:port> | <filter> <value> ...",
        "NO-EVICT (ON|OFF)",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> ...] [OPTIN] [OPTOUT] [NOLOOP]",
        "TRACKINGINFO",
        "GETREDIR",
        "CACHING (YES|NO)",
        "PAUSE <timeout> [WRITE|ALL]",
        "UNPAUSE",
        "REPLY (ON|OFF|SKIP)",
      ]);
  }
}

function reset(x: Exec): void {
  const s = x.session;
  endTransaction(x);
  x.engine.pubsub.forget(s);
  x.engine.monitors.delete(s);
  x.engine.tracking.disable(s);
  s.repliesOff = s.skipNextReply = false;
  s.dbIndex = 0;
  s.name = "";
  x.engine.logInAsDefault(s);
  x.reply.protocol = 2;
  x.reply.simple("RESET");
}

/**
 * MONITOR: from now on the client is shown every command the server runs (monitor.ts). Inside
 * EXEC it cannot be, as in Redis; a client already monitoring is ignored, without a reply.
 */
function monitor(x: Exec): void {
  if (x.session.inExec) throw new KvError("ERR MONITOR isn't allowed for DENY BLOCKING client");
  if (x.engine.monitors.has(x.session)) return;
  x.engine.monitors.add(x.session);
  x.reply.simple("OK");
}

/**
 * The clients CLIENT LIST [TYPE normal|master|replica|slave|pubsub] [ID id …] names: every one,
 * or those of a type (svc has no replicas or masters), or those of the IDs given, in their order.
 */
function listedClients(x: Exec, argv: string[]): Session[] {
  const sessions = [...x.engine.sessions.values()];
  if (argv.length === 2) return sessions;
  const option = argv[2]!.toUpperCase();
  if (option === "TYPE" && argv.length === 4) {
    const type = argv[3]!.toLowerCase();
    if (type === "normal") return sessions.filter((s) => !s.subscribed);
    if (type === "pubsub") return sessions.filter((s) => s.subscribed);
    if (type === "master" || type === "replica" || type === "slave") return [];
    throw new KvError(`ERR Unknown client type '${argv[3]}'`);
  }
  if (option !== "ID" || argv.length < 4) throw syntaxError();
  const listed: Session[] = [];
  for (const word of argv.slice(3)) {
    const id = parseInt64(word);
    if (id === null) throw new KvError("ERR Invalid client ID");
    const session = x.engine.sessions.get(Number(id));
    if (session !== undefined) listed.push(session);
  }
  return listed;
}

/** CLIENT's subcommands that act on other connections are administrative, as in Redis (MONITOR does not show them). */
const adminClientSubs = new Set(["list", "kill", "no-evict", "unblock", "pause", "unpause"]);

/** CLIENT PAUSE timeout [WRITE|ALL]: milliseconds, checked as Redis checks them. */
function clientPause(x: Exec, argv: string[]): void {
  if (argv.length > 4) throw subcommandSyntaxError("CLIENT", argv[1]!);
  const ms = parseInt64(argv[2]!);
  if (ms === null) throw new KvError("ERR timeout is not an integer or out of range");
  if (ms < 0n) throw new KvError("ERR timeout is negative");
  const mode = argv[3]?.toUpperCase() ?? "ALL";
  if (mode !== "WRITE" && mode !== "ALL") throw new KvError("ERR CLIENT PAUSE mode must be WRITE or ALL");
  // setTimeout's delay is a signed 32-bit number of ms: a longer pause is as good as for ever.
  x.engine.clientPause.pause(Math.min(Number(ms), clientPauseMsMax), mode === "ALL");
  x.reply.simple("OK");
}

/** CLIENT REPLY ON|OFF|SKIP; OFF and SKIP answer nothing themselves. */
function clientReply(x: Exec, argv: string[]): void {
  const s = x.session;
  const mode = argv[2]!.toLowerCase();
  if (mode === "on") {
    s.repliesOff = s.skipNextReply = s.skippingReply = false;
    x.reply.simple("OK");
  } else if (mode === "off") s.repliesOff = true;
  // A SKIP while replies are off changes nothing, as in Redis.
  else if (mode === "skip") s.skipNextReply = !s.repliesOff;
  else throw syntaxError();
}

/** The longest pause a timer holds: about 24.8 days. */
const clientPauseMsMax = 2 ** 31 - 1;

const clientSub = (name: string, arity: number, summary: string): CommandSpec => ({
  name: `client|${name}`,
  arity,
  group: "connection",
  summary,
  run: client,
  // HELP is only text: Redis flags it as it flags every container's HELP.
  flags: name === "help" ? helpFlags : adminClientSubs.has(name) ? ["admin", "noscript", "loading", "stale"] : ["noscript", "loading", "stale"],
});

export const connectionCommands: readonly CommandSpec[] = [
  { name: "ping", arity: -1, flags: ["fast"], group: "connection", summary: "Returns PONG, or the message.", run: ping },
  {
    name: "echo",
    arity: 2,
    flags: ["fast", "loading", "stale"],
    group: "connection",
    summary: "Returns the message.",
    run: (x, argv) => x.reply.bulk(argv[1]!),
  },
  {
    name: "select",
    arity: 2,
    flags: ["loading", "stale", "fast"],
    group: "connection",
    summary: "Changes the selected database.",
    run: (x, argv) => {
      x.session.dbIndex = dbIndex(x, argv[1]!);
      x.reply.simple("OK");
    },
  },
  {
    name: "swapdb",
    arity: 3,
    flags: ["write", "fast"],
    group: "server",
    summary: "Swaps two databases.",
    run: (x, argv) => {
      const a = dbIndex(x, argv[1]!, () => new KvError("ERR invalid first DB index"));
      const b = dbIndex(x, argv[2]!, () => new KvError("ERR invalid second DB index"));
      if (a !== b) x.engine.dbs[a]!.swapWith(x.engine.dbs[b]!);
      x.reply.simple("OK");
    },
  },
  {
    name: "quit",
    arity: -1,
    flags: ["allow_busy", "noscript", "loading", "stale", "fast", "no_auth"],
    group: "connection",
    summary: "Closes the connection.",
    run: (x) => {
      x.session.closing = true;
      x.reply.simple("OK");
    },
  },
  {
    name: "auth",
    arity: -2,
    flags: ["noscript", "loading", "stale", "fast", "no_auth", "allow_busy"],
    group: "connection",
    summary: "Authenticates the connection.",
    run: auth,
  },
  {
    name: "monitor",
    arity: 1,
    flags: ["admin", "noscript", "loading", "stale"],
    group: "server",
    summary: "Shows every command the server runs, as it runs.",
    run: monitor,
  },
  {
    name: "reset",
    arity: 1,
    flags: ["noscript", "loading", "stale", "fast", "no_auth", "allow_busy"],
    group: "connection",
    summary: "Resets the connection's state.",
    run: reset,
  },
  {
    name: "hello",
    arity: -1,
    flags: ["noscript", "loading", "stale", "fast", "no_auth", "allow_busy"],
    group: "connection",
    summary: "Handshakes with the server (RESP2 only).",
    run: hello,
  },
  {
    name: "client",
    arity: -2,
    flags: [],
    group: "connection",
    summary: "Connection management.",
    subcommands: [
      clientSub("id", 2, "Returns the connection's id."),
      clientSub("getname", 2, "Returns the connection's name."),
      clientSub("setname", 3, "Names the connection."),
      clientSub("list", -2, "Lists the open connections."),
      clientSub("info", 2, "Describes this connection."),
      clientSub("kill", -3, "Closes connections."),
      clientSub("no-evict", 3, "Accepted; svc does not evict clients."),
      clientSub("unblock", -3, "Ends another client's blocking command."),
      clientSub("tracking", -3, "Turns client-side caching's invalidation messages on or off."),
      clientSub("trackinginfo", 2, "Describes the connection's client-side caching."),
      clientSub("getredir", 2, "Returns the client the connection's invalidation messages go to."),
      clientSub("caching", 3, "Chooses whether the next command's keys are tracked (OPTIN, OPTOUT)."),
      clientSub("pause", -3, "Holds clients' commands, or their writes, for a time."),
      clientSub("unpause", 2, "Ends CLIENT PAUSE."),
      clientSub("reply", 3, "Turns the connection's replies off, on, or off for the next command."),
      clientSub("help", 2, "Shows CLIENT's subcommands."),
    ],
  },
];
