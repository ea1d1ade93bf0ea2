// COMMAND GETKEYSANDFLAGS (and GETKEYS, found the same way) side by side with redis-server 7.0:
// for every command and subcommand both servers have, with arguments of several shapes (plain
// words, counts that hold, counts that do not, the keywords key specs search for), and for the
// generated commands of the differential tests — the same keys, the same flags per key (RW, RO,
// OW, RM, access, update, insert, delete …) and the same errors.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { type RespValue, show } from "../support/resp-client.ts";
import { hashCommands, keyCommands, listCommands, setCommands, stringCommands, zsetCommands } from "../support/commands.ts";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const s = redisAndKvWithClients();

/** Each command's or subcommand's name words and arity, from COMMAND INFO of one server. */
async function commandsOf(client: typeof s.kvClient): Promise<Map<string, number>> {
  const all = (await client.call("COMMAND", "INFO")) as RespValue[][];
  const out = new Map<string, number>();
  for (const entry of all) {
    out.set(entry[0] as string, Number(entry[1]));
    for (const sub of (entry[9] as RespValue[][] | undefined) ?? []) out.set(sub[0] as string, Number(sub[1]));
  }
  return out;
}

/** Argument lists of several shapes for a command of `arity` whose name takes `nameWords` words. */
function shapes(nameWords: string[], arity: number): string[][] {
  const count = (arity > 0 ? arity : -arity) - nameWords.length;
  const extra = arity > 0 ? 0 : 3;
  const words = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
  const plain = words(count + extra, (i) => `k${i}`);
  return [
    [...nameWords, ...words(Math.max(0, count), (i) => `k${i}`)],
    [...nameWords, ...plain],
    // A count of 2 first, or second: the counted forms (ZUNIONSTORE d 2 a b, EVAL s 2 a b, BLMPOP 0 2 a b).
    [...nameWords, "2", ...plain],
    [...nameWords, "k", "2", ...plain],
    [...nameWords, "k", "0", "2", ...plain],
    // Counts that do not hold: too many, zero, negative, not a number as string2ll reads it, but one atoi reads.
    [...nameWords, "k", "9", ...plain],
    [...nameWords, "0", ...plain],
    [...nameWords, "k", "-1", ...plain],
    [...nameWords, "k", "2x", "a", "b", "c"],
    // The keywords key specs and key finders look for.
    [...nameWords, "k", "STREAMS", "a", "b", "0", "0"],
    [...nameWords, "k", "GET", "x", "STORE", "dst", "KEYS", "a"],
    [...nameWords, "k", "m", "1", "km", "STORE", "s1", "STOREDIST", "s2"],
  ];
}

function compareAll(argvs: string[][], redis: RespValue[], kv: RespValue[]): void {
  const differ: string[] = [];
  for (let i = 0; i < argvs.length; i++)
    if (show(kv[i]!) !== show(redis[i]!)) differ.push(`${argvs[i]!.join(" ")}\n  redis ${show(redis[i]!)}\n  svc   ${show(kv[i]!)}`);
  expect(differ).toEqual([]);
}

test("every command both servers have, with arguments of many shapes: the same keys, flags and errors", async () => {
  const [redisCommands, kvCommands] = await Promise.all([commandsOf(s.redisClient), commandsOf(s.kvClient)]);
  const argvs: string[][] = [];
  let compared = 0;
  for (const [name, arity] of kvCommands) {
    if (!redisCommands.has(name)) continue;
    compared++;
    for (const shape of shapes(name.split("|"), arity)) argvs.push(shape);
  }
  expect(compared).toBeGreaterThan(200);
  for (const sub of ["GETKEYSANDFLAGS", "GETKEYS"]) {
    const commands = argvs.map((argv) => ["COMMAND", sub, ...argv]);
    const [redis, kv] = await Promise.all([s.redisClient.pipeline(commands), s.kvClient.pipeline(commands)]);
    compareAll(commands, redis, kv);
  }
});

test("the generated commands of the differential tests: the same keys and flags", async () => {
  const families = [...keyCommands, ...stringCommands, ...listCommands, ...hashCommands, ...setCommands, ...zsetCommands];
  const generated = fc.sample(fc.oneof(...families), { numRuns: 1500, seed: 3 }).map((g) => ["COMMAND", "GETKEYSANDFLAGS", ...g.argv]);
  const [redis, kv] = await Promise.all([s.redisClient.pipeline(generated), s.kvClient.pipeline(generated)]);
  compareAll(generated, redis, kv);
});

test("the flags that matter, spelled out, and the errors (RESP3 too: the flags are a set)", async () => {
  const commands = [
    ["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "GET"],
    ["COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v"],
    ["COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"],
    ["COMMAND", "GETKEYSANDFLAGS", "DEL", "a", "b"],
    ["COMMAND", "GETKEYSANDFLAGS", "ZUNIONSTORE", "d", "2", "a", "b"],
    ["COMMAND", "GETKEYSANDFLAGS", "SORT", "l", "STORE", "d"],
    ["COMMAND", "GETKEYSANDFLAGS", "BITFIELD", "k", "GET", "u8", "0"],
    ["COMMAND", "GETKEYSANDFLAGS", "PUBLISH", "c", "m"],
    ["COMMAND", "GETKEYSANDFLAGS", "NOPE"],
    ["COMMAND", "GETKEYSANDFLAGS", "GET"],
    ["COMMAND", "GETKEYSANDFLAGS"],
  ];
  const [redis, kv] = await Promise.all([s.redisClient.pipeline(commands), s.kvClient.pipeline(commands)]);
  compareAll(commands, redis, kv);
  expect(kv.slice(0, 4)).toEqual([
    [["k", [{ s: "RW" }, { s: "access" }, { s: "update" }]]],
    [["k", [{ s: "OW" }, { s: "update" }]]],
    [
      ["a", [{ s: "RW" }, { s: "access" }, { s: "delete" }]],
      ["b", [{ s: "RW" }, { s: "insert" }]],
    ],
    [
      ["a", [{ s: "RM" }, { s: "delete" }]],
      ["b", [{ s: "RM" }, { s: "delete" }]],
    ],
  ]);
  expect(kv[7]).toEqual({ e: "ERR The command has no key arguments" });
  const hello = [
    ["HELLO", "3"],
    ["COMMAND", "GETKEYSANDFLAGS", "COPY", "a", "b"],
  ];
  const [redis3, kv3] = await Promise.all([s.redisClient.pipeline(hello), s.kvClient.pipeline(hello)]);
  expect(kv3[1]).toEqual(redis3[1]!);
  expect(kv3[1]).toEqual([
    ["a", { set: [{ s: "RO" }, { s: "access" }] }],
    ["b", { set: [{ s: "OW" }, { s: "update" }] }],
  ]);
  for (const client of [s.redisClient, s.kvClient]) await client.call("HELLO", "2");
});
