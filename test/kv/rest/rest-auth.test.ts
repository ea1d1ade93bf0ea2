// REST authentication with --requirepass: every request needs `Authorization: Bearer <password>`
// (or Basic credentials of the default user or another ACL user); missing or wrong credentials
// are 401 {"error":"Unauthorized"} before anything else is looked at (route, method, body), and
// change nothing. Without a password no header is needed. The password is the engine's, so
// CONFIG SET requirepass applies to the next REST request.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RespClient } from "../support/resp-client.ts";
import { type ServerProcess, startKv } from "../support/servers.ts";
import { kvWithClient } from "../support/side-by-side.ts";

const password = "s3cret pass";

async function call(port: number, method: string, path: string, authorization?: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
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

  test('no Authorization header is 401 {"error":"Unauthorized"} with a Bearer challenge', async () => {
    const answer = await call(port(), "GET", "/dbsize");
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: "Unauthorized" });
    expect(answer.headers.get("www-authenticate")).toContain("Bearer");
  });

  test("a wrong token, an empty one, another scheme, wrong Basic credentials or the password without a scheme are 401", async () => {
    for (const authorization of [
      `Bearer ${password}x`,
      "Bearer ",
      "Bearer",
      `Digest ${password}`,
      `Basic ${btoa(`default:${password}x`)}`,
      `Basic ${btoa(password)}`,
      password,
    ]) {
      const answer = await call(port(), "GET", "/dbsize", authorization);
      expect(answer, authorization).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    }
  });

  test("Basic credentials of the default user are its login too, as `AUTH default P` is over RESP", async () => {
    expect(await call(port(), "GET", "/dbsize", `Basic ${btoa(`default:${password}`)}`)).toMatchObject({ status: 200 });
    expect(await call(port(), "GET", "/dbsize", `basic ${btoa(`default:${password}`)}`)).toMatchObject({ status: 200 });
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

  test('CONFIG SET requirepass over RESP applies to the next REST request; "" turns auth off', async () => {
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

/** `Authorization: Basic` for `name:password`, both taken as bytes (latin1 strings, as RESP gives them). */
const basicAuth = (name: string, password: string) => `Basic ${Buffer.from(`${name}:${password}`, "latin1").toString("base64")}`;

// Basic credentials run a request as that ACL user, as `AUTH name password` does a RESP client:
// its command, key and channel rules apply (403 with NOPERM), and wrong credentials are 401 even
// where no header is needed, rather than falling back to the default user.
describe("ACL users over REST with Basic credentials", () => {
  let kv: ServerProcess;
  let resp: RespClient;
  kvWithClient(["--appendonly", "no"], async (server, client) => {
    kv = server;
    resp = client;
    expect(await resp.call("ACL", "SETUSER", "reader", "on", ">r:pw", "~pub:*", "+get", "+client|list")).toEqual({ s: "OK" });
    expect(await resp.call("SET", "pub:1", "one")).toEqual({ s: "OK" });
    expect(await resp.call("SET", "priv", "two")).toEqual({ s: "OK" });
  });
  const port = () => kv.httpPort!;
  const reader = basicAuth("reader", "r:pw");

  test("the user's rules apply: its keys and commands are 200, the rest 403 with Redis's NOPERM, and nothing changes", async () => {
    expect(await call(port(), "GET", "/kv/pub:1", reader)).toMatchObject({ status: 200, body: { result: "one" } });
    expect(await call(port(), "GET", "/kv/priv", reader)).toMatchObject({
      status: 403,
      body: { error: "NOPERM this user has no permissions to access one of the keys used as arguments" },
    });
    expect(await call(port(), "PUT", "/kv/pub:1", reader, { value: "changed" })).toMatchObject({
      status: 403,
      body: { error: "NOPERM this user has no permissions to run the 'set' command" },
    });
    expect(await resp.call("GET", "pub:1")).toBe("one");
    // The same request without credentials runs as the default user, who may do anything here.
    expect(await call(port(), "GET", "/kv/priv")).toMatchObject({ status: 200, body: { result: "two" } });
  });

  test("CLIENT LIST over /cmd shows the request's own client as that user", async () => {
    const answer = await call(port(), "POST", "/cmd", reader, { command: "CLIENT", args: ["LIST"] });
    expect(answer.status).toBe(200);
    expect(String(answer.body.result)).toContain(" user=reader ");
  });

  test("wrong, unknown, disabled, malformed or colon-less credentials are 401, though no header is needed at all", async () => {
    for (const authorization of [
      basicAuth("reader", "r:pwx"),
      basicAuth("nobody", "r:pw"),
      basicAuth("reader", ""),
      "Basic",
      "Basic !!!",
      `Basic ${btoa("reader")}`,
    ]) {
      expect(await call(port(), "GET", "/kv/pub:1", authorization), authorization).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    }
    expect(await resp.call("ACL", "SETUSER", "reader", "off")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/kv/pub:1", reader)).status).toBe(401);
    expect(await resp.call("ACL", "SETUSER", "reader", "on")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/kv/pub:1", reader)).status).toBe(200);
  });

  test("a password's bytes are compared as AUTH compares them: one set over RESP in UTF-8 logs in over REST", async () => {
    // "pässwort" as its UTF-8 bytes, which is what a RESP client sends and stores.
    const utf8 = Buffer.from("pässwort", "utf8").toString("latin1");
    expect(await resp.call("ACL", "SETUSER", "umlaut", "on", `>${utf8}`, "allkeys", "+get")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/kv/priv", basicAuth("umlaut", utf8))).status).toBe(200);
    expect((await call(port(), "GET", "/kv/priv", basicAuth("umlaut", "pässwort"))).status).toBe(401);
  });

  test("ACL DELUSER applies to the very next request", async () => {
    expect(await resp.call("ACL", "SETUSER", "brief", "on", ">pw", "allkeys", "+get")).toEqual({ s: "OK" });
    expect((await call(port(), "GET", "/kv/priv", basicAuth("brief", "pw"))).status).toBe(200);
    expect(await resp.call("ACL", "DELUSER", "brief")).toBe(1n);
    expect((await call(port(), "GET", "/kv/priv", basicAuth("brief", "pw"))).status).toBe(401);
  });
});
