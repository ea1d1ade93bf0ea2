/**
 * Ranges over a sorted set: by score ("(1.5", "-inf") and by member ("[a", "-"), the tests for
 * whether a score or member lies inside one, and their parsing from command arguments with Redis's
 * errors. ZRANGE and its family, ZCOUNT, ZLEXCOUNT and ZREMRANGEBY* share them.
 */
import { skipLeadingSpace, strtod } from "../../text/args.ts";
import { KvError } from "../../text/errors.ts";

/** An interval of scores; either end may be open (exclusive) and either may be infinite. */
export interface ScoreRange {
  min: number;
  max: number;
  minExclusive: boolean;
  maxExclusive: boolean;
}

/** One end of a lexicographic range: "-" (below everything), "+" (above everything) or a string. */
export type LexBound = { kind: "-" } | { kind: "+" } | { kind: "value"; value: string; exclusive: boolean };

export interface LexRange {
  min: LexBound;
  max: LexBound;
}

export const scoreAboveMin = (score: number, range: ScoreRange) => (range.minExclusive ? score > range.min : score >= range.min);

export const scoreBelowMax = (score: number, range: ScoreRange) => (range.maxExclusive ? score < range.max : score <= range.max);

/** A range that can hold no score at all: min above max, or a point with an open end. */
export const scoreRangeIsEmpty = (range: ScoreRange) => range.min > range.max || (range.min === range.max && (range.minExclusive || range.maxExclusive));

export function lexAboveMin(member: string, bound: LexBound): boolean {
  if (bound.kind === "-") return true;
  if (bound.kind === "+") return false;
  return bound.exclusive ? member > bound.value : member >= bound.value;
}

export function lexBelowMax(member: string, bound: LexBound): boolean {
  if (bound.kind === "-") return false;
  if (bound.kind === "+") return true;
  return bound.exclusive ? member < bound.value : member <= bound.value;
}

/** A lex range that can hold no string: its ends are crossed, or a point with an open end. */
export function lexRangeIsEmpty(range: LexRange): boolean {
  const { min, max } = range;
  if (min.kind === "+" || max.kind === "-") return true;
  if (min.kind === "-" || max.kind === "+") return false;
  if (min.value > max.value) return true;
  return min.value === max.value && (min.exclusive || max.exclusive);
}

/** Ranks below are 0-based; -1 stands for "no such element". */
// ---- range arguments ----------------------------------------------------------------------------

const notFloatRange = () => new KvError("ERR min or max is not a float");
const notLexRange = () => new KvError("ERR min or max not valid string range item");

/**
 * A range end as Redis reads it: plain strtod with only a full-consumption and NaN check. That is
 * laxer than score arguments — leading spaces, overflow to ±inf, and even the empty string (0)
 * are accepted — and Redis clients can observe it, so we follow.
 */
function parseRangeNumber(text: string): number | null {
  if (text === "") return 0;
  return strtod(skipLeadingSpace(text));
}

function parseScoreBound(text: string): { value: number; exclusive: boolean } {
  const exclusive = text.startsWith("(");
  const value = parseRangeNumber(exclusive ? text.slice(1) : text);
  if (value === null || Number.isNaN(value)) throw notFloatRange();
  return { value, exclusive };
}

/** A score range from "1.5", "(1.5", "-inf", "+inf"; "ERR min or max is not a float" otherwise. */
export function parseScoreRange(minText: string, maxText: string): ScoreRange {
  const min = parseScoreBound(minText);
  const max = parseScoreBound(maxText);
  return { min: min.value, max: max.value, minExclusive: min.exclusive, maxExclusive: max.exclusive };
}

function parseLexBound(text: string): LexBound {
  if (text === "-") return { kind: "-" };
  if (text === "+") return { kind: "+" };
  if (text.startsWith("[")) return { kind: "value", value: text.slice(1), exclusive: false };
  if (text.startsWith("(")) return { kind: "value", value: text.slice(1), exclusive: true };
  throw notLexRange();
}

/** A lex range from "[a", "(a", "-", "+"; "ERR min or max not valid string range item" otherwise. */
export function parseLexRange(minText: string, maxText: string): LexRange {
  return { min: parseLexBound(minText), max: parseLexBound(maxText) };
}
