/**
 * Redis 7's functions: libraries of Lua code loaded by FUNCTION LOAD, whose code registers named
 * functions that FCALL runs. They live in a Lua state of their own (lua-state.ts), apart from
 * EVAL's scripts, as in Redis; unlike scripts they are data — the append-only file records
 * FUNCTION LOAD, DELETE and FLUSH, and a rewrite writes every library's FUNCTION LOAD first.
 *
 * A library's code starts with its metadata, `#!lua name=<library>`, read here as Redis 7.0
 * reads it, with its errors; the code is then run by the native side (native/script), which
 * checks the registrations. Once loaded, the library is also compiled to JavaScript (compiled/,
 * as EVAL's scripts are), which FCALL runs first where it can; a library it does not take stays
 * on Lua.
 */
import { KvError } from "../text/errors.ts";
import { splitInlineArgs } from "../text/split-args.ts";
import { compileLibrary } from "./compiled/compiled-script.ts";
import { LuaState, type ScriptHost } from "./lua-state.ts";
import type { RunTarget } from "./run-target.ts";
import { compilesScripts } from "./script-cache.ts";
import { withoutShebang } from "./shebang.ts";

/** A registered function, as FCALL finds it and FUNCTION LIST shows it. */
export interface LibraryFunction extends RunTarget {
  name: string;
  description: string | null;
  /** The flags as registered, in their order. */
  flagNames: string[];
}

export interface Library {
  name: string;
  /** The code as loaded, metadata line and all (FUNCTION LIST WITHCODE, the rewrite). */
  code: string;
  functions: LibraryFunction[];
}

const libraryNamePattern = /^[A-Za-z0-9_]+$/;

/** The one engine, which Redis finds by name in any case. */
const luaEngineName = "lua";

/**
 * The library name `code`'s metadata line gives; throws Redis's error for missing or bad metadata.
 * Read as Redis 7.0 reads it: the line split as sdssplitargs splits (quotes and all), the engine
 * named in any case (`#!LUA`), `name=` in any case and only once, then the name checked, then the
 * engine.
 */
function libraryName(code: string): string {
  if (!code.startsWith("#!")) throw new KvError("ERR Missing library metadata");
  const end = code.indexOf("\n");
  // Redis looks for the newline with strchr, which stops at a NUL: one before it is no newline.
  const nul = code.indexOf("\0");
  if (end < 0 || (nul >= 0 && nul < end)) throw new KvError("ERR Invalid library metadata");
  const parts = splitInlineArgs(code.slice(0, end));
  if (parts === null || parts.length === 0) throw new KvError("ERR Invalid library metadata");
  const engine = parts[0]!.slice(2);
  let name: string | null = null;
  for (const part of parts.slice(1)) {
    if (part.slice(0, 5).toLowerCase() !== "name=") throw new KvError(`ERR Invalid metadata value given: ${part}`);
    if (name !== null) throw new KvError("ERR Invalid metadata value, name argument was given multiple times");
    name = part.slice(5);
  }
  if (name === null) throw new KvError("ERR Library name was not given");
  if (!libraryNamePattern.test(name)) {
    throw new KvError("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long");
  }
  if (engine.toLowerCase() !== luaEngineName) throw new KvError(`ERR Engine '${engine}' not found`);
  return name;
}

export class FunctionLibraries {
  private state = new LuaState();

  /** `loading`: what a library's redis.log lines go to while it loads. */
  constructor(private readonly loading: ScriptHost) {}

  /** Libraries by name, in the order they were loaded. */
  readonly libraries = new Map<string, Library>();
  /** Every library's functions by name in lower case (FCALL finds them in any case, as Redis does). */
  private readonly functions = new Map<string, LibraryFunction>();

  get functionCount(): number {
    return this.functions.size;
  }

  /** Bytes the functions' Lua state holds (INFO's used_memory_vm_functions). */
  get luaBytes(): number {
    return this.state.bytes;
  }

  /** The function FCALL names, or undefined. */
  get(name: string): LibraryFunction | undefined {
    return this.functions.get(name.toLowerCase());
  }

