/**
 * The CONFIG parameters svc acts on. CONFIG SET checks them as Redis 7.0 does — memory values with
 * Redis's units and bounds, the same error text — and stores the canonical form (bytes) that
 * CONFIG GET reports. Any other parameter Redis knows (redis-config-names.ts) is accepted and
 * remembered as typed; a name it does not know is refused (docs/kv.md).
 */
import { kvQueryBufferBytesMax, MiB } from "../../core/limits.ts";
import { int64Max, parseInt64 } from "../text/args.ts";
import { KvError } from "../text/errors.ts";
import { invalidEventClassText, parseEventClasses } from "../keyspace/keyspace-events.ts";
import { evictionPolicies } from "../keyspace/eviction.ts";
import { aclLogEntriesMaxDefault } from "../acl/acl-log.ts";
import { bulkBytesMaxDefault } from "../resp/parser.ts";

interface MemoryParam {
  readonly default: number;
  readonly min: number;
}

/** Memory parameters and their lower bounds; the upper bound of each is LLONG_MAX. */
export const memoryParams: Readonly<Record<string, MemoryParam>> = {
  "proto-max-bulk-len": { default: bulkBytesMaxDefault, min: 1 * MiB },
  "client-query-buffer-limit": { default: kvQueryBufferBytesMax, min: 1 * MiB },
  /** Above this many bytes a sparse HyperLogLog turns dense (read by each PF* write). */
  "hll-sparse-max-bytes": { default: 3000, min: 0 },
  /** The append-only file is rewritten automatically only once it is at least this big. */
  "auto-aof-rewrite-min-size": { default: 64 * MiB, min: 0 },
  /** Past this much used memory, commands that may grow the data are refused (0: no limit). */
  maxmemory: { default: 0, min: 0 },
};

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
export function parseMemoryValue(text: string): number | null {
  const match = /^(\d+)([a-z]*)$/i.exec(text);
  if (match === null) return null;
  const unit = unitBytes[match[2]!.toLowerCase()];
  if (unit === undefined) return null;
  const bytes = BigInt(match[1]!) * BigInt(unit);
  return bytes > int64Max ? null : Number(bytes);
}

interface IntegerParam {
  readonly default: number;
  readonly min: number;
  /** LLONG_MAX unless set. */
  readonly max?: bigint;
}

/** Integer parameters, their defaults and bounds. */
export const integerParams: Readonly<Record<string, IntegerParam>> = {
  /** Clients connected at once at most; a connection past it is refused (server.ts). */
  maxclients: { default: 10_000, min: 1, max: 4_294_967_295n },
  /** SLOWLOG logs commands that took at least this many microseconds; 0 logs all, -1 none. */
  "slowlog-log-slower-than": { default: 10_000, min: -1 },
  /** How slowly an LFU access counter climbs (access-frequency.ts). */
  "lfu-log-factor": { default: 10, min: 0, max: 2_147_483_647n },
  /** Minutes for an LFU access counter to fall by one; 0 never. */
  "lfu-decay-time": { default: 1, min: 0, max: 2_147_483_647n },
  /** Keys sampled per database to choose each key evicted past maxmemory (eviction.ts). */
  "maxmemory-samples": { default: 5, min: 1, max: 2_147_483_647n },
  /** Keys CLIENT TRACKING's table remembers at most (tracking.ts); 0 for no bound. */
  "tracking-table-max-keys": { default: 1_000_000, min: 0 },
  /** ACL LOG keeps this many entries (acl/acl-log.ts). */
  "acllog-max-len": { default: aclLogEntriesMaxDefault, min: 0 },
  /** SLOWLOG keeps this many entries. */
  "slowlog-max-len": { default: 128, min: 0 },
  /** The latency monitor records events that took at least this many ms; 0 records none (latency-monitor.ts). */
  "latency-monitor-threshold": { default: 0, min: 0 },
  /** Entries per node of a stream (stream.ts); 0 for no limit. */
  "stream-node-max-entries": { default: 100, min: 0 },
  /** Ms a script runs before the server answers others BUSY and SCRIPT KILL may end it (scripting/busy-script.ts). */
  "busy-reply-threshold": { default: 5000, min: 0 },
};

