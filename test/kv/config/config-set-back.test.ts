// Tools that edit a server's configuration (and Redis 7.0's own "CONFIG sanity" test) read
// CONFIG GET * and set every value back: each must be accepted and change nothing. Immutable
// parameters are left out, as that test leaves them out; start-only ones (port, bind, dir) take
// their own value and refuse any other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freePort } from "../../support/spawn.ts";
import { configParamsByName } from "../../../src/kv/config/config-table.ts";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv } from "../support/servers.ts";

/** Parameters set once at start, never again (Redis's IMMUTABLE_CONFIG): "CONFIG sanity" skips them too. */
const immutable = new Set([...configParamsByName].filter(([, param]) => param.type.kind === "immutable").map(([name]) => name));

let server: ServerProcess;
let client: RespClient;

beforeAll(async () => {
  server = await startKv(["--port", "0"]);
  client = await RespClient.connect(server.port);
});

afterAll(async () => {
  client.close();
  await server.stop();
});

const pairsOf = (flat: RespValue) => {
  const values = flat as string[];
  return Array.from({ length: values.length / 2 }, (_, i) => [values[2 * i]!, values[2 * i + 1]!] as const);
};

test("every parameter CONFIG GET * shows can be set back to its value, and nothing changes", async () => {
  const before = pairsOf(await client.call("CONFIG", "GET", "*"));
  const settable = before.filter(([name]) => !immutable.has(name));
  expect(settable.map(([name]) => name)).toEqual(expect.arrayContaining(["port", "bind", "dir", "maxmemory", "appendonly"]));
  const replies = await client.pipeline(settable.map(([name, value]) => ["CONFIG", "SET", name, value]));
  expect(replies.map((reply, i) => [settable[i]![0], reply])).toEqual(settable.map(([name]) => [name, { s: "OK" }]));
  expect(pairsOf(await client.call("CONFIG", "GET", "*"))).toEqual(before);
});

test("a start-only parameter refuses a value other than its own, and keeps it", async () => {
  expect(await client.call("CONFIG", "SET", "bind", "0.0.0.0")).toEqual({
    e: "ERR CONFIG SET failed (possibly related to argument 'bind') - svc sets it at start only; restart with --bind",
  });
  expect(await client.call("CONFIG", "GET", "bind")).toEqual(["bind", "127.0.0.1"]);
});

describe("CONFIG SET port, as Redis changes it at run time", () => {
  test("the listener moves to the new port; a client connected before stays, and new ones connect to the new port only", async () => {
    const before = server.port;
    const next = await freePort();
    expect(await client.call("CONFIG", "SET", "port", String(next))).toEqual({ s: "OK" });
    expect(await client.call("CONFIG", "GET", "port")).toEqual(["port", String(next)]);
    expect(await client.call("PING")).toEqual({ s: "PONG" });
    expect(String(await client.call("INFO", "server"))).toContain(`tcp_port:${next}`);
    const moved = await RespClient.connect(next);
    expect(await moved.call("PING")).toEqual({ s: "PONG" });
    moved.close();
    await expect(RespClient.connect(before)).rejects.toThrow();
    // And back, so that the other tests find it where it started.
    expect(await client.call("CONFIG", "SET", "port", String(before))).toEqual({ s: "OK" });
  });

  test("a port in use is refused with Redis's words, and every parameter of the call goes back to what it was", async () => {
    const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const [, maxmemory] = (await client.call("CONFIG", "GET", "maxmemory")) as string[];
      const reply = (await client.call("CONFIG", "SET", "maxmemory", "10000001", "port", String(taken.port), "client-query-buffer-limit", "10mb")) as {
        e: string;
      };
      expect(reply.e).toMatch(/^ERR CONFIG SET failed \(possibly related to argument 'port'\) - Unable to listen on this port\. Check server logs\.$/);
      expect(await client.call("CONFIG", "GET", "maxmemory")).toEqual(["maxmemory", maxmemory!]);
      expect(await client.call("CONFIG", "GET", "port")).toEqual(["port", String(server.port)]);
      expect(await client.call("CONFIG", "GET", "client-query-buffer-limit")).toEqual(["client-query-buffer-limit", "1073741824"]);
      expect(server.output()).toContain("Address already in use");
      // Still listening where it was.
      const again = await RespClient.connect(server.port);
      expect(await again.call("PING")).toEqual({ s: "PONG" });
      again.close();
    } finally {
      taken.stop(true);
    }
  });

  test("port 0 (no TCP listener, in Redis) and a port past 65535 are refused", async () => {
    expect(await client.call("CONFIG", "SET", "port", "0")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'port') - svc kv listens on TCP only; port 0 (no TCP listener) is not taken",
    });
    expect(await client.call("CONFIG", "SET", "port", "65536")).toEqual({
      e: "ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive",
    });
  });
});
