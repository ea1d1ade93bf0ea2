/**
 * The scripts EVAL and SCRIPT LOAD have given the server, compiled in one Lua 5.1 state
 * (lua-state.ts) and named by the SHA-1 of their text, as in Redis. Like Redis 7, the cache lives
 * in memory only: the append-only file holds what scripts did (their commands), not the scripts,
 * so after a restart EVALSHA answers NOSCRIPT until a client loads the script again.
 *
 * The native side knows a script by a number, given when it was compiled; the SHA-1 → number map
 * is here, so a run passes a number rather than a string.
 */
import { KvError } from "../text/errors.ts";
import { sha1Hex } from "../text/sha1-hex.ts";
import { LuaState } from "./lua-state.ts";
import type { RunTarget } from "./run-target.ts";
import { type ScriptFlags, shebangFlags, withoutShebang } from "./shebang.ts";

/**
 * Whether EVAL's scripts are also compiled to JavaScript (compiled/), which runs them where it
 * can reproduce Lua exactly, and from which run: a script is compiled at its second run
 * (`fromRun` 2), so one sent once costs no compile. `SVC_KV_COMPILED_SCRIPTS=no` turns it off
 * and `=first` compiles at the first run: the tests compare both ways, and run side-by-side
 * suites (whose scripts mostly run once) on the compiled path.
 */
export const compilesScripts = {
  on: process.env.SVC_KV_COMPILED_SCRIPTS !== "no",
  fromRun: process.env.SVC_KV_COMPILED_SCRIPTS === "first" ? 1 : 2,
};

export class ScriptCache {
  private state = new LuaState();
  /** Each kept script as a run names it (its number in the Lua state, its flags), by SHA-1. */
  private readonly bySha = new Map<string, RunTarget>();
  /** The SHA-1 of every script kept, by its text: EVAL of a kept script neither hashes nor compiles it. */
  private readonly shaByBody = new Map<string, string>();
  /** Bytes of the scripts' text (INFO's used_memory_scripts_eval). */
  bodyBytes = 0;

  get size(): number {
    return this.bySha.size;
  }

  /** Bytes the Lua state holds, scripts and all (INFO's used_memory_lua). */
  get luaBytes(): number {
    return this.state.bytes;
  }

  /** Compiles and keeps `body` unless it is kept already; returns its SHA-1. */
  load(body: string): string {
    const known = this.shaByBody.get(body);
    if (known !== undefined) return known;
    const flags: ScriptFlags = shebangFlags(body);
    const sha = sha1Hex(body);
    let id: number;
    try {
      id = this.state.load(sha, Buffer.from(withoutShebang(body), "latin1"));
    } catch (error) {
      throw new KvError(`ERR Error compiling script (new function): ${(error as Error).message}`);
    }
    // Compiled at its second run, not here: a script sent once (EVAL of text made anew each
    // time) would pay for a compile it never uses.
    const toCompile = compilesScripts.on ? withoutShebang(body) : null;
    this.bySha.set(sha, { name: sha, kind: "eval", state: this.state, id, flags, compiled: null, toCompile, timesRun: 0, compiledBailsInARow: 0 });
    this.shaByBody.set(body, sha);
    this.bodyBytes += body.length;
    return sha;
  }

  /**
   * The flags of the script `body`, whether kept or not; null for a shebang Redis would refuse
   * (EVAL then answers its error when it runs).
   */
  flagsOfBody(body: string): ScriptFlags | null {
    const known = this.shaByBody.get(body);
    if (known !== undefined) return this.bySha.get(known)!.flags;
    try {
      return shebangFlags(body);
    } catch {
      return null;
    }
  }

  /** The script kept under `sha` (lower case), as a run names it; undefined if none is. */
  get(sha: string): RunTarget | undefined {
    return this.bySha.get(sha);
  }

  /** Forgets every script (SCRIPT FLUSH), starting a fresh Lua state as Redis does. */
  flush(): void {
    this.state.close();
    this.state = new LuaState();
    this.bySha.clear();
    this.shaByBody.clear();
    this.bodyBytes = 0;
  }
}
