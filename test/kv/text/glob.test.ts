// Glob patterns (src/kv/text/glob.ts), which KEYS, SCAN MATCH, PSUBSCRIBE, PUBSUB CHANNELS, ACL key
// patterns, CONFIG GET and COMMAND LIST PATTERN share: the matcher against a plain recursive
// reference on random patterns and strings; random patterns against redis-server 7.0.15 (KEYS,
// and COMMAND LIST's case-blind matching); and huge patterns — 50,000 `*?`, and the limit on `*`
// runs either side of it — answered as redis-server answers them, through every user of patterns.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { kvGlobStarsMax } from "../../../src/core/limits.ts";
import { globMatch } from "../../../src/kv/text/glob.ts";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

// ---- the reference --------------------------------------------------------------------------

/** One pattern token: a run of stars, or a test for one char. */
type Token = "star" | ((c: number) => boolean);

const foldAscii = (c: number) => (c >= 65 && c <= 90 ? c + 32 : c);
/** A byte as a C signed char. */
const asSigned = (c: number) => (c > 127 ? c - 256 : c);

/**
 * The pattern's tokens, read as Redis reads them: `\x` is x; a class runs to its first unescaped
 * "]" that is not the end of a range (or to the pattern's end) and holds single chars, escaped
 * chars (compared exactly, even without case) and ranges (signed chars, folded when `nocase`).
 */
function tokenize(pattern: string, nocase: boolean): Token[] {
  const tokens: Token[] = [];
  const at = (i: number) => pattern.charCodeAt(i);
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === "*") {
      if (tokens.at(-1) !== "star") tokens.push("star");
      i++;
    } else if (ch === "?") {
      tokens.push(() => true);
      i++;
    } else if (ch === "[") {
      i++;
      const negate = pattern[i] === "^";
      if (negate) i++;
      const tests: ((c: number) => boolean)[] = [];
      while (i < pattern.length && pattern[i] !== "]") {
        if (pattern[i] === "\\" && i + 1 < pattern.length) {
          const x = at(i + 1);
          tests.push((c) => c === x);
          i += 2;
        } else if (i + 2 < pattern.length && pattern[i + 1] === "-") {
          const ends = [asSigned(at(i)), asSigned(at(i + 2))].sort((a, b) => a - b);
          const [lo, hi] = nocase ? ends.map(foldAscii) : ends;
          tests.push((c) => {
            const x = nocase ? foldAscii(asSigned(c)) : asSigned(c);
            return x >= lo! && x <= hi!;
          });
          i += 3;
        } else {
          const x = at(i);
          tests.push((c) => (nocase ? foldAscii(c) === foldAscii(x) : c === x));
          i++;
        }
      }
      i++; // past the "]", or past the end
      tokens.push((c) => tests.some((t) => t(c)) !== negate);
    } else {
      if (ch === "\\" && i + 1 < pattern.length) i++;
      const x = at(i);
      tokens.push((c) => (nocase ? foldAscii(c) === foldAscii(x) : c === x));
      i++;
    }
  }
  return tokens;
}

/** Plain backtracking over the tokens: every way a star can take its run is tried. */
function reference(pattern: string, text: string, nocase: boolean): boolean {
  if (text.length === 0) return pattern.length === 0;
  const tokens = tokenize(pattern, nocase);
  const from = (i: number, j: number): boolean => {
    if (i === tokens.length) return j === text.length;
    const token = tokens[i]!;
    if (token === "star") {
      for (let k = j; k <= text.length; k++) if (from(i + 1, k)) return true;
      return false;
    }
    return j < text.length && token(text.charCodeAt(j)) && from(i + 1, j + 1);
  };
  return from(0, 0);
}

// ---- random patterns and strings --------------------------------------------------------------

