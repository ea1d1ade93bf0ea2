// The RESP request protocol, byte for byte against redis-server 7.0: the same bytes go to a real
// redis-server and to a real `svc kv` over TCP, and the reply bytes and whether the server closed
// the connection must be identical after every step — for malformed requests (each protocol
// error, its message, and the close that follows), for requests right at each limit and one past
// it, for inline commands with quotes and escapes, for pipelines and for a command cut into
// single bytes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { encodeCommand } from "../support/resp-client.ts";
import { type ServerProcess, startKv, startRedis } from "../support/servers.ts";
import { type Observed, observe, RawConnection, type Step } from "../support/wire.ts";

/** Redis's PROTO_INLINE_MAX_SIZE: the longest inline command or header line without a newline. */
const inlineBytesMax = 64 * 1024;
/** Redis's default proto-max-bulk-len. */
const bulkBytesMax = 512 * 1024 * 1024;
/** Redis 7 accepts a multibulk count up to INT_MAX from an authenticated client. */
const multibulkCountMax = 2 ** 31 - 1;
/** Silence that ends the wait for the reply to a command of a million arguments. */
const millionArgumentsQuietMs = 2000;

let redis: ServerProcess;
let kv: ServerProcess;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** A readable account of where two byte strings first differ. */
function firstDifference(expected: string, actual: string): string {
  let i = 0;
  while (i < expected.length && expected[i] === actual[i]) i++;
  const around = (s: string) => JSON.stringify(s.slice(Math.max(0, i - 60), i + 60));
  return `first difference at byte ${i} of ${expected.length} (redis) / ${actual.length} (svc):\n  redis: ${around(expected)}\n  svc:   ${around(actual)}`;
}

/** Plays the steps on redis-server, then on svc kv, and requires the same observations. */
async function sameAsRedis(steps: readonly Step[]): Promise<Observed[]> {
  const expected = await observe(redis.port, steps);
  const actual = await observe(kv.port, steps, expected);
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const e = expected[i];
    const a = actual[i];
    if (e === undefined || a === undefined) throw new Error(`redis settled ${expected.length} steps, svc ${actual.length}`);
    if (e.replies !== a.replies) throw new Error(`after step ${i}: ${firstDifference(e.replies, a.replies)}`);
    if (e.closed !== a.closed) throw new Error(`after step ${i}: redis ${e.closed ? "closed" : "kept"} the connection, svc ${a.closed ? "closed" : "kept"} it`);
  }
  return expected;
}

const steps = (...chunks: (string | Uint8Array)[]): Step[] => chunks.map((bytes) => ({ bytes }));

/**
 * For a setting changed at run time: starts a fresh redis-server and svc kv (with `parser`), sets
 * `config` on each with CONFIG SET, then lets `play` observe each. Returns redis-server's
 * observations followed by svc's; both servers are stopped afterwards.
 */
