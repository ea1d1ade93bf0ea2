/**
 * The kv engine: the databases, the sessions connected to them, and `execute()`, the one path
 * every command takes — from a RESP connection or from the REST API's /cmd. It checks the command
 * the way Redis's processCommand does (unknown, arity, subcommand, pub/sub context, MULTI
 * queueing), runs it, keeps per-command statistics, and then serves clients blocked on keys the
 * command made ready.
 */
import { assert } from "../../core/assert.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { systemErrorText } from "../../core/system-error.ts";
import { Blocking } from "./blocking.ts";
import { type CommandStats, CommandTiming, latencyEventOf, trackLatency } from "../observe/command-timing.ts";
import { traitCountsReads, traitMayReplicate, traitsOf, traitTimedInBatch, traitWrite } from "./command-traits.ts";
import { type CommandFlag, type CommandSpec, type Exec, keysOf, type ProtectedSwitch, protectedSwitches } from "../kit/spec.ts";
import { commandTable, lookupCommand } from "./command-table.ts";
import { discardTransaction } from "../commands/transactions.ts";
import { clientLine } from "../commands/connection.ts";
import type { AclContext } from "../acl/acl-log.ts";
import { AclUsers, noPermission, type Refusal } from "../acl/acl-users.ts";
import { CommandCatalog } from "../acl/command-catalog.ts";
import { Monitors } from "../observe/monitor.ts";
import { LatencyMonitor } from "../observe/latency-monitor.ts";
import { Slowlog } from "../observe/slowlog.ts";
import { ScriptCache } from "../scripting/script-cache.ts";
import { FunctionLibraries } from "../scripting/function-libraries.ts";
import { libraryLoadHost } from "../scripting/script-run.ts";
import { type BusyScript, busyScriptError } from "../scripting/busy-script.ts";
import { ConfigApplyError, type Configurable, configDefaults, configParamsByName, defaultNumber } from "../config/config-table.ts";
import type { AppendLog } from "../aof/append-log.ts";
import { PersistenceState } from "../aof/persistence-state.ts";
import { AofRewrite } from "../aof/rewrite.ts";
import { warmBatch } from "./warm.ts";
import { Tracking } from "./tracking.ts";
import { ClientPause } from "./client-pause.ts";
import { Eviction } from "../keyspace/eviction.ts";
import type { FrequencyConfig } from "../keyspace/access-frequency.ts";
import { writeAtEndOfTurn } from "./end-of-turn.ts";
import { arityError, cannotPersist, KvError, noReplicas, overMaxmemory } from "../text/errors.ts";
import { commandTimeUnread, Keyspace, type KeyspaceHooks, noCommandRunning, noScriptRunning } from "../keyspace/keyspace.ts";
import { KeyspaceEvents } from "../keyspace/keyspace-events.ts";
import { PubSub } from "./subscriptions.ts";
import { ServerStats } from "../observe/server-stats.ts";
import type { Reply } from "../kit/reply.ts";
import type { Server } from "../kit/server.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import { type BlockedState, isLocalClient, type Session } from "./session.ts";
import { Watches } from "./watch.ts";

export interface EngineOptions {
  databases: number;
  clock?: Clock;
  log: Logger;
  /** Initial CONFIG parameters (port, bind, dir, ...) reported by CONFIG GET and INFO. */
  config?: Record<string, string>;
}

export type { CommandStats };

/** Commands a subscribed RESP2 client may still send. */
const pubsubContextCommands = new Set(["subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset"]);
/** Redis 7.0's refusal of a protected command (DEBUG, MODULE LOAD …) its switch does not allow. */
const notAllowed = (option: ProtectedSwitch) =>
  `ERR ${protectedSwitches[option]} command not allowed. If the ${option} option is set to "local", you can run it from a local connection, ` +
  "otherwise you need to set this option in the configuration file, and then restart the server.";
/** Read-only script commands whose own keys client tracking does not remember (rememberTracked). */
const readOnlyScriptCommands = new Set(["eval_ro", "evalsha_ro", "fcall_ro"]);
/** Commands that run at once inside MULTI instead of being queued. */
const multiControlCommands = new Set(["exec", "discard", "multi", "watch", "quit", "reset"]);
/** What a client in MULTI may still send past maxmemory (EXEC only if its queue cannot grow the data). */
const oomExemptInMulti = new Set(["exec", "discard", "quit", "reset"]);
/**
 * The data is checked against maxmemory again after this many commands that may grow it, between
 * the cron's checks: a check sizes a few sampled keys (a few µs), so at 1M writes a second one
 * every 256 costs ~1%, and a write burst overshoots maxmemory by at most what 256 commands add.
 */
const growthChecksEvery = 256;
/**
 * Eviction brings the estimate down to this share of maxmemory, not just under it: the estimate
 * moves a little with each sample of key sizes, and evicting to the limit exactly would evict
 * a few more keys at every check that read it a little higher.
 */
const evictionTargetShare = 0.99;

/** ACL's view of the command table: made once, at the first engine, and shared (the table is fixed). */
let catalog: CommandCatalog | null = null;
const commandCatalog = (): CommandCatalog => (catalog ??= new CommandCatalog(commandTable));

