// MONITOR (src/kv/observe/monitor.ts) side by side with redis-server 7.0: one client monitors each server
// while another runs the same commands on both; the monitors see the same lines, once times and
// ports are set aside — the same commands in the same order, quoted and escaped alike, passwords
// redacted, administrative and refused commands left out, EXEC's commands shown as they run — and
// a monitoring client is refused the keyspace but may PING. The quoting is also checked alone,
// over arbitrary bytes, against the escapes' definition.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { quoted, unixMicrosText } from "../../../src/kv/observe/monitor.ts";
import { RespClient, type RespValue } from "../support/resp-client.ts";
import { redisAndKv } from "../support/side-by-side.ts";

const s = redisAndKv();
let monitors: RespClient[] = [];
let clients: RespClient[] = [];

beforeAll(async () => {
  monitors = await Promise.all([s.redis.port, s.kv.port].map((port) => RespClient.connect(port)));
  clients = await Promise.all([s.redis.port, s.kv.port].map((port) => RespClient.connect(port)));
});
afterAll(() => {
  for (const c of [...monitors, ...clients]) c.close();
});

/**
 * A monitor line without what must differ: `<time> [<db> <address>] <args>` → `[<db>] <args>`;
 * a script's command, `[<db> lua]`, keeps its "lua".
 */
function normalized(line: RespValue): string {
  const text = (line as { s: string }).s;
  const match = /^(\d+)\.(\d{6}) \[(\d+) (127\.0\.0\.1:\d+|lua)\] (.*)$/.exec(text);
  expect(match).not.toBeNull();
  expect(Math.abs(Number(match![1]) - Date.now() / 1000)).toBeLessThan(60);
  return `[${match![3]}${match![4] === "lua" ? " lua" : ""}] ${match![5]}`;
}

describe("MONITOR, side by side with redis-server", () => {
  test("the monitors see the same commands, quoted alike", async () => {
    expect(await Promise.all(monitors.map((m) => m.call("MONITOR")))).toEqual([{ s: "OK" }, { s: "OK" }]);
    const commands = [
      ["SET", "a", "b"],
      ["GET", "a"],
      ["CONFIG", "GET", "maxmemory"],
      ["SLOWLOG", "LEN"],
      ["AUTH", "x"],
      ["MULTI"],
      ["SET", "x", "1"],
      ["GET", "x"],
      ["EXEC"],
      ["SELECT", "1"],
      ["SET", "y", 'a\nb\u0001\u00ff"q\\ \t\r'],
      ["PING"],
      ["NOPE"],
      ["GET"],
      ["HELLO", "2", "AUTH", "default", "pw"],
      ["CLIENT", "SETNAME", "me"],
      ["ECHO", "hi"],
      ["DEL", "a", "x", "y"],
      ["SELECT", "0"],
      ["EVAL", "redis.call('set', 'e', '1') return redis.call('del', 'e')", "0"],
      ["ECHO", "last"],
    ];
    const replies = await Promise.all(clients.map((c) => c.pipeline(commands)));
    expect(replies[1]!.length).toBe(replies[0]!.length);
    const seen = await Promise.all(
      monitors.map(async (m) => {
        const lines: string[] = [];
        while (lines.at(-1) !== '[0] "ECHO" "last"') lines.push(normalized(await m.read()));
        return lines;
      }),
    );
    expect(seen[1]).toEqual(seen[0]!);
    expect(seen[1]).toEqual([
      '[0] "SET" "a" "b"',
      '[0] "GET" "a"',
      '[0] "AUTH" "(redacted)"',
      '[0] "MULTI"',
      '[0] "SET" "x" "1"',
      '[0] "GET" "x"',
      '[0] "EXEC"',
      '[1] "SELECT" "1"',
      '[1] "SET" "y" "a\\nb\\x01\\xff\\"q\\\\ \\t\\r"',
      '[1] "PING"',
      '[1] "HELLO" "2" "AUTH" "(redacted)" "(redacted)"',
      '[1] "CLIENT" "SETNAME" "me"',
      '[1] "ECHO" "hi"',
      '[1] "DEL" "a" "x" "y"',
      '[0] "SELECT" "0"',
      `[0] "EVAL" "redis.call('set', 'e', '1') return redis.call('del', 'e')" "0"`,
      '[0 lua] "set" "e" "1"',
      '[0 lua] "del" "e"',
      '[0] "ECHO" "last"',
    ]);
  });

  test("a monitoring client may PING (and sees it) but not touch the keyspace; MONITOR again is ignored", async () => {
    const replies = await Promise.all(
      monitors.map(async (m) => {
        const [get, ping] = await m.pipeline([["GET", "a"], ["PING"]]);
        const pingShown = normalized(await m.read());
        // MONITOR again answers nothing: the next reply is the PING's.
        m.writeRaw("*1\r\n$7\r\nMONITOR\r\n*1\r\n$4\r\nPING\r\n");
        return [get, ping, pingShown, await m.read(), normalized(await m.read())];
      }),
    );
    expect(replies[1]).toEqual(replies[0]!);
    expect(replies[1]).toEqual([{ e: "ERR Replica can't interact with the keyspace" }, { s: "PONG" }, '[0] "PING"', { s: "PONG" }, '[0] "PING"']);
  });

  test("MONITOR inside EXEC is refused; RESET ends monitoring; CLIENT LIST flags a monitor O", async () => {
    const replies = await Promise.all(
      [s.redis.port, s.kv.port].map(async (port) => {
        const c = await RespClient.connect(port);
        const inExec = await c.pipeline([["MULTI"], ["MONITOR"], ["EXEC"]]);
        await c.call("MONITOR");
        const flags = /flags=(\w+)/.exec((await clients[port === s.redis.port ? 0 : 1]!.call("CLIENT", "LIST")) as string);
        const listed = ((await clients[port === s.redis.port ? 0 : 1]!.call("CLIENT", "LIST")) as string).split("\n").some((l) => l.includes("flags=O"));
        const afterReset = await c.pipeline([["RESET"], ["SET", "r", "1"], ["DEL", "r"]]);
        c.close();
        return [inExec, flags !== null, listed, afterReset];
      }),
    );
    expect(replies[1]).toEqual(replies[0]!);
    expect(replies[1]![0]).toEqual([{ s: "OK" }, { s: "QUEUED" }, [{ e: "ERR MONITOR isn't allowed for DENY BLOCKING client" }]]);
    expect(replies[1]![2]).toBe(true);
    expect(replies[1]![3]).toEqual([{ s: "RESET" }, { s: "OK" }, 1n]);
  });
});

describe("quoting", () => {
  test("every byte is printable as itself, an escape, or \\xHH, and the quoted text decodes back", () => {
    const unescaped = (text: string) =>
      text
        .slice(1, -1)
        .replace(/\\(x[0-9a-f]{2}|.)/g, (_, e: string) =>
          e[0] === "x"
            ? String.fromCharCode(parseInt(e.slice(1), 16))
            : (({ n: "\n", r: "\r", t: "\t", a: "\u0007", b: "\b" } as Record<string, string>)[e] ?? e),
        );
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 }), (arg) => {
        const text = quoted(arg);
        expect(text).toMatch(/^"[\x20-\x7e]*"$/);
        expect(unescaped(text)).toBe(arg);
      }),
    );
  });

  test("times are seconds and six digits of microseconds", () => {
    expect(unixMicrosText(1_795_756_597_000_042)).toBe("1795756597.000042");
    expect(unixMicrosText(1_000_000)).toBe("1.000000");
  });
});
