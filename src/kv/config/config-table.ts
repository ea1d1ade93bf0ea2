/**
 * The CONFIG parameters svc knows, as one table in the manner of Redis's config.c
 * `static_configs[]`: each row's name, its type and bounds (what CONFIG SET checks, with Redis
 * 7.0's words for a refusal), its default, an old name that still sets it, and how a new value
 * applies to the running server. A parameter with no `apply` is remembered and reported (CONFIG
 * GET, INFO) and changes nothing: svc has no such behaviour (tcp-keepalive) or reads the value
 * where it is used (hll-sparse-max-bytes, auto-aof-rewrite-*).
 *
 * The parameters Redis 7.0 has and svc does not act on are rows of their own
 * (remembered-params.ts), checked and reported the same way; a name Redis does not know is
 * refused (docs/kv.md).
 */
import { AssertionError } from "../../core/assert.ts";
import { kvQueryBufferBytesMax, MiB } from "../../core/limits.ts";
import type { AclUsers } from "../acl/acl-users.ts";
import { aclLogEntriesMaxDefault } from "../acl/acl-log.ts";
import type { AppendLog, FsyncPolicy } from "../aof/append-log.ts";
import type { FrequencyConfig } from "../keyspace/access-frequency.ts";
import { type Eviction, type EvictionPolicy, evictionPolicies } from "../keyspace/eviction.ts";
import type { Keyspace } from "../keyspace/keyspace.ts";
import { compactEntriesMax, compactValueBytesMax, encodingLimits, hashListpackEntriesMax, intsetEntriesMax } from "../types/compact.ts";
import { formatEventClasses, invalidEventClassText, type KeyspaceEvents, parseEventClasses } from "../keyspace/keyspace-events.ts";
import type { CommandTiming } from "../observe/command-timing.ts";
import type { LatencyMonitor } from "../observe/latency-monitor.ts";
import type { Slowlog } from "../observe/slowlog.ts";
import { bulkBytesMaxDefault } from "../resp/parser.ts";
import type { Tracking } from "../server/tracking.ts";
import { int64Max, parseInt64 } from "../text/args.ts";
import { KvError } from "../text/errors.ts";
import { bool, immutable, int, int32Max, memory, type ParamType, portMax, text, words } from "./param-types.ts";
import { rememberedParams } from "./remembered-params.ts";

/**
 * A value CONFIG SET took that the server could not then apply ("Unable to listen on this port:
 * …"): every parameter of the call goes back to what it was, as in Redis.
 */
export class ConfigApplyError extends Error {}

/** What a parameter's value applies to: the parts of the server CONFIG changes (the engine is one). */
export interface Configurable {
  readonly config: Map<string, string>;
  readonly events: KeyspaceEvents;
  readonly clientLimits: { bulkBytesMax: number; queryBufferBytesMax: number };
  readonly acl: AclUsers;
  readonly aof: AppendLog | null;
  readonly onAppendonly: (() => void) | null;
  readonly slowlog: Slowlog;
  readonly latency: LatencyMonitor;
  readonly timing: CommandTiming;
  readonly tracking: Tracking;
  readonly eviction: Eviction;
  readonly dbs: readonly Keyspace[];
  readonly frequencyConfig: FrequencyConfig;
  maxClients: number;
  streamNodeEntriesMax: number;
  busyReplyThresholdMs: number;
  maxMemoryBytes: number;
  writesWantReplicas: boolean;
  checkMaxmemory(): void;
  /** Listens on `port` instead (CONFIG SET port); throws ConfigApplyError when it cannot. */
  movePort(port: number): void;
}

export interface ConfigParam {
  readonly name: string;
  readonly type: ParamType;
  /**
   * The value a server starts with, as CONFIG GET reports it; none for a parameter the server
   * reports only when its service sets it (the file names) or never (Redis's daemon options).
   */
  readonly default?: string;
  /** An old name Redis 7.0 still takes for it: setting either sets both. */
  readonly alias?: string;
  /** One of Redis's test parameters (HIDDEN_CONFIG): CONFIG GET shows it only when named exactly, never for a pattern. */
  readonly hidden?: true;
  /** What a new value (already checked) changes in the running server. */
  readonly apply?: (server: Configurable, value: string) => void;
}

