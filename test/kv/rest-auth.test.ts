// REST authentication with --requirepass: every request needs `Authorization: Bearer <password>`;
// a missing or wrong token is 401 {"error":"Unauthorized"} before anything else is looked at
// (route, method, body), and changes nothing. Without a password no header is needed. The
// password is the engine's, so CONFIG SET requirepass applies to the next REST request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RespClient } from "./support/resp-client.ts";
import { type ServerProcess, startKv } from "./support/servers.ts";
import { kvWithClient } from "./support/side-by-side.ts";

const password = "s3cret pass";

async function call(port: number, method: string, path: string, authorization?: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { result?: unknown; error?: string }, headers: response.headers };
}

describe("with --requirepass", () => {
  let kv: ServerProcess;
  let resp: RespClient;
  kvWithClient(["--appendonly", "no", "--requirepass", password], async (server, client) => {
    kv = server;
    resp = client;
    expect(await resp.call("AUTH", password)).toEqual({ s: "OK" });
  });
  const port = () => kv.httpPort!;

  test("no Authorization header is 401 {\"error\":\"Unauthorized\"} with a Bearer challenge", async () => {
    const answer = await call(port(), "GET", "/dbsize");
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: "Unauthorized" });
    expect(answer.headers.get("www-authenticate")).toContain("Bearer");
  });

  test("a wrong token, an empty one, another scheme or the password without a scheme are 401", async () => {
    for (const authorization of [`Bearer ${password}x`, "Bearer ", "Bearer", `Basic ${btoa(`default:${password}`)}`, password]) {
      const answer = await call(port(), "GET", "/dbsize", authorization);
      expect(answer, authorization).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    }
  });

  test("the right token is served, on every kind of route; the scheme is case-insensitive", async () => {
    const auth = `Bearer ${password}`;
    expect(await call(port(), "PUT", "/kv/a:1", auth, { value: "v" })).toMatchObject({ status: 200, body: { result: "OK" } });
    expect(await call(port(), "GET", "/kv/a:1", `bearer ${password}`)).toMatchObject({ status: 200, body: { result: "v" } });
    expect(await call(port(), "POST", "/cmd", auth, { command: "GET", args: ["a:1"] })).toMatchObject({ status: 200, body: { result: "v" } });
    expect((await call(port(), "GET", "/info", auth)).status).toBe(200);
  });

  test("a write without the token is refused and changes nothing, body or not", async () => {
    expect(await call(port(), "PUT", "/kv/a:2", undefined, { value: "v" })).toMatchObject({ status: 401 });
    expect(await call(port(), "POST", "/cmd", "Bearer wrong", { command: "SET", args: ["a:2", "v"] })).toMatchObject({ status: 401 });
    expect(await call(port(), "PUT", "/kv/a:2", undefined, "{not json")).toMatchObject({ status: 401 });
    expect(await resp.call("EXISTS", "a:2")).toBe(0n);
  });

  test("unknown paths and unserved methods are 401 too until the token is given: nothing is revealed", async () => {
    expect(await call(port(), "GET", "/nothing")).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    expect(await call(port(), "PATCH", "/kv/x")).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    expect((await call(port(), "GET", "/nothing", `Bearer ${password}`)).status).toBe(404);
    expect((await call(port(), "PATCH", "/kv/x", `Bearer ${password}`)).status).toBe(405);
  });

  test("CONFIG SET requirepass over RESP applies to the next REST request; \"\" turns auth off", async () => {
    expect(await resp.call("CONFIG", "SET", "requirepass", "other")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/dbsize", `Bearer ${password}`)).status).toBe(401);
    expect((await call(port(), "GET", "/dbsize", "Bearer other")).status).toBe(200);
    expect(await resp.call("CONFIG", "SET", "requirepass", "")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/dbsize")).status).toBe(200);
    expect(await resp.call("CONFIG", "SET", "requirepass", password)).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/dbsize")).status).toBe(401);
  });

  test("AUTH over /cmd is refused as connection state: the bearer token is REST's login", async () => {
    const answer = await call(port(), "POST", "/cmd", `Bearer ${password}`, { command: "AUTH", args: [password] });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain("AUTH keeps state on a connection");
  });
});

describe("without --requirepass", () => {
  let kv: ServerProcess;
  beforeAll(async () => {
    kv = await startKv(["--appendonly", "no"]);
  });
  afterAll(async () => {
    await kv.stop();
  });

  test("no header is needed, and a header of any kind is ignored", async () => {
    expect((await call(kv.httpPort!, "GET", "/dbsize")).status).toBe(200);
    expect((await call(kv.httpPort!, "GET", "/dbsize", "Bearer anything")).status).toBe(200);
  });
});

// REST runs as the default user, so an ACL that takes commands or keys from that user takes them
// from REST too: 403 with Redis's NOPERM message, and nothing changed.
describe("with the default user limited by ACL", () => {
  let kv: ServerProcess;
  let resp: RespClient;
  kvWithClient(["--appendonly", "no"], async (server, client) => {
    kv = server;
    resp = client;
    // The RESP client logs in as a user of its own first: limiting the default user limits it too.
    expect(await resp.call("ACL", "SETUSER", "admin", "on", ">pw", "allkeys", "allchannels", "+@all")).toEqual({ s: "OK" });
    expect(await resp.call("AUTH", "admin", "pw")).toEqual({ s: "OK" });
  });

  test("a command the default user may not run, or a key it may not touch, is 403; what it may do is 200", async () => {
    expect(await resp.call("ACL", "SETUSER", "default", "resetkeys", "~open:*", "-del")).toEqual({ s: "OK" });
    const denied = await call(kv.httpPort!, "PUT", "/kv/secret", undefined, { value: "v" });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: "NOPERM this user has no permissions to access one of the keys used as arguments" });
    expect(await resp.call("EXISTS", "secret")).toBe(0n);
    expect((await call(kv.httpPort!, "PUT", "/kv/open:1", undefined, { value: "v" })).status).toBe(200);
    const del = await call(kv.httpPort!, "DELETE", "/kv/open:1");
    expect(del.status).toBe(403);
    expect(del.body).toEqual({ error: "NOPERM this user has no permissions to run the 'del' command" });
    expect(await resp.call("GET", "open:1")).toBe("v");
    expect(await resp.call("ACL", "SETUSER", "default", "allkeys", "+del")).toEqual({ s: "OK" });
    expect((await call(kv.httpPort!, "DELETE", "/kv/open:1")).status).toBe(200);
  });

  test("the bearer token is any of the default user's passwords, as ACL SETUSER leaves them; a default user that is off lets nothing in", async () => {
    expect(await resp.call("ACL", "SETUSER", "default", ">first", ">second")).toEqual({ s: "OK" });
    expect((await call(kv.httpPort!, "GET", "/dbsize")).status).toBe(401);
    for (const token of ["first", "second"]) expect((await call(kv.httpPort!, "GET", "/dbsize", `Bearer ${token}`)).status).toBe(200);
    expect(await resp.call("ACL", "SETUSER", "default", "<first")).toEqual({ s: "OK" });
    expect((await call(kv.httpPort!, "GET", "/dbsize", "Bearer first")).status).toBe(401);
    expect(await resp.call("ACL", "SETUSER", "default", "off")).toEqual({ s: "OK" });
    expect((await call(kv.httpPort!, "GET", "/dbsize", "Bearer second")).status).toBe(401);
    expect(await resp.call("ACL", "SETUSER", "default", "on", "nopass")).toEqual({ s: "OK" });
    expect((await call(kv.httpPort!, "GET", "/dbsize")).status).toBe(200);
  });
});
