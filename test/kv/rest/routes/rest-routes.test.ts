// The REST API's dedicated routes, every row of the spec's tables, end to end against a real
// `svc kv` process driven with fetch, with a RESP client on the same process as the witness:
// what REST writes, RESP reads byte for byte, and the other way round. Also the choices the spec
// leaves open (docs/kv-rest.md): statuses of bad bodies and wrong types, reads of missing keys,
// the shapes of /info and /dbsize, bytes that are not UTF-8, and the body limit at and past it.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { kvRestBodyBytesMax } from "../../../../src/core/limits.ts";
import { RespClient } from "../../support/resp-client.ts";
import type { ServerProcess } from "../../support/servers.ts";
import { kvWithClient } from "../../support/side-by-side.ts";
import { waitUntil } from "../../support/wire.ts";

let kv: ServerProcess;
let resp: RespClient;
let base: string;

kvWithClient(["--appendonly", "no"], (server, client) => {
  kv = server;
  resp = client;
  base = `http://127.0.0.1:${kv.httpPort}`;
});

interface Answer {
  status: number;
  body: { result?: unknown; error?: string };
  headers: Headers;
}

/** One request; a string body is sent as it is, anything else as JSON. */
async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { "content-type": "application/json" };
  }
  const response = await fetch(base + path, init);
  return { status: response.status, body: (await response.json()) as Answer["body"], headers: response.headers };
}

async function ok(method: string, path: string, body?: unknown): Promise<unknown> {
  const answer = await call(method, path, body);
  expect(answer, `${method} ${path}`).toMatchObject({ status: 200 });
  return answer.body.result;
}

async function fails(method: string, path: string, body: unknown, status: number, message: string | RegExp): Promise<void> {
  const answer = await call(method, path, body);
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBe(status);
  expect(answer.body.error).toMatch(message);
}

describe("strings /kv", () => {
  test("PUT then GET returns the value; PUT answers OK; DELETE counts deleted keys", async () => {
    expect(await call("PUT", "/kv/s:1", { value: "hello" })).toMatchObject({ status: 200, body: { result: "OK" } });
    expect(await ok("GET", "/kv/s:1")).toBe("hello");
    expect(await resp.call("GET", "s:1")).toBe("hello");
    expect(await ok("DELETE", "/kv/s:1")).toBe(1);
    expect(await ok("DELETE", "/kv/s:1")).toBe(0);
  });

  test("GET of a missing key is 404 with the error envelope", async () => {
    await fails("GET", "/kv/s:missing", undefined, 404, "key not found");
  });

  test("ex sets a TTL in seconds, px in milliseconds; an expired key reads 404", async () => {
    await ok("PUT", "/kv/s:ex", { value: "v", ex: 100 });
    const ttl = (await resp.call("TTL", "s:ex")) as bigint;
    expect(ttl > 90n && ttl <= 100n).toBe(true);
    await ok("PUT", "/kv/s:px", { value: "v", px: 50_000 });
    const pttl = (await resp.call("PTTL", "s:px")) as bigint;
    expect(pttl > 40_000n && pttl <= 50_000n).toBe(true);
    await ok("PUT", "/kv/s:short", { value: "v", px: 1 });
    await waitUntil(async () => ((await call("GET", "/kv/s:short")).status === 404 ? true : undefined), "the key to expire");
  });

  test("a PUT without a TTL clears the old one, as SET does", async () => {
    await ok("PUT", "/kv/s:ttl", { value: "v", ex: 100 });
    await ok("PUT", "/kv/s:ttl", { value: "w" });
    expect(await resp.call("TTL", "s:ttl")).toBe(-1n);
  });

  test("bad PUT bodies are 400 and write nothing", async () => {
    await fails("PUT", "/kv/s:bad", { value: "v", ex: 1, px: 1 }, 400, "ERR syntax error");
    await fails("PUT", "/kv/s:bad", { value: "v", ex: 0 }, 400, "ERR invalid expire time in 'set' command");
    await fails("PUT", "/kv/s:bad", { value: "v", px: -5 }, 400, "ERR invalid expire time in 'set' command");
    await fails("PUT", "/kv/s:bad", { value: "v", ex: 1.5 }, 400, "'ex' must be an integer");
    await fails("PUT", "/kv/s:bad", { value: "v", ex: "10" }, 400, "'ex' must be an integer");
    await fails("PUT", "/kv/s:bad", { value: 5 }, 400, "'value' must be a string");
    await fails("PUT", "/kv/s:bad", {}, 400, "'value' is required");
    await fails("PUT", "/kv/s:bad", { value: "v", tll: 5 }, 400, "unknown field 'tll'");
    await fails("PUT", "/kv/s:bad", ["v"], 400, "must be a JSON object");
    await fails("PUT", "/kv/s:bad", "{not json", 400, "malformed JSON");
    await fails("PUT", "/kv/s:bad", "", 400, "empty");
    expect(await resp.call("EXISTS", "s:bad")).toBe(0n);
  });

  test("a body without a JSON content type is 415", async () => {
    const response = await fetch(`${base}/kv/s:form`, { method: "PUT", body: "value=v", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error: string }).error).toContain("application/json");
  });

  test("GET of a key holding another type is 409 with Redis's WRONGTYPE message", async () => {
    await resp.call("RPUSH", "s:list", "a");
    await fails("GET", "/kv/s:list", undefined, 409, /^WRONGTYPE Operation against a key holding the wrong kind of value$/);
  });
});