/** Chars that mean something in a pattern, letters in both cases, and bytes either side of 0x80. */
const patternChar = fc.constantFrom("*", "*", "?", "[", "]", "^", "-", "\\", "a", "b", "A", "B", "z", "Z", "[", "\u007f", "\u0080", "\u00ff", "0");
const textChar = fc.constantFrom("a", "b", "A", "B", "z", "Z", "-", "]", "[", "^", "\\", "*", "?", "\u007f", "\u0080", "\u00ff", "0");
const pattern = fc.array(patternChar, { maxLength: 10 }).map((cs) => cs.join(""));
const text = fc.array(textChar, { maxLength: 8 }).map((cs) => cs.join(""));

test("the matcher agrees with a plain backtracking reference on random patterns and strings", () => {
  fc.assert(
    fc.property(pattern, text, fc.boolean(), (p, t, nocase) => {
      expect({ p, t, nocase, match: globMatch(p, t, nocase) }).toEqual({ p, t, nocase, match: reference(p, t, nocase) });
    }),
    { numRuns: 20_000 },
  );
  // A few the generator might not reach, with what Redis answers for them.
  expect(globMatch("*", "")).toBe(false);
  expect(globMatch("", "")).toBe(true);
  expect(globMatch("[a-]]", "]")).toBe(true); // a range from "]" to "a", then nothing
  expect(globMatch("[a-\u00ff]", "\u00ff")).toBe(true); // -1 to 97 as signed chars
  expect(globMatch("[a-\u00ff]", "b")).toBe(false);
  expect(globMatch("[\\A]", "a", true)).toBe(false); // an escaped char keeps its case
  expect(globMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "a".repeat(60))).toBe(false);
});

/** KEYS' reply sorted, for comparing sets of keys. */
const sorted = (reply: RespValue) => (reply as string[]).slice().sort();

test("random patterns match the same keys in svc as in redis-server (KEYS)", async () => {
  const keys = fc.sample(
    text.filter((t) => t.length > 0),
    { numRuns: 60, seed: 7 },
  );
  const patterns = fc.sample(pattern, { numRuns: 400, seed: 11 });
  for (const client of [servers.redisClient, servers.kvClient]) {
    await client.call("FLUSHALL");
    await client.call("MSET", ...keys.flatMap((k) => [k, "v"]));
    await client.call("SET", "", "empty");
  }
  const commands = patterns.map((p) => ["KEYS", p]);
  const [redis, kv] = await Promise.all([servers.redisClient.pipeline(commands), servers.kvClient.pipeline(commands)]);
  for (let i = 0; i < commands.length; i++) expect({ pattern: patterns[i], keys: sorted(kv[i]!) }).toEqual({ pattern: patterns[i], keys: sorted(redis[i]!) });
  // "*" alone is every key, the empty one too; "**" is a pattern, and "" matches none of it.
  const [all, stars] = [await servers.kvClient.call("KEYS", "*"), await servers.kvClient.call("KEYS", "**")];
  expect(sorted(all)).toContain("");
  expect(sorted(stars)).not.toContain("");
  expect(sorted(await servers.kvClient.call("KEYS", "*"))).toEqual(sorted(await servers.redisClient.call("KEYS", "*")));
  for (const client of [servers.redisClient, servers.kvClient]) await client.call("FLUSHALL");
});

test("random case-blind patterns pick the same command names (COMMAND LIST FILTERBY PATTERN)", async () => {
  const letters = fc.constantFrom("*", "?", "[", "]", "^", "-", "\\", "e", "E", "t", "T", "s", "S", "|", "a", "z", "[", "g");
  const patterns = fc.sample(
    fc.array(letters, { minLength: 1, maxLength: 7 }).map((cs) => cs.join("")),
    { numRuns: 300, seed: 5 },
  );
  const commands = patterns.map((p) => ["COMMAND", "LIST", "FILTERBY", "PATTERN", p]);
  const [redis, kv] = await Promise.all([servers.redisClient.pipeline(commands), servers.kvClient.pipeline(commands)]);
  // The two servers have different commands (no CLUSTER here, no Bloom filter there): compared on those both have.
  const [redisAll, kvAll] = await Promise.all([servers.redisClient.call("COMMAND", "LIST"), servers.kvClient.call("COMMAND", "LIST")]);
  const both = new Set((kvAll as string[]).filter((n) => (redisAll as string[]).includes(n)));
  for (let i = 0; i < commands.length; i++) {
    const inBoth = (reply: RespValue) => sorted(reply).filter((n) => both.has(n));
    expect({ pattern: patterns[i], names: inBoth(kv[i]!) }).toEqual({ pattern: patterns[i], names: inBoth(redis[i]!) });
  }
});

