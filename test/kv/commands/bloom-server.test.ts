// BF.* error cases and limits through a real `svc kv` process, with RedisBloom's exact replies:
// each refused request is followed by a look at the key, to prove the refusal changed nothing.
// (Debian ships no RedisBloom module for redis-server 7.0, so the expectations are RedisBloom
// 2.8's documented and published behaviour, not a differential run.)
import { beforeEach, describe, expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import type { ServerProcess } from "../support/servers.ts";
import { kvWithClient } from "../support/side-by-side.ts";

let kv: ServerProcess;
let client: RespClient;

kvWithClient([], (server, connection) => {
  kv = server;
  client = connection;
});

beforeEach(async () => {
  await client.call("FLUSHALL");
});

const call = (...argv: (string | number)[]): Promise<RespValue> => client.call(...argv.map(String));
const e = (message: string) => ({ e: message });
const ok = { s: "OK" };
const arity = (name: string) => e(`ERR wrong number of arguments for '${name}' command`);

/** Expects `argv` to be refused with `error` and key `key` to stay missing. */
async function refusedOnMissing(error: RespValue, key: string, ...argv: (string | number)[]): Promise<void> {
  expect(await call(...argv)).toEqual(error);
  expect(await call("EXISTS", key)).toBe(0n);
}

describe("BF.RESERVE", () => {
  test("error rate: not a number, 0, 1, negative, inf are refused; just inside (0, 1) is accepted", async () => {
    await refusedOnMissing(e("ERR bad error rate"), "k", "BF.RESERVE", "k", "abc", "100");
    await refusedOnMissing(e("ERR bad error rate"), "k", "BF.RESERVE", "k", "1e-400", "100");
    for (const rate of ["0", "1", "-0.01", "7.7", "inf", "1.0000000000000002"]) {
      await refusedOnMissing(e("ERR (0 < error rate range < 1) "), "k", "BF.RESERVE", "k", rate, "100");
    }
    expect(await call("BF.RESERVE", "low", "4.9e-324", "10", "NONSCALING")).toEqual(ok);
    expect(await call("BF.RESERVE", "high", "0.9999999999999999", "100", "NONSCALING")).toEqual(ok);
    expect(await call("BF.ADD", "high", "1")).toBe(1n);
    expect(await call("BF.DEBUG", "high")).toEqual(["size:1", "bytes:8 bits:64 hashes:1 hashwidth:64 capacity:100 size:1 ratio:1"]);
  });

  test("capacity: not an integer is bad; 0 and negative are out of range; 1 works", async () => {
    await refusedOnMissing(e("ERR bad capacity"), "k", "BF.RESERVE", "k", "0.01", "1.5");
    await refusedOnMissing(e("ERR bad capacity"), "k", "BF.RESERVE", "k", "0.01", "18446744073709551616");
    await refusedOnMissing(e("ERR (capacity should be larger than 0)"), "k", "BF.RESERVE", "k", "0.01", "0");
    await refusedOnMissing(e("ERR (capacity should be larger than 0)"), "k", "BF.RESERVE", "k", "0.01", "-1");
    expect(await call("BF.RESERVE", "one", "0.01", "1")).toEqual(ok);
    // Sub-filters of 1, 2 and 4 items: the fourth item opens the third.
    expect(await call("BF.MADD", "one", "a", "b", "c", "d")).toEqual([1n, 1n, 1n, 1n]);
    expect(await call("BF.INFO", "one", "FILTERS")).toEqual([3n]);
    expect(await call("BF.INFO", "one", "CAPACITY")).toEqual([7n]);
  });

  test("EXPANSION: 0, negative, missing or not an integer are refused; NONSCALING cannot expand", async () => {
    await refusedOnMissing(e("ERR expansion should be greater or equal to 1"), "k", "BF.RESERVE", "k", "0.01", "10", "EXPANSION", "0");
    await refusedOnMissing(e("ERR expansion should be greater or equal to 1"), "k", "BF.RESERVE", "k", "0.01", "10", "EXPANSION", "-1");
    await refusedOnMissing(e("ERR bad expansion"), "k", "BF.RESERVE", "k", "0.01", "10", "EXPANSION", "x");
    await refusedOnMissing(e("ERR no expansion"), "k", "BF.RESERVE", "k", "0.01", "10", "EXPANSION");
    await refusedOnMissing(e("ERR no expansion"), "k", "BF.RESERVE", "k", "0.01", "10", "X", "EXPANSION");
    await refusedOnMissing(e("Nonscaling filters cannot expand"), "k", "BF.RESERVE", "k", "0.01", "10", "NONSCALING", "EXPANSION", "2");
    await refusedOnMissing(e("Nonscaling filters cannot expand"), "k", "BF.RESERVE", "k", "0.01", "10", "expansion", "2", "nonscaling");
    expect(await call("BF.RESERVE", "x1", "0.01", "10", "expansion", "1")).toEqual(ok);
    expect(await call("BF.INFO", "x1", "EXPANSION")).toEqual([1n]);
  });

  test("RedisBloom's loose parsing: unknown words are ignored, the first EXPANSION wins, the key counts", async () => {
    expect(await call("BF.RESERVE", "o1", "0.01", "100", "BOGUS")).toEqual(ok);
    expect(await call("BF.RESERVE", "o2", "0.01", "100", "EXPANSION", "3", "EXPANSION")).toEqual(ok);
    expect(await call("BF.INFO", "o2", "EXPANSION")).toEqual([3n]);
    // RedisBloom looks for NONSCALING in every argument, the key included.
    expect(await call("BF.RESERVE", "nonscaling", "0.01", "100")).toEqual(ok);
    expect(await call("BF.INFO", "nonscaling", "EXPANSION")).toEqual([null]);
  });

  test("argument counts: fewer than 4 or more than 7 are arity errors", async () => {
    await refusedOnMissing(arity("bf.reserve"), "k", "BF.RESERVE", "k", "0.01");
    await refusedOnMissing(arity("bf.reserve"), "k", "BF.RESERVE", "k", "0.01", "10", "EXPANSION", "2", "EXPANSION", "3");
    expect(await call("BF.RESERVE")).toEqual(arity("bf.reserve"));
  });

  test("an existing key is refused: ERR item exists for a filter, WRONGTYPE for anything else", async () => {
    await call("BF.RESERVE", "b", "0.01", "100");
    await call("BF.ADD", "b", "x");
    expect(await call("BF.RESERVE", "b", "0.001", "5000")).toEqual(e("ERR item exists"));
    expect(await call("BF.INFO", "b")).toEqual([
      { s: "Capacity" },
      100n,
      { s: "Size" },
      240n,
      { s: "Number of filters" },
      1n,
      { s: "Number of items inserted" },
      1n,
      { s: "Expansion rate" },
      2n,
    ]);
    await call("SET", "s", "v");
    expect(await call("BF.RESERVE", "s", "0.01", "100")).toEqual(e("WRONGTYPE Operation against a key holding the wrong kind of value"));
    expect(await call("GET", "s")).toBe("v");
  });

  test("a filter larger than 512 MiB is refused as RedisBloom refuses one it cannot allocate", async () => {
    await refusedOnMissing(e("ERR could not create filter"), "k", "BF.RESERVE", "k", "0.0001", "1000000000");
  });
});

describe("BF.INSERT", () => {
  test("option errors, before anything is created", async () => {
    await refusedOnMissing(e("Bad error rate"), "k", "BF.INSERT", "k", "ERROR", "big", "ITEMS", "a");
    await refusedOnMissing(e("Bad capacity"), "k", "BF.INSERT", "k", "CAPACITY", "0.3", "ITEMS", "a");
    await refusedOnMissing(e("Bad expansion"), "k", "BF.INSERT", "k", "EXPANSION", "big", "ITEMS", "a");
    await refusedOnMissing(e("Unknown argument received"), "k", "BF.INSERT", "k", "DONTEXIST", "NOCREATE");
    await refusedOnMissing(e("Unknown argument received"), "k", "BF.INSERT", "k", "", "ITEMS", "a");
    for (const option of [
      ["EXPANSION", "0"],
      ["CAPACITY", "0"],
      ["CAPACITY", "-5"],
      ["ERROR", "0"],
      ["ERROR", "1"],
      ["ERROR", "-1"],
    ]) {
      await refusedOnMissing(e("Bad argument received"), "k", "BF.INSERT", "k", ...option, "ITEMS", "a");
    }
  });

  test("arity errors: too few arguments, a value missing, no ITEMS or no items", async () => {
    const insertArity = arity("bf.insert");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k", "ITEMS");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k", "NOCREATE", "ITEMS");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k", "NOCREATE", "CAPACITY");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k", "CAPACITY", "10");
    await refusedOnMissing(insertArity, "k", "BF.INSERT", "k", "ERROR");
  });

  test("NOCREATE on a missing key is ERR not found, whatever other options say", async () => {
    await refusedOnMissing(e("ERR not found"), "k", "BF.INSERT", "k", "NOCREATE", "ITEMS", "foo", "bar");
    await refusedOnMissing(e("ERR not found"), "k", "BF.INSERT", "k", "NOCREATE", "CAPACITY", "10", "ITEMS", "a");
    await call("BF.ADD", "k", "foo");
    expect(await call("BF.INSERT", "k", "NOCREATE", "ITEMS", "foo", "bar")).toEqual([0n, 1n]);
  });

  test("options are told apart by their letters, as RedisBloom does", async () => {
    // "ERR..." is ERROR (second letter r), "EX..." EXPANSION; "NOC..." NOCREATE, other N... NONSCALING.
    expect(await call("BF.INSERT", "k", "err", "0.1", "cap", "5", "exp", "3", "nons", "i", "a")).toEqual([1n]);
    expect(await call("BF.DEBUG", "k")).toEqual(["size:1", "bytes:8 bits:64 hashes:4 hashwidth:64 capacity:5 size:1 ratio:0.1"]);
    expect(await call("BF.INFO", "k", "EXPANSION")).toEqual([null]);
  });

  test("a full NONSCALING filter: the array ends with the error and the rest is not added", async () => {
    expect(await call("BF.INSERT", "n", "CAPACITY", "2", "NONSCALING", "ITEMS", "a", "b", "c", "d")).toEqual([1n, 1n, e("ERR non scaling filter is full")]);
    expect(await call("BF.MEXISTS", "n", "a", "b", "c", "d")).toEqual([1n, 1n, 0n, 0n]);
    expect(await call("BF.CARD", "n")).toBe(2n);
  });
});

