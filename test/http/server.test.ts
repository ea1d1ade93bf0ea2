// The HTTP wrapper every service stands on: body limits, JSON errors, envelopes, CORS, request ids,
// and a throwing handler that becomes a logged 500 while the server keeps serving.
import { afterAll, describe, expect, test } from "bun:test";
import { SvcError } from "../../src/core/errors.ts";
import { createLogger, memoryDestination } from "../../src/core/log.ts";
import type { CorsPolicy } from "../../src/http/cors.ts";
import { json } from "../../src/http/response.ts";
import type { RouteTable } from "../../src/http/route.ts";
import { type HttpService, type HttpServiceOptions, startHttpServer } from "../../src/http/server.ts";

const bodyBytesMax = 1000;
const started: HttpService[] = [];
afterAll(() => Promise.all(started.map((s) => s.stop(true))));

const routes: RouteTable = {
  "/echo/:name": {
    GET: ({ params }) => json({ name: params.name }),
    POST: async (ctx) => json({ name: ctx.params.name, body: await ctx.json() }),
  },
  "/throw": {
    GET: () => {
      throw new TypeError("secret detail");
    },
  },
  "/reject": { POST: async () => Promise.reject(new Error("async secret")) },
  "/limited": {
    GET: () => {
      throw new SvcError("rate_limited", "slow down", { headers: { "retry-after": "3" } });
    },
  },
  "/invalid": {
    POST: () => {
      throw new SvcError("invalid", "validation failed", { details: [{ field: "name", message: "required" }] });
    },
  },
};

function serve(overrides: Partial<HttpServiceOptions> = {}) {
  const logs = memoryDestination();
  const service = startHttpServer({
    name: "test",
    hostname: "127.0.0.1",
    port: 0,
    routes,
    bodyBytesMax,
    cors: { kind: "off" },
    log: createLogger({ level: "info", destination: logs }),
    ...overrides,
  });
  started.push(service);
  const base = `http://127.0.0.1:${service.port}`;
  return { service, logs, base };
}

const { base, logs, service } = serve();

/** The response's JSON body, loosely typed for assertions. */
const jsonOf = async (res: Response): Promise<any> => res.json();

function postJson(path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(base + path, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
}

/** Sends raw bytes and resolves with everything the server answered before `untilMs` or close. */
async function rawExchange(port: number, parts: string[], untilMs: number): Promise<string> {
  let received = "";
  const { promise, resolve } = Promise.withResolvers<string>();
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, data) {
        received += data.toString();
      },
      close() {
        resolve(received);
      },
    },
  });
  for (const part of parts) socket.write(part);
  setTimeout(() => {
    socket.end();
    resolve(received);
  }, untilMs);
  return promise;
}

