// COMMAND GETKEYS side by side with redis-server 7.0: the keys of commands with fixed key
// positions, with a count of keys (ZUNIONSTORE, LMPOP, SINTERCARD ...) and with keys behind options
// (SORT's STORE, GEORADIUS's STORE and STOREDIST), and the errors for unknown commands, commands
// without keys, wrong arities and bad counts. These positions are also what an append-only file
// rewrite writes ahead before a command changes its keys (aof/rewrite.ts).
import { expect, test } from "bun:test";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

const commands: string[][] = [
  ["SET", "a", "b"],
  ["GET"],
  ["PING"],
  ["NOPE", "x"],
  ["MSET", "a", "1", "b", "2"],
  ["MSET", "a", "1", "b"],
  ["DEL", "a", "b", "c"],
  ["ZUNIONSTORE", "d", "2", "a", "b"],
  ["ZUNIONSTORE", "d", "5", "a", "b"],
  ["ZUNIONSTORE", "d", "x", "a"],
  ["ZINTER", "2", "a", "b", "WEIGHTS", "1", "2"],
  ["ZDIFF", "1", "a"],
  ["ZINTERCARD", "2", "a", "b"],
  ["ZINTERCARD", "0", "a"],
  ["SINTERCARD", "2", "a", "b", "LIMIT", "1"],
  ["LMPOP", "2", "a", "b", "LEFT"],
  ["LMPOP", "2", "a", "b", "LEFT", "COUNT", "3"],
  ["BLMPOP", "0", "2", "a", "b", "LEFT"],
  ["ZMPOP", "1", "z", "MIN"],
  ["BZMPOP", "1", "1", "z", "MAX", "COUNT", "2"],
  ["SORT", "l", "STORE", "d", "BY", "w_*"],
  ["SORT", "l", "LIMIT", "0", "1", "GET", "#", "STORE", "d"],
  ["SORT", "l"],
  ["SORT_RO", "l", "BY", "w_*"],
  ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d", "STOREDIST", "e"],
  ["GEORADIUSBYMEMBER", "g", "m", "1", "km", "STOREDIST", "d"],
  ["GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"],
  ["MEMORY", "USAGE", "k"],
  ["OBJECT", "ENCODING", "k"],
  ["CONFIG", "GET", "x"],
  ["BLPOP", "a", "b", "0"],
  ["BITOP", "AND", "d", "a", "b"],
  ["RENAME", "a", "b"],
  ["SMOVE", "a", "b", "m"],
  ["PFCOUNT", "a", "b"],
  ["EXISTS", "a"],
  ["SET", "a"],
  ["GET", "a", "b"],
];

test("COMMAND GETKEYS answers as redis-server for every kind of key position", async () => {
  const argvs = [...commands.map((argv) => ["COMMAND", "GETKEYS", ...argv]), ["COMMAND", "GETKEYS"], ["COMMAND", "GETKEYS", "GET"], ["COMMAND", "NOPE"]];
  const [redis, kv] = await Promise.all([s.redisClient, s.kvClient].map((c) => c.pipeline(argvs)));
  for (let i = 0; i < argvs.length; i++) expect({ argv: argvs[i], reply: kv![i] }).toEqual({ argv: argvs[i], reply: redis![i] });
  expect(kv![7]).toEqual(["d", "a", "b"]);
  expect(kv![20]).toEqual(["l", "d"]);
});