/** Old names Redis 7.0 still takes for a parameter: setting either sets both. */
export const configAliases: Readonly<Record<string, string>> = { "lua-time-limit": "busy-reply-threshold" };

const setFailed = (name: string, why: string) => new KvError(`ERR CONFIG SET failed (possibly related to argument '${name}') - ${why}`);

/** Parameters that take one of a few words, listed in the order Redis's error lists them. */
const enumParams: Readonly<Record<string, readonly string[]>> = {
  appendfsync: ["everysec", "always", "no"],
  "maxmemory-policy": evictionPolicies,
};

/** Parameters Redis fixes at start: CONFIG SET refuses them with its words. */
const immutableParams: ReadonlySet<string> = new Set(["databases", "appendfilename", "daemonize", "pidfile", "logfile", "supervised", "aclfile"]);

/**
 * Parameters Redis changes at runtime but svc sets only at start (from its flags): refused
 * rather than remembered and ignored, so nobody believes the files moved or the port changed.
 */
const startOnlyParams: Readonly<Record<string, string>> = { dir: "--dir", port: "--port", bind: "--bind" };

/** Parameters that are yes or no. */
const boolParams: ReadonlySet<string> = new Set(["appendonly", "aof-timestamp-enabled", "aof-load-truncated", "latency-tracking"]);

/**
 * latency-tracking-info-percentiles: numbers from 0 to 100 separated by spaces (none is allowed),
 * each written as C's "%f" writes it with the trailing zeros dropped ("1e2" reads "100"), as
 * Redis stores them; Redis's errors for a word that is not a number and for one out of range.
 */
function canonicalPercentiles(value: string): string {
  const name = "latency-tracking-info-percentiles";
  const words = value.split(/\s+/).filter((w) => w !== "");
  const numbers = words.map(Number);
  if (numbers.some((n) => Number.isNaN(n))) throw setFailed(name, `Invalid ${name} parameters`);
  if (numbers.some((n) => n < 0 || n > 100)) throw setFailed(name, `${name} parameters should sit between [0.0,100.0]`);
  return numbers.map(formatPercentile).join(" ");
}

/** A percentile as Redis writes it: "%f" without trailing zeros (99.9, 50, 99.99). */
const formatPercentile = (n: number): string => n.toFixed(6).replace(/\.?0+$/, "");

/**
 * The value CONFIG SET stores for `name`: memory values in bytes, words in lower case, anything
 * else as given. Throws Redis's error for a value it would refuse.
 */
export function canonicalConfigValue(name: string, value: string): string {
  const alias = configAliases[name];
  if (alias !== undefined) return canonicalConfigValue(alias, value);
  if (immutableParams.has(name)) throw setFailed(name, "can't set immutable config");
  const flagName = startOnlyParams[name];
  if (flagName !== undefined) throw setFailed(name, `svc sets it at start only; restart with ${flagName}`);
  if (boolParams.has(name)) {
    const word = value.toLowerCase();
    if (word !== "yes" && word !== "no") throw setFailed(name, "argument must be 'yes' or 'no'");
    return word;
  }
  const words = enumParams[name];
  if (words !== undefined) {
    const word = value.toLowerCase();
    if (!words.includes(word)) throw setFailed(name, `argument(s) must be one of the following: ${words.join(", ")}`);
    return word;
  }
  if (name === "notify-keyspace-events" && parseEventClasses(value) === null) throw setFailed(name, invalidEventClassText);
  if (name === "latency-tracking-info-percentiles") return canonicalPercentiles(value);
  const integer = integerParams[name];
  if (integer !== undefined) {
    const n = parseInt64(value);
    if (n === null) throw setFailed(name, "argument couldn't be parsed into an integer");
    const max = integer.max ?? int64Max;
    if (n < BigInt(integer.min) || n > max) throw setFailed(name, `argument must be between ${integer.min} and ${max} inclusive`);
    return String(n);
  }
  const param = memoryParams[name];
  if (param === undefined) return value;
  const bytes = parseMemoryValue(value);
  if (bytes === null) throw setFailed(name, "argument must be a memory value");
  if (bytes < param.min) throw setFailed(name, `argument must be between ${param.min} and ${int64Max} inclusive`);
  return String(bytes);
}