export class Engine implements Server, Configurable {
  readonly clock: Clock;
  readonly log: Logger;
  readonly dbs: Keyspace[];
  readonly watches = new Watches();
  private loadingFile = false;
  readonly blocking = new Blocking(
    (session, state, micros, failed) => this.blockedServed(session, state, micros, failed),
    () => this.stats.errorReplies,
    () => this.busyScript !== null,
    (session, serve) => this.servingBlocked(session, serve),
  );
  readonly pubsub = new PubSub();
  /** Client-side caching: CLIENT TRACKING's keys and prefixes, and the invalidations (tracking.ts). */
  readonly tracking = new Tracking(
    (id) => this.sessions.get(id),
    (send) => writeAtEndOfTurn({ writeAtTurnEnd: send }),
  );
  /** The client whose command is running (execute), for CLIENT TRACKING's NOLOOP and ordering. */
  private current: Session | null = null;
  /** A tracking client's command that is not a script's own: the one whose keys its script's reads remember. */
  private outerCommand: [CommandSpec, string[]] | null = null;
  /** CLIENT PAUSE's hold on clients' commands (client-pause.ts). */
  readonly clientPause = new ClientPause(() => this.clock.monotonicMs());
  /** Keyspace notifications (CONFIG notify-keyspace-events), published through `pubsub`. */
  readonly events = new KeyspaceEvents(this.pubsub);
  readonly sessions = new Map<number, Session>();
  readonly config: Map<string, string>;
  /** CONFIG maxmemory in bytes; 0 for no limit. */
  maxMemoryBytes = 0;
  /** Used memory is past maxMemoryBytes and nothing could be evicted (checkMaxmemory): commands that may grow the data are refused. */
  overMaxmemory = false;
  /** maxmemory-policy's evictions (eviction.ts). */
  readonly eviction: Eviction;
  /** lfu-log-factor and lfu-decay-time, shared by the databases' access counters under an LFU policy. */
  readonly frequencyConfig: FrequencyConfig = { logFactor: defaultNumber("lfu-log-factor"), decayMinutes: defaultNumber("lfu-decay-time") };
  /** Commands that may grow the data since memory was last measured. */
  private growthSinceCheck = 0;
  /** CONFIG maxclients: clients connected at once at most (RESP connections and REST requests in flight). */
  maxClients = defaultNumber("maxclients");
  /** CONFIG stream-node-max-entries: slots per node of a stream (types/stream/stream.ts). */
  streamNodeEntriesMax = defaultNumber("stream-node-max-entries");
  /** The CONFIG limits every connection checks on each read, kept parsed (see setConfig). */
  readonly clientLimits = {
    bulkBytesMax: defaultNumber("proto-max-bulk-len"),
    queryBufferBytesMax: defaultNumber("client-query-buffer-limit"),
  };
  readonly startedMs: number;
  /** Changes to keys so far: a command that moved it changed data (Redis's server.dirty). */
  dirty = 0;
  /** The append-only file, when persistence is on; set once it has been loaded. */
  aof: AppendLog | null = null;
  /** The append-only file rewrite in progress, if any. */
  rewrite: AofRewrite | null = null;
  /** Size of the append-only file after its last rewrite (or load): the automatic rewrite's base. */
  aofBaseBytes = 0;
  /** Unix ms of the last time everything written was known to be on disk (LASTSAVE). */
  lastSaveMs: number;
  /** Saves and rewrites as INFO persistence reports them. */
  readonly persistence = new PersistenceState();
  /** Stops the server (SHUTDOWN); the service sets it, an engine without one refuses SHUTDOWN. */
  onShutdown: (() => void) | null = null;
  /** Starts or stops the append-only file to match CONFIG's `appendonly` (the service sets it). */
  onAppendonly: (() => void) | null = null;
  /** Moves the RESP listener to another port (the service sets it); throws the system's error. */
  onPortChange: ((port: number) => void) | null = null;
  /** Whether the active expiry cycle deletes expired keys (DEBUG SET-ACTIVE-EXPIRE turns it off). */
  activeExpire = true;
  /** The ACL users, the default user among them, and ACL LOG. */
  readonly acl = new AclUsers(commandCatalog());
  /** How long commands take, for INFO commandstats (command-timing.ts). */
  readonly timing: CommandTiming;
  /** SLOWLOG's entries (slowlog.ts). */
  readonly slowlog: Slowlog;
  /** LATENCY's events (latency-monitor.ts). */
  readonly latency: LatencyMonitor;
  /** The clients in MONITOR mode (monitor.ts). */
  readonly monitors = new Monitors();
  readonly stats = new ServerStats();
  private scriptCache: ScriptCache | null = null;
  private functionLibraries: FunctionLibraries | null = null;
  /**
   * A script past busy-reply-threshold, stopped between slices while the server answers others
   * (scripting/busy-script.ts); null when none is.
   */
  busyScript: BusyScript | null = null;
  /** What every database reports to, and the script's start its keys' times are judged against. */
  private readonly keyspaceHooks: KeyspaceHooks;
  /** CONFIG busy-reply-threshold in ms (at most 2^32 - 1, the native side's u32): when a script becomes busy. */
  busyReplyThresholdMs = defaultNumber("busy-reply-threshold");
  /** min-replicas-to-write and min-replicas-max-lag both above 0: with no replica, writes get NOREPLICAS. */
  writesWantReplicas = false;