/** A value that moves one of the thresholds OBJECT ENCODING follows (types/compact.ts). */
const setsEncodingLimit =
  (field: keyof typeof encodingLimits) =>
  (_: Configurable, value: string): void => {
    encodingLimits[field] = Number(value);
  };

/** Redis's checkGoodReplicasStatus with no replica: writes are refused once both are above 0. */
function applyReplicaWants(s: Configurable): void {
  s.writesWantReplicas = Number(s.config.get("min-replicas-to-write") ?? 0) > 0 && Number(s.config.get("min-replicas-max-lag") ?? 0) > 0;
}

/** The table. Rows are in no particular order; CONFIG GET answers in the order of its pattern's matches. */
export const configParams: readonly ConfigParam[] = [
  // ---- where svc listens and keeps its files: its flags ----
  {
    name: "port",
    type: int(0, portMax),
    default: "6379",
    // Listening moves to the new port; the clients connected stay (Redis's changeListenPort).
    apply: (s, v) => s.movePort(Number(v)),
  },
  { name: "bind", type: { kind: "start-only", flag: "--bind" }, default: "127.0.0.1" },
  { name: "dir", type: { kind: "start-only", flag: "--dir" }, default: "." },
  { name: "databases", type: immutable },
  { name: "appendfilename", type: immutable },
  { name: "aclfile", type: immutable },
  // Not a replica of anyone: empty, as Redis reports it (and refuses to set it by CONFIG SET).
  { name: "replicaof", alias: "slaveof", type: immutable, default: "" },
  // Redis 7.0's protected actions: DEBUG, and MODULE LOAD, LOADEX and UNLOAD (no: refused;
  // local: from a loopback client only; yes), set at start (--enable-debug-command,
  // --enable-module-command). svc has no protected configs; that switch reads Redis's default.
  { name: "enable-debug-command", type: immutable, default: "no" },
  { name: "enable-module-command", type: immutable, default: "no" },
  { name: "enable-protected-configs", type: immutable, default: "no" },

  // ---- clients ----
  {
    name: "maxclients",
    type: int(1, 4_294_967_295n),
    default: "10000",
    // Clients connected at once at most; a connection past it is refused (resp/resp-server.ts).
    apply: (s, v) => {
      s.maxClients = Number(v);
    },
  },
  {
    name: "proto-max-bulk-len",
    type: memory(1 * MiB),
    default: String(bulkBytesMaxDefault),
    apply: (s, v) => {
      s.clientLimits.bulkBytesMax = Number(v);
    },
  },
  {
    name: "client-query-buffer-limit",
    type: memory(1 * MiB),
    default: String(kvQueryBufferBytesMax),
    apply: (s, v) => {
      s.clientLimits.queryBufferBytesMax = Number(v);
    },
  },
  { name: "requirepass", type: text, default: "", apply: (s, v) => s.acl.setDefaultPassword(v) },
  {
    name: "acl-pubsub-default",
    type: words("allchannels", "resetchannels"),
    default: "resetchannels",
    // Whether a user or selector made from now on starts with every Pub/Sub channel (acl/acl-selector.ts).
    apply: (s, v) => {
      s.acl.defaults.allChannels = v === "allchannels";
    },
  },
  { name: "acllog-max-len", type: int(0), default: String(aclLogEntriesMaxDefault), apply: (s, v) => s.acl.log.setEntriesMax(Number(v)) },
  { name: "timeout", type: text, default: "0" },
  { name: "tcp-keepalive", type: text, default: "300" },
  {
    name: "tracking-table-max-keys",
    type: int(0),
    default: "1000000",
    // Keys CLIENT TRACKING's table remembers at most (server/tracking.ts); 0 for no bound.
    apply: (s, v) => {
      s.tracking.keysMax = Number(v);
    },
  },

  // ---- memory and eviction ----
  {
    name: "maxmemory",
    type: memory(0),
    default: "0",
    // Past this much used memory, commands that may grow the data are refused (0: no limit).
    apply: (s, v) => {
      s.maxMemoryBytes = Number(v);
      s.checkMaxmemory();
    },
  },
  // The thresholds OBJECT ENCODING reports a hash's, a sorted set's and a set's encoding by
  // (svc's packed forms keep their own fixed limits): types/compact.ts.
  {
    name: "hash-max-listpack-entries",
    alias: "hash-max-ziplist-entries",
    type: int(0),
    default: String(hashListpackEntriesMax),
    apply: setsEncodingLimit("hashEntries"),
  },
  {
    name: "hash-max-listpack-value",
    alias: "hash-max-ziplist-value",
    type: memory(0),
    default: String(compactValueBytesMax),
    apply: setsEncodingLimit("hashValueBytes"),
  },
  {
    name: "zset-max-listpack-entries",
    alias: "zset-max-ziplist-entries",
    type: int(0),
    default: String(compactEntriesMax),
    apply: setsEncodingLimit("zsetEntries"),
  },
  {
    name: "zset-max-listpack-value",
    alias: "zset-max-ziplist-value",
    type: memory(0),
    default: String(compactValueBytesMax),
    apply: setsEncodingLimit("zsetValueBytes"),
  },
  {
    name: "set-max-intset-entries",
    type: int(0),
    default: String(intsetEntriesMax),
    apply: setsEncodingLimit("intsetEntries"),
  },
  {
    name: "maxmemory-policy",
    type: words(...evictionPolicies),
    default: "noeviction",
    apply: (s, v) => {
      s.eviction.policy = v as EvictionPolicy;
      for (const db of s.dbs) {
        db.frequency = v.endsWith("-lfu") ? s.frequencyConfig : null;
        db.stampsWrites = v.endsWith("-lru");
      }
    },
  },
  {
    name: "maxmemory-samples",
    type: int(1, int32Max),
    default: "5",
    // Keys sampled per database to choose each key evicted (keyspace/eviction.ts).
    apply: (s, v) => {
      s.eviction.samples = Number(v);
    },
  },
  {
    name: "lfu-log-factor",
    type: int(0, int32Max),
    default: "10",
    // How slowly an LFU access counter climbs (keyspace/access-frequency.ts).
    apply: (s, v) => {
      s.frequencyConfig.logFactor = Number(v);
    },
  },
  {
    name: "lfu-decay-time",
    type: int(0, int32Max),
    default: "1",
    // Minutes for an LFU access counter to fall by one; 0 never.
    apply: (s, v) => {
      s.frequencyConfig.decayMinutes = Number(v);
    },
  },
  // Above this many bytes a sparse HyperLogLog turns dense (read by each PF* write).
  { name: "hll-sparse-max-bytes", type: memory(0), default: "3000" },
  {
    name: "stream-node-max-entries",
    type: int(0),
    default: "100",
    // Entries per node of a stream (types/stream/stream.ts); 0 for no limit.
    apply: (s, v) => {
      s.streamNodeEntriesMax = Number(v);
    },
  },

  // ---- persistence ----
  { name: "appendonly", type: bool, default: "no", apply: (s) => s.onAppendonly?.() },
  {
    name: "appendfsync",
    type: words("everysec", "always", "no"),
    default: "everysec",
    apply: (s, v) => s.aof?.setPolicy(v as FsyncPolicy),
  },
  {
    name: "aof-timestamp-enabled",
    type: bool,
    default: "no",
    apply: (s, v) => {
      if (s.aof !== null) s.aof.timestamps = v === "yes";
    },
  },
  { name: "aof-load-truncated", type: bool, default: "yes" },
  // Rewrite the append-only file automatically once it has doubled since its last rewrite, and
  // only once it is at least auto-aof-rewrite-min-size.
  { name: "auto-aof-rewrite-percentage", type: text, default: "100" },
  { name: "auto-aof-rewrite-min-size", type: memory(0), default: String(64 * MiB) },
  { name: "save", type: text, default: "" },

  // ---- observing ----
  {
    name: "slowlog-log-slower-than",
    type: int(-1),
    default: "10000",
    // SLOWLOG logs commands that took at least this many microseconds; 0 logs all, -1 none.
    apply: (s, v) => {
      s.slowlog.thresholdMicros = Number(v);
    },
  },
  {
    name: "slowlog-max-len",
    type: int(0),
    default: "128",
    apply: (s, v) => {
      s.slowlog.lengthMax = Number(v);
    },
  },
  {
    name: "latency-monitor-threshold",
    type: int(0),
    default: "0",
    // Events that took at least this many ms are recorded; 0 records none (observe/latency-monitor.ts).
    apply: (s, v) => {
      s.latency.thresholdMs = Number(v);
    },
  },
  {
    name: "latency-tracking",
    type: bool,
    default: "yes",
    apply: (s, v) => {
      s.timing.tracksLatency = v === "yes";
    },
  },
  { name: "latency-tracking-info-percentiles", type: { kind: "percentiles" }, default: "50 99 99.9" },
  {
    name: "notify-keyspace-events",
    type: { kind: "event-classes" },
    default: "",
    apply: (s, v) => {
      s.events.configure(v);
      // Read back as Redis writes it ("KEA" reads "AKE"); the classes come from what was set.
      s.config.set("notify-keyspace-events", formatEventClasses(parseEventClasses(v) ?? 0));
    },
  },
  { name: "hz", type: text, default: "10" },

  // ---- replicas ----
  // svc has none, so a master told to want any (and a lag to judge them by) refuses every write
  // with NOREPLICAS, as Redis's does while no replica is connected.
  { name: "min-replicas-to-write", alias: "min-slaves-to-write", type: int(0, int32Max), default: "0", apply: applyReplicaWants },
  { name: "min-replicas-max-lag", alias: "min-slaves-max-lag", type: int(0, int32Max), default: "10", apply: applyReplicaWants },

  // ---- scripts ----
  {
    name: "busy-reply-threshold",
    alias: "lua-time-limit",
    type: int(0),
    default: "5000",
    // Ms a script runs before the server answers others BUSY and SCRIPT KILL may end it
    // (scripting/busy-script.ts); at most 2^32 - 1, the native side's u32.
    apply: (s, v) => {
      s.busyReplyThresholdMs = Math.min(Number(v), 2 ** 32 - 1);
    },
  },
];