// ---- huge patterns ----------------------------------------------------------------------------

const long = "a".repeat(kvGlobStarsMax + 100);
/** Patterns either side of the limit on `*` runs, and whether they match `long` (Redis's answers). */
const atTheLimit: [pattern: string, matches: boolean][] = [
  ["*a".repeat(kvGlobStarsMax), true],
  ["*a".repeat(kvGlobStarsMax + 1), false],
  // A final star does not count.
  [`${"a*".repeat(kvGlobStarsMax + 1)}`, true],
  [`${"a*".repeat(kvGlobStarsMax + 2)}`, false],
  ["*?".repeat(50_000), false],
];

test("huge patterns answer as in redis-server: KEYS, SCAN MATCH, HSCAN MATCH", async () => {
  const commands = atTheLimit.flatMap(([p]) => [
    ["KEYS", p],
    ["SCAN", "0", "MATCH", p, "COUNT", "100"],
    ["HSCAN", "h", "0", "MATCH", p],
  ]);
  const results: RespValue[][] = [];
  for (const client of [servers.redisClient, servers.kvClient]) {
    await client.call("FLUSHALL");
    await client.call("SET", long, "v");
    await client.call("HSET", "h", long, "v");
    results.push(await client.pipeline(commands));
  }
  const [redis, kv] = results as [RespValue[], RespValue[]];
  expect(kv).toEqual(redis);
  atTheLimit.forEach(([p, matches], i) => expect({ stars: p.length, keys: kv[3 * i] }).toEqual({ stars: p.length, keys: matches ? [long] : [] }));
  for (const client of [servers.redisClient, servers.kvClient]) await client.call("FLUSHALL");
});

test("huge patterns answer as in redis-server: PSUBSCRIBE and PUBSUB CHANNELS", async () => {
  const outcomes: RespValue[][] = [];
  for (const port of [servers.redis.port, servers.kv.port]) {
    const sub = await RespClient.connect(port);
    const pub = await RespClient.connect(port);
    const seen: RespValue[] = [];
    for (const [p] of atTheLimit) {
      await sub.call("PSUBSCRIBE", p);
      seen.push(await pub.call("PUBLISH", long, "m"));
      if (seen.at(-1) === 1n) seen.push(await sub.read());
      await sub.call("PUNSUBSCRIBE", p);
    }
    await sub.call("SUBSCRIBE", long);
    for (const [p] of atTheLimit) seen.push(await pub.call("PUBSUB", "CHANNELS", p));
    outcomes.push(seen);
    sub.close();
    pub.close();
  }
  expect(outcomes[1]).toEqual(outcomes[0]!);
  expect(outcomes[1]!.filter((x) => typeof x === "bigint")).toEqual(atTheLimit.map(([, matches]) => (matches ? 1n : 0n)));
});

test("huge key patterns in ACL rules answer as in redis-server (ACL DRYRUN)", async () => {
  const commands = atTheLimit.flatMap(([p], i) => [
    ["ACL", "SETUSER", `u${i}`, "on", "nopass", `~${p}`, "+get"],
    ["ACL", "DRYRUN", `u${i}`, "GET", long],
  ]);
  const [redis, kv] = await Promise.all([servers.redisClient.pipeline(commands), servers.kvClient.pipeline(commands)]);
  expect(kv).toEqual(redis);
  atTheLimit.forEach(([, matches], i) =>
    expect(kv[2 * i + 1]!).toEqual(matches ? { s: "OK" } : expect.stringContaining("This user has no permissions to access the '")),
  );
  for (const client of [servers.redisClient, servers.kvClient]) await client.pipeline(atTheLimit.map((_, i) => ["ACL", "DELUSER", `u${i}`]));
});