  constructor(options: EngineOptions) {
    this.clock = options.clock ?? systemClock;
    this.latency = new LatencyMonitor(this.clock);
    this.timing = new CommandTiming(this.clock, this.latency);
    this.slowlog = new Slowlog(this.clock);
    this.log = options.log;
    this.startedMs = this.clock.nowMs();
    this.lastSaveMs = this.startedMs;
    const clientPause = this.clientPause;
    const hooks: KeyspaceHooks = {
      clock: this.clock,
      scriptStartedMs: noScriptRunning,
      commandStartedMs: noCommandRunning,
      get clientsPaused() {
        return clientPause.active;
      },
      onModified: (db: Keyspace, key: string, invalidates = true, expired = false, swappedWith?: Keyspace) => {
        this.dirty++;
        this.watches.touched(db, key, swappedWith);
        // A key deleted for its time is no client's change to BCAST's NOLOOP (Redis signals it
        // with no client), though the default mode's NOLOOP still leaves it out for the client
        // whose command met it (Redis compares with the current client there).
        if (invalidates && this.tracking.active) this.tracking.invalidate(key, this.current, (this.current?.inScript ?? false) || expired);
        // Any change may have given a waited-on key elements (a push, a rename onto it, SWAPDB);
        // the blocked client's own check decides whether it can be served.
        if (this.blocking.blockedCount > 0) this.blocking.signalReady(db, key);
      },
      onExpired: (db: Keyspace, key: string) => {
        this.stats.expiredKeys++;
        this.aof?.append(db.index, [["DEL", key]]);
        this.events.notify(db.index, "expired", key);
      },
      events: this.events,
    };
    this.keyspaceHooks = hooks;
    this.dbs = Array.from({ length: options.databases }, (_, i) => new Keyspace(i, hooks));
    this.eviction = new Eviction({
      dbs: this.dbs,
      evicted: (db, key) => {
        db.delete(key);
        this.stats.evictedKeys++;
        this.aof?.append(db.index, [["DEL", key]]);
        this.events.notify(db.index, "evicted", key);
      },
    });
    this.config = new Map();
    const starting: [string, string][] = [...configDefaults(), ["databases", String(options.databases)], ...Object.entries(options.config ?? {})];
    for (const [name, value] of starting) this.setConfig(name, value);
  }

  /**
   * Whether `session` may take a protected action (DEBUG, MODULE LOAD …) that the switch `option`
   * (enable-debug-command, enable-module-command) guards: yes, or local and the client is on this
   * machine (Redis's islocalClient).
   */
  private protectedAllowed(option: ProtectedSwitch, session: Session): boolean {
    const mode = this.config.get(option);
    return mode === "yes" || (mode === "local" && isLocalClient(session));
  }

  /** A script starts: until it ends, keys' times are judged against this moment (KeyspaceHooks.scriptStartedMs). */
  startScriptClock(): void {
    this.keyspaceHooks.scriptStartedMs = this.clock.nowMs();
  }

  /** The script has ended: keys' times are judged against the clock again. */
  stopScriptClock(): void {
    this.keyspaceHooks.scriptStartedMs = noScriptRunning;
  }

  /** EXEC: the command judges keys' times against now from here on, not against when it first looks at one. */
  fixCommandTime(): void {
    const hooks = this.keyspaceHooks;
    if (hooks.commandStartedMs === commandTimeUnread) hooks.commandStartedMs = this.clock.nowMs();
  }

  /** The scripts EVAL and SCRIPT LOAD were given; the Lua state starts with the first. */
  get scripts(): ScriptCache {
    return (this.scriptCache ??= new ScriptCache());
  }

  /** The script cache if a script has started it, for reports that should not start it (INFO). */
  get scriptsIfStarted(): ScriptCache | null {
    return this.scriptCache;
  }

  /** The function libraries FUNCTION LOAD gave; their Lua state starts with the first use. */
  get functions(): FunctionLibraries {
    return (this.functionLibraries ??= new FunctionLibraries(libraryLoadHost(this)));
  }

  /** The function libraries if something has started them (INFO, a rewrite). */
  get functionsIfStarted(): FunctionLibraries | null {
    return this.functionLibraries;
  }

  /**
   * Sets a CONFIG parameter, already checked with canonicalConfigValue, and applies it as its row
   * of the table says (config/config-table.ts); an old name and its parameter are set together.
   */
  setConfig(name: string, value: string): void {
    this.config.set(name, value);
    const param = configParamsByName.get(name);
    if (param === undefined) return;
    const other = name === param.name ? param.alias : param.name;
    if (other !== undefined) this.config.set(other, value);
    param.apply?.(this, value);
  }

  get commands(): ReadonlyMap<string, CommandSpec> {
    return commandTable;
  }

  register(session: Session): void {
    // As in Redis, whether a client must authenticate is decided when it connects: changing
    // requirepass later does not log out clients already in.
    this.logInAsDefault(session);
    this.sessions.set(session.id, session);
    this.stats.connectionsReceived++;
  }

  /**
   * What the session's user may not do of this command (its command, a key, a channel), logged
   * in ACL LOG as refused in `context`; null when nothing is refused. The caller words the error:
   * NOPERM at top level, EXEC's and a script's own words.
   */
  refusal(session: Session, spec: CommandSpec, argv: string[], context: AclContext): Refusal | null {
    const user = session.user;
    if (user === null || user.unrestricted) return null;
    const refusal = this.acl.refusal(user, spec, argv);
    if (refusal !== null) this.acl.logRefusal(refusal.reason, context, refusal.object, user.name, clientLine(this, session), Date.now());
    return refusal;
  }

  /**
   * Makes `session` the default user's (a new client, RESET): logged in at once if that user is
   * on and takes any password, as when no requirepass is set.
   */
  logInAsDefault(session: Session): void {
    const user = this.acl.defaultUser;
    session.user = user;
    session.authenticated = user.enabled && user.nopass;
  }

  /** Forgets a session whose connection closed: its subscriptions, watches and blocking. */
  unregister(session: Session): void {
    this.blocking.unblock(session);
    this.tracking.disable(session);
    this.watches.unwatchAll(session);
    this.pubsub.forget(session);
    this.monitors.delete(session);
    this.sessions.delete(session.id);
  }