  /**
   * FUNCTION LOAD: runs `code` and keeps the library it makes, replacing one of the same name if
   * `replace`; returns the library's name. On any error nothing changes.
   */
  load(code: string, replace: boolean): string {
    const name = libraryName(code);
    const old = this.libraries.get(name);
    if (old !== undefined && !replace) throw new KvError(`ERR Library '${name}' already exists`);
    let registered: ReturnType<LuaState["loadLibrary"]>;
    const source = withoutShebang(code);
    try {
      registered = this.state.loadLibrary(Buffer.from(source, "latin1"), this.loading);
    } catch (error) {
      throw new KvError(`ERR ${(error as Error).message}`);
    }
    const clash = registered.find((f) => {
      const existing = this.functions.get(f.name.toLowerCase());
      return existing !== undefined && !(old?.functions.includes(existing) ?? false);
    });
    if (clash !== undefined) {
      this.state.unload(registered.map((f) => f.id));
      throw new KvError(`ERR Function ${clash.name} already exists`);
    }
    if (old !== undefined) this.forget(old);
    // Loaded libraries are compiled at once, not at a second run as scripts are: one is loaded
    // to be called, and loading is rare.
    const compiled = compilesScripts.on
      ? compileLibrary(
          source,
          registered.map((f) => f.name),
        )
      : null;
    const library: Library = {
      name,
      code,
      functions: registered.map((f) => ({
        name: f.name,
        description: f.description ?? null,
        flagNames: f.flags,
        kind: "function" as const,
        state: this.state,
        id: f.id,
        flags: { declared: true, noWrites: f.flags.includes("no-writes"), allowOom: f.flags.includes("allow-oom") },
        compiled: compiled?.get(f.name) ?? null,
        toCompile: null,
        timesRun: 0,
        compiledBailsInARow: 0,
      })),
    };
    this.libraries.set(name, library);
    for (const f of library.functions) this.functions.set(f.name.toLowerCase(), f);
    return name;
  }

  /** FUNCTION DELETE; throws if there is no such library. */
  delete(name: string): void {
    const library = this.libraries.get(name);
    if (library === undefined) throw new KvError("ERR Library not found");
    this.forget(library);
  }

  private forget(library: Library): void {
    this.state.unload(library.functions.map((f) => f.id));
    for (const f of library.functions) this.functions.delete(f.name.toLowerCase());
    this.libraries.delete(library.name);
  }

  /** FUNCTION FLUSH: every library gone, and a fresh Lua state. */
  flush(): void {
    this.state.close();
    this.state = new LuaState();
    this.libraries.clear();
    this.functions.clear();
  }

  /**
   * FUNCTION RESTORE: the libraries whose code is `codes` added to these — after deleting every
   * library (FLUSH), in place of those of the same name (REPLACE), or beside them, refusing a
   * name taken (APPEND). All of them or none: the result is built afresh and swapped in whole.
   */
  restore(codes: readonly string[], policy: "FLUSH" | "APPEND" | "REPLACE"): void {
    const next = new FunctionLibraries(this.loading);
    const restoredNames = new Set(codes.map((code) => libraryName(code)));
    try {
      if (policy !== "FLUSH") {
        for (const library of this.libraries.values()) {
          if (!restoredNames.has(library.name)) next.load(library.code, false);
          else if (policy === "APPEND") throw new KvError(`ERR Library ${library.name} already exists`);
        }
      }
      for (const code of codes) next.load(code, false);
    } catch (error) {
      next.state.close();
      throw error;
    }
    this.state.close();
    this.state = next.state;
    this.libraries.clear();
    this.functions.clear();
    for (const [name, library] of next.libraries) this.libraries.set(name, library);
    for (const [name, f] of next.functions) this.functions.set(name, f);
  }

  /** The commands that load every library again: the start of a rewritten append-only file. */
  loadCommands(): string[][] {
    return [...this.libraries.values()].map((library) => ["FUNCTION", "LOAD", library.code]);
  }
}
