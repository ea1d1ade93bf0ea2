/**
 * One native Lua state (native/script) and the mailbox its scripts' commands and replies cross
 * in. EVAL's scripts live in one (script-cache.ts), FUNCTION's libraries in another
 * (function-libraries.ts), as in Redis; both run through here.
 */
import { nativeAddon, type NativeLuaScripts, type RegisteredFunction } from "../../native/addon.ts";
import type { Latin1Buffer } from "../resp/write-bytes.ts";
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

/** What a running script's commands and log lines go to (script-run.ts). */
export interface ScriptHost {
  /**
   * Runs one command, its words packed at the start of `words` (the mailbox, or a buffer they
   * fill); writes its RESP2 reply at the start of `mailbox` and returns its length × 2, + 1 if
   * the command changed data — or, if the reply does not fit, returns the changed-data byte and
   * the reply in a buffer of their own.
   */
  call(words: Buffer, inMailbox: boolean, mailbox: Latin1Buffer): number | Uint8Array;
  /** A redis.log line: the level byte, then the text. */
  log(line: Buffer): void;
}

/** A script's reply: RESP2 in `bytes[0, end)`, and whether it is an error already counted (its command's). */
export interface ScriptReply {
  bytes: Buffer;
  end: number;
  counted: boolean;
}

export class LuaState {
  private readonly lua: NativeLuaScripts = new nativeAddon.LuaScripts(luaMemoryBytesMax);
  private readonly mailbox = Buffer.alloc(mailboxBytes) as Latin1Buffer;
  /** The script running now, which the state's calls reach. */
  private host: ScriptHost | null = null;

  constructor() {
    const mailbox = this.mailbox;
    this.lua.bind(
      mailbox,
      (words) => this.host!.call(words ?? mailbox, words == null, mailbox),
      (line) => this.host!.log(line),
    );
  }

  /** Bytes the state holds (INFO's used_memory_lua, used_memory_vm_functions). */
  get bytes(): number {
    return this.lua.usedMemory();
  }

  /** Compiles a script, whose SHA-1 is `sha`; returns its number. Throws Lua's compile error. */
  load(sha: string, body: Buffer): number {
    return this.lua.load(sha, body);
  }

  /**
   * Runs a library's code, `host` taking its redis.log lines; returns the functions it
   * registered. Throws Redis's error, less "ERR ".
   */
  loadLibrary(code: Buffer, host: ScriptHost): RegisteredFunction[] {
    this.host = host;
    try {
      return this.lua.loadLibrary(code);
    } finally {
      this.host = null;
    }
  }

  /** Forgets the scripts or functions numbered `ids`. */
  unload(ids: number[]): void {
    this.lua.unload(ids);
  }

  /**
   * Runs script or function `id` with its keys and arguments, `host` answering its commands. The
   * reply may be in the mailbox: use it before the next run.
   */
  run(id: number, keys: readonly string[], args: readonly string[], limitMs: number, host: ScriptHost): ScriptReply {
    const inMailbox = packWordsInto(this.mailbox, keys, args) >= 0;
    this.host = host;
    try {
      const answer = this.lua.run(id, inMailbox ? null : packWords(keys, args), keys.length, limitMs);
      if (typeof answer === "number") return { bytes: this.mailbox, end: answer >> 1, counted: (answer & 1) === 1 };
      return { bytes: answer.subarray(1), end: answer.length - 1, counted: answer[0] === 1 };
    } finally {
      this.host = null;
    }
  }
}