  /**
   * Runs one command for a session, answering on `reply` (the session's own, or a REST collector).
   * A caller runs as many as it has back to back, then calls settleTiming().
   */
  execute(session: Session, argv: string[], reply: Reply = session.reply): void {
    this.current = session;
    this.executeCommand(session, argv, reply);
    this.current = null;
    if (session.tracking !== null) this.afterTrackedCommand(session, argv);
  }

  /**
   * A blocked client's command served inside another's (BLMOVE woken by a push): its changes are
   * its own — the invalidations of keys it tracks follow its reply, as Redis sends them after
   * the served command's answer.
   */
  private servingBlocked(session: Session, serve: () => boolean): boolean {
    const outer = this.current;
    this.current = session;
    try {
      return session.tracking === null ? serve() : this.tracking.servingAs(session, serve);
    } finally {
      this.current = outer;
    }
  }

  /**
   * Whether CLIENT PAUSE holds this command of `session` now; the caller then keeps it, and what
   * the client sent after it, until the pause is over (clientPause.whenOver). A command that is
   * not one (unknown, wrong arity) is answered at once, as Redis answers it before it pauses.
   */
  pauseHolds(session: Session, argv: string[]): boolean {
    if (!this.clientPause.active) return false;
    const resolved = this.resolve(argv);
    return typeof resolved !== "string" && this.runsAny(resolved, argv, session, (s, a) => this.pauseHoldsRun(s, a));
  }

  /**
   * Whether a pause holds `spec` run with `argv`, by its flags for this run (flagsFor). A script
   * that declared its flags has others than its command's, and no may-replicate (Redis's
   * scriptFlagsToCmdFlags clears it): held only if it may write, so a no-writes script runs
   * through a WRITE pause.
   */
  private pauseHoldsRun(spec: CommandSpec, argv: readonly string[]): boolean {
    const flags = spec.flagsFor?.(this, argv) ?? spec.flags;
    const declared = flags !== spec.flags;
    return this.clientPause.holds(flags.includes("write"), !declared && (traitsOf(spec) & traitMayReplicate) !== 0);
  }

  /**
   * After a command of a client with CLIENT TRACKING on: the invalidations of keys it changed
   * itself follow the reply, and CLIENT CACHING's choice lapses (unless the command was CLIENT's
   * own, or is queued in a transaction: then it holds for EXEC), as in Redis.
   */
  private afterTrackedCommand(session: Session, argv: string[]): void {
    this.tracking.afterCommand(session);
    const tracking = session.tracking;
    if (tracking !== null && session.multi === null && argv[0]!.toLowerCase() !== "client") tracking.caching = false;
  }

  private executeCommand(session: Session, argv: string[], reply: Reply): void {
    const resolved = this.resolve(argv);
    if (typeof resolved === "string") {
      // CLIENT LIST's cmd is what Redis's lookup found, refused or not: a container named without
      // a subcommand, a subcommand given the wrong arity, or nothing ("NULL") for an unknown name.
      session.lastCommand = this.lookedUp(argv)?.name ?? "NULL";
      return this.reject(session, argv, reply, resolved);
    }
    const name = resolved.name;
    session.lastCommand = name;
    // A protected command, before authentication, as Redis's processCommand orders it.
    const guard = resolved.protectedBy;
    if (guard !== undefined && !this.protectedAllowed(guard, session)) return this.reject(session, argv, reply, notAllowed(guard));
    if (!session.authenticated && !resolved.flags.includes("no_auth")) return this.reject(session, argv, reply, "NOAUTH Authentication required.");
    // AUTH and HELLO are never refused; checked only for a user with limits.
    if (session.user !== null && !session.user.unrestricted && !resolved.flags.includes("no_auth")) {
      const refusal = this.refusal(session, resolved, argv, session.multi !== null ? "multi" : "toplevel");
      if (refusal !== null) return this.reject(session, argv, reply, noPermission(refusal));
    }
    // Memory is not reclaimed while a busy script is stopped, as in Redis: evictions' DELs would
    // land in the append-only file inside the script's transaction.
    const busy = this.busyScript;
    if (busy === null) {
      if (this.maxMemoryBytes > 0 && resolved.flags.includes("denyoom") && ++this.growthSinceCheck >= growthChecksEvery) this.checkMaxmemory();
      // Past maxmemory, with nothing left to evict, nothing that may grow the data runs, nor
      // anything queued in MULTI.
      if (this.overMaxmemory && (this.runsFlagged(resolved, argv, session, "denyoom") || (session.multi !== null && !oomExemptInMulti.has(name)))) {
        return this.reject(session, argv, reply, overMaxmemory().message);
      }
    }
    // While the append-only file cannot be written, nothing more is acknowledged that it may
    // never hold; PING is refused too, as Redis does, so that health checks see it.
    const persistFailure = this.aof?.failureReason ?? null;
    if (persistFailure !== null && (name === "ping" || this.runsFlagged(resolved, argv, session, "write"))) {
      return this.reject(session, argv, reply, cannotPersist(persistFailure).message);
    }
    if (this.writesWantReplicas && this.runsFlagged(resolved, argv, session, "write")) return this.reject(session, argv, reply, noReplicas().message);
    // RESP3 carries pub/sub messages out of band, so only a RESP2 subscriber is restricted.
    if (session.subscribed && session.reply.protocol === 2 && !pubsubContextCommands.has(name)) {
      return this.reject(
        session,
        argv,
        reply,
        `ERR Can't execute '${name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context`,
      );
    }
    // While a script is busy only what may end it or wait for it runs (busy-script.ts).
    if (busy !== null && !resolved.flags.includes("allow_busy")) return this.reject(session, argv, reply, busyScriptError[busy.kind]);
    // A monitor is a replica to Redis: it may still PING or QUIT, but not touch the data.
    if (this.monitors.size > 0 && this.monitors.has(session) && (resolved.flags.includes("readonly") || resolved.flags.includes("write"))) {
      return this.reject(session, argv, reply, "ERR Replica can't interact with the keyspace");
    }
    if (session.multi !== null && resolved.flags.includes("no_multi")) {
      return this.reject(session, argv, reply, "ERR Command not allowed inside a transaction");
    }
    if (session.multi !== null && !multiControlCommands.has(name)) {
      // A transaction that will not run (a command was refused, a watched key changed) keeps
      // nothing more, though each command is still answered QUEUED, as Redis's queueMultiCommand.
      if (!session.multiFailed && !session.watchDirty) session.multi.push({ spec: resolved, argv });
      reply.simple("QUEUED");
      return;
    }
    this.run(resolved, session, argv, reply);
    // Clients blocked on keys a busy script pushed to are served once it has ended.
    if (this.busyScript === null) this.blocking.serveReady();
  }

