// Tools that edit a server's configuration (and Redis 7.0's own "CONFIG sanity" test) read
// CONFIG GET * and set every value back: each must be accepted and change nothing. Immutable
// parameters are left out, as that test leaves them out; start-only ones (port, bind, dir) take
// their own value and refuse any other.
import { afterAll, beforeAll, expect, test } from "bun:test";
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
  const [, port] = (await client.call("CONFIG", "GET", "port")) as string[];
  const other = String(Number(port) === 1 ? 2 : Number(port) - 1);
  expect(await client.call("CONFIG", "SET", "port", other)).toEqual({
    e: "ERR CONFIG SET failed (possibly related to argument 'port') - svc sets it at start only; restart with --port",
  });
  expect(await client.call("CONFIG", "SET", "bind", "0.0.0.0")).toEqual({
    e: "ERR CONFIG SET failed (possibly related to argument 'bind') - svc sets it at start only; restart with --bind",
  });
  expect(await client.call("CONFIG", "GET", "port")).toEqual(["port", port!]);
});
