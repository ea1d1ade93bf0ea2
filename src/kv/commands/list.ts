/**
 * Lists (types/list/items.ts: packed while small, else a deque) and the list commands including the
 * blocking ones. Argument checks run in the order Redis runs them (some before the key lookup,
 * some after), because that decides which error a client sees when several things are wrong.
 */
import { clampRankRange, int64Max, isKeyword, parseInteger, parseIntegerIn, parseMultiPop } from "../text/args.ts";
import { runBlocking } from "../kit/block.ts";
import { afterRemoval, getList } from "../kit/lookup.ts";
import { type CommandSpec, countedKeys, type Exec } from "../kit/spec.ts";
import { arityError, indexOutOfRange, KvError, mustBePositive, noSuchKey, syntaxError, wrongType } from "../text/errors.ts";
import { typeOf } from "../types/value.ts";
import type { Reply } from "../kit/reply.ts";
import { List } from "../types/list/items.ts";

type End = "left" | "right";

function parseEnd(text: string): End {
  if (isKeyword(text, "LEFT")) return "left";
  if (isKeyword(text, "RIGHT")) return "right";
  throw syntaxError();
}

const pop = (list: List, end: End) => (end === "left" ? list.popFront() : list.popBack());

function push(list: List, end: End, value: string): void {
  if (end === "left") list.pushFront(value);
  else list.pushBack(value);
}

// ---- pushes and pops --------------------------------------------------------------------------

/** The keyspace events of a pop from `end` and a push onto it. */
const popEvent = (end: End) => (end === "left" ? "lpop" : "rpop");
const pushEvent = (end: End) => (end === "left" ? "lpush" : "rpush");

function pushGeneric(x: Exec, argv: string[], end: End, onlyIfExists: boolean): void {
  const key = argv[1]!;
  const existing = getList(x, key);
  if (existing === undefined && onlyIfExists) return x.reply.integer(0);
  const list = existing ?? new List();
  list.pushAll(argv, 2, end === "left");
  if (existing === undefined) x.db.set(key, list);
  else x.db.modified(key);
  x.db.notify(pushEvent(end), key);
  x.reply.integer(list.size);
}

function popGeneric(x: Exec, argv: string[], end: End): void {
  if (argv.length > 3) throw arityError(argv[0]!.toLowerCase());
  const hasCount = argv.length === 3;
  const count = hasCount ? parseIntegerIn(argv[2]!, 0, int64Max, mustBePositive) : 1;
  const key = argv[1]!;
  const list = getList(x, key);
  if (list === undefined) return hasCount ? x.reply.array(null) : x.reply.bulk(null);
  if (!hasCount) {
    const value = pop(list, end)!;
    afterRemoval(x, key, list, popEvent(end));
    return x.reply.bulk(value);
  }
  const n = Math.min(count, list.size);
  x.reply.array(n);
  for (let i = 0; i < n; i++) x.reply.bulk(pop(list, end)!);
  if (n > 0) afterRemoval(x, key, list, popEvent(end));
}

// ---- reading and editing in place -------------------------------------------------------------

function lrange(x: Exec, argv: string[]): void {
  const start = parseInteger(argv[2]!);
  const end = parseInteger(argv[3]!);
  const list = getList(x, argv[1]!);
  const range = list === undefined ? null : clampRankRange(start, end, list.size);
  if (range === null) return x.reply.array(0);
  x.reply.array(range[1] - range[0] + 1);
  // Indexing, not range()'s generator: a generator step costs more than the element's reply.
  for (let i = range[0]; i <= range[1]; i++) x.reply.bulk(list!.at(i)!);
}

function lindex(x: Exec, argv: string[]): void {
  const list = getList(x, argv[1]!);
  if (list === undefined) return x.reply.bulk(null);
  const index = parseInteger(argv[2]!);
  x.reply.bulk(list.at(index < 0 ? list.size + index : index) ?? null);
}

function lset(x: Exec, argv: string[]): void {
  const list = getList(x, argv[1]!);
  if (list === undefined) throw noSuchKey();
  const index = parseInteger(argv[2]!);
  const at = index < 0 ? list.size + index : index;
  if (at < 0 || at >= list.size) throw indexOutOfRange();
  list.set(at, argv[3]!);
  x.db.modified(argv[1]!);
  x.db.notify("lset", argv[1]!);
  x.reply.simple("OK");
}