describe("routing", () => {
  test("a route's handler gets its path parameters, decoded", async () => {
    const res = await fetch(`${base}/echo/a%20b`);
    expect(res.status).toBe(200);
    expect(await jsonOf(res)).toEqual({ name: "a b" });
  });

  test("an unknown path is 404 in the service's envelope", async () => {
    const res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({ error: "no route for GET /nope" });
  });

  test("a method the path does not serve is 405 with an Allow header", async () => {
    const res = await fetch(`${base}/echo/x`, { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST, OPTIONS");
    expect((await jsonOf(res)).error).toContain("DELETE is not served here");
  });
});

describe("request ids", () => {
  test("every response carries an id, different per request", async () => {
    const a = (await fetch(`${base}/echo/x`)).headers.get("x-request-id");
    const b = (await fetch(`${base}/echo/x`)).headers.get("x-request-id");
    expect(a).toMatch(/^[0-9a-z]+-[0-9a-z]+$/);
    expect(b).not.toBe(a);
  });

  test("a client's plain id is kept; an unsafe or overlong one is replaced", async () => {
    const kept = await fetch(`${base}/echo/x`, { headers: { "x-request-id": "trace-42.a:b" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-42.a:b");
    for (const bad of ["has space", "x".repeat(65), 'quote"d']) {
      const res = await fetch(`${base}/echo/x`, { headers: { "x-request-id": bad } });
      expect(res.headers.get("x-request-id")).not.toBe(bad);
    }
    const atLimit = "y".repeat(64);
    expect((await fetch(`${base}/echo/x`, { headers: { "x-request-id": atLimit } })).headers.get("x-request-id")).toBe(atLimit);
  });

  describe("with idOnSuccess off (kv's data path)", () => {
    const quiet = serve({
      idOnSuccess: false,
      routes: { ...routes, "/uses-id": { GET: (ctx) => json({ id: ctx.id }) } },
    });

    test("a successful answer carries no id, even when the client sent one", async () => {
      expect((await fetch(`${quiet.base}/echo/x`)).headers.get("x-request-id")).toBeNull();
      expect((await fetch(`${quiet.base}/echo/x`, { headers: { "x-request-id": "trace-1" } })).headers.get("x-request-id")).toBeNull();
    });

    test("an error answer still carries the client's id, or one of ours", async () => {
      const limited = await fetch(`${quiet.base}/limited`, { headers: { "x-request-id": "trace-2" } });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("x-request-id")).toBe("trace-2");
      const missing = await fetch(`${quiet.base}/nope`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("x-request-id")).toMatch(/^[0-9a-z]+-[0-9a-z]+$/);
    });

    test("a 500 names the id its log line has", async () => {
      const res = await fetch(`${quiet.base}/throw`);
      const id = res.headers.get("x-request-id");
      expect(id).not.toBeNull();
      expect(await jsonOf(res)).toEqual({ error: `internal error (id ${id})` });
      expect(quiet.logs.lines.find((l) => l.reqId === id)?.level).toBe("error");
    });

    test("a handler that used the id answers with it", async () => {
      const res = await fetch(`${quiet.base}/uses-id`, { headers: { "x-request-id": "trace-3" } });
      expect(await jsonOf(res)).toEqual({ id: "trace-3" });
      expect(res.headers.get("x-request-id")).toBe("trace-3");
    });
  });
});

describe("JSON bodies", () => {
  test("a well-formed body reaches the handler", async () => {
    const res = await postJson("/echo/x", '{"a":[1,2,{"b":null}]}');
    expect(await jsonOf(res)).toEqual({ name: "x", body: { a: [1, 2, { b: null }] } });
  });

  test("malformed JSON is 400 and says so", async () => {
    const res = await postJson("/echo/x", '{"a":');
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toStartWith("malformed JSON body:");
  });

  test("an empty body is 400", async () => {
    const res = await postJson("/echo/x", "");
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toEqual({ error: "request body is empty; expected JSON" });
  });

  test("bytes that are not UTF-8 are 400, not silently replaced", async () => {
    const res = await fetch(`${base}/echo/x`, {
      method: "POST",
      body: new Uint8Array([0x22, 0xff, 0xfe, 0x22]),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toEqual({ error: "request body is not valid UTF-8" });
  });

  test("a wrong or missing content type is 415", async () => {
    const cases: Record<string, string>[] = [{ "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, {}];
    for (const headers of cases) {
      const res = await fetch(`${base}/echo/x`, { method: "POST", body: "{}", headers });
      expect(res.status).toBe(415);
      expect((await jsonOf(res)).error).toContain("Content-Type: application/json");
    }
  });

  test("content types with parameters and +json suffixes are accepted", async () => {
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"]) {
      const res = await fetch(`${base}/echo/x`, { method: "POST", body: "1", headers: { "content-type": type } });
      expect(res.status).toBe(200);
    }
  });
});

describe("body limit", () => {
  const bodyOf = (bytes: number) => `"${"a".repeat(bytes - 2)}"`;

  test("a body of exactly the limit is accepted", async () => {
    const res = await postJson("/echo/x", bodyOf(bodyBytesMax));
    expect(res.status).toBe(200);
  });

  test("a declared body one byte past the limit is 413 in the envelope", async () => {
    const res = await postJson("/echo/x", bodyOf(bodyBytesMax + 1));
    expect(res.status).toBe(413);
    expect(await jsonOf(res)).toEqual({ error: `request body exceeds the limit of ${bodyBytesMax} bytes` });
  });

  test("a declared 1 GiB body is refused from its headers alone", async () => {
    const answer = await rawExchange(
      service.port,
      ["POST /echo/x HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"],
      2000,
    );
    expect(answer).toStartWith("HTTP/1.1 413");
  });

  test("a chunked body is refused as soon as it passes the limit, before it ends", async () => {
    const chunk = "a".repeat(200);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    // 1200 bytes sent and the terminating 0-chunk never is: only a streaming check can answer.
    const answer = await rawExchange(
      service.port,
      ["POST /echo/x HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", ...chunks],
      2000,
    );
    expect(answer).toStartWith("HTTP/1.1 413");
    expect(answer).toContain(`request body exceeds the limit of ${bodyBytesMax} bytes`);
  });

  test("a complete chunked body within the limit is read whole", async () => {
    const parts = ['{"k":', `"${"v".repeat(500)}"`, "}"];
    const stream = new ReadableStream({
      start(controller) {
        for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
        controller.close();
      },
    });
    const res = await fetch(`${base}/echo/x`, { method: "POST", body: stream, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).body.k).toHaveLength(500);
  });
});

describe("errors", () => {
  test("a throwing handler is a 500 naming only its request id; the detail is logged under it", async () => {
    const res = await fetch(`${base}/throw`);
    expect(res.status).toBe(500);
    const id = res.headers.get("x-request-id");
    expect(await jsonOf(res)).toEqual({ error: `internal error (id ${id})` });
    const line = logs.lines.find((l) => l.reqId === id);
    expect(line?.level).toBe("error");
    expect(JSON.stringify(line)).toContain("secret detail");
  });

  test("an async rejection is handled the same way, and the server keeps serving", async () => {
    const res = await postJson("/reject", "{}");
    expect(res.status).toBe(500);
    expect((await jsonOf(res)).error).not.toContain("async secret");
    expect((await fetch(`${base}/echo/still-up`)).status).toBe(200);
  });

  test("an operating error keeps its status and headers", async () => {
    const res = await fetch(`${base}/limited`);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await jsonOf(res)).toEqual({ error: "slow down" });
  });

  test("a service's own envelope shapes its errors", async () => {
    const crmStyle = serve({
      errorBody: (e) => (e.code === "invalid" ? { error: "invalid", details: e.details } : { error: e.message }),
    });
    const res = await postJson("/invalid", "{}");
    const own = await fetch(`${crmStyle.base}/invalid`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(422);
    expect(await jsonOf(res)).toEqual({ error: "validation failed" });
    expect(own.status).toBe(422);
    expect(await jsonOf(own)).toEqual({ error: "invalid", details: [{ field: "name", message: "required" }] });
  });
});

describe("CORS", () => {
  const origin = "https://app.example";
  const withPolicy = (cors: CorsPolicy) => serve({ cors }).base;

  test("off: no CORS headers, even when the request names an origin", async () => {
    const res = await fetch(`${base}/echo/x`, { headers: { origin } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("a list: a listed origin is echoed with Vary; another gets nothing", async () => {
    const url = withPolicy({ kind: "origins", origins: [origin] });
    const ok = await fetch(`${url}/echo/x`, { headers: { origin } });
    expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
    expect(ok.headers.get("vary")).toBe("Origin");
    expect(ok.headers.get("access-control-expose-headers")).toContain("X-Request-Id");
    const other = await fetch(`${url}/echo/x`, { headers: { origin: "https://evil.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("any: every origin is allowed with *", async () => {
    const url = withPolicy({ kind: "any" });
    const res = await fetch(`${url}/echo/x`, { headers: { origin: "https://whoever.example" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a preflight lists the path's methods and the requested headers", async () => {
    const url = withPolicy({ kind: "origins", origins: [origin] });
    const res = await fetch(`${url}/echo/x`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, authorization" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST");
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, authorization");
    expect(res.headers.get("access-control-max-age")).toBe("600");
  });

  test("a preflight from an unlisted origin gets no CORS grant", async () => {
    const url = withPolicy({ kind: "origins", origins: [origin] });
    const res = await fetch(`${url}/echo/x`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("access-control-allow-methods")).toBeNull();
  });
});

describe("idle timeout", () => {
  // Bun checks idle connections every 4 s, so a 1 s timeout cuts a silent request at 1–5 s;
  // a handler silent for 6 s is past it either way.
  const silentMs = 6000;
  const quiet = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const { base: idleBase } = serve({
    idleTimeoutSeconds: 1,
    routes: {
      "/silent": { GET: async () => (await quiet(silentMs), json({ answered: true })) },
      "/held": {
        GET: async (ctx) => {
          ctx.holdOpen();
          await quiet(silentMs);
          return json({ answered: true });
        },
      },
    },
  });

  test(
    "a request silent past the idle timeout is cut, unless its handler holds it open",
    async () => {
      const [silent, held] = await Promise.all([
        fetch(`${idleBase}/silent`).then(
          (r) => r.json(),
          (error: unknown) => ({ cut: String(error) }),
        ),
        fetch(`${idleBase}/held`).then((r) => r.json()),
      ]);
      expect(silent).toEqual({ cut: expect.stringContaining("closed") });
      expect(held).toEqual({ answered: true });
    },
    silentMs + 5000,
  );
});