/** svc's own rows and those it only remembers. */
const allParams: readonly ConfigParam[] = [...configParams, ...rememberedParams];

/** The rows by name, and by alias. */
export const configParamsByName: ReadonlyMap<string, ConfigParam> = new Map(
  allParams.flatMap((param): [string, ConfigParam][] =>
    param.alias === undefined
      ? [[param.name, param]]
      : [
          [param.name, param],
          [param.alias, param],
        ],
  ),
);

/** A parameter's default as a number: for the engine's fields that start from the table. */
export function defaultNumber(name: string): number {
  const value = configParamsByName.get(name)?.default;
  if (value === undefined) throw new AssertionError(`CONFIG parameter ${name} has no default`);
  return Number(value);
}

/** Every parameter's default, by name (and alias), as a server starts. */
export function configDefaults(): Map<string, string> {
  const defaults = new Map<string, string>();
  for (const param of allParams) {
    if (param.default === undefined) continue;
    defaults.set(param.name, param.default);
    if (param.alias !== undefined) defaults.set(param.alias, param.default);
  }
  return defaults;
}

/** The largest share a percentage parameter takes. */
const percentMax = 100;

const setFailed = (name: string, why: string) => new KvError(`ERR CONFIG SET failed (possibly related to argument '${name}') - ${why}`);

