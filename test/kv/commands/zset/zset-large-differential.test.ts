// Large sorted sets against redis-server: the shared differential suite keeps to a tiny keyspace,
// where sets stay small (one B+tree leaf, listpack in Redis). Here sets of a few thousand members
// span many leaves and two or three tree levels, and generated batches of reads and writes —
// ranks, score ranges with exclusive ends and LIMIT in both directions, lex ranges, range
// removals, pops, GT/LT/INCR updates — must get byte-identical replies from both servers.
// Lex commands go to a set whose scores are all equal: with mixed scores Redis's answer depends on
// its skip list's random levels.
import { describe, test } from "bun:test";
import fc from "fast-check";
import { show } from "../../support/resp-client.ts";
import { redisAndKvWithClients } from "../../support/side-by-side.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 40 : 12;
/** Members per set: enough for ~50 leaves of 64 and a three-level tree. */
const membersMax = 4000;

/** redis-server and svc kv with one client each, up from before the first test until after the last. */
const servers = redisAndKvWithClients();

// ---- generators -----------------------------------------------------------------------------------

const memberName = (n: number) => `m${String(n).padStart(5, "0")}`;
const member = fc.integer({ min: 0, max: membersMax + 100 }).map(memberName);
/** Few distinct scores, so ties (ordered by member) are everywhere; zeros and infinities too. */
const score = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -40, max: 40 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("0", "-0", "inf", "-inf", "1.5", "-2.25", "1e300") },
);
const bound = fc.oneof(
  score,
  score.map((s) => `(${s}`),
  fc.constantFrom("-inf", "+inf", "(-inf", "(+inf"),
);
const lexBound = fc.oneof(
  fc.constantFrom("-", "+"),
  fc.tuple(fc.constantFrom("[", "("), member).map(([p, m]) => p + m),
);
const rank = fc.integer({ min: -membersMax - 50, max: membersMax + 50 }).map(String);
const small = fc.integer({ min: -3, max: 60 }).map(String);
const limit = fc.option(
  fc.tuple(fc.integer({ min: -1, max: membersMax }), small).map(([o, c]) => ["LIMIT", String(o), c]),
  { nil: [] as string[] },
);
const flags = (words: string[]) => fc.subarray(words).map((w) => w);
const cmd = (...parts: fc.Arbitrary<string | string[]>[]) => fc.tuple(...parts).map((p) => p.flat());
const lit = (s: string) => fc.constant(s);

const command: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 6, arbitrary: cmd(lit("ZADD"), lit("z"), fc.constantFrom([], ["GT"], ["LT"], ["XX", "CH"], ["NX"]), score, member) },
  { weight: 2, arbitrary: cmd(lit("ZINCRBY"), lit("z"), fc.constantFrom("1", "-1", "0.5", "100"), member) },
  { weight: 2, arbitrary: cmd(lit("ZREM"), lit("z"), member, member) },
  { weight: 3, arbitrary: cmd(fc.constantFrom("ZRANK", "ZREVRANK", "ZSCORE"), lit("z"), member) },
  { weight: 3, arbitrary: cmd(lit("ZRANGE"), lit("z"), rank, rank, flags(["REV", "WITHSCORES"])) },
  { weight: 5, arbitrary: cmd(lit("ZRANGE"), lit("z"), bound, bound, lit("BYSCORE"), flags(["REV", "WITHSCORES"]), limit) },
  { weight: 2, arbitrary: cmd(fc.constantFrom("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), lit("z"), bound, bound, limit) },
  { weight: 2, arbitrary: cmd(lit("ZCOUNT"), lit("z"), bound, bound) },
  { weight: 1, arbitrary: cmd(lit("ZREMRANGEBYSCORE"), lit("z"), bound, bound) },
  { weight: 1, arbitrary: cmd(lit("ZREMRANGEBYRANK"), lit("z"), rank, rank) },
  { weight: 1, arbitrary: cmd(fc.constantFrom("ZPOPMIN", "ZPOPMAX"), lit("z"), small) },
  {
    weight: 1,
    arbitrary: cmd(fc.constantFrom("ZCARD", "OBJECT"), fc.constant([] as string[]), lit("z")).map((a) => (a[0] === "OBJECT" ? ["OBJECT", "ENCODING", "z"] : a)),
  },
  { weight: 4, arbitrary: cmd(lit("ZRANGE"), lit("lex"), lexBound, lexBound, lit("BYLEX"), flags(["REV"]), limit) },
  { weight: 2, arbitrary: cmd(fc.constantFrom("ZRANGEBYLEX", "ZREVRANGEBYLEX"), lit("lex"), lexBound, lexBound, limit) },
  { weight: 2, arbitrary: cmd(lit("ZLEXCOUNT"), lit("lex"), lexBound, lexBound) },
  { weight: 1, arbitrary: cmd(lit("ZREMRANGEBYLEX"), lit("lex"), lexBound, lexBound) },
  { weight: 2, arbitrary: cmd(lit("ZADD"), lit("lex"), lit("0"), member) },
  { weight: 1, arbitrary: cmd(lit("ZREM"), lit("lex"), member) },
  {
    weight: 1,
    arbitrary: cmd(fc.constantFrom("ZUNIONSTORE", "ZINTERSTORE"), lit("u"), lit("2"), lit("z"), lit("lex"), fc.constantFrom([], ["AGGREGATE", "MAX"])),
  },
  { weight: 1, arbitrary: cmd(lit("ZRANGE"), lit("u"), rank, rank, lit("WITHSCORES")) },
);

/** ZADD commands that fill both sets: `z` with mixed scores, `lex` with all scores 0. */
const filling = fc
  .tuple(
    fc.uniqueArray(fc.integer({ min: 0, max: membersMax }), { minLength: 200, maxLength: membersMax, size: "max" }),
    fc.array(score, { minLength: membersMax, maxLength: membersMax }),
  )
  .map(([ids, scores]) => {
    const z: string[] = ["ZADD", "z"];
    const lex: string[] = ["ZADD", "lex"];
    ids.forEach((id, i) => {
      z.push(scores[i]!, memberName(id));
      lex.push("0", memberName(id));
    });
    return [z, lex];
  });

// ---- the property ---------------------------------------------------------------------------------

async function runBoth(commands: string[][]): Promise<void> {
  const all = [["FLUSHALL"], ...commands];
  const [expected, actual] = await Promise.all([servers.redisClient.pipeline(all), servers.kvClient.pipeline(all)]);
  for (let i = 0; i < all.length; i++) {
    if (show(expected[i]!) === show(actual[i]!)) continue;
    const argv = all[i]!.length > 12 ? [...all[i]!.slice(0, 12), `... (${all[i]!.length} args)`] : all[i]!;
    throw new Error(
      `reply ${i} differs for ${JSON.stringify(argv)}\n  redis: ${show(expected[i]!).slice(0, 2000)}\n  svc:   ${show(actual[i]!).slice(0, 2000)}`,
    );
  }
}

describe("large sorted sets against redis-server", () => {
  test("batches of reads and writes on multi-leaf sets get identical replies", async () => {
    await fc.assert(
      fc.asyncProperty(filling, fc.array(command, { minLength: 50, maxLength: 300, size: "max" }), async (fill, commands) => runBoth([...fill, ...commands])),
      { numRuns: runs, endOnFailure: true },
    );
  }, 300_000);
});
