/**
 * ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD: one runner over inputs that may be
 * sorted sets or plain sets (a set's members score 1), with WEIGHTS and AGGREGATE as Redis 7.0's
 * zunionInterDiffGenericCommand reads them.
 */
import { int64Max, isKeyword, parseFloatArg, parseInteger, parseIntegerIn } from "../../text/args.ts";
import { getValue, storeResult } from "../../kit/lookup.ts";
import type { Exec } from "../../kit/spec.ts";
import { KvError, negativeLimit, syntaxError, wrongType } from "../../text/errors.ts";
import { MemberSet } from "../../types/set/member-set.ts";
import { replyEntries } from "./replies.ts";
import { type ZEntry, ZSet } from "../../types/zset/zset.ts";

export type SetOp = "union" | "inter" | "diff";

/** The keyspace event of each operation's STORE form. */
const storeEvents = { union: "zunionstore", inter: "zinterstore", diff: "zdiffstore" } as const;
type Aggregate = "sum" | "min" | "max";

/** An input: a sorted set, or a plain set whose members all score 1 (as in Redis). */
interface Source {
  value: ZSet | MemberSet | undefined;
  weight: number;
}

const sourceSize = (s: Source) => s.value?.size ?? 0;

function* sourceEntries(s: Source): Generator<ZEntry> {
  if (s.value instanceof ZSet) yield* s.value.entries();
  else if (s.value !== undefined) for (const member of s.value.values()) yield { member, score: 1 };
}

function sourceScore(s: Source, member: string): number | undefined {
  if (s.value instanceof ZSet) return s.value.score(member);
  return s.value?.has(member) ? 1 : undefined;
}

/** Reads an input key: a sorted set or a set; anything else is WRONGTYPE. */
function readSource(x: Exec, key: string): Source {
  const value = getValue(x, key);
  if (value !== undefined && !(value instanceof MemberSet) && !(value instanceof ZSet)) throw wrongType();
  return { value, weight: 1 };
}

/** Folds `value` into `target`. A sum of +inf and -inf is NaN; Redis makes it 0. */
function aggregate(target: number, value: number, how: Aggregate): number {
  if (how === "min") return value < target ? value : target;
  if (how === "max") return value > target ? value : target;
  const sum = target + value;
  return Number.isNaN(sum) ? 0 : sum;
}

export interface SetOpCommand {
  name: string;
  op: SetOp;
  /** Index of numkeys in argv (2 for the STORE forms, whose argv[1] is the destination). */
  numkeysIndex: number;
  store: boolean;
  /** ZINTERCARD: count the intersection instead of building it. */
  cardinality: boolean;
}

interface SetOpArgs {
  sources: Source[];
  how: Aggregate;
  withScores: boolean;
  limit: number;
}

/** As Redis's zunionInterDiffGenericCommand: numkeys, then the keys' types, then the options. */
function parseSetOp(x: Exec, argv: string[], c: SetOpCommand): SetOpArgs {
  const numkeys = parseInteger(argv[c.numkeysIndex]!);
  if (numkeys < 1) throw new KvError(`ERR at least 1 input key is needed for '${c.name}' command`);
  if (numkeys > argv.length - c.numkeysIndex - 1) throw syntaxError();
  const sources: Source[] = [];
  for (let i = 0; i < numkeys; i++) sources.push(readSource(x, argv[c.numkeysIndex + 1 + i]!));
  const args: SetOpArgs = { sources, how: "sum", withScores: false, limit: 0 };
  const weighted = c.op !== "diff" && !c.cardinality;
  for (let j = c.numkeysIndex + 1 + numkeys; j < argv.length; j++) {
    const word = argv[j]!;
    const left = argv.length - j - 1;
    if (weighted && left >= numkeys && isKeyword(word, "WEIGHTS")) {
      for (const source of sources) {
        try {
          source.weight = parseFloatArg(argv[++j]!);
        } catch {
          throw new KvError("ERR weight value is not a float");
        }
      }
    } else if (weighted && left >= 1 && isKeyword(word, "AGGREGATE")) {
      const how = argv[++j]!.toLowerCase();
      if (how !== "sum" && how !== "min" && how !== "max") throw syntaxError();
      args.how = how;
    } else if (!c.store && !c.cardinality && isKeyword(word, "WITHSCORES")) {
      args.withScores = true;
    } else if (c.cardinality && left >= 1 && isKeyword(word, "LIMIT")) {
      args.limit = parseIntegerIn(argv[++j]!, 0, int64Max, negativeLimit);
    } else throw syntaxError();
  }
  return args;
}

/** Smallest input first: fewer probes for ZINTER, and the order Redis adds ZUNION's scores in. */
const bySize = (sources: Source[]) => [...sources].sort((a, b) => sourceSize(a) - sourceSize(b));

// Results are built in skiplist form, as in Redis (where it shows: a -0 score survives in ZUNION's
// reply); the STORE forms then compact small results.

function union(sources: Source[], how: Aggregate): ZSet {
  const scores = new Map<string, number>();
  for (const source of bySize(sources)) {
    for (const { member, score } of sourceEntries(source)) {
      let weighted = source.weight * score;
      if (Number.isNaN(weighted)) weighted = 0; // 0 * ±inf
      const current = scores.get(member);
      scores.set(member, current === undefined ? weighted : aggregate(current, weighted, how));
    }
  }
  const result = new ZSet(false);
  for (const [member, score] of scores) result.set(member, score);
  return result;
}

/**
 * Members of every input, probing the larger inputs for each member of the smallest. With
 * `limit` > 0 it stops counting there (ZINTERCARD); `onMatch` gets each member and its score.
 */
function intersect(sources: Source[], how: Aggregate, limit: number, onMatch: (member: string, score: number) => void): number {
  const [smallest, ...others] = bySize(sources);
  let found = 0;
  for (const { member, score: own } of sourceEntries(smallest!)) {
    let score = smallest!.weight * own;
    if (Number.isNaN(score)) score = 0;
    let everywhere = true;
    for (const other of others) {
      const value = sourceScore(other, member);
      if (value === undefined) {
        everywhere = false;
        break;
      }
      score = aggregate(score, value * other.weight, how);
    }
    if (!everywhere) continue;
    onMatch(member, score);
    found++;
    if (limit > 0 && found >= limit) break;
  }
  return found;
}

/** Members of the first input in none of the others, with their own (unweighted) scores. */
function difference(sources: Source[]): ZSet {
  const [first, ...others] = sources;
  const result = new ZSet(false);
  for (const { member, score } of sourceEntries(first!)) {
    if (others.every((other) => sourceScore(other, member) === undefined)) result.set(member, score);
  }
  return result;
}

export function setOp(x: Exec, argv: string[], c: SetOpCommand): void {
  const args = parseSetOp(x, argv, c);
  if (c.cardinality) {
    x.reply.integer(intersect(args.sources, "sum", args.limit, () => {}));
    return;
  }
  let result: ZSet;
  if (c.op === "union") result = union(args.sources, args.how);
  else if (c.op === "diff") result = difference(args.sources);
  else {
    result = new ZSet(false);
    const target = result;
    intersect(args.sources, args.how, 0, (member, score) => target.set(member, score));
  }
  if (c.store) {
    result.compactIfSmall();
    storeResult(x, argv[1]!, result, storeEvents[c.op]);
  } else replyEntries(x, [...result.entries()], args.withScores);
}