describe("lists /list", () => {
  test("rpush and lpush answer the new length; GET is LRANGE 0 -1 by default, start/stop from the query", async () => {
    expect(await ok("POST", "/list/l:1/rpush", { values: ["b", "c"] })).toBe(2);
    expect(await ok("POST", "/list/l:1/lpush", { values: ["a0", "a"] })).toBe(4);
    expect(await ok("GET", "/list/l:1")).toEqual(["a", "a0", "b", "c"]);
    expect(await ok("GET", "/list/l:1?start=1&stop=2")).toEqual(["a0", "b"]);
    expect(await ok("GET", "/list/l:1?start=-1")).toEqual(["c"]);
    expect(await resp.call("LRANGE", "l:1", "0", "-1")).toEqual(["a", "a0", "b", "c"]);
  });

  test("lpop and rpop answer the removed element, null once the list is empty", async () => {
    await resp.call("RPUSH", "l:pop", "x", "y");
    expect(await ok("POST", "/list/l:pop/lpop")).toBe("x");
    expect(await ok("POST", "/list/l:pop/rpop")).toBe("y");
    expect(await ok("POST", "/list/l:pop/rpop")).toBeNull();
    expect(await ok("POST", "/list/l:pop/lpop")).toBeNull();
  });

  test("GET of a missing list is [] (LRANGE's answer); a bad range is 400; a string key is 409", async () => {
    expect(await ok("GET", "/list/l:missing")).toEqual([]);
    await fails("GET", "/list/l:1?start=x", undefined, 400, "ERR value is not an integer or out of range");
    await resp.call("SET", "l:string", "v");
    await fails("GET", "/list/l:string", undefined, 409, "WRONGTYPE");
    await fails("POST", "/list/l:string/rpush", { values: ["a"] }, 409, "WRONGTYPE");
  });

  test("push bodies: values must be a non-empty array of strings", async () => {
    await fails("POST", "/list/l:bad/rpush", { values: [] }, 400, "at least one");
    await fails("POST", "/list/l:bad/lpush", { values: "a" }, 400, "'values' must be an array");
    await fails("POST", "/list/l:bad/lpush", { values: ["a", 1] }, 400, "'values[1]' must be a string");
    await fails("POST", "/list/l:bad/lpush", { value: ["a"] }, 400, "unknown field 'value'");
    expect(await resp.call("EXISTS", "l:bad")).toBe(0n);
  });
});

