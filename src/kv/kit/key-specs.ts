/**
 * The keys of a command, with the flags that say how it uses each, as Redis 7.0 finds them for
 * COMMAND GETKEYS and GETKEYSANDFLAGS: by the command's key specs (key-specs-table.ts) where they
 * say it all, else by the command's own key finder (Redis's getkeys_proc), which for the counted
 * forms (ZUNIONSTORE, EVAL, LMPOP …) reads the count as C's atoi and gives no flags, and for SET,
 * BITFIELD and SORT gives the flags their arguments decide.
 */
import { type KeyFlag, type KeySpec, specsByName } from "./key-specs-table.ts";
import type { CommandShape } from "./command-info.ts";

/** A key: its position in argv, and how the command uses it. */
export interface KeyRef {
  at: number;
  flags: readonly KeyFlag[];
}

/** The spec Redis makes for a module command from its legacy key positions. */
const moduleKeyFlags: readonly KeyFlag[] = ["RW", "access", "update"];

/** A command's key specs: its own, or one made from its legacy key positions. */
export function keySpecsOf(spec: CommandShape): readonly KeySpec[] {
  const own = specsByName[spec.name];
  if (own !== undefined) return own;
  const [first, last, step] = spec.keys ?? [0, 0, 0];
  if (first === 0) return [];
  return [{ flags: moduleKeyFlags, begin: first, find: { kind: "range", lastkey: last < 0 ? last : last - first, step, limit: 0 } }];
}

/** An integer as Redis's string2ll reads it (no sign but "-", no leading zeros, no spaces), or null. */
function strictInteger(text: string): number | null {
  return /^(0|-?[1-9]\d{0,18})$/.test(text) ? Number(text) : null;
}

/** An integer as C's atoi reads it: spaces, a sign, then digits up to the first other char; 0 for none. */
function atoi(text: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(text);
  return m === null ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Number(m[1])));
}

/** The keys `specs` find in argv; null where one cannot say (Redis's invalid_spec). */
function keysBySpecs(specs: readonly KeySpec[], argv: readonly string[], arity: number): KeyRef[] | null {
  const argc = argv.length;
  const keys: KeyRef[] = [];
  for (const spec of specs) {
    if (spec.flags.includes("not_key")) continue;
    let first = 0;
    if (typeof spec.begin === "number") first = spec.begin;
    else if (spec.begin !== null) {
      const [keyword, startfrom] = spec.begin;
      const start = startfrom > 0 ? startfrom : argc + startfrom;
      const end = startfrom > 0 ? argc - 1 : 1;
      for (let i = start; i !== end; i = start <= end ? i + 1 : i - 1) {
        if (i >= argc || i < 1) break;
        if (argv[i]!.toLowerCase() === keyword.toLowerCase()) {
          first = i + 1;
          break;
        }
      }
      if (first === 0) continue;
    } else return null;
    let last: number;
    let step: number;
    const find = spec.find;
    if (find === null) return null;
    if (find.kind === "range") {
      step = find.step;
      if (find.lastkey >= 0) last = first + find.lastkey;
      else if (find.limit === 0) last = argc + find.lastkey;
      else last = first + Math.trunc((argc - first) / find.limit) + find.lastkey;
    } else {
      step = find.step;
      if (find.keynumidx >= argc || first + find.keynumidx >= argc) return null;
      const count = strictInteger(argv[first + find.keynumidx]!);
      if (count === null || count < 0) return null;
      first += find.firstkey;
      last = first + count - 1;
    }
    if (last >= argc || last < first || first >= argc) return null;
    for (let i = first; i <= last; i += step) {
      // A command of variable arity checks its own arguments; a key past them is left out.
      if (i >= argc || i < first) {
        if (arity < 0) continue;
        return null;
      }
      keys.push({ at: i, flags: spec.flags });
    }
    if (spec.flags.includes("incomplete")) return null;
  }
  return keys;
}

const noFlags: readonly KeyFlag[] = [];

/** Keys after a count (C's atoi of argv[countAt]), `first` on by `step`, then a store key: Redis's genericGetKeys, flagless. */
function counted(store: number, countAt: number, first: number, step: number): (argv: readonly string[]) => KeyRef[] {
  return (argv) => {
    const n = atoi(argv[countAt] ?? "");
    if (n < 1 || n > Math.trunc((argv.length - first) / step)) return [];
    const keys: KeyRef[] = [];
    for (let i = 0; i < n; i++) keys.push({ at: first + i * step, flags: noFlags });
    if (store > 0) keys.push({ at: store, flags: noFlags });
    return keys;
  };
}

/** SORT: its key, and the last STORE's, skipping LIMIT's, GET's and BY's arguments. */
function sortKeys(argv: readonly string[]): KeyRef[] {
  const keys: KeyRef[] = [{ at: 1, flags: ["RO", "access"] }];
  let store = 0;
  const skips: Record<string, number> = { limit: 2, get: 1, by: 1 };
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!.toLowerCase();
    if (skips[word] !== undefined) i += skips[word]!;
    else if (word === "store" && i + 1 < argv.length) store = i + 1;
  }
  if (store > 0) keys.push({ at: store, flags: ["OW", "update"] });
  return keys;
}

