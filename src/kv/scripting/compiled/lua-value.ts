/**
 * Lua 5.1's values as compiled scripts hold them in JavaScript:
 * - nil → undefined; booleans, numbers (doubles) → themselves;
 * - a string → a JavaScript string of one character per byte (latin1), as kv keeps its data;
 * - a table → a LuaTable (lua-table.ts);
 * - a function → a LuaFunction: a JavaScript function taking its arguments one by one (nil as
 *   undefined) and returning an array of its results (`noValues` for none).
 *
 * A compiled script runs only while it does what Lua would do, the same way: at anything whose
 * outcome it does not reproduce exactly — an error of any kind, a metatable, a time or memory
 * limit near — it throws LuaBail, and the script runs again from its start on the Lua engine,
 * its commands so far answered from what they answered the first time (compiled-run.ts).
 */
import type { LuaTable } from "./lua-table.ts";

/** A library table (LibraryTable, below) is a table to scripts, but read only. */
export type LuaValue = undefined | boolean | number | string | LuaTable | LibraryTable | LuaFunction;
export type LuaFunction = (...args: LuaValue[]) => LuaValue[];

/** A function's results when it has none (never changed: read only). */
export const noValues: LuaValue[] = [];

/** Thrown where a compiled script cannot go on exactly as Lua would; `why` is for logs and tests. */
export class LuaBail extends Error {
  constructor(readonly why: string) {
    super(`compiled script left to Lua: ${why}`);
  }
}

/** Throws LuaBail (an expression, for generated code and library functions). */
export function bail(why: string): never {
  throw new LuaBail(why);
}

/**
 * A library table as scripts see one (`string`, `redis`, `cjson` …): read only, as Redis 7.0
 * makes them, so a compiled script may bind `string.sub` or `redis.call` once, when it is
 * compiled. Writing into one, iterating one or passing one where a table is taken bails (Lua
 * answers those with its errors or its own order).
 */
export class LibraryTable {
  private readonly fields: Map<string, LuaValue>;

  constructor(
    readonly name: string,
    fields: Record<string, LuaValue>,
  ) {
    this.fields = new Map(Object.entries(fields));
  }

  has(name: string): boolean {
    return this.fields.has(name);
  }

  /** The field `key`; bails on one not written here (Lua has it, or answers nil where this cannot be sure). */
  get(key: LuaValue): LuaValue {
    const value = typeof key === "string" ? this.fields.get(key) : undefined;
    return value === undefined ? bail(`${this.name}.${String(key)}, not in the compiled library`) : value;
  }
}
