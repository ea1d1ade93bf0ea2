// LuaState, the server's handle on a native Lua state, when the server's own side of a run
// fails. luaRun is an FFI call (src/native/lua-run.ts), across which no exception may be left
// pending: what the server's `call` or `log` throws must come out of the run that made it, the
// script must run none of its commands after it, and the state must serve the next run as usual.
import { afterEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { LuaState, type ScriptHost } from "../../../src/kv/scripting/lua-state.ts";
import { unpackWords } from "../../../src/kv/scripting/words.ts";

const states: LuaState[] = [];
afterEach(() => {
  for (const state of states.splice(0)) state.close();
});

function loaded(body: string): { state: LuaState; id: number } {
  const state = new LuaState();
  states.push(state);
  const sha = createHash("sha1").update(body).digest("hex");
  return { state, id: state.load(sha, Buffer.from(body)) };
}

/** The words of the run in progress, which its commands' words may refer to (as ScriptRun keeps them). */
let runArgv: string[] = [];

/** A host that answers every command `:<n>` (n counting its calls) and records each command's words. */
function countingHost(): ScriptHost & { commands: string[][]; lines: string[] } {
  const commands: string[][] = [];
  const lines: string[] = [];
  return {
    commands,
    lines,
    call(words, inMailbox, mailbox) {
      commands.push(unpackWords(words, !inMailbox, runArgv, 3));
      return mailbox.write(`:${commands.length}\r\n`, 0, "latin1");
    },
    log(line) {
      lines.push(line.toString("latin1", 1));
    },
    ask: () => 0,
  };
}

const run = (state: LuaState, id: number, host: ScriptHost, keys: string[] = [], args: string[] = []) => {
  runArgv = ["EVALSHA", "sha", String(keys.length), ...keys, ...args];
  const reply = state.run(id, runArgv, 3, keys.length, 5_000, host);
  return reply === null ? null : reply.bytes.toString("latin1", 0, reply.end);
};

describe("LuaState when the server's side throws", () => {
  test("a command that throws ends the run with its error, and the script runs no command after it", () => {
    const { state, id } = loaded("redis.call('incr', KEYS[1]) redis.call('incr', KEYS[1]) redis.call('incr', KEYS[1]) return 7");
    const host = countingHost();
    let calls = 0;
    const failing: ScriptHost = {
      ...host,
      call(words, inMailbox, mailbox) {
        if (++calls === 2) throw new Error("the server broke on the second command");
        return host.call(words, inMailbox, mailbox);
      },
    };
    expect(() => run(state, id, failing, ["k"])).toThrow("the server broke on the second command");
    expect(calls).toBe(2);
    // The state serves the next run, whole.
    const next = countingHost();
    expect(run(state, id, next, ["k"])).toBe(":7\r\n");
    expect(next.commands).toEqual([
      ["incr", "k"],
      ["incr", "k"],
      ["incr", "k"],
    ]);
  });

  test("a log line that throws ends the run with its error, and the script runs no command after it", () => {
    const { state, id } = loaded("redis.log(redis.LOG_WARNING, 'before') redis.call('set', 'a', '1') return 1");
    const host = countingHost();
    const failing: ScriptHost = {
      ...host,
      log() {
        throw new RangeError("the log is gone");
      },
    };
    expect(() => run(state, id, failing)).toThrow(RangeError);
    expect(host.commands).toEqual([]);
    const next = countingHost();
    expect(run(state, id, next)).toBe(":1\r\n");
    expect(next.lines).toEqual(["before"]);
    expect(next.commands).toEqual([["set", "a", "1"]]);
  });

  test("a script's own error is its reply, not a failure of the run", () => {
    const { state, id } = loaded("return redis.call('nosuch')");
    const host: ScriptHost = { ...countingHost(), call: (_words, _inMailbox, mailbox) => mailbox.write("-ERR unknown command\r\n", 0, "latin1") };
    expect(run(state, id, host)).toStartWith("-ERR unknown command");
  });

  test("a run in a closed state fails with the native side's error", () => {
    const { state, id } = loaded("return 1");
    state.close();
    states.splice(states.indexOf(state), 1);
    expect(() => run(state, id, countingHost())).toThrow("no Lua state is numbered");
  });
});
