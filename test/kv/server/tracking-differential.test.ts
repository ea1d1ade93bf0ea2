// Client-side caching against redis-server 7.0.15 by generated sequences on two RESP3 clients
// and two RESP2 ones (test/kv/support/families/tracking.ts): CLIENT TRACKING in every mode and
// the combinations Redis refuses, CACHING, GETREDIR, TRACKINGINFO, reads and writes of every kind,
// redirection to a subscriber and to a client that leaves; every invalidation where it arrives,
// then each client's flags and redirect and INFO's tracking counts.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, step as s } from "../support/duet.ts";
import { options, steps } from "../support/families/tracking.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 300;

describe("client-side caching against redis-server, generated", () => {
  test(
    "tracking modes, reads, writes and redirection give the same replies and invalidations",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("discrepancies the generated runs found, kept as cases", () => {
  test("an overlapping PREFIX is reported against the client's first overlapping prefix in byte order", async () => {
    await expectSameDuet(
      servers,
      [s("A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "b"), s("A", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "")],
      options,
    );
  });
  test("a key deleted for its time is told to a BCAST NOLOOP client whose command met it, and the last change before a broadcast decides NOLOOP", async () => {
    await expectSameDuet(
      servers,
      [
        s("B", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"),
        s("A", "CLIENT", "TRACKING", "on", "NOLOOP"),
        s("C", "SET", "b", "gone", "PXAT", "1"),
        s("A", "GET", "b"),
        s("B", "GET", "b"),
        s("A", "GET", "b"),
        s("B", "SET", "b", "x"),
        // In one transaction: B sets k, then its read meets k expired (no client's change): B is told.
        s("B", "MULTI"),
        s("B", "SET", "k", "v", "PXAT", "1"),
        s("B", "GET", "k"),
        s("B", "EXEC"),
        s("A", "PING"),
        // A script's change, then B's own last: B is not told.
        s("B", "MULTI"),
        s("B", "SET", "j", "v"),
        s("B", "EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "j"),
        s("B", "SET", "j", "y"),
        s("B", "EXEC"),
        s("A", "PING"),
      ],
      options,
    );
  });
  test("a flush tells a redirecting client's target null in the redirecting client's protocol, whoever flushes", async () => {
    await expectSameDuet(
      servers,
      [
        // A speaks RESP3, D RESP2 and redirects to A: A is told "everything" twice, its own as
        // RESP3's null and D's as RESP2's, as Redis 7.0 writes D's null into A's push.
        s("A", "CLIENT", "TRACKING", "on"),
        s("D", "CLIENT", "TRACKING", "on", "REDIRECT", "<id:A>"),
        s("D", "FLUSHALL"),
        s("A", "PING"),
        s("B", "FLUSHDB"),
        s("A", "PING"),
      ],
      options,
    );
  });
});
