// JSON body parsing of every REST route that takes a body, fuzzed against a real `svc kv`:
// arbitrary bytes, arbitrary JSON, and objects with the route's own field names holding arbitrary
// JSON values (plus stray fields) must never crash the server or reach a 500. A body that is
// refused gets 400 (409 where the engine says WRONGTYPE or the filter exists) with a non-empty
// `error`, and changes nothing: the append-only file does not grow by a byte. Bodies that happen
// to be valid are answered 200 with a `result`.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { RespClient } from "../test/kv/support/resp-client.ts";
import type { ServerProcess } from "../test/kv/support/servers.ts";
import { kvWithClient } from "../test/kv/support/side-by-side.ts";

const runs = Number(process.env.SVC_DIFF_RUNS ?? 150) >= 1000 ? 1500 : 250;

let kv: ServerProcess;
let resp: RespClient;

// A short blocking bound: a generated /cmd body that happens to name BLPOP must not stall the run.
kvWithClient(["--appendonly", "yes", "--appendfsync", "everysec", "--http-block-timeout", "50ms"], (server, client) => {
  kv = server;
  resp = client;
});

/** Each route with a body, and the fields it reads. */
const routes: { method: string; path: string; fields: string[] }[] = [
  { method: "PUT", path: "/kv/fz:s", fields: ["value", "ex", "px"] },
  { method: "POST", path: "/list/fz:l/lpush", fields: ["values"] },
  { method: "POST", path: "/list/fz:l/rpush", fields: ["values"] },
  { method: "PUT", path: "/hash/fz:h", fields: ["fields"] },
  { method: "PUT", path: "/set/fz:t", fields: ["members"] },
  { method: "PUT", path: "/zset/fz:z", fields: ["members"] },
  { method: "POST", path: "/pfadd/fz:p", fields: ["elements"] },
  { method: "POST", path: "/pfmerge/fz:p", fields: ["sources"] },
  { method: "POST", path: "/bf/reserve/fz:b", fields: ["error_rate", "capacity"] },
  { method: "POST", path: "/bf/add/fz:b", fields: ["item"] },
  { method: "POST", path: "/geo/fz:g/add", fields: ["members"] },
  {
    method: "POST",
    path: "/geo/fz:g/search",
    fields: ["longitude", "latitude", "member", "radius", "width", "height", "unit", "count", "sort", "withdist", "withcoord"],
  },
  { method: "POST", path: "/bitmap/fz:m/setbit", fields: ["offset", "value"] },
  { method: "POST", path: "/cmd", fields: ["command", "args", "protocol"] },
];

async function aofBytes(): Promise<number> {
  const info = (await resp.call("INFO", "persistence")) as string;
  return Number(/aof_current_size:(\d+)/.exec(info)![1]);
}

/** Sends one body and checks the answer: a result, or a refusal that changed nothing. */
async function send(route: (typeof routes)[number], body: Uint8Array | string): Promise<void> {
  const before = await aofBytes();
  const response = await fetch(`http://127.0.0.1:${kv.httpPort}${route.path}`, {
    method: route.method,
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  const what = `${route.method} ${route.path} ${typeof body === "string" ? body : Buffer.from(body).toString("hex")} → ${response.status} ${text}`;
  expect(response.status, what).not.toBe(500);
  const answer = JSON.parse(text) as { result?: unknown; error?: unknown };
  if (response.status === 200) {
    expect(Object.keys(answer), what).toEqual(["result"]);
    return;
  }
  expect([400, 409], what).toContain(response.status);
  expect(typeof answer.error === "string" && answer.error.length > 0, what).toBe(true);
  expect(answer.error, what).not.toContain("internal");
  expect(await aofBytes(), `${what}: a refused body changed data`).toBe(before);
}

const route = fc.constantFrom(...routes);

/** Values Redis arguments are made of, and JSON's other kinds. */
const plausible = fc.oneof(
  fc.constantFrom("", "x", "GET", "SET", "nope", "inf", "1", "-1", "0.5", "\ud800", "m", "km", "ASC", "WITHDIST"),
  fc.constantFrom(0, 1, -1, 0.5, 1e300, -0, 2 ** 53, 2 ** 64, 200, 91),
  fc.constantFrom({ base64: "AP8=" }, { base64: "!!" }, { base64: 5 }, { base64: "AP8=", x: 1 }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** An object with some of the route's fields (and sometimes a stray one) holding plausible values. */
function nearMiss(fields: string[]): fc.Arbitrary<unknown> {
  const entry = fc.tuple(
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.string({ maxLength: 4 }) }),
    fc.oneof(
      plausible,
      fc.array(plausible, { maxLength: 3 }),
      fc.array(fc.dictionary(fc.constantFrom("score", "member", "longitude", "latitude", "x"), plausible, { maxKeys: 4 }), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), plausible, { maxKeys: 3 }),
    ),
  );
  return fc.array(entry, { maxLength: 4 }).map((entries) => Object.fromEntries(entries));
}

describe("REST body fuzzing", () => {
  test("arbitrary JSON values: never 500; refused ones are 400/409 and change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(route, fc.jsonValue({ maxDepth: 3 }), async (r, body) => send(r, JSON.stringify(body))),
      { numRuns: runs },
    );
  });

  test("objects of the route's own fields with wrong, missing and extra values: never 500; refused ones change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        route.chain((r) => fc.tuple(fc.constant(r), nearMiss(r.fields))),
        async ([r, body]) => send(r, JSON.stringify(body)),
      ),
      { numRuns: runs * 2 },
    );
  });

  test("bytes that are not JSON — truncated, invalid UTF-8, garbage — are 400 and change nothing", async () => {
    const truncated = route.chain((r) =>
      fc.tuple(
        fc.constant(r),
        nearMiss(r.fields).chain((body) => {
          const text = JSON.stringify(body);
          return fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut));
        }),
      ),
    );
    const garbage = fc.tuple(route, fc.uint8Array({ minLength: 1, maxLength: 40 }));
    const badUtf8 = fc.tuple(
      route,
      fc.constantFrom(Uint8Array.from([0x7b, 0x22, 0x76, 0x61, 0x6c, 0x75, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), Uint8Array.from([0x22, 0xc3, 0x22])),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(truncated, garbage, badUtf8), async ([r, body]) => send(r, body)),
      { numRuns: runs },
    );
  });
});
