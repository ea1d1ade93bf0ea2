// POST /cmd runs any command of the table with RESP's semantics: generated command sequences
// (fast-check) give the same answers over /cmd as over RESP — RESP3 shapes by default, RESP2's
// with "protocol": 2 — errors included. Connection-state commands are refused with 400. Blocking
// commands really wait: served by a later push, or answered null at their own timeout or at
// --http-block-timeout, whichever is first; a client that leaves stops waiting. Writes made over
// REST go to the append-only file like any other and are there after a restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv } from "../support/servers.ts";
import { kvWithClient } from "../support/side-by-side.ts";
import { waitUntil } from "../support/wire.ts";
import { tempDir } from "../../support/temp-dir.ts";

/** The bound on blocking over /cmd for this file's server: short, so the cap is seen quickly. */
const blockTimeout = "1s";

let kv: ServerProcess;
let resp: RespClient;

kvWithClient(["--appendonly", "no", "--http-block-timeout", blockTimeout], (server, client) => {
  kv = server;
  resp = client;
});

interface Answer {
  status: number;
  body: { result?: unknown; error?: string };
}

async function cmd(body: unknown, port = kv.httpPort!, signal?: AbortSignal): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/cmd`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

// ---- the oracle: what a RESP reply looks like as JSON, by the rules of docs/kv-rest.md -------------

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function bytesAsJson(latin1: string): unknown {
  const bytes = Buffer.from(latin1, "latin1");
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return { base64: bytes.toString("base64") };
  }
}

function asJson(v: RespValue): unknown {
  if (v === null) return null;
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) && BigInt(Number(v)) === v ? Number(v) : String(v);
  if (typeof v === "string") return bytesAsJson(v);
  if (Array.isArray(v)) return v.map(asJson);
  if ("s" in v) return v.s;
  if ("e" in v) return { error: v.e };
  if ("nullArray" in v || "nil" in v) return null;
  if ("d" in v) return v.d === "inf" ? "inf" : v.d === "-inf" ? "-inf" : v.d === "nan" ? "nan" : Number(v.d);
  if ("v" in v) return v.v.slice(4);
  if ("big" in v) return v.big;
  if ("set" in v) return v.set.map(asJson);
  if ("push" in v) return v.push.map(asJson);
  if ("map" in v) {
    const items = v.map.map(asJson);
    const keys = items.filter((_, i) => i % 2 === 0).map((k) => (typeof k === "number" ? String(k) : k));
    if (keys.some((k) => typeof k !== "string") || new Set(keys).size !== keys.length) return items;
    return Object.fromEntries(keys.map((k, i) => [k, items[2 * i + 1]]));
  }
  // A big number (RESP3 "(") comes from no command this file sends.
  if ("big" in v) return v.big;
  return v.b;
}

/** The REST answer a RESP reply stands for: 200 with the value, or the error with its status. */
function expectedAnswer(v: RespValue): Answer {
  if (typeof v === "object" && v !== null && !Array.isArray(v) && "e" in v) {
    return { status: v.e.startsWith("WRONGTYPE") ? 409 : 400, body: { error: v.e } };
  }
  return { status: 200, body: { result: asJson(v) } };
}

/** An argument as /cmd takes it: text when it is ASCII, otherwise base64 (any bytes). */
const asArg = (arg: string): unknown => (/^[\x20-\x7e]*$/.test(arg) ? arg : { base64: Buffer.from(arg, "latin1").toString("base64") });

// ---- generated commands ----------------------------------------------------------------------------

const key = fc.constantFrom("a", "b", "c");
const field = fc.constantFrom("f", "g", "\xff");
const byteString = fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 6 });
const value = fc.oneof(fc.constantFrom("1", "10", "-3", "1.5", "x", "", "9007199254740993", "é"), byteString);
const score = fc.constantFrom("1", "-2.5", "inf", "-inf", "0", "3e2", "nan");
const offset = fc.constantFrom("0", "7", "100", "-1");

/** A command with `K` where a key goes; keys get a per-interface prefix when run. */
const command: fc.Arbitrary<string[]> = fc.oneof(
  fc.tuple(fc.constantFrom("SET", "APPEND", "INCRBYFLOAT", "INCRBY", "SETNX", "GETSET"), key, value).map(([c, k, v]) => [c, `K${k}`, v]),
  fc
    .tuple(
      fc.constantFrom(
        "GET",
        "INCR",
        "DEL",
        "EXISTS",
        "TYPE",
        "STRLEN",
        "LPOP",
        "LLEN",
        "HGETALL",
        "HKEYS",
        "SMEMBERS",
        "SCARD",
        "ZPOPMIN",
        "PFCOUNT",
        "BITCOUNT",
        "TTL",
        "PERSIST",
        "ZCARD",
      ),
      key,
    )
    .map(([c, k]) => [c, `K${k}`]),
  fc.tuple(fc.constantFrom("LPUSH", "RPUSH", "SADD", "SREM", "SISMEMBER", "PFADD"), key, value, value).map(([c, k, v, w]) => [c, `K${k}`, v, w]),
  fc.tuple(key).map(([k]) => ["LRANGE", `K${k}`, "0", "-1"]),
  fc.tuple(fc.constantFrom("HSET", "HINCRBY", "HINCRBYFLOAT", "HSETNX"), key, field, value).map(([c, k, f, v]) => [c, `K${k}`, f, v]),
  fc.tuple(fc.constantFrom("HGET", "HDEL", "HEXISTS"), key, field).map(([c, k, f]) => [c, `K${k}`, f]),
  fc.tuple(fc.constantFrom("ZADD", "ZINCRBY"), key, score, value).map(([c, k, s, m]) => [c, `K${k}`, s, m]),
  fc.tuple(fc.constantFrom("ZSCORE", "ZRANK"), key, value).map(([c, k, m]) => [c, `K${k}`, m]),
  fc.tuple(key, fc.boolean()).map(([k, withScores]) => ["ZRANGE", `K${k}`, "0", "-1", ...(withScores ? ["WITHSCORES"] : [])]),
  fc.tuple(key, offset, fc.constantFrom("0", "1", "2")).map(([k, o, b]) => ["SETBIT", `K${k}`, o, b]),
  fc.tuple(key, offset).map(([k, o]) => ["GETBIT", `K${k}`, o]),
  fc.tuple(key, fc.constantFrom("100", "-5", "x")).map(([k, t]) => ["EXPIRE", `K${k}`, t]),
  fc.tuple(key).map(([k]) => ["OBJECT", "ENCODING", `K${k}`]),
  fc.constantFrom<string[]>(
    ["PING"],
    ["ECHO", "hi"],
    ["GET"],
    ["NOSUCHCOMMAND", "x"],
    ["CONFIG", "GET", "maxmemory"],
    ["OBJECT", "NOPE"],
    ["ZADD", "Ka", "1"],
    ["SET", "Ka", "v", "EX"],
  ),
);

const withPrefix = (argv: string[], prefix: string) => argv.map((a) => (a.startsWith("K") && a.length === 2 ? `${prefix}${a.slice(1)}` : a));

describe("/cmd answers as RESP does", () => {
  test("generated sequences: RESP3 client vs /cmd, and RESP2 client vs /cmd with protocol 2", async () => {
    const resp3 = await RespClient.connect(kv.port);
    await resp3.call("HELLO", "3");
    const clear = ["r2:a", "r2:b", "r2:c", "r3:a", "r3:b", "r3:c", "h2:a", "h2:b", "h2:c", "h3:a", "h3:b", "h3:c"];
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
        await resp.call("DEL", ...clear);
        for (const argv of commands) {
          const [viaResp3, viaResp2] = [await resp3.call(...withPrefix(argv, "r3:")), await resp.call(...withPrefix(argv, "r2:"))];
          const rest3 = withPrefix(argv, "h3:").map(asArg);
          const rest2 = withPrefix(argv, "h2:").map(asArg);
          const [viaRest3, viaRest2] = [
            await cmd({ command: rest3[0], args: rest3.slice(1) }),
            await cmd({ command: rest2[0], args: rest2.slice(1), protocol: 2 }),
          ];
          expect(viaRest3, `${argv.join(" ")} (RESP3)`).toEqual(expectedAnswer(viaResp3));
          expect(viaRest2, `${argv.join(" ")} (RESP2)`).toEqual(expectedAnswer(viaResp2));
        }
      }),
      { numRuns: 60 },
    );
    resp3.close();
  });

  test("RESP3 shapes by default (maps are objects, doubles numbers); protocol 2 gives RESP2's", async () => {
    await resp.call("HSET", "shape:h", "f", "v");
    await resp.call("ZADD", "shape:z", "1.5", "m");
    expect((await cmd({ command: "HGETALL", args: ["shape:h"] })).body).toEqual({ result: { f: "v" } });
    expect((await cmd({ command: "HGETALL", args: ["shape:h"], protocol: 2 })).body).toEqual({ result: ["f", "v"] });
    expect((await cmd({ command: "ZSCORE", args: ["shape:z", "m"] })).body).toEqual({ result: 1.5 });
    expect((await cmd({ command: "ZSCORE", args: ["shape:z", "m"], protocol: 2 })).body).toEqual({ result: "1.5" });
    expect((await cmd({ command: "ZRANGE", args: ["shape:z", "0", "-1", "WITHSCORES"] })).body).toEqual({ result: [["m", 1.5]] });
    expect((await cmd({ command: "GET", args: ["shape:missing"] })).body).toEqual({ result: null });
  });

  test("integers beyond 2^53 come back as decimal strings, so no JSON parser rounds them", async () => {
    await resp.call("SET", "big", "9007199254740992");
    expect((await cmd({ command: "INCR", args: ["big"] })).body).toEqual({ result: "9007199254740993" });
    expect((await cmd({ command: "DECRBY", args: ["big", "2"] })).body).toEqual({ result: 9007199254740991 });
  });

  test("args may be strings, numbers or base64; command names any case", async () => {
    expect((await cmd({ command: "set", args: ["args:n", 42] })).body).toEqual({ result: "OK" });
    expect((await cmd({ command: "IncrByFloat", args: ["args:n", 0.5] })).body).toEqual({ result: "42.5" });
    expect((await cmd({ command: "SET", args: [{ base64: "/w==" }, { base64: "AA==" }] })).status).toBe(200);
    expect(await resp.call("GET", "\xff")).toBe("\x00");
    expect((await cmd({ command: "PING" })).body).toEqual({ result: "PONG" });
  });

  test("errors: unknown command and arity are 400 with Redis's text, WRONGTYPE is 409", async () => {
    expect(await cmd({ command: "NOPE", args: ["a"] })).toEqual({ status: 400, body: { error: "ERR unknown command 'NOPE', with args beginning with: 'a' " } });
    expect(await cmd({ command: "GET", args: [] })).toEqual({ status: 400, body: { error: "ERR wrong number of arguments for 'get' command" } });
    await resp.call("RPUSH", "err:list", "x");
    expect(await cmd({ command: "GET", args: ["err:list"] })).toEqual({
      status: 409,
      body: { error: "WRONGTYPE Operation against a key holding the wrong kind of value" },
    });
  });

  test("bad bodies are 400 and name what is wrong", async () => {
    for (const [body, message] of [
      [{}, "'command' must be a command name"],
      [{ command: "" }, "'command' must be a command name"],
      [{ command: 5 }, "'command' must be a command name"],
      [{ command: "GET", args: "k" }, "'args' must be an array"],
      [{ command: "GET", args: [null] }, "'args[0]' must be a string, a number or"],
      [{ command: "GET", args: [true] }, "'args[0]' must be a string, a number or"],
      [{ command: "GET", args: ["k"], protocol: 4 }, "'protocol' must be 2 or 3"],
      [{ command: "GET", args: ["k"], db: 1 }, "unknown field 'db'"],
    ] as const) {
      const answer = await cmd(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toContain(message);
    }
  });

  test("connection-state commands are refused with 400 saying to use RESP", async () => {
    for (const argv of [
      ["MULTI"],
      ["EXEC"],
      ["DISCARD"],
      ["WATCH", "k"],
      ["UNWATCH"],
      ["SUBSCRIBE", "ch"],
      ["PSUBSCRIBE", "c*"],
      ["UNSUBSCRIBE"],
      ["SELECT", "1"],
      ["AUTH", "p"],
      ["HELLO", "3"],
      ["RESET"],
      ["QUIT"],
    ]) {
      const answer = await cmd({ command: argv[0]!.toLowerCase(), args: argv.slice(1) });
      expect(answer.status, argv[0]).toBe(400);
      expect(answer.body.error).toBe(
        `ERR ${argv[0]} keeps state on a connection, and each REST request is a client of its own; send it over RESP (port ${kv.port})`,
      );
    }
    expect(await resp.call("PUBSUB", "NUMSUB", "ch")).toEqual(["ch", 0n]);
  });

  test("PUBLISH works (it needs no connection) and reaches RESP subscribers", async () => {
    const subscriber = await RespClient.connect(kv.port);
    await subscriber.call("SUBSCRIBE", "news");
    expect((await cmd({ command: "PUBLISH", args: ["news", "hello"] })).body).toEqual({ result: 1 });
    expect(await subscriber.read()).toEqual(["message", "news", "hello"]);
    subscriber.close();
  });
});

describe("blocking commands over /cmd", () => {
  const blockedClients = async () => Number(/blocked_clients:(\d+)/.exec((await resp.call("INFO", "clients")) as string)![1]);

  test("BLPOP waits and is served by a later push over RESP", async () => {
    const waiting = cmd({ command: "BLPOP", args: ["blk:1", "0"] });
    await waitUntil(async () => ((await blockedClients()) === 1 ? true : undefined), "the REST client to block");
    await resp.call("RPUSH", "blk:1", "x");
    expect(await waiting).toEqual({ status: 200, body: { result: ["blk:1", "x"] } });
    expect(await resp.call("EXISTS", "blk:1")).toBe(0n);
  });

  test("BLMOVE waits and is served by a push over REST; BZPOPMIN too", async () => {
    const moving = cmd({ command: "BLMOVE", args: ["blk:src", "blk:dst", "LEFT", "RIGHT", "0"] });
    const popping = cmd({ command: "BZPOPMIN", args: ["blk:z", "0"] });
    await waitUntil(async () => ((await blockedClients()) === 2 ? true : undefined), "both REST clients to block");
    expect((await cmd({ command: "RPUSH", args: ["blk:src", "m"] })).body).toEqual({ result: 1 });
    expect((await cmd({ command: "ZADD", args: ["blk:z", "2", "zm"] })).body).toEqual({ result: 1 });
    expect(await moving).toEqual({ status: 200, body: { result: "m" } });
    expect(await popping).toEqual({ status: 200, body: { result: ["blk:z", "zm", 2] } });
    expect(await resp.call("LRANGE", "blk:dst", "0", "-1")).toEqual(["m"]);
  });

  test("XREADGROUP BLOCK waits and is served by an XADD over RESP, the entry then pending to its consumer", async () => {
    await resp.call("XGROUP", "CREATE", "blk:stream", "g", "$", "MKSTREAM");
    const reading = cmd({ command: "XREADGROUP", args: ["GROUP", "g", "rest-reader", "BLOCK", "0", "STREAMS", "blk:stream", ">"] });
    await waitUntil(async () => ((await blockedClients()) === 1 ? true : undefined), "the REST client to block");
    await resp.call("XADD", "blk:stream", "7-1", "event", "paid");
    expect(await reading).toEqual({ status: 200, body: { result: { "blk:stream": [["7-1", ["event", "paid"]]] } } });
    expect(await resp.call("XPENDING", "blk:stream", "g")).toEqual([1n, "7-1", "7-1", [["rest-reader", "1"]]]);
  });

  test("a command's own timeout answers null, as for a RESP client", async () => {
    expect(await cmd({ command: "BRPOP", args: ["blk:none", "0.05"] })).toEqual({ status: 200, body: { result: null } });
  });

  test(`timeout 0 (forever) or longer than --http-block-timeout (${blockTimeout}) answers the timeout reply at the bound`, async () => {
    expect(await cmd({ command: "BLPOP", args: ["blk:forever", "0"] })).toEqual({ status: 200, body: { result: null } });
    expect(await cmd({ command: "BZPOPMAX", args: ["blk:forever", "30"] })).toEqual({ status: 200, body: { result: null } });
    // WAIT for a replica that never comes answers its own timeout reply there: 0, not null.
    expect(await cmd({ command: "WAIT", args: ["1", "0"] })).toEqual({ status: 200, body: { result: 0 } });
    expect(await blockedClients()).toBe(0);
  });

  test("a client that goes away stops waiting: nothing is popped for it later", async () => {
    const controller = new AbortController();
    const waiting = cmd({ command: "BLPOP", args: ["blk:gone", "0"] }, kv.httpPort!, controller.signal).catch(() => "aborted");
    await waitUntil(async () => ((await blockedClients()) === 1 ? true : undefined), "the REST client to block");
    controller.abort();
    expect(await waiting).toBe("aborted");
    await waitUntil(async () => ((await blockedClients()) === 0 ? true : undefined), "the REST client to stop waiting");
    await resp.call("RPUSH", "blk:gone", "kept");
    expect(await resp.call("LRANGE", "blk:gone", "0", "-1")).toEqual(["kept"]);
  });

  test("CLIENT KILL of a waiting REST request ends it with 503", async () => {
    const waiting = cmd({ command: "BLPOP", args: ["blk:kill", "0"] });
    await waitUntil(async () => ((await blockedClients()) === 1 ? true : undefined), "the REST client to block");
    const list = (await resp.call("CLIENT", "LIST")) as string;
    const id = /id=(\d+) addr=rest:/.exec(list)![1]!;
    expect(await resp.call("CLIENT", "KILL", "ID", id)).toBe(1n);
    expect(await waiting).toEqual({ status: 503, body: { error: "the request was ended by CLIENT KILL" } });
  });

  test("a waiting request is named by its request id in CLIENT LIST, and its answer carries that id", async () => {
    const waiting = fetch(`http://127.0.0.1:${kv.httpPort}/cmd`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-blpop-1" },
      body: JSON.stringify({ command: "BLPOP", args: ["blk:named", "0"] }),
    });
    await waitUntil(async () => ((await blockedClients()) === 1 ? true : undefined), "the REST client to block");
    expect((await resp.call("CLIENT", "LIST")) as string).toContain(" addr=rest:trace-blpop-1 ");
    await resp.call("LPUSH", "blk:named", "v");
    const answer = await waiting;
    expect(await answer.json()).toEqual({ result: ["blk:named", "v"] });
    expect(answer.headers.get("x-request-id")).toBe("trace-blpop-1");
    // An answer that needed no id carries none (docs/kv-rest.md); an error answer does.
    const plain = await fetch(`http://127.0.0.1:${kv.httpPort}/cmd`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-ping" },
      body: JSON.stringify({ command: "PING" }),
    });
    expect(plain.headers.get("x-request-id")).toBeNull();
    const failed = await fetch(`http://127.0.0.1:${kv.httpPort}/cmd`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-request-id": "trace-bad" },
      body: JSON.stringify({ command: "NOSUCH" }),
    });
    expect(failed.status).toBe(400);
    expect(failed.headers.get("x-request-id")).toBe("trace-bad");
  });

  test("inside a blocked wait other REST requests are served", async () => {
    const waiting = cmd({ command: "BLPOP", args: ["blk:side", "0"] });
    expect((await cmd({ command: "PING" })).body).toEqual({ result: "PONG" });
    await resp.call("LPUSH", "blk:side", "v");
    expect((await waiting).body).toEqual({ result: ["blk:side", "v"] });
  });
});