  /**
   * A script ran past busy-reply-threshold and stopped (scripting/busy-script.ts): it goes on in
   * slices from the event loop, between which the server answers others, until it ends.
   */
  scriptBusy(busy: BusyScript): void {
    this.busyScript = busy;
    this.log.warn(
      { script: busy.name },
      `Slow script detected: still in execution after ${Math.round(this.clock.monotonicMs() - busy.startedMs)} milliseconds. ` +
        `You can try killing the script using the ${busy.kind === "eval" ? "SCRIPT KILL" : "FUNCTION KILL"} command.`,
    );
    setImmediate(this.continueBusyScript);
  }

  /** One slice of the busy script; once it has ended, the steps its command left for then. */
  private readonly continueBusyScript = (): void => {
    const busy = this.busyScript;
    if (busy === null) return;
    this.current = busy.session;
    const reply = busy.slice();
    this.current = null;
    this.settleTiming();
    if (reply === null) {
      setImmediate(this.continueBusyScript);
      return;
    }
    if (busy.killed) this.log.warn({ script: busy.name }, "Lua script killed by user with SCRIPT KILL.");
    this.busyScript = null;
    busy.end(reply);
    this.settleTiming();
    // The rest of an EXEC may have started another busy script.
    if (this.busyScript !== null) return;
    this.blocking.serveReady();
    this.blocking.timeOutLate();
    busy.session.transport?.flush();
  };

  /**
   * Before the commands of one read run: brings the keys they will look up, and the members they
   * name in large collections, into cache together (warm.ts).
   */
  warmKeys(session: Session, commands: readonly string[][]): void {
    warmBatch(this.dbs[session.dbIndex]!, commands);
  }

  /**
   * A caller is about to run commands back to back, nothing else between them, until it calls
   * settleTiming: each may start timing at the reading that ended the one before (command-timing.ts).
   */
  beginCommandRun(): void {
    this.timing.beginRun();
  }

  /** Ends the timing of the commands run since the last call: for a caller done running them. */
  settleTiming(): void {
    this.timing.settle();
  }

  /** Runs a resolved command and records its statistics; also used by EXEC for queued commands. */
  run(spec: CommandSpec, session: Session, argv: string[], reply: Reply): void {
    // An EXEC in the append-only file: Redis counts the commands it runs in
    // total_commands_processed, but keeps command statistics out of loading.
    if (session.replaying) {
      this.stats.commandsProcessed++;
      return this.replay(session, spec, argv, reply, this.clock.monotonicMs());
    }
    const traits = traitsOf(spec);
    const batched = (traits & traitTimedInBatch) !== 0 && !this.slowlog.logsEverything;
    const startedMs = batched ? this.timing.startBatched() : this.timing.startAlone();
    if (!batched) this.timing.openBatchAt(startedMs);
    const exec: Exec = {
      engine: this,
      session,
      reply,
      db: this.dbs[session.dbIndex]!,
      timeMs: startedMs,
      countsReads: (traits & traitCountsReads) !== 0,
      propagate: null,
      failed: false,
    };
    const dirtyBefore = this.dirty;
    // A script is shown before the commands it runs (Redis feeds its monitors EVAL up front).
    const monitoredFirst = this.monitors.size > 0 && spec.flags.includes("skip_monitor");
    if (monitoredFirst) this.monitors.feed(session, spec, argv);
    if (this.rewrite !== null && (traits & traitWrite) !== 0) this.rewrite.beforeWrite(exec.db.index, spec, argv);
    if (session.tracking !== null && !session.inScript) this.outerCommand = [spec, argv];
    if (exec.db.frequency !== null) exec.db.countedKey = null;
    const busyBefore = this.busyScript;
    const failed = !this.runHandler(spec, exec, argv) || exec.failed;
    const wentBusy = this.busyScript !== busyBefore;
    if (this.dirty !== dirtyBefore) this.propagate(exec, argv, spec);
    if (session.tracking !== null && !session.tracking.bcast) this.rememberTracked(session, spec, argv);
    const stats = this.statsFor(spec);
    stats.calls++;
    let micros = 0;
    if (batched) this.timing.finishBatched(stats, spec);
    else if (wentBusy) this.timeWhenBusyEnds(spec, argv, session, exec, startedMs);
    else {
      micros = (this.timing.endBatch() - startedMs) * 1000;
      stats.usec += micros;
      // A command that blocked has not run yet: it is logged when served (blockedServed).
      if (session.blocked === null) this.considerSlow(spec, argv, session, micros, stats);
    }
    if (session.blocked !== null) session.blocked.command = { spec, argv, micros };
    if (failed) stats.failedCalls++;
    this.stats.commandsProcessed++;
    if (this.monitors.size > 0 && !monitoredFirst) this.monitors.feed(session, spec, argv);
  }