describe("the other commands", () => {
  test("arity of each command", async () => {
    for (const [name, argv] of [
      ["bf.add", ["k"]],
      ["bf.add", ["k", "a", "b"]],
      ["bf.madd", ["k"]],
      ["bf.exists", ["k"]],
      ["bf.exists", ["k", "a", "b"]],
      ["bf.mexists", ["k"]],
      ["bf.card", []],
      ["bf.card", ["k", "x"]],
      ["bf.info", []],
      ["bf.info", ["k", "capacity", "size"]],
    ] as const) {
      expect(await call(name.toUpperCase(), ...argv)).toEqual(arity(name));
    }
    expect(await call("EXISTS", "k")).toBe(0n);
  });

  test("BF.INFO: missing key, unknown field, wrong type", async () => {
    expect(await call("BF.INFO", "missing")).toEqual(e("ERR not found"));
    await call("BF.ADD", "b", "x");
    expect(await call("BF.INFO", "b", "wrong_value")).toEqual(e("Invalid information value"));
    await call("SET", "s", "v");
    expect(await call("BF.INFO", "s")).toEqual(e("WRONGTYPE Operation against a key holding the wrong kind of value"));
    expect(await call("BF.CARD", "s")).toEqual(e("WRONGTYPE Operation against a key holding the wrong kind of value"));
  });

  test("RESP3: BF.INFO is a map; a single field is still a one-element array", async () => {
    const resp3 = await RespClient.connect(kv.port);
    await resp3.call("HELLO", "3");
    await resp3.call("BF.RESERVE", "n", "0.01", "3", "NONSCALING");
    expect(await resp3.call("BF.INFO", "n")).toEqual({
      map: [
        { s: "Capacity" },
        3n,
        { s: "Size" },
        104n,
        { s: "Number of filters" },
        1n,
        { s: "Number of items inserted" },
        0n,
        { s: "Expansion rate" },
        { nil: true },
      ],
    });
    expect(await resp3.call("BF.INFO", "n", "EXPANSION")).toEqual([{ nil: true }]);
    resp3.close();
  });

  test("TYPE is MBbloom--; COMMAND INFO shows a module command of arity -1", async () => {
    await call("BF.ADD", "b", "x");
    expect(await call("TYPE", "b")).toEqual({ s: "MBbloom--" });
    const [info] = (await call("COMMAND", "INFO", "bf.add")) as RespValue[][];
    expect(info!.slice(0, 6)).toEqual(["bf.add", -1n, [{ s: "write" }, { s: "denyoom" }], 1n, 1n, 1n]);
  });
});
