// Functions (FUNCTION *, FCALL, FCALL_RO) against redis-server 7.0.15 by generated sequences
// (test/kv/support/families/functions.ts): libraries loaded, replaced, listed, deleted, flushed,
// dumped and restored under each policy, functions called against their flags with numkeys at
// and past its limits, on RESP2 and RESP3; then the libraries, FUNCTION STATS, the keyspace and
// INFO's counts compared. Also: each server restores the other's FUNCTION DUMP payload (the bytes
// differ — Redis compresses the code — but either reads both).
import { describe, expect, test } from "bun:test";
import { duetProperty, expectSameDuet, propertyTimeoutMs, type Step } from "../support/duet.ts";
import { libraries, options, sortedList, steps } from "../support/families/functions.ts";
import { withClient } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const servers = redisAndKv();

/** Sequences per property in CI; SVC_DUET_RUNS raises it for a local hunt. */
const numRuns = 300;

describe("functions against redis-server, generated", () => {
  test(
    "FUNCTION and FCALL sequences over RESP2 and RESP3 leave the same replies, libraries, keys and counts",
    async () => {
      await duetProperty(servers, steps, options, numRuns);
    },
    propertyTimeoutMs,
  );
});

describe("functions against redis-server, fixed", () => {
  test("every pool library loaded, then every function called with FCALL and FCALL_RO on both protocols", async () => {
    const out: Step[] = [];
    for (const lib of libraries) for (const client of ["A", "B"]) out.push({ client, argv: ["FUNCTION", "LOAD", lib] });
    for (const f of ["fa", "fa_ro", "fb", "fb_oom", "fd_err", "fd_raise", "fd_pcall", "fe_write_ro", "fe_any", "ff", "FA", "nosuch"]) {
      for (const client of ["A", "B"]) for (const name of ["FCALL", "FCALL_RO"]) out.push({ client, argv: [name, f, "1", "k1", "7"] });
    }
    await expectSameDuet(servers, out, options);
  });
  test("FUNCTION FLUSH with two modes is a subcommand syntax error", async () => {
    await expectSameDuet(
      servers,
      [
        { client: "A", argv: ["FUNCTION", "FLUSH", "SYNC", "ASYNC"] },
        { client: "A", argv: ["function", "flush", "a", "b", "c"] },
      ],
      options,
    );
  });
  test("each server restores the payload the other dumped, to the same libraries", async () => {
    const [redisPort, kvPort] = [servers.redis.port, servers.kv.port];
    const loaded = libraries.slice(0, 7).filter((lib) => !lib.includes("name=libc") && !lib.endsWith("return 'replaced' end}"));
    const dumpOf = (port: number) =>
      withClient(port, async (c) => {
        await c.call("FUNCTION", "FLUSH");
        for (const lib of loaded) expect(typeof (await c.call("FUNCTION", "LOAD", lib))).toBe("string");
        return (await c.call("FUNCTION", "DUMP")) as string;
      });
    const restoreInto = (port: number, payload: string) =>
      withClient(port, async (c) => {
        await c.call("FUNCTION", "FLUSH");
        expect(await c.call("FUNCTION", "RESTORE", payload)).toEqual({ s: "OK" });
        return sortedList(await c.call("FUNCTION", "LIST", "WITHCODE"));
      });
    const [fromRedis, fromKv] = [await dumpOf(redisPort), await dumpOf(kvPort)];
    const lists = [await restoreInto(kvPort, fromRedis), await restoreInto(redisPort, fromKv), await restoreInto(redisPort, fromRedis)];
    expect(lists[0]).toEqual(lists[2]);
    expect(lists[1]).toEqual(lists[2]);
  });
});