async function onFreshServers(parser: string, [name, value]: [string, string], play: (port: number) => Promise<Observed[][]>): Promise<Observed[][]> {
  const servers = await Promise.all([startRedis(), startKv(["--resp-parser", parser])]);
  try {
    const observed: Observed[][] = [];
    for (const server of servers) {
      const conn = await RawConnection.open(server.port);
      conn.write(encodeCommand(["CONFIG", "SET", name, value]));
      await conn.settle({ atLeast: 5 });
      conn.close();
      observed.push(...(await play(server.port)));
    }
    return observed;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

// Each case names the bytes sent, one string per write; the server settles after each write.
const malformed: [string, Step[]][] = [
  ["a non-numeric multibulk count", steps("*abc\r\n")],
  ["an empty multibulk count", steps("*\r\n")],
  ["a multibulk count with a plus sign", steps("*+1\r\n$4\r\nPING\r\n")],
  ["a multibulk count with a leading zero", steps("*01\r\n$4\r\nPING\r\n")],
  ["a multibulk count of -0", steps("*-0\r\nPING\r\n")],
  ["a multibulk count past int64", steps("*9999999999999999999\r\n")],
  ["a multibulk count ended by LF alone", steps("*1\n$4\r\nPING\r\n")],
  ["a simple string where a bulk should be", steps("*2\r\n+foo\r\n")],
  ["an array where a bulk should be", steps("*2\r\n$4\r\nECHO\r\n*1\r\n")],
  ["an empty line where a bulk should be", steps("*1\r\n\r\n")],
  ["a negative bulk length", steps("*1\r\n$-5\r\n")],
  ["a bulk length of -0", steps("*1\r\n$-0\r\n\r\nPING\r\n")],
  ["a bulk length with a leading zero", steps("*1\r\n$04\r\nPING\r\n")],
  ["an empty bulk length", steps("*1\r\n$\r\n")],
  ["a bulk length ended by LF alone", steps("*1\r\n$4\nPING\r\n")],
  ["a bulk length past int64", steps("*1\r\n$9999999999999999999\r\n")],
  [`a bulk length one past proto-max-bulk-len (${bulkBytesMax + 1})`, steps(`*1\r\n$${bulkBytesMax + 1}\r\n`)],
  [`a multibulk count one past INT_MAX (${multibulkCountMax + 1})`, steps(`*${multibulkCountMax + 1}\r\n`)],
  ["a '$' line outside a multibulk (an inline command)", steps("$-5\r\n")],
  ["a '+' line outside a multibulk (an inline command)", steps("+PING\r\n")],
  ["a protocol error after good pipelined commands: earlier replies are kept, later commands dropped", steps("*1\r\n$4\r\nPING\r\nECHO ok\r\n*x\r\nPING\r\n")],
];

const atLimits: [string, Step[]][] = [
  [`a bulk length of exactly proto-max-bulk-len (${bulkBytesMax}): the server waits for it`, steps(`*1\r\n$${bulkBytesMax}\r\n`)],
  [`a multibulk count of exactly INT_MAX: the server waits for the arguments`, steps(`*${multibulkCountMax}\r\n`)],
  ["an inline request of 64 KiB without a newline waits, and runs once the newline comes", steps("x".repeat(inlineBytesMax), "\r\n")],
  ["an inline request one byte past 64 KiB without a newline is too big", steps("x".repeat(inlineBytesMax + 1))],
  ["an inline request growing past 64 KiB over several writes is too big", steps("GET ", "x".repeat(inlineBytesMax / 2), "x".repeat(inlineBytesMax / 2))],
  ["a multibulk count line of 64 KiB without a newline waits; its newline then makes it invalid", steps(`*${"1".repeat(inlineBytesMax - 1)}`, "\r\n")],
  ["a multibulk count line past 64 KiB without a newline is too big", steps(`*${"1".repeat(inlineBytesMax)}`)],
  ["a bulk length line past 64 KiB without a newline is too big", steps(`*1\r\n$${"1".repeat(inlineBytesMax)}`)],
];

const inline: [string, Step[]][] = [
  ["an unclosed double quote", steps('SET k "abc\r\n')],
  ["an unclosed single quote", steps("SET k 'abc\r\n")],
  ["a closing quote followed by more text", steps('SET k "a"b\r\n')],
  ["a double-quoted argument next to a single-quoted one", steps(`ECHO "a"'b'\r\n`)],
  ['double quotes with \\n \\r \\t \\b \\a \\\\ \\" and \\xHH escapes', steps('SET inline:dq "a\\x41\\n\\r\\t\\b\\a\\\\\\"z"\r\nGET inline:dq\r\n')],
  ["a bad \\x escape and an unknown escape inside double quotes", steps('ECHO "\\xZZ\\q"\r\n')],
  ["single quotes: only \\' is an escape", steps("SET inline:sq 'it\\'s \\n'\r\nGET inline:sq\r\n")],
  ["empty quoted arguments", steps(`ECHO ""\r\nECHO ''\r\n`)],
  ["runs of spaces and tabs between arguments", steps("  ECHO \t  a  \t\r\n")],
  ["an inline command ended by LF alone, and one with a CR inside", steps("PING\nECHO a\rb\r\n")],
  ["a NUL byte before the newline", steps("PI\0NG\r\n")],
  ["too many arguments for the command", steps('ECHO "a" "b"\r\n')],
];

const empties: [string, Step[]][] = [
  ["empty lines and blank lines are skipped", steps("\r\n\n   \r\n\t\r\nPING\r\n")],
  ["*0 and *-1 are skipped", steps("*0\r\n*-1\r\n*-5\r\nPING\r\n")],
  ["an empty bulk as the command name", steps("*1\r\n$0\r\n\r\n")],
  ["the two bytes after a bulk are skipped unread", steps("*1\r\n$4\r\nPINGxy*1\r\n$4\r\nPING\r\n")],
  ["QUIT in a pipeline: its OK is sent, the rest dropped, the connection closed", steps("PING\r\nQUIT\r\nPING\r\n")],
];

// Every case runs against svc with each of its two request parsers (--resp-parser).
describe.each(["ts", "native"])("svc kv with the %s RESP parser", (parser) => {
  beforeAll(async () => {
    kv = await startKv(["--resp-parser", parser]);
    // The previous parser's run left keys in the shared redis-server; the new svc starts empty.
    await observe(redis.port, [{ bytes: encodeCommand(["FLUSHALL"]) }]);
  });

  afterAll(async () => {
    await kv?.stop();
  });

  describe("protocol errors: the same error reply and the same close as redis-server", () => {
    for (const [name, s] of malformed) test.concurrent(name, () => sameAsRedis(s).then(() => undefined));
  });

  describe("limits: at the limit the server waits, one past it the request is refused", () => {
    for (const [name, s] of atLimits) test.concurrent(name, () => sameAsRedis(s).then(() => undefined));

    test("a multibulk count past Redis 6's 1024*1024 limit is accepted and the command runs", async () => {
      // Redis 7 dropped the old limit of 1048576 arguments; a command with 1048577 runs.
      const count = 1024 * 1024 + 1;
      const args = Buffer.from("$1\r\nx\r\n".repeat(count - 2), "latin1");
      // A million arguments take a while to read and run: the server is given seconds of
      // silence before its answer is taken to be none.
      const observed = await sameAsRedis([
        { bytes: `*${count}\r\n$5\r\nRPUSH\r\n$10\r\nlimit:list\r\n` },
        { bytes: args, quietMs: millionArgumentsQuietMs },
        { bytes: encodeCommand(["DEL", "limit:list"]) },
      ]);
      expect(observed.at(-1)).toEqual({ replies: `:${count - 2}\r\n:1\r\n`, closed: false });
    });
  });

  describe("inline commands: quoting and escapes", () => {
    for (const [name, s] of inline) test.concurrent(name, () => sameAsRedis(s).then(() => undefined));
  });

  describe("empty requests", () => {
    for (const [name, s] of empties) test.concurrent(name, () => sameAsRedis(s).then(() => undefined));
  });

  /** A mix of everything a pipeline carries: writes, reads, errors, inline and binary data. */
  function pipelineOf(count: number): Buffer {
    const parts: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      const key = `pipe:${i % 97}`;
      switch (i % 10) {
        case 0:
          parts.push(encodeCommand(["SET", key, `v${i}`]));
          break;
        case 1:
          parts.push(encodeCommand(["GET", key]));
          break;
        case 2:
          parts.push(encodeCommand(["INCR", "pipe:counter"]));
          break;
        case 3:
          parts.push(encodeCommand(["APPEND", key, "\r\n\0\xff"]));
          break;
        case 4:
          parts.push(Buffer.from(`ECHO "inline ${i}"\r\n`, "latin1"));
          break;
        case 5:
          parts.push(encodeCommand(["NOSUCHCOMMAND", key]));
          break;
        case 6:
          parts.push(encodeCommand(["GET"]));
          break;
        case 7:
          parts.push(encodeCommand(["INCR", key]));
          break;
        case 8:
          parts.push(Buffer.from("*0\r\n\r\n", "latin1"));
          break;
        default:
          parts.push(encodeCommand(["RPUSH", "pipe:list", key]), encodeCommand(["LLEN", "pipe:list"]));
      }
    }
    return Buffer.concat(parts);
  }

  describe("pipelining and fragmentation", () => {
    test("5000 mixed commands in one write get the same replies, in order", async () => {
      const observed = await sameAsRedis([{ bytes: encodeCommand(["DEL", "pipe:counter", "pipe:list"]) }, { bytes: pipelineOf(5000) }]);
      expect(observed[1]!.replies.length).toBeGreaterThan(50_000);
    });

    test("a pipeline of commands written one byte per write gets the same replies", async () => {
      const stream = Buffer.concat([
        encodeCommand(["SET", "frag:k", "a\r\nb\0c"]),
        Buffer.from('GET "frag:k"\r\n\r\n*0\r\n', "latin1"),
        encodeCommand(["APPEND", "frag:k", "xyz"]),
        Buffer.from("STRLEN frag:k\n", "latin1"),
        encodeCommand(["GET", "frag:k"]),
      ]);
      const bytes: Step[] = [...stream].map((b) => ({ bytes: Uint8Array.of(b), settle: false, gapMs: 1 }));
      bytes[bytes.length - 1] = { bytes: stream.subarray(-1) };
      const observed = await sameAsRedis(bytes);
      expect(observed.at(-1)!.closed).toBe(false);
    });

    test("a command with a 1 MiB value written in 4 KiB pieces is read whole", async () => {
      const value = Buffer.alloc(1024 * 1024, "v").toString("latin1");
      const stream = Buffer.concat([encodeCommand(["SET", "frag:big", value]), encodeCommand(["STRLEN", "frag:big"])]);
      const pieces: Step[] = [];
      for (let at = 0; at < stream.length; at += 4096) pieces.push({ bytes: stream.subarray(at, at + 4096), settle: false });
      pieces.push({ bytes: encodeCommand(["DEL", "frag:big"]) });
      const observed = await sameAsRedis(pieces);
      expect(observed[0]!.replies).toBe(`+OK\r\n:${value.length}\r\n:1\r\n`);
    });
  });

  describe("proto-max-bulk-len at run time", () => {
    // Redis applies CONFIG SET proto-max-bulk-len to the next bulk header it reads; so must we.
    test("CONFIG SET proto-max-bulk-len 1048576 makes a 1048577-byte bulk a protocol error", async () => {
      const [redisAt, redisPast, kvAt, kvPast] = await onFreshServers(parser, ["proto-max-bulk-len", "1048576"], async (port) => [
        await observe(port, steps(`*2\r\n$4\r\nECHO\r\n$${1024 * 1024}\r\n`)),
        await observe(port, steps(`*2\r\n$4\r\nECHO\r\n$${1024 * 1024 + 1}\r\n`)),
      ]);
      expect(redisAt).toEqual([{ replies: "", closed: false }]);
      expect(redisPast).toEqual([{ replies: "-ERR Protocol error: invalid bulk length\r\n", closed: true }]);
      expect(kvAt).toEqual(redisAt!);
      expect(kvPast).toEqual(redisPast!);
    });
  });

  describe("client-query-buffer-limit", () => {
    // Redis closes, without a reply, a client whose unprocessed input passes the limit: a bulk
    // still arriving, or commands piling up behind a blocked command. At the 1 GiB default that
    // takes over a gigabyte of traffic, so the test lowers the limit to Redis's minimum, 1 MiB.
    // Commands read while the client is blocked count too: they sit in Redis's query buffer.
    test("a client past client-query-buffer-limit is closed, counting a blocked client's queued commands", async () => {
      const bulk = 1536 * 1024;
      const pipelined = Buffer.concat(Array.from({ length: 20_000 }, () => encodeCommand(["SET", "k", "x".repeat(100)])));
      const [redisBulk, redisBlocked, kvBulk, kvBlocked] = await onFreshServers(parser, ["client-query-buffer-limit", "1048576"], async (port) => [
        await observe(port, [{ bytes: `*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$${bulk}\r\n` }, { bytes: Buffer.alloc(bulk - 1, "x") }]),
        await observe(port, [{ bytes: encodeCommand(["BLPOP", "qb:nothing", "0"]) }, { bytes: pipelined }]),
      ]);
      expect(redisBulk).toEqual([
        { replies: "", closed: false },
        { replies: "", closed: true },
      ]);
      expect(redisBlocked).toEqual([
        { replies: "", closed: false },
        { replies: "", closed: true },
      ]);
      expect(kvBulk).toEqual(redisBulk!);
      expect(kvBlocked).toEqual(redisBlocked!);
    });
  });
});