  /**
   * A command whose script went busy is timed once the script ends (busyCommandEnded). The
   * closure is made here, not in run: a function that makes one captures its variables in a scope
   * object made on every call, and run is every command's path.
   */
  private timeWhenBusyEnds(spec: CommandSpec, argv: string[], session: Session, exec: Exec, startedMs: number): void {
    this.busyScript!.whenDone(() => this.busyCommandEnded(spec, argv, session, exec, startedMs));
  }

  /**
   * A read-only command of a client tracking in default mode: its keys are remembered, found or
   * not, failed or not, as Redis 7.0 remembers them. A script's read-only commands remember the
   * keys the script command declared (EVAL's KEYS), as 7.0 takes them from the calling client's
   * command, not the ones the reads name. EVAL_RO, EVALSHA_RO and FCALL_RO are read-only
   * themselves but remember nothing of their own: as with EVAL, only a read the script makes
   * remembers its keys (Redis 7.0's call() leaves those three out by name).
   */
  private rememberTracked(session: Session, spec: CommandSpec, argv: string[]): void {
    if (!spec.flags.includes("readonly") || spec.group === "pubsub" || readOnlyScriptCommands.has(spec.name)) return;
    // Inside a script, Redis 7.0 remembers the keys the script command declared, not the read's.
    const [keysSpec, keysArgv] = session.inScript && this.outerCommand !== null ? this.outerCommand : [spec, argv];
    const keys = keysOf(keysSpec, keysArgv);
    if (keys !== null && keys.length > 0) this.tracking.remember(session, keys);
  }

  /**
   * A blocked command was served: as Redis 7.0 does, the time serving took is added to the
   * command's statistics (its call was counted when it blocked) and the command is considered for
   * SLOWLOG with that time. One that times out, or whose client leaves, is not logged.
   */
  private blockedServed(session: Session, state: BlockedState, micros: number, failed: boolean): void {
    if (state.command === undefined) return;
    // Served with an error (XREADGROUP whose group or stream went away): a failed call, as in Redis.
    this.timedLate(state.command.spec, state.command.argv, session, micros, failed);
  }

  /**
   * A command whose script was busy has ended: its whole time, from its start, goes to its
   * statistics and SLOWLOG, and an error reply makes it a failed call (its call was counted when
   * it started).
   */
  private busyCommandEnded(spec: CommandSpec, argv: string[], session: Session, exec: Exec, startedMs: number): void {
    this.timedLate(spec, argv, session, (this.clock.monotonicMs() - startedMs) * 1000, exec.failed);
  }

  /**
   * CLIENT UNBLOCK ended a blocked command, TIMEOUT or ERROR alike. Redis 7.0.15 then records it
   * as an unblocked call with errors (networking.c: updateStatsOnUnblock(target, 0, 0, 1)): a failed
   * call, the blocked call's own time added to the command's time a second time, and that time in
   * its latency histogram and SLOWLOG — an entry with no arguments, since unblockClient has
   * already reset the client's argv when the entry is made — and nothing for the latency monitor.
   */
  unblockedByClient(session: Session, state: BlockedState): void {
    if (state.command === undefined) return;
    this.timedLate(state.command.spec, [], session, state.command.micros, true, false);
  }

  /**
   * A command whose time is known only after its call was counted (served once unblocked, ended
   * after a busy script, ended by CLIENT UNBLOCK): the time and a failure go to its statistics,
   * then to its histogram, SLOWLOG and (when `monitored`) the latency monitor.
   */
  private timedLate(spec: CommandSpec, argv: string[], session: Session, micros: number, failed: boolean, monitored = true): void {
    const stats = this.statsFor(spec);
    stats.usec += micros;
    if (failed) stats.failedCalls++;
    this.considerSlow(spec, argv, session, micros, stats, monitored);
  }

  /** A command timed alone took `micros`: its histogram, SLOWLOG and the latency monitor may keep it. */
  private considerSlow(spec: CommandSpec, argv: string[], session: Session, micros: number, stats: CommandStats, monitored = true): void {
    if (this.timing.tracksLatency) trackLatency(stats, micros);
    this.slowlog.consider(spec, argv, session, micros);
    if (monitored && this.latency.on) this.latency.consider(latencyEventOf(spec), micros / 1000);
  }

  /**
   * Runs a command read back from the append-only file as Redis's loader does: the command's own
   * work and none of a client's bookkeeping. INFO's commandstats and total_commands_processed do
   * not count it (Redis's loader calls the command's handler directly), nothing times it, and
   * nothing is appended (the file is opened after loading). Inside MULTI it is queued, and EXEC
   * runs the queue (see run). The session must be marked `replaying`. `timeMs` is the monotonic
   * time its key reads record (the loader reads the clock once per chunk of commands: Redis's
   * own access clock ticks once a second).
   */
  replay(session: Session, spec: CommandSpec, argv: string[], reply: Reply, timeMs: number): void {
    if (session.multi !== null && !multiControlCommands.has(spec.name)) {
      session.multi.push({ spec, argv });
      return;
    }
    // Loading is not a client's traffic: nothing it reads counts in INFO's keyspace hits and misses.
    this.runHandler(spec, { engine: this, session, reply, db: this.dbs[session.dbIndex]!, timeMs, countsReads: false, propagate: null, failed: false }, argv);
  }

