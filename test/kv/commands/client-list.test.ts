// CLIENT LIST and CLIENT INFO side by side with redis-server 7.0.15: the same fields in the same
// order, and for clients in the same states — a command half sent, a pipeline running, blocked
// with more sent behind it, in MULTI, subscribed, watching a key that changed, tracking, NO-EVICT
// on — the same flags and the same counts of what the connection holds (qbuf, argv-mem,
// multi-mem). Fields that are sizes of svc's own buffers, addresses, ids and ages are left out.
// CLIENT SETINFO and NO-TOUCH, which came with Redis 7.2, are unknown subcommands, as in 7.0.
import { expect, test } from "bun:test";
import { redisAndKvWithClients } from "../support/side-by-side.ts";

const servers = redisAndKvWithClients();

/** Redis 7.0.15's CLIENT LIST fields, in its order. */
const fields70 = [
  "id",
  "addr",
  "laddr",
  "fd",
  "name",
  "age",
  "idle",
  "flags",
  "db",
  "sub",
  "psub",
  "ssub",
  "multi",
  "qbuf",
  "qbuf-free",
  "argv-mem",
  "multi-mem",
  "rbs",
  "rbp",
  "obl",
  "oll",
  "omem",
  "tot-mem",
  "events",
  "cmd",
  "user",
  "redir",
  "resp",
];
/** The fields whose values are compared: state and counts of what a client sent, not sizes of buffers, ids or times. */
const compared = ["name", "flags", "db", "sub", "psub", "ssub", "multi", "qbuf", "argv-mem", "multi-mem", "cmd", "user", "redir", "resp"];

/** One CLIENT LIST line as name → value, in order. */
const parse = (line: string) =>
  line
    .trim()
    .split(" ")
    .map((f) => [f.slice(0, f.indexOf("=")), f.slice(f.indexOf("=") + 1)] as [string, string]);
const pick = (line: string) => Object.fromEntries(parse(line).filter(([name]) => compared.includes(name)));

/**
 * What CLIENT LIST says of a client that sent `parts` (each written separately, a pause between),
 * while `other` commands come from a second client in between (a part starting with "@").
 */
async function seen(port: number, parts: string[]): Promise<Record<string, string>> {
  let answer = "";
  const client = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_s, chunk) => void (answer += chunk.toString("latin1")) } });
  const other = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
  // Its id, to find it in the list by (CLIENT ID is then its last command, on both servers alike).
  client.write("CLIENT ID\r\n");
  for (let tries = 0; tries < 100 && !answer.endsWith("\r\n"); tries++) await Bun.sleep(5);
  const id = /^:(\d+)\r\n/.exec(answer)![1];
  let out = "";
  const lister = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data: (_s, chunk) => void (out += chunk.toString("latin1")) } });
  for (const part of parts) {
    if (part.startsWith("@")) other.write(part.slice(1));
    else client.write(part);
    await Bun.sleep(40);
  }
  lister.write("CLIENT LIST\r\n");
  for (let tries = 0; tries < 100 && !out.endsWith("\n\r\n"); tries++) await Bun.sleep(10);
  const lines = out.split("\n").filter((l) => l.includes("flags=") && !l.includes("cmd=client|list"));
  client.end();
  other.end();
  lister.end();
  const line = lines.find((l) => l.startsWith(`id=${id} `));
  if (line === undefined) throw new Error(`no client ${id} in ${out}`);
  return pick(line);
}

const scenarios: Record<string, string[]> = {
  idle: [],
  "half a command sent (two arguments read, two bytes of the third)": ["*3\r\n$3\r\nSET\r\n$1\r\na\r\n$10\r\nab"],
  "half a command's header": ["*3\r\n$3\r\nSE"],
  "an inline command half typed after one run": ["PING\r\nPI"],
  "blocked, with an inline and a RESP command sent behind": ["BLPOP nosuch 0\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n"],
  "in MULTI with two commands queued": ["MULTI\r\nSET a 1\r\nGET abc\r\n"],
  "watching a key another client set": ["WATCH w\r\n", "@SET w 1\r\n"],
  "subscribed (RESP3) and in MULTI": ["HELLO 3\r\nSUBSCRIBE c\r\nMULTI\r\n"],
  "tracking in broadcast mode": ["CLIENT TRACKING on BCAST\r\n"],
  "NO-EVICT on, then named": ["CLIENT NO-EVICT on\r\nCLIENT SETNAME worker\r\n"],
};

for (const [name, parts] of Object.entries(scenarios)) {
  test(`CLIENT LIST of a client ${name} says what redis-server says`, async () => {
    const [redis, kv] = [await seen(servers.redis.port, parts), await seen(servers.kv.port, parts)];
    expect(kv).toEqual(redis);
  });
}

test("the counts themselves, for the cases that matter most", async () => {
  const half = await seen(servers.kv.port, scenarios["half a command sent (two arguments read, two bytes of the third)"]!);
  expect([half.qbuf, half["argv-mem"], half.cmd]).toEqual(["2", "4", "client|id"]);
  const blocked = await seen(servers.kv.port, scenarios["blocked, with an inline and a RESP command sent behind"]!);
  // PING\r\n (6) and the ECHO request (23) wait in the buffer; BLPOP's arguments are held.
  expect([blocked.flags, blocked.qbuf, blocked["argv-mem"]]).toEqual(["b", "29", "12"]);
  const multi = await seen(servers.kv.port, scenarios["in MULTI with two commands queued"]!);
  // SET a 1: 5 bytes and 3 pointers; GET abc: 6 bytes and 2 pointers.
  expect([multi.flags, multi.multi, multi["multi-mem"]]).toEqual(["x", "2", "51"]);
});

test("CLIENT INFO has Redis 7.0's fields in its order, and counts the running pipeline as the query buffer", async () => {
  const pipeline = [["PING"], ["CLIENT", "INFO"], ["PING"]];
  const [redis, kv] = await Promise.all([servers.redisClient.pipeline(pipeline), servers.kvClient.pipeline(pipeline)]);
  expect(parse(String(kv[1])).map(([n]) => n)).toEqual(fields70);
  expect(parse(String(redis[1])).map(([n]) => n)).toEqual(fields70);
  expect(pick(String(kv[1]))).toEqual({ ...pick(String(redis[1])), name: "" });
  // Three commands of 14, 26 and 14 bytes in one read, all in the buffer while they run.
  expect(pick(String(kv[1])).qbuf).toBe("54");
  expect(pick(String(kv[1]))["argv-mem"]).toBe("10");
});

test("CLIENT SETINFO and CLIENT NO-TOUCH are unknown subcommands, as in 7.0", async () => {
  const commands = [
    ["CLIENT", "SETINFO", "lib-name", "x"],
    ["CLIENT", "NO-TOUCH", "on"],
    ["CLIENT", "NO-EVICT", "maybe"],
  ];
  const [redis, kv] = await Promise.all([servers.redisClient.pipeline(commands), servers.kvClient.pipeline(commands)]);
  expect(kv).toEqual(redis);
  expect(kv[0]).toEqual({ e: "ERR unknown subcommand 'SETINFO'. Try CLIENT HELP." });
});