/** GEORADIUS and GEORADIUSBYMEMBER: the key, and the last STORE's or STOREDIST's, flagless. */
function georadiusKeys(argv: readonly string[]): KeyRef[] {
  let stored = -1;
  for (let i = 5; i < argv.length; i++) {
    const word = argv[i]!.toLowerCase();
    if ((word === "store" || word === "storedist") && i + 1 < argv.length) stored = ++i;
  }
  return stored < 0
    ? [{ at: 1, flags: noFlags }]
    : [
        { at: 1, flags: noFlags },
        { at: stored, flags: noFlags },
      ];
}

/** XREAD and XREADGROUP: the first half of what follows STREAMS, once the options before it read right; flagless. */
function xreadKeys(argv: readonly string[]): KeyRef[] {
  let streams = -1;
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!.toLowerCase();
    if (word === "block" || word === "count") i++;
    else if (word === "group") i += 2;
    else if (word === "streams") {
      streams = i;
      break;
    } else if (word !== "noack") break;
  }
  const after = streams < 0 ? 0 : argv.length - streams - 1;
  if (streams < 0 || after === 0 || after % 2 !== 0) return [];
  const keys: KeyRef[] = [];
  for (let i = streams + 1; i < argv.length - after / 2; i++) keys.push({ at: i, flags: noFlags });
  return keys;
}

/** SET: a read-write key with GET among its options, else one it overwrites. */
function setKeys(argv: readonly string[]): KeyRef[] {
  const get = argv.slice(3).some((a) => a.toLowerCase() === "get");
  return [{ at: 1, flags: get ? ["RW", "access", "update"] : ["OW", "update"] }];
}

/** BITFIELD: read only while every operation is a GET (or OVERFLOW) with its arguments there; else read-write. */
function bitfieldKeys(argv: readonly string[]): KeyRef[] {
  let readonly = true;
  for (let i = 2; i < argv.length; i++) {
    const left = argv.length - i - 1;
    const word = argv[i]!.toLowerCase();
    if (word === "get" && left >= 2) i += 2;
    else if (word === "overflow" && left >= 1) i += 1;
    else {
      readonly = false;
      break;
    }
  }
  return [{ at: 1, flags: readonly ? ["RO", "access"] : ["RW", "access", "update"] }];
}

/**
 * MIGRATE: its key argument, or the keys after KEYS when that is "" (none when it is not: the
 * command's own syntax error), skipping the arguments of AUTH and AUTH2 (Redis's migrateGetKeys).
 */
export function migrateKeys(argv: readonly string[]): KeyRef[] {
  const flags: readonly KeyFlag[] = ["RW", "access", "delete"];
  const skips: Readonly<Record<string, number>> = { COPY: 0, REPLACE: 0, AUTH: 1, AUTH2: 2 };
  for (let i = 6; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    if (word === "KEYS") return argv[3] === "" ? argv.slice(i + 1).map((_, n) => ({ at: i + 1 + n, flags })) : [];
    i += skips[word] ?? 0;
  }
  return [{ at: 3, flags }];
}

/** The commands with a key finder of their own, by name (Redis's getkeys_proc). */
const finders: Readonly<Record<string, (argv: readonly string[]) => KeyRef[]>> = {
  sintercard: counted(0, 1, 2, 1),
  zunionstore: counted(1, 2, 3, 1),
  zinterstore: counted(1, 2, 3, 1),
  zdiffstore: counted(1, 2, 3, 1),
  zunion: counted(0, 1, 2, 1),
  zinter: counted(0, 1, 2, 1),
  zdiff: counted(0, 1, 2, 1),
  zintercard: counted(0, 1, 2, 1),
  eval: counted(0, 2, 3, 1),
  evalsha: counted(0, 2, 3, 1),
  eval_ro: counted(0, 2, 3, 1),
  evalsha_ro: counted(0, 2, 3, 1),
  fcall: counted(0, 2, 3, 1),
  fcall_ro: counted(0, 2, 3, 1),
  lmpop: counted(0, 1, 2, 1),
  zmpop: counted(0, 1, 2, 1),
  blmpop: counted(0, 2, 3, 1),
  bzmpop: counted(0, 2, 3, 1),
  sort: sortKeys,
  sort_ro: () => [{ at: 1, flags: ["RO", "access"] }],
  georadius: georadiusKeys,
  georadiusbymember: georadiusKeys,
  xread: xreadKeys,
  xreadgroup: xreadKeys,
  set: setKeys,
  bitfield: bitfieldKeys,
  migrate: migrateKeys,
};

/** Whether the command names keys at all (Redis's doesCommandHaveKeys). */
export function hasKeys(spec: CommandShape): boolean {
  return finders[spec.name] !== undefined || keySpecsOf(spec).some((s) => !s.flags.includes("not_key"));
}

/**
 * The keys argv names, with their flags: by the key specs when they all apply and their flags do
 * not vary, else by the command's key finder; [] when neither finds any.
 */
export function keysWithFlags(spec: CommandShape, argv: readonly string[]): KeyRef[] {
  const specs = keySpecsOf(spec);
  const hasKeySpec = specs.some((s) => !s.flags.includes("not_key"));
  const variable = specs.some((s) => s.flags.includes("variable_flags"));
  if (hasKeySpec && !variable) {
    const keys = keysBySpecs(specs, argv, spec.arity);
    if (keys !== null) return keys;
  }
  return finders[spec.name]?.(argv) ?? [];
}