function linsert(x: Exec, argv: string[]): void {
  const [, key, where, pivot, value] = argv as [string, string, string, string, string];
  const after = isKeyword(where, "AFTER");
  if (!after && !isKeyword(where, "BEFORE")) throw syntaxError();
  const list = getList(x, key);
  if (list === undefined) return x.reply.integer(0);
  const at = list.indexOf(pivot);
  if (at < 0) return x.reply.integer(-1);
  list.insert(after ? at + 1 : at, value);
  x.db.modified(key);
  x.db.notify("linsert", key);
  x.reply.integer(list.size);
}

function lrem(x: Exec, argv: string[]): void {
  const key = argv[1]!;
  const count = parseInteger(argv[2]!);
  const value = argv[3]!;
  const list = getList(x, key);
  if (list === undefined) return x.reply.integer(0);
  // A negative count removes from the tail.
  const removed = list.removeEqual(value, count === 0 ? Infinity : Math.abs(count), count < 0);
  if (removed === 0) return x.reply.integer(0);
  afterRemoval(x, key, list, "lrem");
  x.reply.integer(removed);
}

/** What a list trimmed to nothing holds. */
const nothingLeft = { size: 0 } as const;

function ltrim(x: Exec, argv: string[]): void {
  const start = parseInteger(argv[2]!);
  const end = parseInteger(argv[3]!);
  const key = argv[1]!;
  const list = getList(x, key);
  if (list === undefined) return x.reply.simple("OK");
  const range = clampRankRange(start, end, list.size);
  if (range !== null) {
    const dropBack = list.size - 1 - range[1];
    for (let i = 0; i < range[0]; i++) list.popFront();
    for (let i = 0; i < dropBack; i++) list.popBack();
  }
  // "ltrim" even when nothing was trimmed, as Redis publishes it; "del" after it when all was (a
  // list trimmed to nothing is dropped whole, not popped).
  afterRemoval(x, key, range === null ? nothingLeft : list, "ltrim");
  x.reply.simple("OK");
}

