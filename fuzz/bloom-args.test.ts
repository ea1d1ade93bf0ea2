// BF.* argument parsing, fuzzed against a real `svc kv` process: arbitrary argument lists (option
// words in any case and misspelt, numbers at and past every limit, arbitrary bytes) never crash
// the server; every reply is a valid reply of its command or one of RedisBloom's documented
// errors; and a request answered with an error leaves every key exactly as it was.
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { RespClient, RespValue } from "../test/kv/support/resp-client.ts";
import type { ServerProcess } from "../test/kv/support/servers.ts";
import { kvWithClient } from "../test/kv/support/side-by-side.ts";

let kv: ServerProcess;
let client: RespClient;

kvWithClient([], (server, connection) => {
  kv = server;
  client = connection;
});

const commands = ["BF.RESERVE", "BF.ADD", "BF.MADD", "BF.INSERT", "BF.EXISTS", "BF.MEXISTS", "BF.CARD", "BF.INFO", "BF.DEBUG"] as const;
/** k: missing; b: a scaling filter; n: a full NONSCALING filter; s: a string. */
const keys = ["k", "b", "n", "s"];

const documentedErrors = new Set([
  "ERR bad error rate",
  "ERR (0 < error rate range < 1) ",
  "ERR bad capacity",
  "ERR (capacity should be larger than 0)",
  "ERR no expansion",
  "ERR bad expansion",
  "ERR expansion should be greater or equal to 1",
  "Nonscaling filters cannot expand",
  "ERR item exists",
  "ERR could not create filter",
  "Bad error rate",
  "Bad capacity",
  "Bad expansion",
  "Unknown argument received",
  "Bad argument received",
  "ERR non scaling filter is full",
  "ERR not found",
  "Invalid information value",
  "WRONGTYPE Operation against a key holding the wrong kind of value",
  ...commands.map((c) => `ERR wrong number of arguments for '${c.toLowerCase()}' command`),
]);

const word = fc.constantFrom(
  "ITEMS",
  "items",
  "i",
  "ERROR",
  "error",
  "e",
  "er",
  "EXPANSION",
  "expansion",
  "ex",
  "CAPACITY",
  "capacity",
  "c",
  "NOCREATE",
  "nocreate",
  "noc",
  "NONSCALING",
  "nonscaling",
  "n",
  "x",
  "",
  "CAPACITY",
  "FILTERS",
  "SIZE",
  "ITEMS",
  "EXPANSION",
  "bogus",
);
// Capacities stay small enough to allocate quickly, except those the 512 MiB limit refuses outright.
const number = fc.constantFrom(
  "0",
  "1",
  "2",
  "-1",
  "10",
  "100",
  "1000",
  "0.01",
  "0.5",
  "0.999999",
  "1e-300",
  "4.9e-324",
  "1e-400",
  "inf",
  "-inf",
  "nan",
  "1.5",
  "007",
  "+1",
  " 1",
  "4294967296",
  "4294967298",
  "9223372036854775807",
  "9223372036854775808",
  "1000000000000",
  "0x10",
  "1e3",
);
const junk = fc.uint8Array({ maxLength: 6 }).map((bytes) => Buffer.from(bytes).toString("latin1"));
const arg = fc.oneof({ weight: 3, arbitrary: word }, { weight: 3, arbitrary: number }, { weight: 1, arbitrary: junk });
const key = fc.constantFrom(...keys);
const rate = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("0.01", "0.5", "0.1", "1e-10") }, { weight: 1, arbitrary: number });
const capacity = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("1", "2", "100", "5000") }, { weight: 1, arbitrary: number });
const item = fc.oneof(fc.constantFrom("seed-1", "seed-2", "x", ""), junk);
const option = fc.oneof(
  fc.tuple(fc.constantFrom("EXPANSION", "expansion", "ERROR", "CAPACITY", "capacity", "ex", "err", "c"), number),
  fc.tuple(fc.constantFrom("NONSCALING", "NOCREATE", "nocreate", "n", "nx")),
  fc.tuple(arg),
);
/** Requests shaped like each command's syntax, with its parts drawn from the edge cases above. */
const shaped = fc.oneof(
  fc.tuple(key, rate, capacity, fc.array(option, { maxLength: 2 })).map(([k, r, c, options]) => ["BF.RESERVE", k, r, c, ...options.flat()]),
  fc
    .tuple(key, fc.array(option, { maxLength: 3 }), fc.constantFrom("ITEMS", "items", "i"), fc.array(item, { maxLength: 4 }))
    .map(([k, options, items, list]) => ["BF.INSERT", k, ...options.flat(), items, ...list]),
  fc.tuple(fc.constantFrom("BF.ADD", "BF.EXISTS"), key, item).map(([command, k, i]) => [command, k, i]),
  fc.tuple(fc.constantFrom("BF.MADD", "BF.MEXISTS"), key, fc.array(item, { minLength: 1, maxLength: 5 })).map(([command, k, list]) => [command, k, ...list]),
  fc.tuple(key, fc.option(arg, { nil: undefined })).map(([k, field]) => (field === undefined ? ["BF.INFO", k] : ["BF.INFO", k, field])),
  key.map((k) => ["BF.CARD", k]),
);
/** Anything at all after a command name. */
const unshaped = fc.tuple(fc.constantFrom(...commands), fc.array(arg, { maxLength: 8 })).map(([command, args]) => [command, ...args]);
const request = fc.oneof({ weight: 4, arbitrary: shaped }, { weight: 1, arbitrary: unshaped });

