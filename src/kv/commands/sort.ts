/**
 * SORT and SORT_RO: the elements of a list, set or sorted set, sorted as numbers (or as bytes with
 * ALPHA), by their own value or by a value looked up through a pattern (BY), cut by LIMIT, and
 * answered as themselves or as values looked up through patterns (GET), or stored as a list
 * (STORE). As Redis 7.0 does it:
 *
 * - a pattern's first `*` is replaced by the element, and `->field` after it reads a hash field:
 *   `weight_*` reads the string key weight_<element>, `obj_*->w` the field w of the hash
 *   obj_<element>; `#` is the element itself; a key of another type, or a pattern without `*`,
 *   reads as nothing (nil);
 * - BY with a pattern without `*` (`BY nosort`) keeps the elements' own order: a list's and a
 *   sorted set's (by rank), both reversed by DESC, and a set's — except that a set stored with
 *   STORE is sorted as ALPHA anyway, so that what is stored does not depend on the set's order;
 * - a number is read as C's strtod reads it (leading spaces and the empty string allowed, nothing
 *   after it, no NaN, no overflow or underflow); any element or BY value that is not one fails the
 *   whole command: "One or more scores can't be converted into double". A missing BY value sorts
 *   as 0, or before everything with ALPHA;
 * - equal numbers are ordered by the elements' bytes, DESC reversing both; ALPHA compares bytes
 *   (Redis uses strcoll, which is byte order in the C locale it runs in by default).
 */
import { hasNonZeroMantissa, infinityPattern, isKeyword, parseInt64, skipLeadingSpace, strtod } from "../text/args.ts";
import { KvError, notAnInteger, syntaxError, wrongType } from "../text/errors.ts";
import { List } from "../types/list/items.ts";
import { MemberSet } from "../types/set/member-set.ts";
import { orderedMembers } from "./set.ts";
import { FieldMap } from "../types/hash/field-map.ts";
import { ZSet } from "../types/zset/zset.ts";
import { MutableString } from "../types/string/bytes.ts";
import { deleteDestination, getValue } from "../kit/lookup.ts";
import { type CommandSpec, type Exec, keyAndOptionKeys } from "../kit/spec.ts";

interface SortOptions {
  desc: boolean;
  alpha: boolean;
  /** LIMIT's offset and count, as given (negative ones are clamped later, as Redis does). */
  offset: number;
  count: number;
  by: string | null;
  /** BY a pattern with no `*`: keep the elements' own order. */
  dontSort: boolean;
  gets: string[];
  store: string | null;
}

const notDoubles = () => new KvError("ERR One or more scores can't be converted into double");

/** The smallest positive normal double: strtod reports ERANGE below it. */
const normalDoubleMin = 2.2250738585072014e-308;

/**
 * SORT's options. `everyKey`: whether the client's user may touch every key; BY with a pattern
 * and GET read keys no argument names, so Redis 7.0 refuses them to a user limited to some keys.
 */
function parseOptions(argv: readonly string[], readonly: boolean, everyKey: boolean): SortOptions {
  const o: SortOptions = { desc: false, alpha: false, offset: 0, count: -1, by: null, dontSort: false, gets: [], store: null };
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!;
    const left = argv.length - i - 1;
    if (isKeyword(word, "ASC")) o.desc = false;
    else if (isKeyword(word, "DESC")) o.desc = true;
    else if (isKeyword(word, "ALPHA")) o.alpha = true;
    else if (isKeyword(word, "LIMIT") && left >= 2) {
      const offset = parseInt64(argv[i + 1]!);
      const count = parseInt64(argv[i + 2]!);
      if (offset === null || count === null) throw notAnInteger();
      o.offset = Number(offset);
      o.count = Number(count);
      i += 2;
    } else if (isKeyword(word, "STORE") && left >= 1 && !readonly) o.store = argv[++i]!;
    else if (isKeyword(word, "BY") && left >= 1) {
      o.by = argv[++i]!;
      // Once a BY without `*` has been seen, a later BY does not make SORT sort again (as in Redis).
      if (!o.by.includes("*")) o.dontSort = true;
      else if (!everyKey) throw new KvError("ERR BY option of SORT denied due to insufficient ACL permissions.");
    } else if (isKeyword(word, "GET") && left >= 1) {
      if (!everyKey) throw new KvError("ERR GET option of SORT denied due to insufficient ACL permissions.");
      o.gets.push(argv[++i]!);
    } else throw syntaxError();
  }
  return o;
}

/** What a pattern reads for `element` (see the top); null for nothing. */
function lookupByPattern(x: Exec, pattern: string, element: string): string | null {
  if (pattern === "#") return element;
  const star = pattern.indexOf("*");
  if (star === -1) return null;
  const arrow = pattern.indexOf("->", star + 1);
  const field = arrow !== -1 && arrow + 2 < pattern.length ? pattern.slice(arrow + 2) : null;
  const key = pattern.slice(0, star) + element + pattern.slice(star + 1, field === null ? pattern.length : arrow);
  const value = getValue(x, key);
  if (value === undefined) return null;
  if (field !== null) return value instanceof FieldMap ? (value.get(field) ?? null) : null;
  if (typeof value === "string") return value;
  return value instanceof MutableString ? value.toString() : null;
}

