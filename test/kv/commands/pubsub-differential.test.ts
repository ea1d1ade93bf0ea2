// Pub/sub against redis-server 7.0.15 by generated sequences on three clients, two RESP2 and one
// RESP3 (test/kv/support/families/pubsub.ts): channel, pattern and shard subscriptions, messages
// where they arrive, PUBSUB introspection, what a RESP2 subscriber may send, transactions that
// publish; then every client's subscriptions and PUBSUB's counts compared.
import { describe, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, type Step } from "../support/duet.ts";
import { options, steps } from "../support/families/pubsub.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 300;

describe("pub/sub against redis-server, generated", () => {
  test(
    "subscriptions, messages and introspection on RESP2 and RESP3 clients match redis-server's",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("discrepancies the generated runs found, kept as cases", () => {
  test("PUBSUB CHANNELS and SHARDCHANNELS take one pattern at most", async () => {
    const a = (...argv: string[]): Step => ({ client: "A", argv });
    await expectSameDuet(
      servers,
      [
        a("SUBSCRIBE", "c1"),
        { client: "B", argv: ["PUBSUB", "CHANNELS", "a", "b"] },
        { client: "B", argv: ["pubsub", "shardchannels", "*", "*"] },
        { client: "C", argv: ["PUBSUB", "CHANNELS", "*"] },
      ],
      options,
    );
  });
});
