// MULTI/EXEC/WATCH against redis-server 7.0.15 by generated sequences on three clients (two
// RESP2, one RESP3; test/kv/support/families/multi.ts): errors at queue time and at EXEC time,
// watched keys written, expired, flushed, swapped and moved by other clients, scripts and blocking
// commands queued; then the keyspace compared.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, step as s } from "../support/duet.ts";
import { options, steps } from "../support/families/multi.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 300;

describe("transactions against redis-server, generated", () => {
  test(
    "MULTI, EXEC, DISCARD and WATCH sequences get the same replies and leave the same keys",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("WATCH of a key whose time has passed (found by the generated runs)", () => {
  test("WATCH does not delete it; its deletion by expiry or a flush is no change; a write over it, or a SWAPDB bringing a live one, is", async () => {
    await expectSameDuet(
      servers,
      [
        // Watched while expired, then overwritten: EXEC fails.
        s("B", "SET", "y", "v", "PXAT", "1"),
        s("A", "WATCH", "y"),
        s("B", "DBSIZE"),
        s("B", "SET", "y", "new"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        // Watched while expired by two clients, then deleted by a read: both EXECs run.
        s("B", "SET", "z", "v", "PXAT", "1"),
        s("A", "WATCH", "z"),
        s("C", "WATCH", "z"),
        s("B", "GET", "z"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        s("C", "MULTI"),
        s("C", "EXEC"),
        // Watched while expired, then flushed: EXEC runs.
        s("B", "SET", "t", "v", "PXAT", "1"),
        s("A", "WATCH", "t"),
        s("B", "FLUSHDB"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        // Watched while live, then expired without anyone reading it: EXEC fails.
        s("B", "SET", "u", "v"),
        s("A", "WATCH", "u"),
        s("B", "PEXPIREAT", "u", "1"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        // SWAPDB bringing an expired key over an expired watched one, then a live one.
        s("B", "SET", "e", "v", "PXAT", "1"),
        s("B", "SELECT", "1"),
        s("B", "SET", "e", "w", "PXAT", "1"),
        s("A", "WATCH", "e"),
        s("B", "SWAPDB", "0", "1"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        s("B", "SET", "e", "live"),
        s("A", "WATCH", "e"),
        s("B", "SWAPDB", "0", "1"),
        s("A", "MULTI"),
        s("A", "EXEC"),
        s("B", "DBSIZE"),
        s("B", "SELECT", "0"),
        s("B", "DBSIZE"),
      ],
      options,
    );
  });
});

describe("time inside a transaction (found side by side)", () => {
  test("EXEC's commands judge keys' times against EXEC's start: a key whose time passes while they run stays for all of them", async () => {
    await expectSameDuet(
      servers,
      [
        s("A", "MULTI"),
        s("A", "SET", "k", "v", "PX", "5"),
        s("A", "DEBUG", "SLEEP", "0.02"),
        s("A", "EXISTS", "k"),
        s("A", "GET", "k"),
        s("A", "PTTL", "k"),
        s("A", "KEYS", "k"),
        s("A", "EXEC"),
        s("A", "EXISTS", "k"),
      ],
      options,
    );
  });
});