const isBit = (v: RespValue) => v === 0n || v === 1n;
const isError = (v: RespValue): v is { e: string } => typeof v === "object" && v !== null && "e" in v;
/** An add's array: 0s and 1s, possibly ended by the refusal that stopped the command. */
const isAddArray = (v: RespValue) => Array.isArray(v) && v.every((x, i) => isBit(x) || (i === v.length - 1 && isError(x) && documentedErrors.has(x.e)));

function validReply(argv: string[], reply: RespValue): boolean {
  if (isError(reply)) return documentedErrors.has(reply.e);
  switch (argv[0]) {
    case "BF.RESERVE":
      return typeof reply === "object" && reply !== null && "s" in reply && reply.s === "OK";
    case "BF.ADD":
    case "BF.EXISTS":
      return isBit(reply);
    case "BF.MADD":
    case "BF.INSERT":
      return isAddArray(reply) && (reply as RespValue[]).length <= argv.length - 2;
    case "BF.MEXISTS":
      return Array.isArray(reply) && reply.length === argv.length - 2 && reply.every(isBit);
    case "BF.CARD":
      return typeof reply === "bigint" && reply >= 0n;
    case "BF.INFO":
      return Array.isArray(reply) && (reply.length === 1 || reply.length === 10);
    case "BF.DEBUG":
      return Array.isArray(reply) && reply.every((line) => typeof line === "string");
    default:
      return false;
  }
}

/** Everything a request could change: each key's type, a filter's every sub-filter and count, the string. */
const snapshot = () =>
  client.pipeline(
    keys
      .flatMap((key) => [
        ["TYPE", key],
        ["BF.DEBUG", key],
        ["BF.MEXISTS", key, "seed-1", "seed-2", "x", ""],
      ])
      .concat([["GET", "s"], ["DBSIZE"]]),
  );

async function reset(): Promise<void> {
  await client.pipeline([
    ["FLUSHALL"],
    ["BF.MADD", "b", "seed-1", "seed-2"],
    ["BF.RESERVE", "n", "0.01", "2", "NONSCALING"],
    ["BF.MADD", "n", "seed-1", "seed-2"],
    ["SET", "s", "v"],
  ]);
}

test("arbitrary BF.* arguments: valid replies or documented errors; an error changes nothing", async () => {
  /** Replies seen, by error text or "ok", so a run shows it reached past the parsers. */
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), async (requests) => {
      await reset();
      for (const argv of requests) {
        const before = await snapshot();
        const reply = await client.call(...argv);
        if (!validReply(argv, reply))
          throw new Error(`invalid reply to ${JSON.stringify(argv)}: ${JSON.stringify(reply, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))}`);
        const kind = isError(reply) ? reply.e : `${argv[0]} ok`;
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
        if (isError(reply)) expect(await snapshot()).toEqual(before);
      }
      expect(await client.call("PING")).toEqual({ s: "PONG" });
    }),
    { numRuns: 1000 },
  );
  expect(kv.proc.exitCode).toBeNull();
  console.log(
    [...seen]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${n} × ${k}`)
      .join("\n"),
  );
}, 20_000);
