/**
 * Command-line flags plus environment variables. A command declares its flags once, as data; it
 * gets back typed, validated values and its --help text from the same declaration.
 *
 *   const spec = { port: flag.int({ default: 6379, min: 0, max: 65535, help: "RESP port" }) };
 *   const { values } = parseConfig(spec, ["--port", "0"], process.env, "SVC_KV");  // values.port: number
 *
 * A flag `maxRequestBodyBytes` is spelled `--max-request-body-bytes` and read from the environment
 * as `<PREFIX>_MAX_REQUEST_BODY_BYTES` unless it names its own variable. The command line beats
 * the environment, which beats the default. A flag given twice keeps the last value (as most CLIs
 * do), except lists, which collect every occurrence.
 */
import { SvcError } from "./errors.ts";
import { GiB, KiB, MiB } from "./limits.ts";

interface FlagBase {
  help: string;
  /** An environment variable read instead of the one derived from the command's prefix. */
  env?: string;
}

export type Flag =
  | (FlagBase & { kind: "string"; default?: string; required?: boolean })
  | (FlagBase & { kind: "int"; default: number; min?: number; max?: number })
  | (FlagBase & { kind: "bool"; default: boolean })
  | (FlagBase & { kind: "enum"; default: string; choices: readonly string[] })
  | (FlagBase & { kind: "list"; default: readonly string[] })
  | (FlagBase & { kind: "bytes"; default: number; min?: number; max?: number })
  | (FlagBase & { kind: "duration"; default: number; min?: number; max?: number });

export type FlagSpec = Record<string, Flag>;

type ValueOf<F extends Flag> = F extends { kind: "bool" }
  ? boolean
  : F extends { kind: "list" }
    ? string[]
    : F extends { kind: "enum"; choices: readonly (infer C)[] }
      ? C
      : F extends { kind: "string" }
        ? string
        : number;

export type ConfigValues<S extends FlagSpec> = { [K in keyof S]: ValueOf<S[K]> };

/** Builders that keep each flag's literal types (enum choices) for ConfigValues. */
export const flag = {
  string: (f: Omit<Extract<Flag, { kind: "string" }>, "kind">) => ({ kind: "string" as const, ...f }),
  int: (f: Omit<Extract<Flag, { kind: "int" }>, "kind">) => ({ kind: "int" as const, ...f }),
  bool: (f: Omit<Extract<Flag, { kind: "bool" }>, "kind">) => ({ kind: "bool" as const, ...f }),
  enum: <const C extends readonly string[]>(f: FlagBase & { default: C[number]; choices: C }) => ({ kind: "enum" as const, ...f }),
  list: (f: Omit<Extract<Flag, { kind: "list" }>, "kind">) => ({ kind: "list" as const, ...f }),
  bytes: (f: Omit<Extract<Flag, { kind: "bytes" }>, "kind">) => ({ kind: "bytes" as const, ...f }),
  duration: (f: Omit<Extract<Flag, { kind: "duration" }>, "kind">) => ({ kind: "duration" as const, ...f }),
};

const badConfig = (message: string) => new SvcError("bad_config", message);

// ---- names -----------------------------------------------------------------------------------