/** Redis's memtoull units: k/m/g are powers of 1000, kb/mb/gb powers of 1024. */
const unitBytes: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1024,
  m: 1e6,
  mb: MiB,
  g: 1e9,
  gb: 1024 * MiB,
};

/** A memory value ("100", "1mb", "2GB") in bytes, or null when Redis would refuse it. */
export function parseMemoryValue(value: string): number | null {
  const match = /^(\d+)([a-z]*)$/i.exec(value);
  if (match === null) return null;
  const unit = unitBytes[match[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const bytes = BigInt(match[1]!) * BigInt(unit);
  return bytes > int64Max ? null : Number(bytes);
}

/** A percentile as Redis writes it: "%f" without trailing zeros (99.9, 50, 99.99). */
const formatPercentile = (n: number): string => n.toFixed(6).replace(/\.?0+$/, "");

/** Whether `value` names what a start-only parameter already holds: the same addresses. */
function sameStartValue(name: string, value: string, current: string | undefined): boolean {
  if (current === undefined) return false;
  if (name !== "bind") return value === current;
  const words = (text: string) => text.split(" ").filter((w) => w !== "");
  return words(value).join(" ") === words(current).join(" ");
}

/**
 * The value CONFIG SET stores for `name`: memory values in bytes, words in lower case, numbers
 * in Redis's form, anything else as given. Throws Redis's error for a value it would refuse.
 * `current`: the parameter's value now — a start-only one may be "set" to it, which changes
 * nothing, as Redis applies nothing for a value that did not change (tools set back every value
 * CONFIG GET * showed, Redis's own "CONFIG sanity" test among them).
 */
export function canonicalConfigValue(name: string, value: string, current?: string): string {
  const param = configParamsByName.get(name);
  if (param === undefined) return value;
  // An old name is checked, and its errors worded, as the parameter it stands for.
  if (param.name !== name) return canonicalConfigValue(param.name, value, current);
  const type = param.type;
  switch (type.kind) {
    case "immutable":
      throw setFailed(name, "can't set immutable config");
    case "start-only":
      if (sameStartValue(name, value, current)) return current!;
      throw setFailed(name, `svc sets it at start only; restart with ${type.flag}`);
    case "bool": {
      const word = value.toLowerCase();
      if (word !== "yes" && word !== "no") throw setFailed(name, "argument must be 'yes' or 'no'");
      return word;
    }
    case "enum": {
      const word = value.toLowerCase();
      if (!type.words.includes(word)) throw setFailed(name, `argument(s) must be one of the following: ${type.words.join(", ")}`);
      return word;
    }
    case "integer": {
      const n = parseInt64(value);
      if (n === null) throw setFailed(name, "argument couldn't be parsed into an integer");
      const max = type.max ?? int64Max;
      if (n < BigInt(type.min) || n > max) throw setFailed(name, `argument must be between ${type.min} and ${max} inclusive`);
      return String(n);
    }
    case "memory": {
      const bytes = parseMemoryValue(value);
      if (bytes === null) throw setFailed(name, "argument must be a memory value");
      if (bytes < type.min) throw setFailed(name, `argument must be between ${type.min} and ${int64Max} inclusive`);
      return String(bytes);
    }
    case "memory-or-percent": {
      const percent = /^(\d+)%$/.exec(value);
      if (percent !== null) {
        const n = Number(percent[1]);
        if (n > percentMax) throw setFailed(name, `percentage argument must be less or equal to ${percentMax}`);
        return n === 0 ? "0" : `${n}%`;
      }
      const bytes = parseMemoryValue(value);
      if (bytes === null || value.endsWith("%")) throw setFailed(name, "argument must be a memory or percent value");
      return String(bytes);
    }
    case "event-classes":
      if (parseEventClasses(value) === null) throw setFailed(name, invalidEventClassText);
      return value;
    case "percentiles": {
      // Numbers separated by spaces (none is allowed), each written as C's "%f" writes it with
      // the trailing zeros dropped ("1e2" reads "100"), as Redis stores them.
      const numbers = value
        .split(/\s+/)
        .filter((w) => w !== "")
        .map(Number);
      if (numbers.some((n) => Number.isNaN(n))) throw setFailed(name, `Invalid ${name} parameters`);
      if (numbers.some((n) => n < 0 || n > 100)) throw setFailed(name, `${name} parameters should sit between [0.0,100.0]`);
      return numbers.map(formatPercentile).join(" ");
    }
    case "text":
      return value;
  }
}
