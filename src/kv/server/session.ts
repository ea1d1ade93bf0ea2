/**
 * One client's state: its selected database, name, transaction, watched keys, subscriptions and
 * blocking state. The RESP server creates one per connection; the REST API one per request.
 */
import type { AclUser } from "../acl/acl-user.ts";
import type { CommandShape } from "../kit/command-info.ts";
import type { Reply } from "../kit/reply.ts";
import type { ClientTracking } from "./tracking.ts";

/** A command waiting in MULTI, resolved (and so checked) when it was queued. */
export interface QueuedCommand {
  spec: CommandShape;
  argv: string[];
}

export interface Transport {
  /** Address "ip:port" of the peer and of our end, for CLIENT LIST. */
  readonly peer: string;
  readonly local: string;
  /** Sends what the session's reply writer holds now (pub/sub messages, blocked-command replies). */
  flush(): void;
  /** Closes the connection after pending output is written. */
  close(): void;
  /** The bytes a connection holds for its client (CLIENT LIST, INFO clients); a REST request holds none. */
  memory?(): ClientMemory;
  /** Where the reply writer's output ends now, and drops what was written after such a point. */
  outputMark?(): number;
  dropOutputFrom?(mark: number): void;
}

/**
 * Runs `answer`, which replies to a blocked client out of its turn (served, timed out, or
 * unblocked by CLIENT UNBLOCK). With CLIENT REPLY OFF what it wrote is dropped: Redis writes no
 * reply to such a client, whenever it comes.
 */
export function answerBlocked<T>(session: Session, answer: () => T): T {
  const transport = session.transport;
  if (!session.repliesOff || transport?.outputMark === undefined) return answer();
  const mark = transport.outputMark();
  try {
    return answer();
  } finally {
    transport.dropOutputFrom?.(mark);
  }
}

/**
 * Writes a push — a pub/sub message, or a (P|S)SUBSCRIBE or UNSUBSCRIBE confirmation — that the
 * client gets even while its command's answer is dropped: Redis 7.0 writes these whatever CLIENT
 * REPLY says (its CLIENT_PUSHING). What the command wrote before it is still dropped.
 */
export function writePush(session: Session, write: () => void): void {
  const from = session.silencedFrom;
  const transport = session.transport;
  if (from === null || !(session.repliesOff || session.skippingReply) || transport?.outputMark === undefined) return write();
  transport.dropOutputFrom?.(from);
  write();
  session.silencedFrom = transport.outputMark();
}

/** Peer addresses of this machine: IPv4's and IPv6's loopback, and the first as IPv6 writes it. */
const loopbackAddresses: ReadonlySet<string> = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/**
 * Whether the client connects from this machine, as Redis's islocalClient decides (its loopback
 * address); a session of no connection (the server's own) is. A REST request counts by its peer.
 */
export function isLocalClient(session: Session): boolean {
  const peer = session.transport?.peer;
  if (peer === undefined) return true;
  return loopbackAddresses.has(peer.slice(0, peer.lastIndexOf(":")));
}

/** The bytes of a command's arguments, as Redis's argv_len_sum counts them. */
export function argvBytesOf(argv: readonly string[]): number {
  let bytes = 0;
  for (const arg of argv) bytes += arg.length;
  return bytes;
}

export interface ClientMemory {
  /**
   * The query buffer as Redis's CLIENT LIST counts it: the unparsed input and the commands held
   * back — and while the client's commands run, everything its read brought (Redis trims its
   * buffer once the read's commands have run).
   */
  queryBytes: number;
  /** What the input buffer has room for besides. */
  queryFreeBytes: number;
  /** The arguments of the command running, blocked, or cut off by the end of a read (argv-mem). */
  argvBytes: number;
  /** Replies not yet taken by the socket. */
  outputBytes: number;
  /** The reply buffer's size, whatever it holds now. */
  replyBufferBytes: number;
}

export interface BlockedState {
  dbIndex: number;
  keys: string[];
  /** Unix ms after which the client gets its timeout reply; Infinity for none. */
  deadlineMs: number;
  /** Tries to serve the client from `key`, which just got elements; true when it was served. */
  tryServe(key: string): boolean;
  /** Answers the timeout (a null reply). */
  timeout(): void;
  timer?: ReturnType<typeof setTimeout>;
  /**
   * The command that blocked, set by the engine once it has: when it is served, the time serving
   * took goes to its statistics and SLOWLOG (Engine.blockedServed), as Redis records it then.
   */
  command?: { spec: CommandShape; argv: string[] /** What the call that blocked took, µs. */; micros: number };
}