describe("hashes /hash", () => {
  test("PUT answers the count of fields added; GET is HGETALL as a flat field, value array", async () => {
    expect(await ok("PUT", "/hash/h:1", { fields: { f1: "v1", f2: "v2" } })).toBe(2);
    expect(await ok("PUT", "/hash/h:1", { fields: { f2: "changed", f3: "v3" } })).toBe(1);
    expect(await ok("GET", "/hash/h:1")).toEqual(["f1", "v1", "f2", "changed", "f3", "v3"]);
    expect(await resp.call("HGET", "h:1", "f2")).toBe("changed");
  });

  test("GET of one field is HGET; a missing field or key is 404", async () => {
    await resp.call("HSET", "h:2", "f", "v");
    expect(await ok("GET", "/hash/h:2/f")).toBe("v");
    await fails("GET", "/hash/h:2/nope", undefined, 404, "field not found");
    await fails("GET", "/hash/h:missing/f", undefined, 404, "field not found");
  });

  test("DELETE of a field is HDEL: 1, then 0", async () => {
    await resp.call("HSET", "h:3", "f", "v", "g", "w");
    expect(await ok("DELETE", "/hash/h:3/f")).toBe(1);
    expect(await ok("DELETE", "/hash/h:3/f")).toBe(0);
    expect(await resp.call("HGETALL", "h:3")).toEqual(["g", "w"]);
  });

  test("GET of a missing hash is []; bad fields are 400; a list key is 409", async () => {
    expect(await ok("GET", "/hash/h:missing")).toEqual([]);
    await fails("PUT", "/hash/h:bad", { fields: {} }, 400, "at least one field");
    await fails("PUT", "/hash/h:bad", { fields: ["f", "v"] }, 400, "'fields' must be an object");
    await fails("PUT", "/hash/h:bad", { fields: { f: 1 } }, 400, "'fields.f' must be a string");
    expect(await resp.call("EXISTS", "h:bad")).toBe(0n);
    await resp.call("RPUSH", "h:list", "a");
    await fails("GET", "/hash/h:list", undefined, 409, "WRONGTYPE");
  });
});

describe("sets /set", () => {
  test("PUT answers the count of new members; GET is SMEMBERS; DELETE of a member is SREM", async () => {
    expect(await ok("PUT", "/set/t:1", { members: ["a", "b", "a"] })).toBe(2);
    expect(await ok("PUT", "/set/t:1", { members: ["b", "c"] })).toBe(1);
    expect(((await ok("GET", "/set/t:1")) as string[]).sort()).toEqual(["a", "b", "c"]);
    expect(await ok("DELETE", "/set/t:1/b")).toBe(1);
    expect(await ok("DELETE", "/set/t:1/b")).toBe(0);
    expect(((await resp.call("SMEMBERS", "t:1")) as string[]).sort()).toEqual(["a", "c"]);
  });

  test("GET of a missing set is []; empty members are 400", async () => {
    expect(await ok("GET", "/set/t:missing")).toEqual([]);
    await fails("PUT", "/set/t:bad", { members: [] }, 400, "at least one");
  });
});

describe("sorted sets /zset", () => {
  test("PUT is ZADD and answers members added; GET is ZRANGE WITHSCORES as {member, score} in rank order", async () => {
    expect(
      await ok("PUT", "/zset/z:1", {
        members: [
          { score: 2, member: "b" },
          { score: 1.5, member: "a" },
          { score: -3, member: "c" },
        ],
      }),
    ).toBe(3);
    expect(
      await ok("PUT", "/zset/z:1", {
        members: [
          { score: 10, member: "a" },
          { score: 0, member: "d" },
        ],
      }),
    ).toBe(1);
    expect(await ok("GET", "/zset/z:1")).toEqual([
      { member: "c", score: -3 },
      { member: "d", score: 0 },
      { member: "b", score: 2 },
      { member: "a", score: 10 },
    ]);
    expect(await ok("GET", "/zset/z:1?start=1&stop=2")).toEqual([
      { member: "d", score: 0 },
      { member: "b", score: 2 },
    ]);
    expect(await resp.call("ZSCORE", "z:1", "a")).toBe("10");
  });

  test('infinite scores go in as "inf"/"-inf" and come out as those strings', async () => {
    await ok("PUT", "/zset/z:inf", {
      members: [
        { score: "inf", member: "top" },
        { score: "-inf", member: "bottom" },
      ],
    });
    expect(await ok("GET", "/zset/z:inf")).toEqual([
      { member: "bottom", score: "-inf" },
      { member: "top", score: "inf" },
    ]);
  });

  test("GET of a missing zset is []; bad members are 400 and write nothing", async () => {
    expect(await ok("GET", "/zset/z:missing")).toEqual([]);
    await fails("PUT", "/zset/z:bad", { members: [{ score: "x", member: "a" }] }, 400, "'members[0].score' must be a number");
    await fails("PUT", "/zset/z:bad", { members: [{ score: 1 }] }, 400, "'members[0].member' is required");
    await fails("PUT", "/zset/z:bad", { members: [{ score: 1, member: "a", extra: 1 }] }, 400, "unknown field 'extra'");
    await fails("PUT", "/zset/z:bad", { members: [] }, 400, "at least one");
    expect(await resp.call("EXISTS", "z:bad")).toBe(0n);
  });
});

