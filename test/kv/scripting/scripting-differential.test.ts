// Scripting (EVAL, EVALSHA, their _RO forms, SCRIPT *) against redis-server 7.0.15 by generated
// sequences: scripts from a pool that exercises the `redis` API (call and pcall with good and bad
// arguments, commands scripts may not run, error_reply/status_reply, sha1hex, setresp and the
// RESP3 types a script returns, shebang flags), numkeys at and past its limits, EVALSHA with
// known, unknown and malformed digests, SCRIPT LOAD/EXISTS/FLUSH with every mode and bad ones —
// on a RESP2 and a RESP3 client, over keys of several types. After each sequence the keyspace,
// which scripts are cached, the error counts by code and the calls counted per command are
// compared too.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, type Step } from "../support/duet.ts";
import { bodies, options, steps } from "../support/families/scripting.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 200;

describe("scripting against redis-server, generated", () => {
  test(
    "EVAL, EVALSHA, their _RO forms and SCRIPT over RESP2 and RESP3 leave the same replies, keys, cache and counts",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("scripting against redis-server, fixed", () => {
  test("each pool script once, with a key of each type, on both protocols", async () => {
    const out: Step[] = [
      { client: "A", argv: ["SET", "k1", "5"] },
      { client: "A", argv: ["HSET", "h", "a", "1", "b", "2"] },
      { client: "A", argv: ["ZADD", "z", "1.5", "m", "-2", "n"] },
      { client: "A", argv: ["SADD", "k2", "m"] },
    ];
    for (const text of bodies) for (const c of ["A", "B"]) for (const k of ["k1", "h", "z"]) out.push({ client: c, argv: ["EVAL", text, "1", k, "7"] });
    await expectSameDuet(servers, out, options);
  }, 60_000);
});

describe("discrepancies the generated runs found, kept as cases", () => {
  test("a key whose time passes while a script runs stays for the rest of it (Redis judges times against the script's start), and is gone after", async () => {
    const a = (...argv: string[]): Step => ({ client: "A", argv });
    // 20 million empty iterations outlast the key's 5 ms on any machine (a Lua 5.1 loop step takes
    // more than a nanosecond), which the script's last reply confirms; a loop timed on TIME would
    // call TIME a different number of times on each server.
    const spin =
      "redis.call('SET', KEYS[1], 'v', 'PX', 5) local t = redis.call('TIME') " +
      "for i = 1, 20000000 do end " +
      "local u = redis.call('TIME') " +
      "return {redis.call('EXISTS', KEYS[1]), redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), (u[1] - t[1]) * 1000000 + u[2] - t[2] > 5000}";
    await expectSameDuet(servers, [a("EVAL", spin, "1", "k1"), a("EXISTS", "k1"), a("GET", "k1")], options);
  });

  test("EVALSHA with a digest of the wrong length is NOSCRIPT before numkeys is read; SELECT past a C int is Redis's range error", async () => {
    const a = (...argv: string[]): Step => ({ client: "A", argv });
    await expectSameDuet(
      servers,
      [
        a("EVALSHA", "", "2", "k1"),
        a("EVALSHA", "abc", "-1"),
        a("EVALSHA", "0".repeat(40), "2", "k1"),
        a("EVALSHA", "0".repeat(40), "x"),
        a("EVAL", "return redis.call('select', ARGV[1])", "0", "9223372036854775807"),
        a("SELECT", "2147483648"),
        a("SELECT", "-2147483649"),
        a("SELECT", "2147483647"),
        a("SELECT", "-1"),
        a("MOVE", "k1", "2147483648"),
        a("SET", "k1", "v"),
        a("COPY", "k1", "k2", "DB", "-2147483649"),
        a("SWAPDB", "0", "2147483648"),
      ],
      options,
    );
  });
  test("a refused subcommand counts as a rejected call of the subcommand, and an unknown one of nothing", async () => {
    const a = (...argv: string[]): Step => ({ client: "A", argv });
    // The snapshot compares cmdstat_script, script|load and script|exists whole.
    await expectSameDuet(servers, [a("SCRIPT", "LOAD"), a("SCRIPT", "LOAD", "a", "b"), a("SCRIPT", "EXISTS"), a("SCRIPT"), a("SCRIPT", "NOSUCH")], options);
  });
  test("past maxmemory a script that declared it may write is refused before it runs (a rejected call); one that may not, or allows OOM, runs", async () => {
    const a = (...argv: string[]): Step => ({ client: "A", argv });
    const sha = new Bun.CryptoHasher("sha1").update("#!lua\nreturn redis.call('get', 'k1')").digest("hex");
    await expectSameDuet(
      servers,
      [
        a("SCRIPT", "LOAD", "#!lua\nreturn redis.call('get', 'k1')"),
        a("CONFIG", "SET", "maxmemory", "1"),
        a("EVAL", "#!lua\nreturn 1", "0"),
        a("EVALSHA", sha, "0"),
        a("EVAL", "#!lua flags=no-writes\nreturn 2", "0"),
        a("EVAL", "#!lua flags=allow-oom\nreturn 3", "0"),
        a("EVAL", "return 4", "0"),
        a("EVAL", "return redis.call('set', 'k1', 'v')", "0"),
        a("MULTI"),
        a("EVAL", "#!lua\nreturn 5", "0"),
        a("EXEC"),
        a("CONFIG", "SET", "maxmemory", "0"),
      ],
      options,
    );
  });
});
