/** Scores and (member, score) pairs as sorted-set commands answer them, in RESP2 and RESP3. */
import type { Exec } from "../../kit/spec.ts";
import type { ZEntry } from "../../types/zset/zset.ts";

/** A score reply: a RESP3 double, or its %.17g text in RESP2. */
export function replyScore(x: Exec, score: number): void {
  // The writers' formatDouble prints -0 as "0"; Redis prints a score's "-0" in both protocols
  // (",-0" in RESP3: ZUNION of a 0 score weighted -2).
  if (Object.is(score, -0)) x.reply.double(score, "-0");
  else x.reply.double(score);
}

/**
 * Members, or members with scores: flat [m1, s1, m2, s2] in RESP2, [[m1, s1], [m2, s2]] in RESP3
 * (Redis nests them there rather than use a map, whose order a client could lose). `nest` false
 * keeps the flat shape in RESP3 too (ZPOPMIN without a count).
 */
export function replyEntries(x: Exec, entries: readonly ZEntry[], withScores: boolean, nest = true): void {
  const pairs = withScores && nest && x.reply.protocol === 3;
  x.reply.array(withScores && !pairs ? entries.length * 2 : entries.length);
  for (const e of entries) {
    if (pairs) x.reply.array(2);
    x.reply.bulk(e.member);
    if (withScores) replyScore(x, e.score);
  }
}
