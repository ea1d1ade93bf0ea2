/**
 * How CONFIG reads and reports a parameter's value (its type, bounds and words), and the
 * constructors the parameter tables (config-table.ts, remembered-params.ts) write their rows with.
 */

/** How CONFIG SET reads a parameter's value, and the form CONFIG GET reports. */
export type ParamType =
  /** yes or no. */
  | { kind: "bool" }
  /** One of a few words, listed in the order Redis's error lists them. */
  | { kind: "enum"; words: readonly string[] }
  /** An integer from `min` to `max` (LLONG_MAX unless given). */
  | { kind: "integer"; min: number; max?: bigint }
  /** Bytes, with Redis's units (1mb, 2GB), from `min` to LLONG_MAX; reported in bytes. */
  | { kind: "memory"; min: number }
  /** maxmemory-clients: bytes as `memory`, or a share of maxmemory, "10%" (at most 100). */
  | { kind: "memory-or-percent" }
  /** notify-keyspace-events' class letters. */
  | { kind: "event-classes" }
  /** latency-tracking-info-percentiles: numbers from 0 to 100. */
  | { kind: "percentiles" }
  /** Any text. */
  | { kind: "text" }
  /** Fixed at start in Redis too: CONFIG SET refuses it. */
  | { kind: "immutable" }
  /** Changed at runtime by Redis, but by svc only at start, with this flag: refused rather than remembered and ignored. */
  | { kind: "start-only"; flag: string };

export const bool: ParamType = { kind: "bool" };
export const text: ParamType = { kind: "text" };
export const immutable: ParamType = { kind: "immutable" };
export const int = (min: number, max?: bigint): ParamType => (max === undefined ? { kind: "integer", min } : { kind: "integer", min, max });
export const memory = (min: number): ParamType => ({ kind: "memory", min });
/** One of `choices`, in the order Redis's error lists them. */
export const words = (...choices: readonly string[]): ParamType => ({ kind: "enum", words: choices });

/** C's INT_MAX and INT_MIN: the bounds of Redis's int parameters. */
export const int32Max = 2_147_483_647n;
export const int32Min = -2_147_483_648;
/** The highest TCP port. */
export const portMax = 65_535n;
