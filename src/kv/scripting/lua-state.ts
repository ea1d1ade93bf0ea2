/**
 * One native Lua state (native/node/src/script.rs), known to the native side by a number. EVAL's
 * scripts live in one (script-cache.ts), FUNCTION's libraries in another (function-libraries.ts),
 * as in Redis; both run through here.
 */
import { luaBusy, luaReplyTooLong, nativeAddon, type RegisteredFunction } from "../../native/addon.ts";
import { luaFailed, luaRun } from "../../native/lua-run.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import { packWords, packWordsInto } from "./words.ts";

/**
 * Memory all scripts of a state together may hold. Redis sets no bound, and a script building a
 * table without end takes the server down; past this one the script fails alone, with Lua's "not
 * enough memory".
 */
export const luaMemoryBytesMax = 1024 * 1024 * 1024;

/**
 * Bytes of the mailbox a script's commands and their replies cross in (native/node/src/script.rs):
 * what does not fit crosses in a buffer of its own.
 */
const mailboxBytes = 256 * 1024;

/**
 * The mailbox, and the functions every state's scripts reach the server through: one of each,
 * for all states, as one script runs at a time. They hold no state, so a state nobody uses can
 * be collected (and is closed then: `unclosed`).
 */
const mailbox = Buffer.alloc(mailboxBytes) as Latin1Buffer;
/** The script running now, in whichever state, which those functions reach. */
let running: ScriptHost | null = null;
/**
 * What the server's side of a run threw (a bug: commands answer their errors), kept until the
 * native call returns and thrown then. Nothing is thrown into the native side: luaRun is an FFI
 * call, across which a pending exception would not be thrown where it returns. The native side
 * gets no answer, fails the run, and calls the server no more in it.
 */
let thrown: { error: unknown } | null = null;

/** Keeps what the server's side threw, the first of a run's throws only; answers the native side nothing. */
function keepThrown(error: unknown): undefined {
  thrown ??= { error };
  return undefined;
}

const call = (words?: Buffer) => {
  if (thrown !== null) return undefined;
  try {
    return running!.call(words ?? mailbox, words === undefined, mailbox);
  } catch (error) {
    return keepThrown(error);
  }
};
const log = (line: Buffer) => {
  try {
    running!.log(line);
  } catch (error) {
    keepThrown(error);
  }
};
nativeAddon.luaSetAsk((question, argument) => {
  try {
    return running!.ask(question, argument);
  } catch (error) {
    return keepThrown(error);
  }
});

/** Throws what the server's side of the run that just returned threw, if it did. */
function rethrowFromServer(): void {
  if (thrown === null) return;
  const { error } = thrown;
  thrown = null;
  throw error;
}

/** A reply in the mailbox, as LuaState.reply gives it. */
const mailboxReply: ScriptReply = { bytes: mailbox, end: 0, counted: false, plain: false };
/** A reply's flags (native/script/src/run.rs): an error already counted; plain RESP2. */
const replyCounted = 1;
const replyPlain = 2;
/** A state dropped without close() (an engine a test let go) is closed once collected. */
const unclosed = new FinalizationRegistry<number>((lua) => nativeAddon.luaClose(lua));

/** What a running script's commands and log lines go to (script-run.ts). */
export interface ScriptHost {
  /**
   * Runs one command, its words packed at the start of `words` (the mailbox, or a buffer they
   * fill); writes its RESP2 reply at the start of `mailbox` and returns its length — or, if the
   * reply does not fit, returns the reply in a buffer of its own.
   */
  call(words: Buffer, inMailbox: boolean, mailbox: Latin1Buffer): number | Uint8Array;
  /** A redis.log line: the level byte, then the text. */
  log(line: Buffer): void;
  /**
   * What the script asks besides: the protocol its commands reply in from now on (redis.setresp;
   * `question` luaAskSetProtocol, `argument` 2 or 3), whether its user may run a command
   * (redis.acl_check_cmd; luaAskMayRun, the command's packed words), answered luaAnswer*, or how
   * many µs it has run since its command started (luaAskElapsed; asked at its first check of
   * the time, which busy-reply-threshold is counted from).
   */
  ask(question: number, argument: number | Buffer): number;
}