/** Sessions by name — a channel, a pattern, a watched or waited-on key — with no empty sets. */
export type SessionIndex = Map<string, Set<Session>>;

export function addToIndex(index: SessionIndex, name: string, session: Session): void {
  const set = index.get(name);
  if (set === undefined) index.set(name, new Set([session]));
  else set.add(session);
}

export function removeFromIndex(index: SessionIndex, name: string, session: Session): void {
  const set = index.get(name);
  if (set === undefined) return;
  set.delete(session);
  if (set.size === 0) index.delete(name);
}

let nextSessionId = 0;

export class Session {
  readonly id = ++nextSessionId;
  readonly createdMs = Date.now();
  name = "";
  /** CLIENT NO-EVICT: shown in CLIENT LIST's flags (svc evicts no clients either way). */
  noEvict = false;
  dbIndex = 0;
  /** Logged in; set by the engine when the client connects (engine.logInAsDefault), then by AUTH. */
  authenticated = true;
  /**
   * The ACL user the client runs as: the default user once the engine registers the client,
   * until AUTH names another. Null for the server's own session that loads the append-only file,
   * which no ACL applies to.
   */
  user: AclUser | null = null;
  lastCommand = "NULL";
  lastInteractionMs = Date.now();
  /** Queued commands while in MULTI; null outside. */
  multi: QueuedCommand[] | null = null;
  /** A command failed to queue: EXEC must answer EXECABORT. */
  multiFailed = false;
  /** EXEC is running the queue: blocking commands answer at once instead of blocking. */
  inExec = false;
  /**
   * The queue EXEC is running, for CLIENT LIST/INFO: Redis leaves a client in MULTI (flag x, its
   * count and memory) until its EXEC has run every command.
   */
  execQueue: readonly QueuedCommand[] | null = null;
  /** A script is running its commands (MONITOR shows them as the "lua" client's, as Redis does). */
  inScript = false;
  /** Watched keys as "db\0key" → whether the key had expired (and was still there) when watched. */
  readonly watched = new Map<string, { dbIndex: number; key: string; expired: boolean }>();
  /** A watched key changed: EXEC must fail. */
  watchDirty = false;
  readonly channels = new Set<string>();
  readonly patterns = new Set<string>();
  readonly shardChannels = new Set<string>();
  blocked: BlockedState | null = null;
  /** Set by QUIT and CLIENT KILL: close once the reply is sent. */
  closing = false;
  /** The session replaying the append-only file at start (Engine.replay). */
  replaying = false;
  /** CLIENT REPLY OFF: the client's commands are answered with nothing until CLIENT REPLY ON. */
  repliesOff = false;
  /** CLIENT REPLY SKIP: the next command is answered with nothing. */
  skipNextReply = false;
  /** The running command is the one CLIENT REPLY SKIP skips (CLIENT REPLY ON clears it, and is answered). */
  skippingReply = false;
  /**
   * While a command whose answer is dropped runs (replies off, or skipped): where in the output
   * what is to be dropped begins. Pushes move it past themselves (writePush).
   */
  silencedFrom: number | null = null;
  /** CLIENT TRACKING's state while it is on (tracking.ts). */
  tracking: ClientTracking | null = null;

  constructor(
    readonly reply: Reply,
    readonly transport: Transport | null,
  ) {}

  /** Whether a blocking command may block: not inside EXEC, and not for a REST request. */
  get mayBlock(): boolean {
    return !this.inExec && this.transport !== null;
  }

  /** Channel and pattern subscriptions: what (P)SUBSCRIBE's replies count. */
  get subscriptions(): number {
    return this.channels.size + this.patterns.size;
  }

  /** Whether the client is subscribed to anything, shard channels included (the pub/sub context). */
  get subscribed(): boolean {
    return this.channels.size + this.patterns.size + this.shardChannels.size > 0;
  }

  subscribedTo(kind: "channel" | "pattern" | "shard"): Set<string> {
    return kind === "channel" ? this.channels : kind === "pattern" ? this.patterns : this.shardChannels;
  }
}