describe("HyperLogLog /pfadd /pfcount /pfmerge", () => {
  test("pfadd answers 1 when a register changed, else 0; pfcount estimates; pfmerge merges sources", async () => {
    expect(await ok("POST", "/pfadd/p:1", { elements: ["a", "b", "c"] })).toBe(1);
    expect(await ok("POST", "/pfadd/p:1", { elements: ["a", "b"] })).toBe(0);
    expect(await ok("GET", "/pfcount/p:1")).toBe(3);
    await ok("POST", "/pfadd/p:2", { elements: ["c", "d"] });
    expect(await ok("POST", "/pfmerge/p:all", { sources: ["p:1", "p:2"] })).toBe("OK");
    expect(await ok("GET", "/pfcount/p:all")).toBe(4);
    expect(await resp.call("PFCOUNT", "p:all")).toBe(4n);
  });

  test("pfcount of a missing key is 0; pfadd with no elements creates the key; a list key is 409", async () => {
    expect(await ok("GET", "/pfcount/p:missing")).toBe(0);
    expect(await ok("POST", "/pfadd/p:empty", { elements: [] })).toBe(1);
    expect(await resp.call("EXISTS", "p:empty")).toBe(1n);
    await resp.call("RPUSH", "p:list", "a");
    await fails("GET", "/pfcount/p:list", undefined, 409, "WRONGTYPE");
    await fails("POST", "/pfmerge/p:x", { sources: "p:1" }, 400, "'sources' must be an array");
  });
});

describe("Bloom filters /bf", () => {
  test("reserve, add, exists and info", async () => {
    expect(await ok("POST", "/bf/reserve/b:1", { error_rate: 0.01, capacity: 1000 })).toBe("OK");
    expect(await ok("POST", "/bf/add/b:1", { item: "x" })).toBe(1);
    expect(await ok("POST", "/bf/add/b:1", { item: "x" })).toBe(0);
    expect(await ok("GET", "/bf/exists/b:1/x")).toBe(1);
    expect(await ok("GET", "/bf/exists/b:1/y")).toBe(0);
    expect(await ok("GET", "/bf/info/b:1")).toMatchObject({ Capacity: 1000, "Number of filters": 1, "Number of items inserted": 1, "Expansion rate": 2 });
    expect(await resp.call("BF.EXISTS", "b:1", "x")).toBe(1n);
  });

  test("info of a missing filter is 404, reserving an existing one 409, bad parameters 400", async () => {
    await fails("GET", "/bf/info/b:missing", undefined, 404, "ERR not found");
    expect(await ok("GET", "/bf/exists/b:missing/x")).toBe(0);
    await ok("POST", "/bf/reserve/b:2", { error_rate: 0.1, capacity: 10 });
    await fails("POST", "/bf/reserve/b:2", { error_rate: 0.1, capacity: 10 }, 409, "ERR item exists");
    await fails("POST", "/bf/reserve/b:3", { error_rate: 2, capacity: 10 }, 400, "error rate");
    await fails("POST", "/bf/reserve/b:3", { error_rate: 0.1, capacity: 0 }, 400, "capacity");
    await fails("POST", "/bf/reserve/b:3", { error_rate: 0.1 }, 400, "'capacity' is required");
    await fails("POST", "/bf/add/b:3", { item: ["x"] }, 400, "'item' must be a string");
  });

  test("add creates a filter with default parameters, as BF.ADD does", async () => {
    expect(await ok("POST", "/bf/add/b:auto", { item: "x" })).toBe(1);
    expect(await ok("GET", "/bf/info/b:auto")).toMatchObject({ Capacity: 100 });
  });
});