/** A script's reply: RESP2 in `bytes[0, end)`, and whether it is an error already counted (its command's). */
export interface ScriptReply {
  bytes: Buffer;
  end: number;
  counted: boolean;
  /**
   * Whether it is plain RESP2 — integers, bulk strings (null among them), statuses and arrays of
   * those, no error anywhere — which a RESP2 client is sent as it is.
   */
  plain: boolean;
}

export class LuaState {
  /** The native state's number. */
  private readonly lua = nativeAddon.luaOpen(luaMemoryBytesMax, mailbox, call, log);

  constructor() {
    unclosed.register(this, this.lua, this);
  }

  /** Bytes the state holds (INFO's used_memory_lua, used_memory_vm_functions). */
  get bytes(): number {
    return nativeAddon.luaUsedMemory(this.lua);
  }

  /** Compiles a script, whose SHA-1 is `sha`; returns its number. Throws Lua's compile error. */
  load(sha: string, body: Buffer): number {
    return nativeAddon.luaLoad(this.lua, sha, body);
  }

  /**
   * Runs a library's code, `host` taking its redis.log lines; returns the functions it
   * registered. Throws Redis's error, less "ERR ".
   */
  loadLibrary(code: Buffer, host: ScriptHost): RegisteredFunction[] {
    return hosting(host, () => nativeAddon.luaLoadLibrary(this.lua, code));
  }

  /** Forgets the scripts or functions numbered `ids`. */
  unload(ids: number[]): void {
    nativeAddon.luaUnload(this.lua, ids);
  }

  /**
   * Starts script or function `id` with the words of `words` from `from` on, the first `keyCount`
   * of them its keys and the rest its arguments, `host` answering its commands. Returns its reply
   * (which may be in the mailbox: use it before the next run), or null when it ran past
   * `busyAfterMs` and stopped busy: `resume` goes on with it.
   */
  run(id: number, words: readonly string[], from: number, keyCount: number, busyAfterMs: number, host: ScriptHost): ScriptReply | null {
    if (packWordsInto(mailbox, words, from) < 0) nativeAddon.luaStageWords(this.lua, packWords(words, from));
    // hosting(), written out: this is every script's path, and a closure per run costs.
    const outer = running;
    running = host;
    let answer: number;
    try {
      answer = luaRun(this.lua, id, keyCount, busyAfterMs);
    } finally {
      running = outer;
    }
    if (answer === luaFailed || thrown !== null) failed();
    return this.reply(answer);
  }

  /** Goes on with the busy script for one more slice, killed first if `kill`; answers as `run`. */
  resume(kill: boolean, host: ScriptHost): ScriptReply | null {
    return this.reply(hosting(host, () => nativeAddon.luaResume(this.lua, kill)));
  }

  private reply(answer: number): ScriptReply | null {
    if (answer === luaBusy) return null;
    if (answer !== luaReplyTooLong) {
      // One object for every reply in the mailbox: such a reply is used before the next run.
      mailboxReply.end = answer >>> 2;
      mailboxReply.counted = (answer & replyCounted) !== 0;
      mailboxReply.plain = (answer & replyPlain) !== 0;
      return mailboxReply;
    }
    const own = nativeAddon.luaTakeReply(this.lua);
    return { bytes: own.subarray(1), end: own.length - 1, counted: (own[0]! & replyCounted) !== 0, plain: (own[0]! & replyPlain) !== 0 };
  }

  /** Closes the native state: its scripts and functions are gone (SCRIPT FLUSH, FUNCTION FLUSH). */
  close(): void {
    unclosed.unregister(this);
    nativeAddon.luaClose(this.lua);
  }
}

/**
 * Runs `f` (an N-API call) with `host` answering the running script's commands and log lines;
 * what the server's side threw is thrown in place of what `f` answers or throws.
 */
function hosting<T>(host: ScriptHost, f: () => T): T {
  const outer = running;
  running = host;
  try {
    return f();
  } finally {
    running = outer;
    rethrowFromServer();
  }
}

/** A run failed (luaFailed), or the server's side threw in it: throws what the server threw, else why the native side failed. */
function failed(): never {
  try {
    nativeAddon.luaTakeFailure();
  } finally {
    rethrowFromServer();
  }
  throw new Error("a script's run failed, and the native side does not say why");
}