export const flagName = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
export const envName = (key: string, f: Flag, prefix: string) => f.env ?? `${prefix}_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

// ---- value parsers ---------------------------------------------------------------------------

const byteUnits: Record<string, number> = { "": 1, b: 1, kib: KiB, mib: MiB, gib: GiB };
const durationUnits: Record<string, number> = { "": 1, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "10MiB" → 10485760. Whole numbers of a binary unit only, so a value is always exact. */
export function parseBytes(text: string): number {
  return parseScaled(text, byteUnits, "a byte size such as 65536, 256KiB or 10MiB");
}

/** "10m" → 600000 milliseconds; a bare number is milliseconds. */
export function parseDuration(text: string): number {
  return parseScaled(text, durationUnits, "a duration such as 1500, 1500ms, 30s, 10m or 1h");
}

function parseScaled(text: string, units: Record<string, number>, expected: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(text.trim());
  const unit = match ? units[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) throw badConfig(`expected ${expected}, got ${JSON.stringify(text)}`);
  const value = Number(match[1]) * unit;
  if (!Number.isSafeInteger(value)) throw badConfig(`${JSON.stringify(text)} is too large`);
  return value;
}

/** The largest unit that divides `value` exactly: 10485760 → "10MiB". */
function formatScaled(value: number, units: [string, number][]): string {
  for (const [name, size] of units) if (value !== 0 && value % size === 0) return `${value / size}${name}`;
  return `${value}${units[units.length - 1]![0]}`;
}

export const formatBytes = (n: number) =>
  formatScaled(n, [
    ["GiB", GiB],
    ["MiB", MiB],
    ["KiB", KiB],
    ["B", 1],
  ]);
export const formatDuration = (ms: number) =>
  formatScaled(ms, [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ]);

function checkRange(n: number, f: { min?: number; max?: number }, what: string, show: (n: number) => string): number {
  const { min = -Infinity, max = Infinity } = f;
  if (n >= min && n <= max) return n;
  const range =
    Number.isFinite(min) && Number.isFinite(max)
      ? `from ${show(min)} to ${show(max)}`
      : Number.isFinite(min)
        ? `of at least ${show(min)}`
        : `of at most ${show(max)}`;
  throw badConfig(`expected ${what} ${range}, got ${show(n)}`);
}

const truthy = new Set(["1", "true", "yes"]);
const falsy = new Set(["0", "false", "no"]);

/** One textual value of a flag, checked against its kind. Errors omit the flag's name. */
function parseValue(f: Flag, text: string): unknown {
  switch (f.kind) {
    case "string":
      return text;
    case "list":
      return [text];
    case "int": {
      if (!/^-?\d+$/.test(text.trim())) throw badConfig(`expected an integer, got ${JSON.stringify(text)}`);
      return checkRange(Number(text), f, "an integer", String);
    }
    case "bool": {
      const lower = text.toLowerCase();
      if (truthy.has(lower)) return true;
      if (falsy.has(lower)) return false;
      throw badConfig(`expected true or false, got ${JSON.stringify(text)}`);
    }
    case "enum":
      if (f.choices.includes(text)) return text;
      throw badConfig(`expected one of ${f.choices.join(", ")}, got ${JSON.stringify(text)}`);
    case "bytes":
      return checkRange(parseBytes(text), f, "a size", formatBytes);
    case "duration":
      return checkRange(parseDuration(text), f, "a duration", formatDuration);
  }
}

/** Runs `parse`, prefixing an error with where the bad value came from. */
function from<T>(source: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SvcError) throw badConfig(`${source}: ${error.message}`);
    throw error;
  }
}

// ---- parsing ---------------------------------------------------------------------------------

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function unknownFlag(name: string, spec: FlagSpec): SvcError {
  const known = Object.keys(spec).map(flagName);
  const closest = known.sort((x, y) => editDistance(name, x) - editDistance(name, y))[0];
  const hint = closest !== undefined && editDistance(name, closest) <= 2 ? ` (did you mean --${closest}?)` : "";
  return badConfig(`unknown flag --${name}${hint}`);
}

function defaults(spec: FlagSpec): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(spec)) values[key] = f.kind === "list" ? [...f.default] : f.default;
  return values;
}

function applyEnv(spec: FlagSpec, env: Record<string, string | undefined>, prefix: string, values: Record<string, unknown>) {
  for (const [key, f] of Object.entries(spec)) {
    const name = envName(key, f, prefix);
    const text = env[name];
    if (text === undefined || text === "") continue;
    values[key] =
      f.kind === "list"
        ? text
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== "")
        : from(name, () => parseValue(f, text));
  }
}

/** Applies the command line; returns the positional arguments. */
function applyArgv(spec: FlagSpec, argv: readonly string[], values: Record<string, unknown>): string[] {
  const byName = new Map(Object.keys(spec).map((key) => [flagName(key), key]));
  const positionals: string[] = [];
  const fromArgv = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "--") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    let name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    let inline = eq === -1 ? undefined : arg.slice(eq + 1);
    let key = byName.get(name);
    if (key === undefined && name.startsWith("no-") && inline === undefined && spec[byName.get(name.slice(3)) ?? ""]?.kind === "bool") {
      key = byName.get(name.slice(3))!;
      name = name.slice(3);
      inline = "false";
    }
    if (key === undefined) throw unknownFlag(name, spec);
    const f = spec[key]!;
    if (inline === undefined && f.kind === "bool") inline = "true";
    if (inline === undefined) {
      if (i + 1 >= argv.length) throw badConfig(`--${name} needs a value`);
      inline = argv[++i]!;
    }
    const text = inline;
    const parsed = from(`--${name}`, () => parseValue(f, text));
    if (f.kind === "list") {
      // The first occurrence on the command line replaces the default and the environment's list.
      values[key] = fromArgv.has(key) ? [...(values[key] as string[]), ...(parsed as string[])] : parsed;
    } else {
      values[key] = parsed;
    }
    fromArgv.add(key);
  }
  return positionals;
}

export interface ParsedConfig<S extends FlagSpec> {
  values: ConfigValues<S>;
  positionals: string[];
}

export function parseConfig<S extends FlagSpec>(spec: S, argv: readonly string[], env: Record<string, string | undefined>, envPrefix: string): ParsedConfig<S> {
  const values = defaults(spec);
  applyEnv(spec, env, envPrefix, values);
  const positionals = applyArgv(spec, argv, values);
  for (const [key, f] of Object.entries(spec)) {
    if (f.kind === "string" && f.required && values[key] === undefined) throw badConfig(`missing required flag --${flagName(key)}`);
  }
  return { values: values as ConfigValues<S>, positionals };
}

// ---- help ------------------------------------------------------------------------------------

const placeholder: Record<Flag["kind"], string> = {
  string: "<text>",
  int: "<n>",
  bool: "",
  enum: "",
  list: "<text>",
  bytes: "<bytes>",
  duration: "<duration>",
};

function showDefault(f: Flag): string {
  switch (f.kind) {
    case "string":
      return f.required ? "required" : f.default === undefined ? "" : `default ${JSON.stringify(f.default)}`;
    case "list":
      return f.default.length === 0 ? "repeatable" : `repeatable, default ${f.default.join(",")}`;
    case "bytes":
      return `default ${formatBytes(f.default)}`;
    case "duration":
      return `default ${formatDuration(f.default)}`;
    default:
      return `default ${f.default}`;
  }
}

/** One aligned line per flag: usage, help, default, environment variable. */
export function formatHelp(spec: FlagSpec, envPrefix: string): string {
  const rows = Object.entries(spec).map(([key, f]) => {
    const usage =
      f.kind === "enum"
        ? `--${flagName(key)} <${f.choices.join("|")}>`
        : f.kind === "bool"
          ? `--[no-]${flagName(key)}`
          : `--${flagName(key)} ${placeholder[f.kind]}`;
    const extra = [showDefault(f), `env ${envName(key, f, envPrefix)}`].filter((s) => s !== "").join("; ");
    return [usage, `${f.help} (${extra})`] as const;
  });
  const width = Math.max(0, ...rows.map(([usage]) => usage.length));
  return rows.map(([usage, text]) => `  ${usage.padEnd(width)}  ${text}`).join("\n");
}