  /** Replays an MSET the loader kept as byte ranges of the file (Keyspace.loadStrings). */
  replayMsetBytes(session: Session, bytes: Latin1Buffer, ranges: readonly number[]): void {
    assert(this.loading && session.multi === null, "replayMsetBytes is for the loader, outside a transaction");
    // A pair set as strings counts its own change (onModified); those added from bytes, here —
    // after the call, since `dirty +=` would read dirty before the sets inside it count.
    const added = this.dbs[session.dbIndex]!.loadStrings(bytes, ranges);
    this.dirty += added;
  }

  /**
   * Whether the append-only file is being loaded: no key expires meanwhile, and a time already
   * past given by EXPIRE, GETEX or RESTORE is kept rather than deleting the key (Redis's
   * checkAlreadyExpired answers no while loading), so the file replays as it was written.
   */
  get loading(): boolean {
    return this.loadingFile;
  }

  set loading(on: boolean) {
    this.loadingFile = on;
    for (const db of this.dbs) db.expiryPaused = on;
  }

  /** Whether `atMs` (Unix ms) has passed, for a command given that time: never while loading. */
  alreadyPast(atMs: number, nowMs: number): boolean {
    return atMs <= nowMs && !this.loadingFile;
  }

  /** Runs the command's handler; a failure is answered as an error. Returns whether it succeeded. */
  private runHandler(spec: CommandSpec, exec: Exec, argv: string[]): boolean {
    // The outermost command (not one EXEC or a script runs) judges keys' times against one
    // moment, read when it first needs it (KeyspaceHooks.commandStartedMs), as Redis's call()
    // fixes the time for a command and the commands it runs. callHandler throws nothing, so the
    // moment is always let go.
    const hooks = this.keyspaceHooks;
    const outermost = hooks.commandStartedMs === noCommandRunning;
    if (outermost) hooks.commandStartedMs = commandTimeUnread;
    const succeeded = this.callHandler(spec, exec, argv);
    if (outermost) hooks.commandStartedMs = noCommandRunning;
    return succeeded;
  }

  /** Runs the command's handler; a failure is answered as an error. Returns whether it succeeded. */
  private callHandler(spec: CommandSpec, exec: Exec, argv: string[]): boolean {
    try {
      spec.run!(exec, argv);
      return true;
    } catch (error) {
      if (error instanceof KvError) exec.reply.error(error.message);
      else {
        this.log.error({ err: error, command: spec.name }, "command failed unexpectedly");
        exec.reply.error(`ERR internal error running '${spec.name}'`);
      }
      return false;
    }
  }

  /**
   * CONFIG SET port: the listener moves, the clients connected stay. Port 0 — no TCP listener at
   * all, in Redis — is refused: svc kv serves RESP over TCP only.
   */
  movePort(port: number): void {
    // Before the service listens (the starting configuration) there is nothing to move.
    if (this.onPortChange === null) return;
    if (port === 0) throw new ConfigApplyError("svc kv listens on TCP only; port 0 (no TCP listener) is not taken");
    try {
      this.onPortChange(port);
    } catch (error) {
      // Redis's words send the client to the log, which says why.
      this.log.warn({ port, reason: systemErrorText(error) }, "CONFIG SET port: cannot listen on the new port; still on the old one");
      throw new ConfigApplyError("Unable to listen on this port. Check server logs.");
    }
  }

  /**
   * Whether the data is past CONFIG maxmemory, checked by the cron ten times a second, at CONFIG
   * SET, and every `growthChecksEvery` commands that may grow the data (Redis checks before each
   * command). What is compared is the estimate eviction.ts explains, not the heap, which holds
   * garbage until the collector runs; under an evicting policy keys are evicted to bring it back
   * under, so that it stays past only when none could go.
   */
  checkMaxmemory(): void {
    this.growthSinceCheck = 0;
    // Nothing is evicted while clients are paused, and nothing refused for it, as in Redis.
    if (this.clientPause.active) return;
    if (this.maxMemoryBytes === 0) {
      this.overMaxmemory = false;
      return;
    }
    const estimated = this.eviction.estimatedBytes(this.stats.memoryAtStartBytes);
    if (estimated <= this.maxMemoryBytes) {
      this.overMaxmemory = false;
      return;
    }
    const startedMs = this.latency.on ? performance.now() : 0;
    this.overMaxmemory = !this.eviction.evict(estimated - this.maxMemoryBytes * evictionTargetShare);
    if (this.latency.on) this.latency.consider("eviction-cycle", performance.now() - startedMs);
  }

  /**
   * Whether running `spec` with `argv` now runs a command flagged `flag`: `spec` itself, or EXEC
   * of a queue holding one ("write": it may change data; "denyoom": it may grow it). A script
   * command's flags are those its script declared (CommandSpec.flagsFor), as Redis's
   * getCommandFlags gives them before the command runs.
   */
  private runsFlagged(spec: CommandSpec, argv: readonly string[], session: Session, flag: CommandFlag): boolean {
    return this.runsAny(spec, argv, session, (s, a) => (s.flagsFor?.(this, a) ?? s.flags).includes(flag));
  }

  /** Whether running `spec` now runs a command `test` picks: `spec` itself, or one in EXEC's queue. */
  private runsAny(spec: CommandSpec, argv: readonly string[], session: Session, test: (s: CommandSpec, argv: readonly string[]) => boolean): boolean {
    if (test(spec, argv)) return true;
    return spec.name === "exec" && session.multi !== null && session.multi.some((queued) => test(queued.spec, queued.argv));
  }

