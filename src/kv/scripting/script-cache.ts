/**
 * The scripts EVAL and SCRIPT LOAD have given the server, compiled in one Lua 5.1 state (the
 * native LuaScripts) and named by the SHA-1 of their text, as in Redis. Like Redis 7, the cache
 * lives in memory only: the append-only file holds what scripts did (their commands), not the
 * scripts, so after a restart EVALSHA answers NOSCRIPT until a client loads the script again.
 */
import { nativeAddon, type NativeLuaScripts } from "../../native/addon.ts";
import { KvError } from "../errors.ts";

/** The SHA-1 of `body` (latin1 bytes), 40 hex digits in lower case. */
export function scriptSha(body: string): string {
  return new Bun.CryptoHasher("sha1").update(Buffer.from(body, "latin1")).digest("hex");
}

/**
 * Memory all scripts together may hold in their Lua state. Redis sets no bound, and a script
 * building a table without end takes the server down; past this one the script fails alone, with
 * Lua's "not enough memory".
 */
export const luaMemoryBytesMax = 1024 * 1024 * 1024;

export class ScriptCache {
  private lua: NativeLuaScripts = new nativeAddon.LuaScripts(luaMemoryBytesMax);
  /** Scripts kept, and their bytes (INFO's used_memory_scripts_eval). */
  private count = 0;
  bodyBytes = 0;

  get size(): number {
    return this.count;
  }

  /** Bytes the Lua state holds, scripts and all (INFO's used_memory_lua). */
  get luaBytes(): number {
    return this.lua.usedMemory();
  }

  /** Compiles and keeps `body` unless it is kept already; returns its SHA-1. */
  load(body: string): string {
    const sha = scriptSha(body);
    if (this.lua.has(sha)) return sha;
    const error = this.lua.load(sha, Buffer.from(body, "latin1"));
    if (error !== null) throw new KvError(`ERR Error compiling script (new function): ${error}`);
    this.count++;
    this.bodyBytes += body.length;
    return sha;
  }

  /** Whether a script is kept under `sha` (any case). */
  has(sha: string): boolean {
    return this.lua.has(sha.toLowerCase());
  }

  /** Forgets every script (SCRIPT FLUSH), starting a fresh Lua state as Redis does. */
  flush(): void {
    this.lua = new nativeAddon.LuaScripts(luaMemoryBytesMax);
    this.count = 0;
    this.bodyBytes = 0;
  }

  /** The native state, for a run (script-run.ts). */
  get native(): NativeLuaScripts {
    return this.lua;
  }
}
