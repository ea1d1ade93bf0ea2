// CLIENT UNBLOCK side by side with redis-server 7.0: a client blocked in BLPOP, BLMOVE or WAIT is
// ended with its own timeout reply, or with an UNBLOCKED error; a client not blocked is not
// touched (0); bad ids and reasons get Redis's errors. The unblocked client is served again after.
import { expect, test } from "bun:test";
import { RespClient } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";
import { waitUntil } from "../support/wire.ts";

const s = redisAndKv();

async function scenario(port: number) {
  const blocked = await RespClient.connect(port);
  const other = await RespClient.connect(port);
  const id = String(await blocked.call("CLIENT", "ID"));
  const isBlocked = async () => ((await other.call("INFO", "clients")) as string).includes("blocked_clients:1");
  const out: unknown[] = [];
  for (const [command, reason] of [
    [["BLPOP", "cu:none", "0"], []],
    [["BLPOP", "cu:none", "0"], ["ERROR"]],
    [["BLMOVE", "cu:none", "cu:dst", "LEFT", "RIGHT", "0"], ["timeout"]],
    [["WAIT", "1", "0"], []],
  ] as const) {
    const reply = blocked.call(...command);
    await waitUntil(async () => ((await isBlocked()) ? true : undefined), "the client to block");
    out.push(await other.call("CLIENT", "UNBLOCK", id, ...reason), await reply);
  }
  out.push(
    await other.pipeline([
      ["CLIENT", "UNBLOCK", id],
      ["CLIENT", "UNBLOCK", "abc"],
      ["CLIENT", "UNBLOCK", id, "nope"],
      ["CLIENT", "UNBLOCK", "999999"],
      ["CLIENT", "UNBLOCK", id, "TIMEOUT", "x"],
    ]),
    await blocked.call("PING"),
  );
  blocked.close();
  other.close();
  return out;
}

test("CLIENT UNBLOCK ends a blocked command as redis-server does", async () => {
  const [redis, kv] = [await scenario(s.redis.port), await scenario(s.kv.port)];
  expect(kv).toEqual(redis);
  expect(kv.slice(0, 4)).toEqual([1n, { nullArray: true }, 1n, { e: "UNBLOCKED client unblocked via CLIENT UNBLOCK" }]);
});
