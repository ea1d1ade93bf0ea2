/**
 * The scripts EVAL and SCRIPT LOAD have given the server, compiled in one Lua 5.1 state (the
 * native LuaScripts) and named by the SHA-1 of their text, as in Redis. Like Redis 7, the cache
 * lives in memory only: the append-only file holds what scripts did (their commands), not the
 * scripts, so after a restart EVALSHA answers NOSCRIPT until a client loads the script again.
 *
 * The native side knows a script by a number, given when it was compiled; the SHA-1 → number map
 * is here, so a run passes a number rather than a string.
 */
import { nativeAddon, type NativeLuaScripts } from "../../native/addon.ts";
import { KvError } from "../errors.ts";
import type { Latin1Buffer } from "../resp/write-bytes.ts";
import { type ScriptFlags, shebangFlags, undeclared, withoutShebang } from "./shebang.ts";
import { packWords, packWordsInto } from "./words.ts";

/** The SHA-1 of `body` (latin1 bytes), 40 hex digits in lower case. */
function scriptSha(body: string): string {
  return new Bun.CryptoHasher("sha1").update(Buffer.from(body, "latin1")).digest("hex");
}

/**
 * Memory all scripts together may hold in their Lua state. Redis sets no bound, and a script
 * building a table without end takes the server down; past this one the script fails alone, with
 * Lua's "not enough memory".
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

export class ScriptCache {
  private lua!: NativeLuaScripts;
  /** Where words and replies cross to and from the Lua state (native/node/src/script.rs). */
  private mailbox!: Latin1Buffer;
  /** The script running now, which the Lua state's calls reach. */
  private host: ScriptHost | null = null;
  /** Each kept script's number in the Lua state, by SHA-1. */
  private readonly idBySha = new Map<string, number>();
  /** What each kept script declared in its shebang, by SHA-1. */
  private readonly flagsBySha = new Map<string, ScriptFlags>();
  /** The SHA-1 of every script kept, by its text: EVAL of a kept script neither hashes nor compiles it. */
  private readonly shaByBody = new Map<string, string>();
  /** Bytes of the scripts' text (INFO's used_memory_scripts_eval). */
  bodyBytes = 0;

  constructor() {
    this.start();
  }

  private start(): void {
    this.lua = new nativeAddon.LuaScripts(luaMemoryBytesMax);
    const mailbox = Buffer.alloc(mailboxBytes) as Latin1Buffer;
    this.mailbox = mailbox;
    this.lua.bind(
      mailbox,
      (words) => this.host!.call(words ?? mailbox, words == null, mailbox),
      (line) => this.host!.log(line),
    );
  }

  get size(): number {
    return this.idBySha.size;
  }

  /** Bytes the Lua state holds, scripts and all (INFO's used_memory_lua). */
  get luaBytes(): number {
    return this.lua.usedMemory();
  }

  /** Compiles and keeps `body` unless it is kept already; returns its SHA-1. */
  load(body: string): string {
    const known = this.shaByBody.get(body);
    if (known !== undefined) return known;
    const flags = shebangFlags(body);
    const sha = scriptSha(body);
    let id: number;
    try {
      id = this.lua.load(sha, Buffer.from(withoutShebang(body), "latin1"));
    } catch (error) {
      throw new KvError(`ERR Error compiling script (new function): ${(error as Error).message}`);
    }
    this.idBySha.set(sha, id);
    this.flagsBySha.set(sha, flags);
    this.shaByBody.set(body, sha);
    this.bodyBytes += body.length;
    return sha;
  }

  /** The flags the script kept under `sha` declared. */
  flagsOf(sha: string): ScriptFlags {
    return this.flagsBySha.get(sha) ?? undeclared;
  }

  /** Whether a script is kept under `sha` (lower case). */
  has(sha: string): boolean {
    return this.idBySha.has(sha);
  }

  /**
   * Runs the script kept under `sha` (the caller has checked it is) with its keys and arguments,
   * `host` answering its commands. The reply may be in the mailbox: use it before the next run.
   */
  run(sha: string, keys: readonly string[], args: readonly string[], limitMs: number, host: ScriptHost): ScriptReply {
    const inMailbox = packWordsInto(this.mailbox, keys, args) >= 0;
    this.host = host;
    try {
      const answer = this.lua.run(this.idBySha.get(sha)!, inMailbox ? null : packWords(keys, args), keys.length, limitMs);
      if (typeof answer === "number") return { bytes: this.mailbox, end: answer >> 1, counted: (answer & 1) === 1 };
      return { bytes: answer.subarray(1), end: answer.length - 1, counted: answer[0] === 1 };
    } finally {
      this.host = null;
    }
  }

  /** Forgets every script (SCRIPT FLUSH), starting a fresh Lua state as Redis does. */
  flush(): void {
    this.start();
    this.idBySha.clear();
    this.flagsBySha.clear();
    this.shaByBody.clear();
    this.bodyBytes = 0;
  }
}
