// Streams' consumer groups against redis-server 7.0.15 with several consumers that block
// (test/kv/support/families/stream-groups.ts): XREADGROUP with and without BLOCK served by XADD,
// ended by XGROUP DESTROY, DEL or CLIENT UNBLOCK; XACK, XPENDING, XCLAIM, XAUTOCLAIM, XGROUP and
// XINFO between them; then the stream, its groups, consumers and pending entries compared.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, step as s } from "../../support/duet.ts";
import { options, steps } from "../../support/families/stream-groups.ts";
import { options as trackingOptions } from "../../support/families/tracking.ts";
import { redisAndKv } from "../../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 200;

describe("consumer groups against redis-server, generated", () => {
  test(
    "consumers reading, blocking, acknowledging and claiming on RESP2 and RESP3 leave the same groups",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("discrepancies the generated runs found, kept as cases", () => {
  test("XGROUP changes a group, not the key: a client blocked in XREADGROUP stays blocked after SETID moves its group back", async () => {
    await expectSameDuet(
      servers,
      [
        s("A", "XADD", "s", "1-1", "f", "v"),
        s("A", "XGROUP", "CREATE", "s", "g1", "$"),
        s("C", "XREADGROUP", "GROUP", "g1", "c1", "BLOCK", "0", "STREAMS", "s", ">"),
        s("A", "XGROUP", "SETID", "s", "g1", "0"),
        s("A", "XGROUP", "CREATECONSUMER", "s", "g1", "c2"),
        s("A", "XGROUP", "DELCONSUMER", "s", "g1", "c2"),
        s("B", "XGROUP", "DESTROY", "s", "g1"),
      ],
      options,
    );
  });
  test("XGROUP on a stream that exists touches no WATCH and tells no caching client; MKSTREAM does", async () => {
    const watched = (argv: string[]) => [s("B", "WATCH", "s"), s("A", ...argv), s("B", "MULTI"), s("B", "XLEN", "s"), s("B", "EXEC")];
    await expectSameDuet(
      servers,
      [
        s("A", "XADD", "s", "1-1", "f", "v"),
        s("A", "XGROUP", "CREATE", "s", "g1", "0"),
        ...watched(["XGROUP", "CREATE", "s", "g2", "$"]),
        ...watched(["XGROUP", "SETID", "s", "g1", "$"]),
        ...watched(["XGROUP", "CREATECONSUMER", "s", "g1", "c9"]),
        ...watched(["XGROUP", "DELCONSUMER", "s", "g1", "c9"]),
        ...watched(["XGROUP", "DESTROY", "s", "g2"]),
        s("A", "DEL", "s"),
        ...watched(["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
      ],
      options,
    );
    await expectSameDuet(
      servers,
      [
        s("A", "CLIENT", "TRACKING", "on"),
        s("C", "XADD", "s", "1-1", "f", "v"),
        s("A", "XLEN", "s"),
        s("C", "XGROUP", "CREATE", "s", "g1", "0"),
        s("C", "XGROUP", "SETID", "s", "g1", "$"),
        s("C", "XGROUP", "DESTROY", "s", "g1"),
        s("C", "XADD", "s", "1-2", "f", "v"),
      ],
      trackingOptions,
    );
  });
});
