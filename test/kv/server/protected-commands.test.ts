// DEBUG, and MODULE's LOAD, LOADEX and UNLOAD, are protected in Redis 7.0: refused unless their
// switch (enable-debug-command, enable-module-command), set at start, is "yes", or "local" and
// the client is on the same machine. Side by side with redis-server started with each setting:
// the same refusal (counted as a rejected call, and aborting a transaction it was queued in), the
// same CONFIG answers, the same commands allowed — and MODULE as a server with no module loaded
// answers it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";

/** Each setting's pair of servers, and a client of each over loopback. */
const settings = ["no", "local", "yes"] as const;
const pairs = new Map<string, { servers: ServerProcess[]; clients: RespClient[] }>();

beforeAll(async () => {
  const started = settings.map((setting) => [setting, ["--enable-debug-command", setting, "--enable-module-command", setting]] as const);
  // And a pair whose clients must authenticate first.
  const withPassword = [...started, ["no, with a password", ["--enable-debug-command", "no", "--enable-module-command", "no", "--requirepass", "pw"]] as const];
  for (const [name, flags] of withPassword) {
    const servers = await Promise.all([startRedis([...flags]), startKv([...flags])]);
    const clients = await Promise.all(servers.map((server) => RespClient.connect(server.port)));
    pairs.set(name, { servers, clients });
  }
}, 60_000);

afterAll(async () => {
  for (const { servers, clients } of pairs.values()) {
    for (const client of clients) client.close();
    await Promise.all(servers.map((server) => server.stop()));
  }
});

/** The replies of `commands`, pipelined, on redis-server and on svc kv started with `setting`. */
async function onBoth(setting: string, commands: string[][]): Promise<[RespValue[], RespValue[]]> {
  const { clients } = pairs.get(setting)!;
  const replies = await Promise.all(clients.map((client) => client.pipeline(commands)));
  return replies as [RespValue[], RespValue[]];
}

/** CONFIG GET's flat reply as sorted [name, value] pairs. */
function pairsOf(reply: RespValue): string[] {
  const flat = reply as string[];
  const pairs: string[] = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push(`${flat[i]}=${flat[i + 1]}`);
  return pairs.sort();
}

const refusalOf = (command: string) =>
  `ERR ${command} command not allowed. If the enable-${command.toLowerCase()}-command option is set to "local", you can run it from a local connection, ` +
  "otherwise you need to set this option in the configuration file, and then restart the server.";
const refusal = refusalOf("DEBUG");

describe("DEBUG as enable-debug-command allows it, side by side with redis-server", () => {
  test("no (Redis 7's default): refused, a rejected call; in MULTI the transaction aborts", async () => {
    const [redis, kv] = await onBoth("no", [
      ["CONFIG", "RESETSTAT"],
      ["DEBUG", "SLEEP", "0"],
      ["DEBUG", "NOSUCH"],
      ["MULTI"],
      ["DEBUG", "SLEEP", "0"],
      ["EXEC"],
      ["INFO", "commandstats"],
    ]);
    const stats = (info: RespValue) =>
      String(info)
        .split("\r\n")
        .filter((line) => line.startsWith("cmdstat_debug:"))[0]
        ?.replace(/usec=\d+,usec_per_call=[\d.]+,/, "");
    expect(kv.slice(0, -1)).toEqual(redis.slice(0, -1));
    expect(kv[1]).toEqual({ e: refusal });
    expect(kv[5]).toEqual({ e: "EXECABORT Transaction discarded because of previous errors." });
    expect(stats(kv.at(-1)!)).toBe(stats(redis.at(-1)!));
    expect(stats(kv.at(-1)!)).toBe("cmdstat_debug:calls=0,rejected_calls=3,failed_calls=0");
  });

  test("the refusal comes before authentication, as Redis orders its checks", async () => {
    const [redis, kv] = await onBoth("no, with a password", [
      ["DEBUG", "SLEEP", "0"],
      ["GET", "k"],
      ["AUTH", "pw"],
      ["DEBUG", "SLEEP", "0"],
    ]);
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual({ e: refusal });
    expect(kv[1]).toEqual({ e: "NOAUTH Authentication required." });
    expect(kv[3]).toEqual({ e: refusal });
  });

  test("local and yes: allowed from a loopback client", async () => {
    for (const setting of ["local", "yes"]) {
      const [redis, kv] = await onBoth(setting, [["DEBUG", "SLEEP", "0"], ["MULTI"], ["DEBUG", "SLEEP", "0"], ["EXEC"]]);
      expect(kv).toEqual(redis);
      expect(kv).toEqual([{ s: "OK" }, { s: "OK" }, { s: "QUEUED" }, [{ s: "OK" }]]);
    }
  });

  test("it is fixed at start: CONFIG GET shows it, CONFIG SET refuses it as immutable", async () => {
    for (const setting of settings) {
      const [redis, kv] = await onBoth(setting, [
        ["CONFIG", "GET", "enable-debug-command"],
        ["CONFIG", "SET", "enable-debug-command", "yes"],
        ["CONFIG", "GET", "enable-*"],
      ]);
      expect(kv.slice(0, 2)).toEqual(redis.slice(0, 2));
      expect(kv[0]).toEqual(["enable-debug-command", setting]);
      // A pattern's matches come in the order of Redis's dict of parameters: compared as pairs.
      expect(pairsOf(kv[2]!)).toEqual(pairsOf(redis[2]!));
    }
  });
});

describe("MODULE as a server with no module loaded answers it, side by side with redis-server", () => {
  const commands = [
    ["MODULE", "LIST"],
    ["MODULE", "LOAD", "/nonexistent.so"],
    ["MODULE", "LOADEX", "/nonexistent.so", "CONFIG", "a", "b", "ARGS", "x"],
    ["MODULE", "UNLOAD", "bf"],
    ["MODULE", "UNLOAD"],
    ["MODULE", "LIST", "x"],
    ["MODULE"],
    ["MODULE", "NOSUCH"],
    ["MODULE", "HELP"],
  ];

  test("no: LOAD, LOADEX and UNLOAD refused (a wrong count of words first); LIST empty; HELP", async () => {
    const [redis, kv] = await onBoth("no", commands);
    expect(kv).toEqual(redis);
    expect(kv[0]).toEqual([]);
    expect(kv[1]).toEqual({ e: refusalOf("MODULE") });
    expect(kv[3]).toEqual({ e: refusalOf("MODULE") });
  });

  test("local and yes: nothing loads and nothing is there to unload", async () => {
    for (const setting of ["local", "yes"]) {
      const [redis, kv] = await onBoth(setting, commands);
      expect(kv).toEqual(redis);
      expect(kv[1]).toEqual({ e: "ERR Error loading the extension. Please check the server logs." });
      expect(kv[3]).toEqual({ e: "ERR Error unloading module: no such module with that name" });
    }
  });

  test("it is fixed at start as DEBUG's switch is", async () => {
    for (const setting of settings) {
      const [redis, kv] = await onBoth(setting, [
        ["CONFIG", "GET", "enable-module-command"],
        ["CONFIG", "SET", "enable-module-command", "yes"],
      ]);
      expect(kv).toEqual(redis);
      expect(kv[0]).toEqual(["enable-module-command", setting]);
    }
  });
});