describe("a blocking wait longer than the HTTP idle timeout", () => {
  // Bun checks idle connections every 4 s: with --http-idle-timeout 1s a silent request is cut at
  // 1–5 s, so waits of 6 s and more are past it whatever the phase.
  const pushAtMs = 6000;
  let server: ServerProcess;
  let client: RespClient;
  beforeAll(async () => {
    server = await startKv(["--appendonly", "no", "--http-idle-timeout", "1s", "--http-block-timeout", "8s"]);
    client = await RespClient.connect(server.port);
  });
  afterAll(async () => {
    client.close();
    await server.stop();
  });

  test("keeps its connection: served by a late push, or answered null at --http-block-timeout", async () => {
    const served = cmd({ command: "BLPOP", args: ["late:list", "0"] }, server.httpPort!);
    const unserved = cmd({ command: "BRPOP", args: ["late:none", "0"] }, server.httpPort!);
    await new Promise((resolve) => setTimeout(resolve, pushAtMs));
    await client.call("RPUSH", "late:list", "v");
    expect(await served).toEqual({ status: 200, body: { result: ["late:list", "v"] } });
    expect(await unserved).toEqual({ status: 200, body: { result: null } });
  }, 15_000);
});

describe("persistence of REST writes", () => {
  test("with appendfsync always, REST writes are in the append-only file and survive a restart", async () => {
    const dir = tempDir("svc-kv-rest-");
    const args = ["--dir", dir, "--appendonly", "yes", "--appendfsync", "always"];
    const first = await startKv(args);
    const put = await fetch(`http://127.0.0.1:${first.httpPort}/kv/aof:k`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ value: "durable", ex: 1000 }),
    });
    expect(put.status).toBe(200);
    expect((await cmd({ command: "RPUSH", args: ["aof:l", "a", "b"] }, first.httpPort!)).body).toEqual({ result: 2 });
    expect((await cmd({ command: "BLPOP", args: ["aof:l", "0"] }, first.httpPort!)).body).toEqual({ result: ["aof:l", "a"] });
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const second = await startKv(args);
    const client = await RespClient.connect(second.port);
    expect(await client.call("GET", "aof:k")).toBe("durable");
    expect(Number(await client.call("TTL", "aof:k"))).toBeGreaterThan(900);
    expect(await client.call("LRANGE", "aof:l", "0", "-1")).toEqual(["b"]);
    client.close();
    await second.stop();
  });
});
