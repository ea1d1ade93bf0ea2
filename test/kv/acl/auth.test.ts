// requirepass and AUTH: the same conversations with redis-server and with svc kv give the same
// replies — who may run what before authenticating, AUTH's and HELLO ... AUTH's answers, RESET
// logging out, CONFIG SET requirepass — and real clients log in with their usual options.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import { passwordDigest, passwordMatchesDigest } from "../../../src/kv/acl/passwords.ts";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";

// Command-line arguments reach each server as UTF-8 bytes, so the password stays ASCII here.
const password = "s3cret pass";

/** Both servers started with the same arguments, stopped after the block's tests. */
function serversWith(args: string[]): { redis: ServerProcess; kv: ServerProcess } {
  const s = {} as { redis: ServerProcess; kv: ServerProcess };
  beforeAll(async () => {
    [s.redis, s.kv] = await Promise.all([startRedis(args), startKv(args)]);
  });
  afterAll(async () => {
    await Promise.all([s.redis.stop(), s.kv.stop()]);
  });
  return s;
}

/** HELLO's map names the connection's id, which differs between servers by design. */
function withoutIds(value: RespValue): RespValue {
  if (!Array.isArray(value)) return value;
  return value.map((item, i) => (i > 0 && value[i - 1] === "id" ? "<id>" : item));
}

/** Sends each command on one fresh connection per server, in order; returns both reply lists. */
async function converse(servers: { redis: ServerProcess; kv: ServerProcess }, commands: string[][]): Promise<[RespValue[], RespValue[]]> {
  const run = async (port: number) => {
    const client = await RespClient.connect(port);
    const replies: RespValue[] = [];
    for (const argv of commands) replies.push(withoutIds(await client.call(...argv)));
    client.close();
    return replies;
  };
  return Promise.all([run(servers.redis.port), run(servers.kv.port)]);
}

async function expectSameConversation(servers: { redis: ServerProcess; kv: ServerProcess }, commands: string[][]): Promise<RespValue[]> {
  const [fromRedis, fromKv] = await converse(servers, commands);
  expect(fromKv).toEqual(fromRedis);
  return fromKv;
}

