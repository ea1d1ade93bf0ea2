/**
 * The server as commands see it: the state and the services a command may use, and nothing of
 * how the engine is built. `Exec.engine` is a `Server`; the engine (server/engine.ts) is the one
 * implementation. Commands, their helpers, scripts, INFO and the append-only file's loader are
 * written against this, so they sit below the engine and the command table that holds them,
 * and import neither.
 *
 * Each member is documented where the engine declares it.
 */
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import type { AclContext } from "../acl/acl-log.ts";
import type { AclUsers, Refusal } from "../acl/acl-users.ts";
import type { AppendLog } from "../aof/append-log.ts";
import type { PersistenceState } from "../aof/persistence-state.ts";
import type { AofRewrite } from "../aof/rewrite.ts";
import type { Keyspace } from "../keyspace/keyspace.ts";
import type { LatencyMonitor } from "../observe/latency-monitor.ts";
import type { Monitors } from "../observe/monitor.ts";
import type { ServerStats } from "../observe/server-stats.ts";
import type { Slowlog } from "../observe/slowlog.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import type { BusyScript } from "../scripting/busy-script.ts";
import type { FunctionLibraries } from "../scripting/function-libraries.ts";
import type { ScriptCache } from "../scripting/script-cache.ts";
import type { Blocking } from "../server/blocking.ts";
import type { ClientPause } from "../server/client-pause.ts";
import type { BlockedState, Session } from "../server/session.ts";
import type { PubSub } from "../server/subscriptions.ts";
import type { Tracking } from "../server/tracking.ts";
import type { Watches } from "../server/watch.ts";
import type { Reply } from "./reply.ts";
import type { CommandSpec, Exec } from "./spec.ts";

export interface Server {
  // ---- state ----
  readonly clock: Clock;
  readonly log: Logger;
  readonly dbs: Keyspace[];
  readonly sessions: Map<number, Session>;
  readonly config: Map<string, string>;
  readonly acl: AclUsers;
  readonly watches: Watches;
  readonly blocking: Blocking;
  readonly pubsub: PubSub;
  readonly tracking: Tracking;
  readonly clientPause: ClientPause;
  readonly monitors: Monitors;
  readonly slowlog: Slowlog;
  readonly latency: LatencyMonitor;
  readonly stats: ServerStats;
  readonly persistence: PersistenceState;
  readonly clientLimits: { bulkBytesMax: number; queryBufferBytesMax: number };
  readonly startedMs: number;
  readonly maxMemoryBytes: number;
  readonly maxClients: number;
  readonly streamNodeEntriesMax: number;
  readonly busyReplyThresholdMs: number;
  readonly writesWantReplicas: boolean;
  readonly overMaxmemory: boolean;
  readonly commands: ReadonlyMap<string, CommandSpec>;
  readonly scripts: ScriptCache;
  readonly scriptsIfStarted: ScriptCache | null;
  readonly functions: FunctionLibraries;
  readonly functionsIfStarted: FunctionLibraries | null;
  dirty: number;
  aof: AppendLog | null;
  rewrite: AofRewrite | null;
  aofBaseBytes: number;
  lastSaveMs: number;
  activeExpire: boolean;
  busyScript: BusyScript | null;
  loading: boolean;
  onShutdown: (() => void) | null;

  // ---- running commands ----
  execute(session: Session, argv: string[], reply?: Reply): void;
  run(spec: CommandSpec, session: Session, argv: string[], reply: Reply): void;
  resolve(argv: string[]): CommandSpec | string;
  commandNamed(name: string): CommandSpec | undefined;
  propagate(x: Exec, argv: string[], spec?: CommandSpec): void;
  replay(session: Session, spec: CommandSpec, argv: string[], reply: Reply, timeMs: number): void;
  replayMsetBytes(session: Session, bytes: Latin1Buffer, ranges: readonly number[]): void;
  countRejectedCall(argv: string[]): void;
  settleTiming(): void;
  scriptBusy(busy: BusyScript): void;
  /** A script starts (and, below, ends): meanwhile keys' times are judged against its start, as in Redis 7.0. */
  startScriptClock(): void;
  stopScriptClock(): void;
  /** The running command judges keys' times against now from here on, not against when it first looks at one (EXEC). */
  fixCommandTime(): void;

  // ---- clients, memory, persistence ----
  refusal(session: Session, spec: CommandSpec, argv: string[], context: AclContext): Refusal | null;
  logInAsDefault(session: Session): void;
  unregister(session: Session): void;
  unblockedByClient(session: Session, state: BlockedState): void;
  alreadyPast(atMs: number, nowMs: number): boolean;
  checkMaxmemory(): void;
  setConfig(name: string, value: string): void;
  startRewrite(): boolean;
}
