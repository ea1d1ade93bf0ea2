// SLOWLOG (src/kv/observe/slowlog.ts) against redis-server 7.0: the same commands on both, with every
// command logged (slowlog-log-slower-than 0), give the same entries — the same arguments in the
// same order, secrets redacted, long arguments and long argument lists shortened, EXEC left out
// and the commands it ran put in — and the same replies to the SLOWLOG and CONFIG errors. What
// must differ is normalized: ids, times, microseconds and client ports.
import { describe, expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();
const both = () => [s.redisClient, s.kvClient] as const;

/** Each entry as [arguments, client name], newest first; its id, times and port checked for shape. */
function entries(reply: RespValue): unknown[] {
  expect(Array.isArray(reply)).toBe(true);
  return (reply as RespValue[]).map((entry) => {
    const [id, unixSeconds, micros, args, peer, name] = entry as [bigint, bigint, bigint, string[], string, string];
    expect(typeof id).toBe("bigint");
    expect(Math.abs(Number(unixSeconds) - Date.now() / 1000)).toBeLessThan(60);
    expect(micros).toBeGreaterThanOrEqual(0n);
    expect(peer).toMatch(/^127\.0\.0\.1:\d+$/);
    return [args, name];
  });
}

/** Runs `commands` on both servers, one by one, and returns both servers' replies. */
async function onBoth(commands: string[][]): Promise<[RespValue[], RespValue[]]> {
  const replies = await Promise.all(
    both().map(async (client) => {
      const out: RespValue[] = [];
      for (const argv of commands) out.push(await client.call(...argv));
      return out;
    }),
  );
  return replies as [RespValue[], RespValue[]];
}

describe("SLOWLOG, side by side with redis-server", () => {
  test("every command logged: the same entries, newest first", async () => {
    const long = "y".repeat(200);
    const many = Array.from({ length: 40 }, (_, i) => String(i));
    const [redis, kv] = await onBoth([
      ["CONFIG", "SET", "slowlog-log-slower-than", "0"],
      ["CONFIG", "SET", "slowlog-max-len", "128"],
      ["SLOWLOG", "RESET"],
      ["CLIENT", "SETNAME", "tester"],
      ["SET", "long", long],
      ["RPUSH", "many", ...many],
      ["MULTI"],
      ["SET", "x", "1"],
      ["GET", "x"],
      ["EXEC"],
      ["AUTH", "nobody-has-this"],
      ["HELLO", "2", "AUTH", "default", "wrong"],
      ["CONFIG", "SET", "requirepass", "secret"],
      ["AUTH", "secret"],
      ["CONFIG", "SET", "requirepass", ""],
      ["SLOWLOG", "LEN"],
      ["SLOWLOG", "GET", "-1"],
      ["CONFIG", "SET", "slowlog-log-slower-than", "-1"],
      ["DEL", "long", "many", "x"],
    ]);
    // HELLO's reply names the server and the connection's id: compared elsewhere.
    const withoutHello = (replies: RespValue[]) => replies.slice(0, -3).filter((_, i) => i !== 11);
    expect(withoutHello(kv)).toEqual(withoutHello(redis));
    expect(entries(kv.at(-3)!)).toEqual(entries(redis.at(-3)!));
    const logged = entries(kv.at(-3)!) as [string[], string][];
    // The shape itself, so that two servers wrong alike would still fail.
    expect(logged.map(([args]) => args[0]!.toLowerCase())).toEqual([
      "slowlog",
      "config",
      "auth",
      "config",
      "hello",
      "auth",
      "get",
      "set",
      "multi",
      "rpush",
      "set",
      "client",
      "slowlog",
    ]);
    expect(logged[2]![0]).toEqual(["AUTH", "(redacted)"]);
    expect(logged[4]![0]).toEqual(["HELLO", "2", "AUTH", "(redacted)", "(redacted)"]);
    expect(logged[3]![0]).toEqual(["CONFIG", "SET", "requirepass", "(redacted)"]);
    expect(logged[9]![0]).toEqual(["RPUSH", "many", ...many.slice(0, 29), "... (11 more arguments)"]);
    expect(logged[10]![0]).toEqual(["SET", "long", `${"y".repeat(128)}... (72 more bytes)`]);
    expect(logged[0]![1]).toBe("tester");
  });

  test("slowlog-max-len keeps the newest; a lowered one applies at the next entry", async () => {
    const [redis, kv] = await onBoth([
      ["CLIENT", "SETNAME", ""],
      ["CONFIG", "SET", "slowlog-log-slower-than", "0"],
      ["CONFIG", "SET", "slowlog-max-len", "3"],
      ["SLOWLOG", "RESET"],
      ["ECHO", "a"],
      ["ECHO", "b"],
      ["ECHO", "c"],
      ["ECHO", "d"],
      ["SLOWLOG", "LEN"],
      ["SLOWLOG", "GET", "2"],
      ["CONFIG", "SET", "slowlog-log-slower-than", "-1"],
      ["CONFIG", "SET", "slowlog-max-len", "1"],
      ["SLOWLOG", "LEN"],
      ["CONFIG", "SET", "slowlog-max-len", "128"],
      ["CONFIG", "SET", "slowlog-log-slower-than", "10000"],
    ]);
    expect(kv[8]).toBe(3n);
    expect(entries(kv[9]!)).toEqual([
      [["SLOWLOG", "LEN"], ""],
      [["ECHO", "d"], ""],
    ]);
    expect(entries(kv[9]!)).toEqual(entries(redis[9]!));
    expect([kv[8], kv[12]]).toEqual([redis[8], redis[12]]);
  });

  test("at the default threshold (10 ms) a command that takes 20 ms is logged with its time, and quick ones are not", async () => {
    const [redis, kv] = await onBoth([
      ["CLIENT", "SETNAME", ""],
      ["SLOWLOG", "RESET"],
      ["SET", "a", "1"],
      ["DEBUG", "SLEEP", "0.02"],
      ["GET", "a"],
      ["KEYS", "*"],
      ["SLOWLOG", "GET"],
    ]);
    for (const replies of [redis, kv]) {
      const logged = replies.at(-1) as [bigint, bigint, bigint, string[]][];
      expect(logged.map((entry) => entry[3])).toEqual([["DEBUG", "SLEEP", "0.02"]]);
      expect(logged[0]![2]).toBeGreaterThanOrEqual(20_000n);
    }
  });

  test("a blocked command is logged once served, with the time serving took, and not when it times out; CLIENT UNBLOCK … ERROR counts a failed call and leaves an entry without arguments", async () => {
    const results = await Promise.all(
      [s.redis, s.kv].map(async (server, i) => {
        const c = both()[i]!;
        const waiter = await RespClient.connect(server.port);
        try {
          await c.call("CLIENT", "SETNAME", "");
          const blockedClients = async (n: number) => {
            while (!((await c.call("INFO", "clients")) as string).includes(`blocked_clients:${n}\r\n`)) await Bun.sleep(5);
          };
          await c.call("CONFIG", "SET", "slowlog-log-slower-than", "0");
          await c.call("SLOWLOG", "RESET");
          await c.call("CONFIG", "RESETSTAT");
          const served = waiter.call("BLPOP", "slowq", "0");
          await blockedClients(1);
          await c.call("RPUSH", "slowq", "x");
          expect(await served).toEqual(["slowq", "x"]);
          expect(await waiter.call("BLPOP", "slowq2", "0.01")).toEqual({ nullArray: true });
          const failed = waiter.call("BLPOP", "slowq3", "0");
          await blockedClients(1);
          const id = ((await c.call("CLIENT", "LIST")) as string)
            .split("\n")
            .find((line) => line.includes("cmd=blpop"))!
            .match(/id=(\d+)/)![1]!;
          await c.call("CLIENT", "UNBLOCK", id, "ERROR");
          expect(await failed).toEqual({ e: "UNBLOCKED client unblocked via CLIENT UNBLOCK" });
          const logged = (entries(await c.call("SLOWLOG", "GET", "-1")) as [string[], string][])
            // CLIENT UNBLOCK leaves an entry with no arguments (Redis 7.0.15 resets the argv first).
            .map(([args]) => args)
            .filter((args) => args.length === 0 || ["BLPOP", "RPUSH"].includes(args[0]!));
          const blpopStats = ((await c.call("INFO", "commandstats")) as string).match(/cmdstat_blpop:calls=(\d+),.*failed_calls=(\d+)/)!.slice(1);
          return { logged, blpopStats };
        } finally {
          waiter.close();
          await c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000");
        }
      }),
    );
    expect(results[1]).toEqual(results[0]!);
    expect(results[1]!.logged).toEqual([[], ["BLPOP", "slowq", "0"], ["RPUSH", "slowq", "x"]]);
    expect(results[1]!.blpopStats).toEqual(["3", "1"]);
  });

  test("bad counts, arities and settings get Redis's errors and change nothing", async () => {
    const [redis, kv] = await onBoth([
      ["SLOWLOG", "GET", "-2"],
      ["SLOWLOG", "GET", "abc"],
      ["SLOWLOG", "GET", "9223372036854775808"],
      ["SLOWLOG", "GET", "1", "2"],
      ["SLOWLOG", "LEN", "x"],
      ["SLOWLOG", "RESET", "x"],
      ["SLOWLOG", "nope"],
      ["SLOWLOG"],
      ["CONFIG", "SET", "slowlog-log-slower-than", "abc"],
      ["CONFIG", "SET", "slowlog-log-slower-than", "-2"],
      ["CONFIG", "SET", "slowlog-max-len", "-1"],
      ["CONFIG", "SET", "slowlog-max-len", "1.5"],
      ["CONFIG", "GET", "slowlog-*"],
    ]);
    expect(kv.slice(0, -1)).toEqual(redis.slice(0, -1));
    // CONFIG GET's pairs come in no defined order.
    const pairs = (reply: RespValue) => Object.fromEntries((reply as string[]).flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : [])));
    expect(pairs(kv.at(-1)!)).toEqual(pairs(redis.at(-1)!));
    expect(pairs(kv.at(-1)!)).toEqual({ "slowlog-log-slower-than": "10000", "slowlog-max-len": "128" });
  });
});