describe("geo /geo", () => {
  const sicily = [
    { longitude: 13.361389, latitude: 38.115556, member: "Palermo" },
    { longitude: 15.087269, latitude: 37.502669, member: "Catania" },
  ];

  test("add answers items added; pos gives [longitude, latitude] numbers; dist matches GEODIST in each unit", async () => {
    expect(await ok("POST", "/geo/g:1/add", { members: sicily })).toBe(2);
    expect(await ok("POST", "/geo/g:1/add", { members: sicily.slice(0, 1) })).toBe(0);
    const [lon, lat] = (await ok("GET", "/geo/g:1/pos/Palermo")) as number[];
    expect(Math.abs(lon! - 13.361389)).toBeLessThan(1e-5);
    expect(Math.abs(lat! - 38.115556)).toBeLessThan(1e-5);
    expect(await ok("GET", "/geo/g:1/dist/Palermo/Catania")).toBe(Number(await resp.call("GEODIST", "g:1", "Palermo", "Catania", "m")));
    for (const unit of ["m", "km", "ft", "mi"]) {
      const expected = Number(await resp.call("GEODIST", "g:1", "Palermo", "Catania", unit));
      expect(await ok("GET", `/geo/g:1/dist/Palermo/Catania?unit=${unit}`)).toBe(expected);
    }
  });

  test("pos and dist of a missing member are 404; a bad unit or coordinate is 400", async () => {
    await ok("POST", "/geo/g:2/add", { members: sicily });
    await fails("GET", "/geo/g:2/pos/Rome", undefined, 404, "member not found");
    await fails("GET", "/geo/g:missing/pos/Rome", undefined, 404, "member not found");
    await fails("GET", "/geo/g:2/dist/Palermo/Rome", undefined, 404, "member not found");
    await fails("GET", "/geo/g:2/dist/Palermo/Catania?unit=parsec", undefined, 400, "unsupported unit");
    await fails("POST", "/geo/g:3/add", { members: [{ longitude: 200, latitude: 0, member: "x" }] }, 400, "invalid longitude,latitude pair");
    await fails("POST", "/geo/g:3/add", { members: [{ longitude: "1", latitude: 0, member: "x" }] }, 400, "'members[0].longitude' must be a number");
  });

  test("search by radius: members, or objects with distance and coordinates, sorted and counted", async () => {
    await ok("POST", "/geo/g:4/add", { members: sicily });
    const near = { longitude: 15, latitude: 37, radius: 200, unit: "km" };
    expect(((await ok("POST", "/geo/g:4/search", near)) as string[]).sort()).toEqual(["Catania", "Palermo"]);
    expect(await ok("POST", "/geo/g:4/search", { ...near, sort: "ASC", count: 1 })).toEqual(["Catania"]);
    const rich = (await ok("POST", "/geo/g:4/search", { ...near, sort: "DESC", withdist: true, withcoord: true })) as Record<string, unknown>[];
    expect(rich.map((r) => r.member)).toEqual(["Palermo", "Catania"]);
    const viaResp = (await resp.call("GEOSEARCH", "g:4", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "DESC", "WITHDIST")) as string[][];
    expect(rich.map((r) => r.distance)).toEqual(viaResp.map((r) => Number(r[1])));
    expect(typeof rich[0]!.longitude).toBe("number");
    expect(typeof rich[0]!.latitude).toBe("number");
  });

  test("search by box and from a member; a missing key finds nothing; ambiguous areas are 400", async () => {
    await ok("POST", "/geo/g:5/add", { members: sicily });
    expect(await ok("POST", "/geo/g:5/search", { member: "Palermo", width: 100, height: 100, unit: "km" })).toEqual(["Palermo"]);
    expect(await ok("POST", "/geo/g:missing/search", { longitude: 15, latitude: 37, radius: 1 })).toEqual([]);
    await fails("POST", "/geo/g:5/search", { longitude: 15, latitude: 37 }, 400, "'radius', or 'width' and 'height'");
    await fails("POST", "/geo/g:5/search", { longitude: 15, latitude: 37, member: "Palermo", radius: 1 }, 400, "as the centre");
    await fails("POST", "/geo/g:5/search", { longitude: 15, latitude: 37, radius: 1, sort: "SIDEWAYS" }, 400, "syntax error");
    await fails("POST", "/geo/g:5/search", { longitude: 15, latitude: 37, radius: 1, withdist: "yes" }, 400, "'withdist' must be true or false");
  });
});