  /**
   * The command named `name` (any case), for the code that runs commands inside one (scripts): they
   * reach the table through the engine, since the table holds them.
   */
  commandNamed(name: string): CommandSpec | undefined {
    return lookupCommand(name);
  }

  /** The command (or subcommand) argv names, or the error Redis answers for it. */
  resolve(argv: string[]): CommandSpec | string {
    const name = argv[0] ?? "";
    const spec = lookupCommand(name);
    if (spec === undefined) {
      const args = argv
        .slice(1, 1 + 128)
        .map((a) => `'${a.slice(0, 128)}' `)
        .join("");
      return `ERR unknown command '${name.slice(0, 128)}', with args beginning with: ${args}`;
    }
    if (!arityOk(spec.arity, argv.length)) return arityError(spec.name).message;
    // A container that answers alone as well (COMMAND) runs itself without a subcommand.
    if (spec.subcommands === undefined || (argv.length === 1 && spec.run !== undefined)) return spec;
    const subName = (argv[1] ?? "").toLowerCase();
    const sub = spec.subcommands.find((s) => s.name === `${spec.name}|${subName}`);
    if (sub === undefined) {
      return `ERR unknown subcommand '${(argv[1] ?? "").slice(0, 128)}'. Try ${spec.name.toUpperCase()} HELP.`;
    }
    if (!arityOk(sub.arity, argv.length)) return arityError(sub.name).message;
    return sub;
  }

  /**
   * Starts rewriting the append-only file; false if one is already running. Replies are the
   * caller's (BGREWRITEAOF, the automatic trigger); a rewrite that cannot start throws KvError.
   */
  startRewrite(): boolean {
    if (this.aof === null || this.rewrite !== null) return false;
    const startedMs = this.clock.nowMs();
    try {
      this.rewrite = new AofRewrite(this.dbs, this.aof, this.functionLibraries?.loadCommands() ?? [], this.log, (outcome) => {
        this.rewrite = null;
        this.persistence.rewriteEnded(outcome, this.clock.nowMs());
        if (outcome === "done") this.aofBaseBytes = this.aof?.sizeBytes ?? 0;
      });
    } catch (error) {
      // Its temporary file could not be created: a failed rewrite, as INFO counts them.
      this.persistence.rewriteNotStarted();
      this.log.error({ err: error }, "append-only file rewrite could not start; the old file stays in use");
      throw new KvError(`ERR Can't rewrite append only file in background: ${systemErrorText(error)}`);
    }
    this.persistence.rewriteStarted(startedMs);
    return true;
  }

  /** Records a command that changed data in the append-only file, if there is one. */
  propagate(x: Exec, argv: string[], spec?: CommandSpec): void {
    if (this.aof === null) return;
    if (x.propagate !== null) this.aof.append(x.db.index, x.propagate);
    // Only write commands are recorded as sent: a read that changed data did so by expiring a
    // key, which was recorded as a DEL when it happened.
    else if (spec !== undefined && (traitsOf(spec) & traitWrite) !== 0) this.aof.append(x.db.index, [argv]);
  }

  /**
   * Refuses a command before it runs, as Redis's rejectCommand does: it counts as rejected, and a
   * transaction being queued will abort. A refused EXEC discards the transaction and says why.
   */
  private reject(session: Session, argv: string[], reply: Reply, message: string): void {
    this.countRejectedCall(argv);
    if ((argv[0] ?? "").toLowerCase() === "exec") {
      discardTransaction(this, session);
      // Redis quotes the refusal without its generic ERR code.
      reply.error(`EXECABORT Transaction discarded because of: ${message.replace(/^ERR /, "")}`);
    } else {
      if (session.multi !== null) session.multiFailed = true;
      reply.error(message);
    }
  }

  /** The statistics of `spec`, made at its first call; found by its number in the table (CommandShape.statsIndex). */
  private statsFor(spec: CommandSpec): CommandStats {
    const index = spec.statsIndex;
    const byIndex = this.stats.commandsByIndex;
    if (index !== undefined) {
      const known = byIndex[index];
      if (known !== undefined) return known;
    }
    let stats = this.stats.commands.get(spec.name);
    if (stats === undefined) {
      stats = { calls: 0, usec: 0, rejectedCalls: 0, failedCalls: 0, latency: null };
      this.stats.commands.set(spec.name, stats);
    }
    if (index !== undefined) byIndex[index] = stats;
    return stats;
  }

  /**
   * Counts a refusal against the command Redis's lookupCommand finds (SCRIPT LOAD with no script
   * counts at script|load), and nothing for an unknown command or subcommand.
   */
  /** A command refused before it ran (here, or a script's: script-run.ts) counts as a rejected call of what argv names. */
  countRejectedCall(argv: string[]): void {
    const spec = this.lookedUp(argv);
    if (spec !== undefined) this.statsFor(spec).rejectedCalls++;
  }

  /**
   * The command Redis's lookupCommand finds for argv, before arity or any other check: the
   * subcommand when one is named, the container when none is, nothing for an unknown name.
   */
  private lookedUp(argv: string[]): CommandSpec | undefined {
    const spec = lookupCommand(argv[0] ?? "");
    if (spec === undefined || spec.subcommands === undefined || argv.length === 1) return spec;
    return spec.subcommands.find((s) => s.name === `${spec.name}|${argv[1]!.toLowerCase()}`);
  }
}

function arityOk(arity: number, argc: number): boolean {
  return arity >= 0 ? argc === arity : argc >= -arity;
}
