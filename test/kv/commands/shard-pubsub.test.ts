// Shard channels (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB SHARDCHANNELS/SHARDNUMSUB) side by side
// with redis-server 7.0 without cluster mode: a namespace of their own — SPUBLISH reaches shard
// subscribers only, as smessage, PUBLISH none of them — whose replies count shard subscriptions
// only, while a shard subscriber is in the pub/sub context like any subscriber (RESP2 and RESP3).
import { expect, test } from "bun:test";
import { encodeCommand, RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const s = redisAndKv();

async function scenario(port: number, protocol: 2 | 3): Promise<RespValue[]> {
  const sub = await RespClient.connect(port);
  const pub = await RespClient.connect(port);
  const out: RespValue[] = [];
  if (protocol === 3) await sub.call("HELLO", "3");
  out.push(...(await sub.pipeline([["SUBSCRIBE", "a"]])));
  // Written raw: one command, two replies.
  sub.writeRaw(encodeCommand(["SSUBSCRIBE", "b", "c"]));
  out.push(await sub.read(), await sub.read());
  out.push(await sub.call("GET", "x"));
  out.push(await pub.call("SPUBLISH", "b", "hi"), await sub.read());
  out.push(
    ...(await pub.pipeline([
      ["PUBLISH", "b", "not to shards"],
      ["PUBSUB", "SHARDCHANNELS"],
      ["PUBSUB", "SHARDCHANNELS", "c*"],
      ["PUBSUB", "SHARDNUMSUB", "b", "z"],
      ["PUBSUB", "CHANNELS"],
      ["SSUBSCRIBE"],
      ["SPUBLISH", "b"],
      ["MULTI"],
      ["SSUBSCRIBE", "x"],
      ["EXEC"],
    ])),
  );
  sub.writeRaw(Buffer.concat([["SUNSUBSCRIBE", "b", "zz"], ["SUNSUBSCRIBE"], ["SUNSUBSCRIBE"], ["UNSUBSCRIBE"], ["PING"]].map(encodeCommand)));
  for (let i = 0; i < 6; i++) out.push(await sub.read());
  out.push(await pub.call("PUBSUB", "SHARDNUMSUB", "c"));
  sub.close();
  pub.close();
  // PUBSUB SHARDCHANNELS lists in no defined order.
  out[7] = [...(out[7] as string[])].sort();
  return out;
}

test("shard channels answer as redis-server's, over RESP2 and RESP3", async () => {
  for (const protocol of [2, 3] as const) {
    const [redis, kv] = [await scenario(s.redis.port, protocol), await scenario(s.kv.port, protocol)];
    expect({ protocol, kv }).toEqual({ protocol, kv: redis });
  }
  const kv = await scenario(s.kv.port, 2);
  expect(kv.slice(1, 6)).toEqual([
    ["ssubscribe", "b", 1n],
    ["ssubscribe", "c", 2n],
    { e: "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context" },
    1n,
    ["smessage", "b", "hi"],
  ]);
  expect(kv[6]).toBe(0n);
});
