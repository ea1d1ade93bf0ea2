// SORT and SORT_RO (src/kv/commands/sort.ts) against redis-server 7.0: the same data on both, then
// generated SORT commands — every option in any order, BY and GET patterns that read strings,
// hash fields, missing keys and keys of other types, LIMIT at and past the ends, STORE, bad
// arguments and elements that are not numbers — get the same replies, and STORE the same lists.
// Where Redis leaves an order undefined it is compared unordered: a hash-table set's own order
// (BY nosort without STORE), and ALPHA by BY values that tie (Redis's quicksort is not stable).
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();
const both = () => [s.redisClient, s.kvClient] as const;

const fixture: string[][] = [
  ["FLUSHALL"],
  ["RPUSH", "nums", "3", "1", "2", "10", " 5", "", "-0", "1e2", "0x10", "-inf", "3"],
  // No zero byte: Redis's ALPHA compares with strcoll, which stops at one ("a\0b" ties with "a").
  ["RPUSH", "words", "b", "a", "c", "A", "ab", "", "\u00ff"],
  ["RPUSH", "mixed", "1", "x", "2"],
  // Not in the generated commands: after a strtod that overflowed, Redis 7.0 refuses every numeric
  // SORT until something clears C's errno, which SORT reads without resetting.
  ["RPUSH", "huge", "1e400", "1"],
  ["SADD", "ints", "5", "3", "9", "-1", "100"],
  ["SADD", "strset", "m1", "m2", "m3", "m4", "m5"],
  ["ZADD", "zs", "3", "m1", "1", "m2", "2", "m3", "2", "m4"],
  ["ZADD", "znum", "1", "30", "2", "10", "3", "20"],
  ["MSET", "w_3", "30", "w_1", "10", "w_2", "20", "w_10", "-1", "w_m1", "5", "w_m2", "4", "w_m3", "x", "w_b", "2", "w_a", "1"],
  ["MSET", "name_1", "one", "name_m1", "first", "name_a", "ay", "str", "plain"],
  ["HSET", "h_m1", "f", "3", "g", "c"],
  ["HSET", "h_m2", "f", "1", "g", "a"],
  ["HSET", "h_m3", "f", "2", "g", "b"],
  ["HSET", "h_m4", "f", "-2", "g", "d"],
  ["HSET", "h_3", "f", "9"],
  ["HSET", "h_1", "f", "8"],
  ["SADD", "w_5", "not-a-string"],
  ["HSET", "hash", "a", "1"],
];

const key = fc.constantFrom("nums", "words", "mixed", "ints", "strset", "zs", "znum", "nokey", "str", "hash");
const byPattern = fc.constantFrom("nosort", "w_*", "h_*->f", "h_*->g", "h_*->none", "nokey_*", "w_*->", "w_*->f", "#", "*");
const getPattern = fc.constantFrom("#", "name_*", "h_*->f", "nostar", "w_*", "h_*", "w_*->x");
const limitArg = fc.oneof(fc.integer({ min: -2, max: 12 }).map(String), fc.constantFrom("x", "9223372036854775807"));
const option: fc.Arbitrary<string[]> = fc.oneof(
  fc.constantFrom<string[]>(["ASC"], ["DESC"], ["desc"], ["ALPHA"], ["alpha"]),
  fc.tuple(limitArg, limitArg).map(([a, b]) => ["LIMIT", a, b]),
  byPattern.map((p) => ["BY", p]),
  getPattern.map((p) => ["GET", p]),
  fc.constant<string[]>(["STORE", "dst"]),
  { weight: 1, arbitrary: fc.constantFrom<string[]>(["LIMIT", "1"], ["nope"], ["BY"], ["GET"]) },
);
const sortArgv = fc
  .tuple(fc.constantFrom("SORT", "SORT_RO", "sort"), key, fc.array(option, { maxLength: 5 }))
  .map(([name, k, opts]) => [name, k, ...opts.flat()]);

/**
 * Whether Redis leaves the order of this SORT's reply undefined (see the top), reading the options
 * as SORT reads them: a BY takes the next word whatever it is, and once one without `*` is seen
 * the elements are not sorted.
 */
function orderUndefined(argv: string[]): boolean {
  const readonly = argv[0]!.toUpperCase() === "SORT_RO";
  let alpha = false;
  let noSort = false;
  let byPattern = false;
  let stored = false;
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    const left = argv.length - i - 1;
    if (word === "ALPHA") alpha = true;
    else if (word === "LIMIT" && left >= 2) i += 2;
    else if (word === "STORE" && left >= 1 && !readonly) (stored = true), i++;
    else if (word === "BY" && left >= 1) {
      if (argv[++i]!.includes("*")) byPattern = true;
      else noSort = true;
    } else if (word === "GET" && left >= 1) i++;
    else if (word !== "ASC" && word !== "DESC") return false; // a syntax error: nothing to order
  }
  if (argv[1] === "strset" && noSort && !stored) return true;
  return alpha && byPattern && !noSort;
}

const sorted = (v: RespValue): RespValue => (Array.isArray(v) ? [...v].map((x) => JSON.stringify(x)).sort() : v);

/** argv without its LIMITs and the two words after each, read as SORT reads them; null when it has none. */
function withoutLimit(argv: string[]): string[] | null {
  for (let i = 2; i < argv.length; i++) {
    const word = argv[i]!.toUpperCase();
    // Every LIMIT goes: the last one given is the one that counts, so one left behind still picks.
    if (word === "LIMIT" && argv.length - i - 1 >= 2)
      return withoutLimit([...argv.slice(0, i), ...argv.slice(i + 3)]) ?? [...argv.slice(0, i), ...argv.slice(i + 3)];
    if ((word === "BY" || word === "GET" || word === "STORE") && i + 1 < argv.length) i++;
  }
  return null;
}