describe("bitmaps /bitmap", () => {
  test("setbit answers the original bit; getbit reads it; 0 past the end and for a missing key", async () => {
    expect(await ok("POST", "/bitmap/m:1/setbit", { offset: 7, value: 1 })).toBe(0);
    expect(await ok("POST", "/bitmap/m:1/setbit", { offset: 7, value: 1 })).toBe(1);
    expect(await ok("GET", "/bitmap/m:1/getbit/7")).toBe(1);
    expect(await ok("GET", "/bitmap/m:1/getbit/6")).toBe(0);
    expect(await ok("GET", "/bitmap/m:1/getbit/100000")).toBe(0);
    expect(await ok("GET", "/bitmap/m:missing/getbit/3")).toBe(0);
    expect(await resp.call("GET", "m:1")).toBe("\x01");
  });

  test("bitcount over the whole value or a byte range; 0 for a missing key", async () => {
    await resp.call("SET", "m:2", "\xff\x0f\x01");
    expect(await ok("GET", "/bitmap/m:2/bitcount")).toBe(13);
    expect(await ok("GET", "/bitmap/m:2/bitcount?start=1&end=2")).toBe(5);
    expect(await ok("GET", "/bitmap/m:2/bitcount?start=-1&end=-1")).toBe(1);
    expect(await ok("GET", "/bitmap/m:missing/bitcount")).toBe(0);
  });

  test("bad offsets, bit values and ranges are 400 with SETBIT's and BITCOUNT's errors", async () => {
    await fails("POST", "/bitmap/m:3/setbit", { offset: 1, value: 2 }, 400, "ERR bit is not an integer or out of range");
    await fails("POST", "/bitmap/m:3/setbit", { offset: -1, value: 1 }, 400, "ERR bit offset is not an integer or out of range");
    await fails("POST", "/bitmap/m:3/setbit", { offset: "1", value: 1 }, 400, "'offset' must be an integer");
    await fails("GET", "/bitmap/m:3/getbit/x", undefined, 400, "ERR bit offset is not an integer or out of range");
    await fails("GET", "/bitmap/m:2/bitcount?start=1", undefined, 400, "ERR syntax error");
    expect(await resp.call("EXISTS", "m:3")).toBe(0n);
  });
});

describe("past maxmemory", () => {
  test("a write is 503 with Redis's OOM message and changes nothing; reads are served", async () => {
    await ok("PUT", "/kv/oom:k", { value: "before" });
    expect(await resp.call("CONFIG", "SET", "maxmemory", "1")).toEqual({ s: "OK" });
    try {
      await fails("PUT", "/kv/oom:k", { value: "after" }, 503, "OOM command not allowed when used memory > 'maxmemory'.");
      expect(await ok("GET", "/kv/oom:k")).toBe("before");
    } finally {
      expect(await resp.call("CONFIG", "SET", "maxmemory", "0")).toEqual({ s: "OK" });
    }
    expect(await ok("PUT", "/kv/oom:k", { value: "after" })).toBe("OK");
  });
});