/** A weight as SORT reads it with strtod (see the top); throws for anything else. */
function parseWeight(text: string): number {
  const trimmed = skipLeadingSpace(text);
  if (trimmed === "") return 0;
  const n = strtod(trimmed);
  if (n === null) throw notDoubles();
  // strtod's ERANGE: an overflow to ±inf, or a non-zero number below the normal doubles.
  const outOfRange = (!Number.isFinite(n) && !infinityPattern.test(trimmed)) || (Math.abs(n) < normalDoubleMin && hasNonZeroMantissa(trimmed));
  if (outOfRange) throw notDoubles();
  return n;
}

/** The elements to sort, in the value's own order (a list's or a sorted set's reversed when `desc`). */
function elementsOf(value: List | MemberSet | ZSet, desc: boolean): string[] {
  if (value instanceof List) return desc ? value.toArray().reverse() : value.toArray();
  if (value instanceof MemberSet) return orderedMembers(value);
  return Array.from(value.entries(desc), (e) => e.member);
}

function sortElements(x: Exec, elements: string[], o: SortOptions): string[] {
  const sign = o.desc ? -1 : 1;
  const bytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  if (o.alpha) {
    if (o.by === null) return elements.sort((a, b) => sign * bytes(a, b));
    const keyed = elements.map((element) => ({ element, by: lookupByPattern(x, o.by!, element) }));
    keyed.sort((a, b) => sign * (a.by === null ? (b.by === null ? 0 : -1) : b.by === null ? 1 : bytes(a.by, b.by)));
    return keyed.map((k) => k.element);
  }
  const keyed = elements.map((element) => {
    const text = o.by === null ? element : lookupByPattern(x, o.by, element);
    return { element, score: text === null ? 0 : parseWeight(text) };
  });
  keyed.sort((a, b) => sign * (a.score < b.score ? -1 : a.score > b.score ? 1 : bytes(a.element, b.element)));
  return keyed.map((k) => k.element);
}

export function sortCommand(x: Exec, argv: string[], readonly: boolean): void {
  const user = x.session.user;
  const everyKey = user === null || user.unrestricted || x.engine.acl.mayReadEveryKey(user, x.engine.commandNamed(argv[0]!)!, argv);
  const o = parseOptions(argv, readonly, everyKey);
  const value = getValue(x, argv[1]!);
  if (value !== undefined && !(value instanceof List) && !(value instanceof MemberSet) && !(value instanceof ZSet)) throw wrongType();
  // A set's own order is its table's: what is stored, or handed to a script (whose writes the
  // file records, and may depend on it), must not depend on it. Redis sorts by bytes then too.
  if (o.dontSort && value instanceof MemberSet && (o.store !== null || x.session.inScript)) {
    o.dontSort = false;
    o.alpha = true;
    o.by = null;
  }
  let elements = value === undefined ? [] : elementsOf(value, o.dontSort && o.desc);
  if (!o.dontSort) elements = sortElements(x, elements, o);
  // LIMIT as Redis clamps it: a negative offset is 0, a negative count is everything after it.
  const start = Math.max(0, o.offset);
  const end = o.count < 0 ? elements.length : Math.min(elements.length, start + o.count);
  const picked = start >= elements.length ? [] : elements.slice(start, end);
  const output: (string | null)[] = o.gets.length === 0 ? picked : picked.flatMap((e) => o.gets.map((p) => lookupByPattern(x, p, e)));
  if (o.store === null) {
    x.reply.array(output.length);
    for (const item of output) x.reply.bulk(item);
    return;
  }
  // A stored list cannot hold nil: a missing GET value is stored as an empty string.
  if (output.length === 0) {
    deleteDestination(x, o.store);
  } else {
    x.db.set(o.store, new List(output.map((item) => item ?? "")));
    x.db.notify("sortstore", o.store);
  }
  x.reply.integer(output.length);
}

export const sortCommands: readonly CommandSpec[] = [
  {
    name: "sort",
    arity: -2,
    flags: ["write", "denyoom", "movablekeys"],
    group: "generic",
    keys: [1, 1, 1],
    movableKeys: keyAndOptionKeys(2, ["STORE"], { LIMIT: 2, GET: 1, BY: 1 }),
    summary: "Sorts a list, set or sorted set's elements, or stores them sorted.",
    run: (x, argv) => sortCommand(x, argv, false),
  },
  {
    name: "sort_ro",
    arity: -2,
    flags: ["readonly", "movablekeys"],
    group: "generic",
    keys: [1, 1, 1],
    summary: "Sorts a list, set or sorted set's elements.",
    run: (x, argv) => sortCommand(x, argv, true),
  },
];