/** A reply's length, or the reply itself when it is not an array (an error, a count). */
const lengthOf = (v: RespValue): unknown => (Array.isArray(v) ? v.length : v);

describe("SORT, side by side with redis-server", () => {
  beforeAll(async () => {
    for (const client of both()) for (const argv of fixture) await client.call(...argv);
  });

  test("generated SORT commands get the same replies and store the same lists", async () => {
    await fc.assert(
      fc.asyncProperty(sortArgv, async (argv) => {
        const [redis, kv] = await Promise.all(both().map((c) => c.pipeline([["DEL", "dst"], argv, ["LRANGE", "dst", "0", "-1"], ["TYPE", "dst"]])));
        const unordered = orderUndefined(argv);
        // Where the order is undefined, LIMIT picks different elements on each server: the picks
        // are compared by count, and the whole result, without LIMIT, as a multiset.
        const whole = unordered ? withoutLimit(argv) : null;
        const compare: (v: RespValue) => unknown = whole !== null ? lengthOf : unordered ? sorted : (v) => v;
        expect({ argv, reply: compare(kv![1]!) }).toEqual({ argv, reply: compare(redis![1]!) });
        expect({ argv, stored: compare(kv![2]!), type: kv![3] }).toEqual({ argv, stored: compare(redis![2]!), type: redis![3] });
        if (whole !== null) {
          const [redisWhole, kvWhole] = await Promise.all(both().map((c) => c.pipeline([["DEL", "dst"], whole, ["LRANGE", "dst", "0", "-1"]])));
          expect({ whole, reply: sorted(kvWhole![1]!), stored: sorted(kvWhole![2]!) }).toEqual({
            whole,
            reply: sorted(redisWhole![1]!),
            stored: sorted(redisWhole![2]!),
          });
        }
      }),
      { numRuns: 400 },
    );
  });

  test("the common forms, spelled out", async () => {
    const [redis, kv] = await Promise.all(
      both().map((c) =>
        c.pipeline([
          ["SORT", "ints"],
          ["SORT", "ints", "DESC", "LIMIT", "1", "2"],
          ["SORT", "words", "ALPHA"],
          ["SORT", "zs", "BY", "h_*->f", "GET", "#", "GET", "h_*->g"],
          ["SORT", "zs", "BY", "nosort", "DESC"],
          ["SORT", "nums", "BY", "nosort", "DESC", "LIMIT", "0", "3"],
          ["SORT", "mixed"],
          ["SORT", "huge", "ALPHA"],
          ["SORT", "strset", "BY", "nosort", "STORE", "dst"],
          ["LRANGE", "dst", "0", "-1"],
          ["SORT_RO", "nums", "STORE", "dst"],
          ["SORT", "str"],
        ]),
      ),
    );
    expect(kv).toEqual(redis!);
    expect(kv!.slice(0, 6)).toEqual([
      ["-1", "3", "5", "9", "100"],
      ["9", "5"],
      ["", "A", "a", "ab", "b", "c", "\u00ff"],
      ["m4", "d", "m2", "a", "m3", "b", "m1", "c"],
      ["m1", "m4", "m3", "m2"],
      ["3", "-inf", "0x10"],
    ]);
    expect(kv![6]).toEqual({ e: "ERR One or more scores can't be converted into double" });
    // Overflow is no number either (compared with svc alone: see the fixture).
    expect(await s.kvClient.call("SORT", "huge")).toEqual({ e: "ERR One or more scores can't be converted into double" });
    expect(kv![9]).toEqual(["m1", "m2", "m3", "m4", "m5"]);
  });

  test("STORE with several GETs stores each element's GETs in order, a missing one as an empty string", async () => {
    const setup = [
      ["DEL", "gl", "gw_1", "gw_2", "gw_3", "gh_2", "gst"],
      ["RPUSH", "gl", "3", "1", "2"],
      ["SET", "gw_1", "one"],
      ["SET", "gw_3", "three"],
      ["HSET", "gh_2", "f", "two-f"],
    ];
    const sorts = [
      ["SORT", "gl", "GET", "gw_*", "GET", "#", "GET", "gh_*->f", "GET", "nosuch_*", "STORE", "gst"],
      ["LRANGE", "gst", "0", "-1"],
      ["SORT", "gl", "DESC", "LIMIT", "0", "2", "GET", "#", "GET", "gw_*", "STORE", "gst"],
      ["LRANGE", "gst", "0", "-1"],
      ["SORT", "gl", "BY", "nosort", "GET", "gh_*->f", "GET", "#", "STORE", "gst"],
      ["LRANGE", "gst", "0", "-1"],
      ["SORT", "gl", "GET", "#", "STORE", "gst", "GET", "gw_*"],
      ["LRANGE", "gst", "0", "-1"],
    ];
    const [redis, kv] = await Promise.all(both().map((c) => c.pipeline([...setup, ...sorts])));
    expect(kv).toEqual(redis!);
    const replies = kv!.slice(setup.length);
    // Per element (1, 2, 3): gw_*, #, gh_*->f, nosuch_*; nil is stored as "".
    expect(replies.slice(0, 2)).toEqual([12n, ["one", "1", "", "", "", "2", "two-f", "", "three", "3", "", ""]]);
    expect(replies.slice(2, 4)).toEqual([4n, ["3", "three", "2", ""]]);
    expect(replies[5]).toEqual(["", "3", "", "1", "two-f", "2"]);
    // A GET after STORE counts as well.
    expect(replies.slice(6, 8)).toEqual([6n, ["1", "one", "2", "", "3", "three"]]);
  });
});