describe("server /info /dbsize", () => {
  test('/dbsize is {"result": n}, DBSIZE of database 0', async () => {
    const answer = await call("GET", "/dbsize");
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(["result"]);
    expect(answer.body.result).toBe(Number(await resp.call("DBSIZE")));
  });

  test("/info is an object of sections of fields, numbers as numbers; ?section= picks sections", async () => {
    const info = (await ok("GET", "/info")) as Record<string, Record<string, unknown>>;
    expect(Object.keys(info)).toContain("server");
    expect(Object.keys(info)).toContain("keyspace");
    expect(info.server!.redis_version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(info.server!.tcp_port).toBe(kv.port);
    // Identifiers stay text, even all digits: the git hash is "00000000", not 0.
    expect(info.server!.redis_git_sha1).toBe("00000000");
    expect(info.server!.run_id).toMatch(/^[0-9a-f]{40}$/);
    expect(info.keyspace!.db0).toMatchObject({ keys: expect.any(Number), expires: expect.any(Number) });
    const stats = (await ok("GET", "/info?section=stats")) as Record<string, Record<string, unknown>>;
    expect(Object.keys(stats)).toEqual(["stats"]);
    expect(typeof stats.stats!.total_commands_processed).toBe("number");
  });
});

describe("bytes in keys and values", () => {
  test("percent-encoded path segments are bytes: %FF%00 is the two-byte key FF 00, %2F a slash", async () => {
    await ok("PUT", "/kv/%FF%00", { value: "binary key" });
    expect(await resp.call("GET", "\xff\x00")).toBe("binary key");
    await ok("PUT", "/kv/a%2Fb%20c", { value: "v" });
    expect(await resp.call("GET", "a/b c")).toBe("v");
    await ok("PUT", "/kv/%E2%82%AC", { value: "euro" });
    expect(await resp.call("GET", "\xe2\x82\xac")).toBe("euro");
    await resp.call("HSET", "bin:h", "\xfe", "x");
    expect(await ok("GET", "/hash/bin:h/%FE")).toBe("x");
  });

  test('values that are UTF-8 come back as text; other bytes as {"base64": ...}; BOMs are kept', async () => {
    await resp.call("SET", "bin:utf8", Buffer.from("héllo €", "utf8").toString("latin1"));
    expect(await ok("GET", "/kv/bin:utf8")).toBe("héllo €");
    await resp.call("SET", "bin:raw", "\xff\xfe\x00a");
    expect(await ok("GET", "/kv/bin:raw")).toEqual({ base64: Buffer.from([0xff, 0xfe, 0x00, 0x61]).toString("base64") });
    await resp.call("SET", "bin:bom", "\xef\xbb\xbfx");
    expect(await ok("GET", "/kv/bin:bom")).toBe("\ufeffx");
    // A CESU-style encoded surrogate is not UTF-8.
    await resp.call("SET", "bin:surrogate", "\xed\xa0\x80");
    expect(await ok("GET", "/kv/bin:surrogate")).toEqual({ base64: "7aCA" });
    await resp.call("RPUSH", "bin:list", "ok", "\x80");
    expect(await ok("GET", "/list/bin:list")).toEqual(["ok", { base64: "gA==" }]);
  });

  test('JSON strings are stored as their UTF-8 bytes; {"base64"} stores any bytes; bad forms are 400', async () => {
    await ok("PUT", "/kv/bin:in", { value: "é€😀" });
    expect(await resp.call("GET", "bin:in")).toBe(Buffer.from("é€😀", "utf8").toString("latin1"));
    await ok("PUT", "/kv/bin:in64", { value: { base64: "AP8=" } });
    expect(await resp.call("GET", "bin:in64")).toBe("\x00\xff");
    await ok("POST", "/list/bin:l64/rpush", { values: ["a", { base64: "gA==" }] });
    expect(await resp.call("LRANGE", "bin:l64", "0", "-1")).toEqual(["a", "\x80"]);
    await fails("PUT", "/kv/bin:bad", '{"value": "\\ud800"}', 400, "lone surrogate");
    await fails("PUT", "/kv/bin:bad", { value: { base64: "not base64!" } }, 400, "base64");
    await fails("PUT", "/kv/bin:bad", { value: { base64: "AP8=", extra: 1 } }, 400, "'value' must be a string");
    expect(await resp.call("EXISTS", "bin:bad")).toBe(0n);
  });

  test("property: any bytes, percent-encoded any way a client may, name the same key over REST as over RESP", async () => {
    // Characters a path segment may carry as they are; everything else must be escaped.
    const unreserved = /^[A-Za-z0-9\-._~:@!$&'()*+,;=]$/;
    const encodedByte = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.constantFrom("raw", "upper", "lower")).map(([byte, how]) => {
      const char = String.fromCharCode(byte);
      if (how === "raw" && unreserved.test(char)) return { byte: char, sent: char };
      const hex = byte.toString(16).padStart(2, "0");
      return { byte: char, sent: `%${how === "lower" ? hex : hex.toUpperCase()}` };
    });
    // "." and ".." are dot segments, which URL parsers remove from a path however they are spelt.
    const keys = fc.array(encodedByte, { minLength: 1, maxLength: 12 }).filter((parts) => {
      const key = parts.map((p) => p.byte).join("");
      return key !== "." && key !== "..";
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(keys, async (parts) => {
        const key = parts.map((p) => p.byte).join("");
        const path = `/kv/${parts.map((p) => p.sent).join("")}`;
        const value = `v${++n}`;
        await ok("PUT", path, { value });
        expect(await resp.call("GET", key)).toBe(value);
        await resp.call("SET", key, `${value}'`);
        expect(await ok("GET", path)).toBe(`${value}'`);
        expect(await resp.call("DEL", key)).toBe(1n);
      }),
      { numRuns: 150 },
    );
  });
});

describe("REST and RESP share one engine", () => {
  test("each sees the other's writes at once", async () => {
    await resp.call("SET", "both:1", "from resp");
    expect(await ok("GET", "/kv/both:1")).toBe("from resp");
    await ok("PUT", "/kv/both:2", { value: "from rest" });
    expect(await resp.call("GET", "both:2")).toBe("from rest");
    await ok("POST", "/list/both:l/rpush", { values: ["x"] });
    expect(await resp.call("RPUSH", "both:l", "y")).toBe(2n);
    expect(await ok("GET", "/list/both:l")).toEqual(["x", "y"]);
  });

  test("a REST write to a WATCHed key makes the RESP client's EXEC fail", async () => {
    const watcher = await RespClient.connect(kv.port);
    await watcher.call("WATCH", "both:w");
    await ok("PUT", "/kv/both:w", { value: "changed" });
    await watcher.call("MULTI");
    await watcher.call("SET", "both:w", "mine");
    expect(await watcher.call("EXEC")).toEqual({ nullArray: true });
    expect(await ok("GET", "/kv/both:w")).toBe("changed");
    watcher.close();
  });
});

describe("paths and methods", () => {
  test("an unknown path is 404 and an unserved method 405 with Allow, both in the error envelope", async () => {
    await fails("GET", "/nothing/here", undefined, 404, "no route");
    const answer = await call("PATCH", "/kv/x");
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, PUT, DELETE, OPTIONS");
    expect(answer.body.error).toContain("GET, PUT, DELETE");
  });
});

describe("request body limit", () => {
  /** A PUT /kv body of exactly `bytes` bytes. */
  const bodyOf = (bytes: number) => {
    const frame = '{"value":""}';
    return `{"value":"${"x".repeat(bytes - frame.length)}"}`;
  };

  test(`a body of exactly kvRestBodyBytesMax (${kvRestBodyBytesMax} bytes) is accepted`, async () => {
    const body = bodyOf(kvRestBodyBytesMax);
    expect(body.length).toBe(kvRestBodyBytesMax);
    expect(await call("PUT", "/kv/limit:at", body)).toMatchObject({ status: 200, body: { result: "OK" } });
    expect(await resp.call("STRLEN", "limit:at")).toBe(BigInt(kvRestBodyBytesMax - 12));
  });

  test("one byte more is 413 and writes nothing", async () => {
    const answer = await call("PUT", "/kv/limit:past", bodyOf(kvRestBodyBytesMax + 1));
    expect(answer.status).toBe(413);
    expect(answer.body.error).toContain(`limit of ${kvRestBodyBytesMax} bytes`);
    expect(await resp.call("EXISTS", "limit:past")).toBe(0n);
  });
});
