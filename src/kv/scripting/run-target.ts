/**
 * What a script run names: a cached script or a library function, and where its code lives. The
 * script cache and the function libraries hold these; script-run.ts runs them.
 */
import type { ScriptKind } from "./busy-script.ts";
import type { LuaState } from "./lua-state.ts";
import type { ScriptFlags } from "./shebang.ts";
import type { CompiledRun } from "./compiled/compiled-script.ts";

/** A script or function as a run names it. */
export interface RunTarget {
  /** A function's name, or a script's SHA-1. */
  name: string;
  kind: ScriptKind;
  /** The Lua state that holds it, and its number there. */
  state: LuaState;
  id: number;
  /** What it declared (a shebang, a function's flags). */
  flags: ScriptFlags;
  /** Its JavaScript form (compiled/), run first; null for one not compiled (yet), or gone back to Lua. */
  compiled: CompiledRun | null;
  /** Its source, kept until it is compiled at its second run (script-run.ts); null once compiled or never to be. */
  toCompile: string | null;
  /** Runs so far while `toCompile` waits. */
  timesRun: number;
  /** Runs in a row whose compiled form bailed (script-run.ts). */
  compiledBailsInARow: number;
}
