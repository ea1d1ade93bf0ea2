// The ACL file (--aclfile), side by side with redis-server 7.0 started on a file of the same
// users: loaded at start (a bad one stops the start), ACL SAVE writing ACL LIST's lines, ACL LOAD
// all or nothing with Redis's words for each bad line, the clients of replaced users
// disconnected, and the default user taken from the file. Paths differ between the two servers,
// so each reply has its server's path replaced by <file> before they are compared.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RespClient, show, type RespValue } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";

/** Users of the file both servers start with; single command rules only, whose order is fixed. */
const startingUsers = "user default on nopass ~* &* +@all\nuser alice on >p1 ~k* resetchannels &ch* -@all +get\n";

interface Side {
  server: ServerProcess;
  client: RespClient;
  file: string;
}

const dirs: string[] = [];
let redis: Side;
let kv: Side;

async function side(start: (args: string[]) => Promise<ServerProcess>): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), "svc-aclfile-"));
  dirs.push(dir);
  const file = join(dir, "users.acl");
  writeFileSync(file, startingUsers);
  const server = await start(["--aclfile", file]);
  return { server, client: await RespClient.connect(server.port), file };
}

beforeAll(async () => {
  [redis, kv] = await Promise.all([side(startRedis), side((args) => startKv(["--appendonly", "no", ...args]))]);
});

afterAll(async () => {
  for (const s of [redis, kv]) s?.client.close();
  await Promise.all([redis?.server.stop(), kv?.server.stop()]);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A reply with the side's own file path written <file>. */
const normalised = (s: Side, reply: RespValue) => show(reply).replaceAll(s.file, "<file>");

/** Runs `argv` on both servers; expects the same reply (paths aside) and returns svc's. */
async function same(...argv: string[]): Promise<string> {
  const [fromRedis, fromKv] = await Promise.all([redis.client.call(...argv), kv.client.call(...argv)]);
  expect(normalised(kv, fromKv)).toBe(normalised(redis, fromRedis));
  return normalised(kv, fromKv);
}

/** Writes `text` as both servers' ACL file. */
function writeBoth(text: string): void {
  for (const s of [redis, kv]) writeFileSync(s.file, text);
}

test("the file's users are loaded at start, and CONFIG GET names the file", async () => {
  expect(await same("ACL", "LIST")).toContain(
    "user alice on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~k* resetchannels &ch* -@all +get",
  );
  expect(await same("CONFIG", "GET", "aclfile")).toBe('["aclfile","<file>"]');
  await same("CONFIG", "SET", "aclfile", "/tmp/elsewhere.acl");
});

test("ACL SAVE writes every user as its ACL LIST line, into the file", async () => {
  await same("ACL", "SETUSER", "bob", "on", ">pw", "~b:*", "+set");
  await same("ACL", "SAVE");
  const saved = readFileSync(kv.file, "latin1");
  expect(saved).toBe(readFileSync(redis.file, "latin1"));
  expect(saved.split("\n")).toContain(`user bob on #${sha256("pw")} ~b:* resetchannels -@all +set`);
  await same("ACL", "DELUSER", "bob");
});

test("selectors, read and write key permissions and first arguments load from the file and save back as Redis writes them", async () => {
  try {
    writeBoth(
      "user default on nopass ~* &* +@all\n" + "user sel on >pw %R~r* %W~w* resetchannels -@all +@hash +select|0 (~s* &c* -@all +publish) (+@read  %R~*)\n",
    );
    expect(await same("ACL", "LOAD")).toBe('{"s":"OK"}');
    expect(await same("ACL", "LIST")).toContain("(~s* resetchannels &c* -@all +publish)");
    await same("ACL", "GETUSER", "sel");
    await same("ACL", "SAVE");
    expect(readFileSync(kv.file, "latin1")).toBe(readFileSync(redis.file, "latin1"));
    // A selector's bad rule names the line as any bad rule does.
    writeBoth("user default on nopass ~* &* +@all\nuser bad on (~a allkeys)\nuser worse on (+nosuch ~a)\n");
    await same("ACL", "LOAD");
  } finally {
    writeBoth(startingUsers);
    await same("ACL", "LOAD");
  }
});

test("ACL LOAD of a file with bad lines names each and changes nothing", async () => {
  const before = await same("ACL", "LIST");
  for (const text of [
    "user default on nopass ~* &* +@all\nuser carol on badrule\n\nuser dave +nosuch\nfoo bar\n",
    "user x on <nopw\nuser y #abc\nuser z ~a ~* ~b\n",
    "user x on\nuser x off\n",
    "# a comment is not a user line\nuser x on\n",
    "user  x   on\n",
    "user\n",
  ]) {
    writeBoth(text);
    expect(await same("ACL", "LOAD")).toContain("WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
    expect(await same("ACL", "LIST")).toBe(before);
  }
  for (const s of [redis, kv]) rmSync(s.file);
  expect(await same("ACL", "LOAD")).toBe(`{"e":"ERR Error loading ACLs, opening file '<file>': No such file or directory"}`);
  writeBoth(startingUsers);
});

test("ACL LOAD replaces every user: a default user left out is the usual one, and clients of replaced users are disconnected", async () => {
  await same("ACL", "SETUSER", "default", "resetkeys", "~d:*");
  const [redisAlice, kvAlice, redisPlain, kvPlain] = await Promise.all([
    RespClient.connect(redis.server.port),
    RespClient.connect(kv.server.port),
    RespClient.connect(redis.server.port),
    RespClient.connect(kv.server.port),
  ]);
  try {
    for (const c of [redisAlice, kvAlice]) expect(await c.call("AUTH", "alice", "p1")).toEqual({ s: "OK" });
    writeBoth("user alice on >p2 ~* +@all\r\nuser erin on nopass +ping\n");
    await same("ACL", "LOAD");
    expect(await same("ACL", "LIST")).toBe(
      JSON.stringify([
        `user alice on #${sha256("p2")} ~* resetchannels +@all`,
        "user default on nopass ~* &* +@all",
        "user erin on nopass resetchannels -@all +ping",
      ]),
    );
    // alice's client was logged in as a user now replaced: closed, on both. The default user's stays.
    for (const c of [redisAlice, kvAlice]) await c.closed;
    for (const c of [redisPlain, kvPlain]) expect(await c.call("PING")).toEqual({ s: "PONG" });
  } finally {
    for (const c of [redisAlice, kvAlice, redisPlain, kvPlain]) c.close();
    writeBoth(startingUsers);
    await same("ACL", "LOAD");
  }
});

describe("a bad file at start", () => {
  test("stops the start, naming the line, as redis-server does; so does a missing file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-aclfile-bad-"));
    dirs.push(dir);
    const file = join(dir, "users.acl");
    writeFileSync(file, "user default on nopass ~* &* +@all\nuser bad +nosuch\n");
    const line = `${file}:2: Error in applying operation '+nosuch': Unknown command or category name in ACL.`;
    await expect(startRedis(["--aclfile", file])).rejects.toThrow(`Aborting Redis startup because of ACL errors: ${line}`);
    await expect(startKv(["--appendonly", "no", "--aclfile", file])).rejects.toThrow(`Aborting startup because of ACL errors: ${line}`);
    const missing = join(dir, "none.acl");
    await expect(startKv(["--appendonly", "no", "--aclfile", missing])).rejects.toThrow(`opening file '${missing}': No such file or directory`);
  });
});

function sha256(text: string): string {
  return new Bun.CryptoHasher("sha256").update(text).digest("hex");
}