function lpos(x: Exec, argv: string[]): void {
  let rank = 1;
  let count: number | null = null;
  let maxLen = 0;
  for (let i = 3; i < argv.length; i++) {
    const option = argv[i]!;
    const hasValue = i + 1 < argv.length;
    if (isKeyword(option, "RANK") && hasValue) {
      rank = parseInteger(argv[++i]!);
      if (rank === 0) {
        throw new KvError(
          "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
        );
      }
      if (argv[i] === "-9223372036854775808") {
        throw new KvError("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
      }
    } else if (isKeyword(option, "COUNT") && hasValue) count = parseIntegerIn(argv[++i]!, 0, int64Max, () => new KvError("ERR COUNT can't be negative"));
    else if (isKeyword(option, "MAXLEN") && hasValue) maxLen = parseIntegerIn(argv[++i]!, 0, int64Max, () => new KvError("ERR MAXLEN can't be negative"));
    else throw syntaxError();
  }
  const list = getList(x, argv[1]!);
  if (list === undefined) return count === null ? x.reply.bulk(null) : x.reply.array(0);
  const wanted = count === 0 ? Infinity : (count ?? 1);
  const matches: number[] = [];
  let skip = Math.abs(rank) - 1;
  const size = list.size;
  const scanned = maxLen === 0 ? size : Math.min(maxLen, size);
  for (let step = 0; step < scanned && matches.length < wanted; step++) {
    const index = rank > 0 ? step : size - 1 - step;
    if (list.at(index) !== argv[2]) continue;
    if (skip > 0) skip--;
    else matches.push(index);
  }
  if (count === null) return matches.length === 0 ? x.reply.bulk(null) : x.reply.integer(matches[0]!);
  x.reply.array(matches.length);
  for (const m of matches) x.reply.integer(m);
}

// ---- moving between lists ---------------------------------------------------------------------

/**
 * Pops from `list`, the list at `source`, at `from` and pushes onto `destination` at `to`, and
 * answers the element. The destination's type is checked before anything moves. Redis publishes
 * the push on the destination before the pop on the source, and both when they are one key.
 */
function moveElement(x: Exec, source: string, list: List, destination: string, from: End, to: End): void {
  const target = getList(x, destination);
  const value = pop(list, from)!;
  if (target === undefined) {
    const fresh = new List();
    push(fresh, to, value);
    x.db.set(destination, fresh);
  } else {
    // When source and destination are the same key this is a rotation of one list.
    push(target, to, value);
    x.db.modified(destination);
  }
  x.db.notify(pushEvent(to), destination);
  // Onto itself, the list got its element back: one change, never emptied, but both events.
  if (source === destination) x.db.notify(popEvent(from), source);
  else afterRemoval(x, source, list, popEvent(from));
  x.reply.bulk(value);
}

/** LMOVE and RPOPLPUSH: a null bulk for a missing source. */
function lmoveGeneric(x: Exec, source: string, destination: string, from: End, to: End): void {
  const list = getList(x, source);
  if (list === undefined) return x.reply.bulk(null);
  moveElement(x, source, list, destination, from, to);
}

// ---- LMPOP and the blocking family ------------------------------------------------------------

const ends = ["LEFT", "RIGHT"] as const;

/** Pops up to `count` from `list`, the list at `key`, answering [key, [elements]]. */
function popMany(x: Exec, key: string, list: List, end: End, count: number): void {
  const n = Math.min(count, list.size);
  x.reply.array(2);
  x.reply.bulk(key);
  x.reply.array(n);
  for (let i = 0; i < n; i++) x.reply.bulk(pop(list, end)!);
  afterRemoval(x, key, list, popEvent(end));
}

function lmpop(x: Exec, argv: string[]): void {
  const { keys, end, count } = parseMultiPop(argv, 1, ends);
  for (const key of keys) {
    const list = getList(x, key);
    if (list !== undefined) return popMany(x, key, list, end === 0 ? "left" : "right", count);
  }
  x.reply.array(null);
}

const nullArray = (reply: Reply) => reply.array(null);
const nullBulk = (reply: Reply) => reply.bulk(null);

function bpop(x: Exec, argv: string[], end: End): void {
  runBlocking(x, {
    type: "list",
    keys: argv.slice(1, -1),
    timeoutText: argv.at(-1)!,
    timedOut: nullArray,
    serve: (y, key, list) => {
      const value = pop(list, end)!;
      afterRemoval(y, key, list, popEvent(end));
      y.propagate = [[end === "left" ? "LPOP" : "RPOP", key]];
      y.reply.array(2);
      y.reply.bulk(key);
      y.reply.bulk(value);
    },
  });
}

function blmoveGeneric(x: Exec, source: string, destination: string, from: End, to: End, timeoutText: string): void {
  runBlocking(x, {
    type: "list",
    keys: [source],
    destination,
    timeoutText,
    timedOut: nullBulk,
    serve: (y, key, list) => {
      if (y.session.blocked !== null) {
        // Woken with a destination of the wrong type: Redis answers the error and unblocks.
        const target = y.db.get(destination);
        if (target !== undefined && typeOf(target) !== "list") return y.reply.error(wrongType().message);
      }
      moveElement(y, key, list, destination, from, to);
      y.propagate = [["LMOVE", key, destination, from.toUpperCase(), to.toUpperCase()]];
    },
  });
}

function blmpop(x: Exec, argv: string[]): void {
  const timeoutText = argv[1]!;
  const { keys, end, count } = parseMultiPop(argv, 2, ends);
  runBlocking(x, {
    type: "list",
    keys,
    timeoutText,
    timedOut: nullArray,
    serve: (y, key, list) => {
      popMany(y, key, list, end === 0 ? "left" : "right", count);
      y.propagate = [[end === 0 ? "LPOP" : "RPOP", key, String(count)]];
    },
  });
}

// ---- declarations -----------------------------------------------------------------------------

const one: readonly [number, number, number] = [1, 1, 1];
const write = ["write", "denyoom", "fast"] as const;

export const listCommands: readonly CommandSpec[] = [
  {
    name: "lpush",
    arity: -3,
    flags: write,
    group: "list",
    summary: "Prepends elements to a list.",
    keys: one,
    run: (x, argv) => pushGeneric(x, argv, "left", false),
  },
  {
    name: "rpush",
    arity: -3,
    flags: write,
    group: "list",
    summary: "Appends elements to a list.",
    keys: one,
    run: (x, argv) => pushGeneric(x, argv, "right", false),
  },
  {
    name: "lpushx",
    arity: -3,
    flags: write,
    group: "list",
    summary: "Prepends elements to an existing list.",
    keys: one,
    run: (x, argv) => pushGeneric(x, argv, "left", true),
  },
  {
    name: "rpushx",
    arity: -3,
    flags: write,
    group: "list",
    summary: "Appends elements to an existing list.",
    keys: one,
    run: (x, argv) => pushGeneric(x, argv, "right", true),
  },
  {
    name: "lpop",
    arity: -2,
    flags: ["write", "fast"],
    group: "list",
    summary: "Removes and returns the first elements of a list.",
    keys: one,
    run: (x, argv) => popGeneric(x, argv, "left"),
  },
  {
    name: "rpop",
    arity: -2,
    flags: ["write", "fast"],
    group: "list",
    summary: "Removes and returns the last elements of a list.",
    keys: one,
    run: (x, argv) => popGeneric(x, argv, "right"),
  },
  {
    name: "llen",
    arity: 2,
    flags: ["readonly", "fast"],
    group: "list",
    summary: "Returns the length of a list.",
    keys: one,
    run: (x, argv) => x.reply.integer(getList(x, argv[1]!)?.size ?? 0),
  },
  { name: "lrange", arity: 4, flags: ["readonly"], group: "list", summary: "Returns a range of elements of a list.", keys: one, run: lrange },
  { name: "lindex", arity: 3, flags: ["readonly"], group: "list", summary: "Returns the element at an index.", keys: one, run: lindex },
  { name: "lset", arity: 4, flags: ["write", "denyoom"], group: "list", summary: "Sets the element at an index.", keys: one, run: lset },
  { name: "linsert", arity: 5, flags: ["write", "denyoom"], group: "list", summary: "Inserts an element before or after another.", keys: one, run: linsert },
  { name: "lrem", arity: 4, flags: ["write"], group: "list", summary: "Removes occurrences of an element.", keys: one, run: lrem },
  { name: "ltrim", arity: 4, flags: ["write"], group: "list", summary: "Keeps only a range of a list.", keys: one, run: ltrim },
  { name: "lpos", arity: -3, flags: ["readonly"], group: "list", summary: "Returns the indexes of matching elements.", keys: one, run: lpos },
  {
    name: "lmove",
    arity: 5,
    flags: ["write", "denyoom"],
    group: "list",
    summary: "Moves an element from one list to another.",
    keys: [1, 2, 1],
    run: (x, argv) => lmoveGeneric(x, argv[1]!, argv[2]!, parseEnd(argv[3]!), parseEnd(argv[4]!)),
  },
  {
    name: "rpoplpush",
    arity: 3,
    flags: ["write", "denyoom"],
    group: "list",
    summary: "Moves the last element of a list to the front of another.",
    keys: [1, 2, 1],
    run: (x, argv) => lmoveGeneric(x, argv[1]!, argv[2]!, "right", "left"),
  },
  {
    name: "lmpop",
    arity: -4,
    flags: ["write", "movablekeys"],
    group: "list",
    summary: "Pops elements from the first non-empty list.",
    // No fixed positions (COMMAND INFO's 0 0 0, as Redis's): the keys follow their count.
    keys: [0, 0, 0],
    movableKeys: countedKeys(1),
    run: lmpop,
  },
  {
    name: "blpop",
    arity: -3,
    flags: ["write", "noscript", "blocking"],
    group: "list",
    summary: "Pops the first element, blocking until one is available.",
    keys: [1, -2, 1],
    run: (x, argv) => bpop(x, argv, "left"),
  },
  {
    name: "brpop",
    arity: -3,
    flags: ["write", "noscript", "blocking"],
    group: "list",
    summary: "Pops the last element, blocking until one is available.",
    keys: [1, -2, 1],
    run: (x, argv) => bpop(x, argv, "right"),
  },
  {
    name: "blmove",
    arity: 6,
    flags: ["write", "denyoom", "noscript", "blocking"],
    group: "list",
    summary: "Moves an element between lists, blocking until one is available.",
    keys: [1, 2, 1],
    run: (x, argv) => blmoveGeneric(x, argv[1]!, argv[2]!, parseEnd(argv[3]!), parseEnd(argv[4]!), argv[5]!),
  },
  {
    name: "brpoplpush",
    arity: 4,
    flags: ["write", "denyoom", "noscript", "blocking"],
    group: "list",
    summary: "Moves the last element to another list, blocking until one is available.",
    keys: [1, 2, 1],
    run: (x, argv) => blmoveGeneric(x, argv[1]!, argv[2]!, "right", "left", argv[3]!),
  },
  {
    name: "blmpop",
    arity: -5,
    flags: ["write", "blocking", "movablekeys"],
    group: "list",
    summary: "Pops elements from the first non-empty list, blocking until one is.",
    keys: [0, 0, 0],
    movableKeys: countedKeys(2),
    run: blmpop,
  },
];