describe("with requirepass", () => {
  const servers = serversWith(["--requirepass", password]);

  test("before AUTH only AUTH, HELLO, QUIT and RESET run; unknown commands and arity errors come first", async () => {
    const replies = await expectSameConversation(servers, [
      ["PING"],
      ["SET", "k", "v"],
      ["GET", "k"],
      ["GET"],
      ["NOSUCHCOMMAND", "x"],
      ["CLIENT", "ID"],
      ["MULTI"],
      ["EXEC"],
      ["SELECT", "1"],
      ["CONFIG", "GET", "requirepass"],
      ["HELLO"],
      ["HELLO", "2"],
      ["HELLO", "3"],
      ["HELLO", "4"],
      ["RESET"],
      ["PING"],
    ]);
    expect(replies[0]).toEqual({ e: "NOAUTH Authentication required." });
  });

  test("AUTH's errors: wrong password, unknown user, too many arguments, none; a failure changes nothing", async () => {
    await expectSameConversation(servers, [
      ["AUTH", "wrong"],
      ["PING"],
      ["AUTH", "default", "wrong"],
      ["AUTH", "bob", password],
      ["AUTH", ""],
      ["AUTH", "a", "b", "c"],
      ["AUTH"],
      ["AUTH", password.slice(0, -1)],
      ["AUTH", `${password}x`],
      ["GET", "k"],
    ]);
  });

  test("AUTH with the password, alone or as the default user, lets every command run; a later failure keeps the login", async () => {
    const replies = await expectSameConversation(servers, [
      ["AUTH", password],
      ["SET", "k", "v"],
      ["GET", "k"],
      ["AUTH", "wrong"],
      ["GET", "k"],
      ["AUTH", "default", password],
      ["DEL", "k"],
    ]);
    expect(replies[0]).toEqual({ s: "OK" });
    expect(replies[2]).toBe("v");
  });

  test("HELLO ... AUTH logs in and switches protocol at once; a wrong password or a bad option does neither", async () => {
    await expectSameConversation(servers, [
      ["HELLO", "2", "AUTH", "default", "wrong"],
      ["PING"],
      ["HELLO", "2", "AUTH", "default"],
      ["HELLO", "2", "AUTH", "default", password, "BOGUS"],
      ["PING"],
      ["HELLO", "2", "AUTH", "default", password, "SETNAME", "me"],
      ["CLIENT", "GETNAME"],
      ["PING"],
    ]);
  });

  test("RESET logs the client out; MULTI cannot be entered before AUTH and a queued AUTH runs with EXEC", async () => {
    await expectSameConversation(servers, [
      ["AUTH", password],
      ["RESET"],
      ["PING"],
      ["AUTH", password],
      ["MULTI"],
      ["AUTH", "wrong"],
      ["PING"],
      ["EXEC"],
      ["PING"],
    ]);
  });

  test("a refused EXEC (logged out, or with arguments) discards the transaction and says why", async () => {
    await expectSameConversation(servers, [["EXEC"], ["AUTH", password], ["MULTI"], ["SET", "a", "1"], ["EXEC", "now"], ["EXEC"], ["GET", "a"]]);
  });

  test("SAVE is refused inside MULTI and aborts it; BGSAVE, BGREWRITEAOF and LASTSAVE queue", async () => {
    await expectSameConversation(servers, [
      ["AUTH", password],
      ["MULTI"],
      ["SAVE"],
      ["SET", "a", "1"],
      ["EXEC"],
      ["MULTI"],
      ["BGSAVE", "x", "y"],
      ["LASTSAVE"],
      ["DISCARD"],
      ["GET", "a"],
    ]);
  });

  test("commands pipelined behind a failed AUTH are refused; behind a good one they run", async () => {
    const pipeline = async (port: number) => {
      const client = await RespClient.connect(port);
      const replies = await Promise.all([
        client.call("AUTH", "wrong"),
        client.call("INCR", "n"),
        client.call("AUTH", password),
        client.call("INCR", "n"),
        client.call("DEL", "n"),
      ]);
      client.close();
      return replies;
    };
    const [fromRedis, fromKv] = await Promise.all([pipeline(servers.redis.port), pipeline(servers.kv.port)]);
    expect(fromKv).toEqual(fromRedis);
    expect(fromKv[3]).toBe(1n);
  });

  test("CONFIG SET requirepass changes the password for new connections; clients already in stay in", async () => {
    const change = async (port: number) => {
      const admin = await RespClient.connect(port);
      const replies: RespValue[] = [await admin.call("AUTH", password), await admin.call("CONFIG", "SET", "requirepass", "other")];
      const fresh = await RespClient.connect(port);
      replies.push(await fresh.call("PING"), await fresh.call("AUTH", password), await fresh.call("AUTH", "other"), await fresh.call("PING"));
      replies.push(await admin.call("PING"), await admin.call("CONFIG", "GET", "requirepass"));
      replies.push(await admin.call("CONFIG", "SET", "requirepass", ""));
      const open = await RespClient.connect(port);
      replies.push(await open.call("PING"), await open.call("AUTH", "anything"), await open.call("AUTH", "default", "anything"));
      replies.push(await admin.call("CONFIG", "SET", "requirepass", password));
      for (const c of [admin, fresh, open]) c.close();
      return replies;
    };
    const fromRedis = await change(servers.redis.port);
    const fromKv = await change(servers.kv.port);
    expect(fromKv).toEqual(fromRedis);
  });

  test("ioredis and redis-cli log in with their password options; without one they get NOAUTH", async () => {
    const port = servers.kv.port;
    const client = new Redis({ port, password, lazyConnect: true, maxRetriesPerRequest: 0 });
    await client.connect();
    expect(await client.set("cli", "yes")).toBe("OK");
    expect(await client.get("cli")).toBe("yes");
    client.disconnect();
    // ioredis opens with HELLO; refused that, it reports the error and gives up the connection.
    const anonymous = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const errors: string[] = [];
    anonymous.on("error", (error: Error) => errors.push(error.message));
    await expect(anonymous.connect()).rejects.toThrow();
    expect(errors.join("\n")).toContain("NOAUTH");
    const cli = Bun.spawnSync(["redis-cli", "-p", String(port), "-a", password, "--no-auth-warning", "GET", "cli"]);
    expect(cli.stdout.toString().trim()).toBe("yes");
  });
});

describe("without requirepass", () => {
  const servers = serversWith([]);

  test("every client starts logged in; AUTH <password> is an error, the default user takes any password", async () => {
    await expectSameConversation(servers, [
      ["PING"],
      ["AUTH", "x"],
      ["AUTH", "default", "x"],
      ["AUTH", "default", ""],
      ["AUTH", "bob", "x"],
      ["HELLO", "2", "AUTH", "default", "x"],
      ["HELLO", "2", "AUTH", "bob", "x"],
      ["RESET"],
      ["PING"],
    ]);
  });
});

test("passwordMatchesDigest compares whole passwords, whatever their lengths and bytes", () => {
  const matches = (given: string, password: string) => passwordMatchesDigest(given, passwordDigest(password));
  expect(matches("abc", "abc")).toBe(true);
  expect(matches("abc", "abd")).toBe(false);
  expect(matches("abc", "abcd")).toBe(false);
  expect(matches("", "a")).toBe(false);
  expect(matches("\u00ff\u0000", "\u00ff\u0000")).toBe(true);
  expect(matches("\u00ff\u0000", "\u00ff")).toBe(false);
  // The digest ACL GETUSER shows for a password, as Redis shows it.
  expect(passwordDigest("p1")).toBe("f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a");
});
