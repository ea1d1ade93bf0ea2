// ACL against redis-server 7.0.15 by generated sequences (test/kv/support/families/acl.ts): users
// made and changed by rules drawn from Redis 7.0's whole set — selectors, read and write key
// permissions, first-argument rules, bad rules among them — then ACL DRYRUN and a logged-in
// client's own commands; the users (ACL LIST, GETUSER) and ACL LOG compared at the end.
import { describe, test } from "bun:test";
import { duetProperty, propertyTimeoutMs } from "../support/duet.ts";
import { options, steps } from "../support/families/acl.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 300;

describe("ACL against redis-server, generated", () => {
  test(
    "rules, DRYRUN and a user's own commands give the same replies, users and log",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});
