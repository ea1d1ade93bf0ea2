/**
 * A Lua 5.1 chunk (lua-ast.ts) as JavaScript source: the text of a factory
 * `(function($o, $G, $L, $B, $D) { … return function(KEYS, ARGV) { … } })` whose result runs the
 * script once per call (compiled-script.ts makes and keeps it).
 *
 * - Lua's locals are JavaScript's `let`s, renamed (`L3_name`) so that shadowing, JavaScript's
 *   reserved words and the generated names never meet; a loop's variables are declared inside its
 *   body, so each iteration's closures capture their own, as Lua's do.
 * - A call returns an array of its results; an expression that wants one value takes `[0]`, the
 *   last of a list spreads the array.
 * - Operators go through lua-ops.ts ($o), which takes numbers and strings first and bails on
 *   everything Lua would raise an error for or hand to a metamethod.
 * - Globals: KEYS and ARGV are the function's parameters; the library's (lua-library.ts, $G) are
 *   bound once, when the factory runs; any other global read or any global write bails where it
 *   is executed (Redis raises an error there).
 * - Every loop iteration and every function entry counts down the run's budget ($B), whose end
 *   makes the run look at the clock (lua-ops.ts tick); calls nest at most `callDepthMax` deep
 *   ($D) before the run is left to Lua, which answers deep recursion with its own error.
 *
 * What it does not compile (`NotCompiled`) leaves the script on Lua for good: a table
 * constructor mixing `[k] = v` items with positional ones, whose order of stores Lua defers.
 *
 * A function library (FUNCTION LOAD's code) compiles the same way, run once to register its
 * functions (compiled-script.ts compileLibrary), with two differences: KEYS and ARGV are not
 * bound (a function gets its keys and arguments as parameters; the globals do not exist), and
 * its functions may share only those of the library's own locals that never change — ones
 * assigned once, to a constant or a function. A shared local that changes
 * (a counter, a table of state) would change in JavaScript's copy on a compiled run and in
 * Lua's on a run that bailed, and the two would part: such a library stays on Lua.
 */
import type { AssignTarget, Block, CallExpr, Expr, FunctionExpr, Stat, TableItem } from "./lua-ast.ts";
import { exactPower } from "./lua-ops.ts";
import { stringHash } from "./lua-table.ts";

/** Lua calls a compiled script may nest before it is left to Lua (whose C stack allows 200). */
export const callDepthMax = 180;

/** A chunk this compiler does not take; `why` names the construct. */
export class NotCompiled extends Error {
  constructor(readonly why: string) {
    super(`not compiled: ${why}`);
  }
}

/** The globals a script may read whose values the factory binds once ($G.get(name)); the library's own list. */
export type KnownGlobals = ReadonlySet<string>;

/** One function's emission state: its temporaries, and the signs of its zero constants. */
interface FunctionScope {
  temps: number;
  zeroSigns: number;
}

/** FunctionScope.zeroSigns: a 0 constant seen, a -0 constant seen. */
const positiveZero = 1;
const negativeZero = 2;

const binaryHelpers: Record<string, string> = {
  "+": "$o.add",
  "-": "$o.sub",
  "*": "$o.mul",
  "/": "$o.div",
  "%": "$o.mod",
  "^": "$o.pow",
  "..": "$o.concat",
  "<": "$o.lt",
  "<=": "$o.le",
  ">": "$o.gt",
  ">=": "$o.ge",
};

class Emitter {
  private ids = 0;
  private readonly scopes: Map<string, string>[] = [];
  private readonly functions: FunctionScope[] = [];
  /** Globals read, bound in the factory: name → its JavaScript constant. */
  readonly boundGlobals = new Map<string, string>();
  /** Library fields read as `lib.name`, bound in the factory: "lib.name" → constant. */
  readonly boundFields = new Map<string, string>();
  /**
   * A function library's own locals (declared outside every function), by JavaScript name:
   * whether each is fixed (assigned once, to a constant or a function) and
   * whether a function uses it. Null for a script.
   */
  readonly libraryLocals: Map<string, { fixed: boolean; used: boolean }> | null;

  constructor(
    private readonly known: KnownGlobals,
    private readonly knownFields: (library: string, name: string) => boolean,
    library: boolean,
  ) {
    this.libraryLocals = library ? new Map() : null;
  }

  chunk(body: Block): string {
    this.functions.push({ temps: 0, zeroSigns: 0 });
    this.scopes.push(
      this.libraryLocals !== null
        ? new Map()
        : new Map([
            ["KEYS", "KEYS"],
            ["ARGV", "ARGV"],
          ]),
    );
    // The chunk itself is a vararg function called with nothing.
    this.scopes.push(new Map([["...", "$va0"]]));
    const code = this.block(body, false);
    this.scopes.pop();
    this.scopes.pop();
    const scope = this.functions.pop()!;
    return `function(KEYS, ARGV) { const $va0 = $L.none; ${this.tempDecls(scope)} ${code} return $L.none; }`;
  }

  private tempDecls(scope: FunctionScope): string {
    if (scope.temps === 0) return "";
    const names: string[] = [];
    for (let i = 0; i < scope.temps; i++) names.push(`$t${i}`);
    return `let ${names.join(", ")};`;
  }

  private temp(): string {
    const scope = this.functions.at(-1)!;
    return `$t${scope.temps++}`;
  }

  /** A new local `name`; `fixed` as libraryLocals counts it, for one of a library's own. */
  private declare(name: string, fixed = false): string {
    const js = `L${this.ids++}_${name}`;
    this.scopes.at(-1)!.set(name, js);
    if (this.libraryLocals !== null && this.functions.length === 1) this.libraryLocals.set(js, { fixed, used: false });
    return js;
  }

  private lookup(name: string): string | undefined {
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const js = this.scopes[i]!.get(name);
      if (js === undefined) continue;
      if (this.libraryLocals !== null && this.functions.length > 1) {
        const shared = this.libraryLocals.get(js);
        if (shared !== undefined) shared.used = true;
      }
      return js;
    }
    return undefined;
  }

  /**
   * Whether a local initialised to `e` holds what no run can change: a constant or a function.
   * (A library's code sees only part of the `redis` table while it loads, and no other library,
   * so a value it takes from one is not what its functions would see at run time: not fixed.)
   */
  private isFixedValue(e: Expr): boolean {
    switch (e.kind) {
      case "nil":
      case "true":
      case "false":
      case "number":
      case "string":
      case "function":
        return true;
      default:
        return false;
    }
  }

  private block(stats: Block, scoped = true): string {
    if (scoped) this.scopes.push(new Map());
    let code = "";
    for (const s of stats) code += this.stat(s);
    if (scoped) this.scopes.pop();
    return code;
  }

  private stat(s: Stat): string {
    switch (s.kind) {
      case "local":
        return this.local(s.names, s.values);
      case "assign":
        return this.assign(s.targets, s.values);
      case "call":
        return `${this.call(s.call)};\n`;
      case "do":
        return `{ ${this.block(s.body)} }\n`;
      case "while":
        return `while (${this.cond(s.cond)}) { if (--$B.n < 0) $o.tick(); ${this.block(s.body)} }\n`;
      case "repeat": {
        // `until` sees the body's locals: the test is inside the body's block.
        this.scopes.push(new Map());
        let body = "";
        for (const x of s.body) body += this.stat(x);
        const test = this.cond(s.cond);
        this.scopes.pop();
        return `for (;;) { if (--$B.n < 0) $o.tick(); ${body} if (${test}) break; }\n`;
      }
      case "if": {
        let code = "";
        s.clauses.forEach((c, i) => {
          code += `${i === 0 ? "if" : " else if"} (${this.cond(c.cond)}) { ${this.block(c.body)} }`;
        });
        if (s.orElse !== null) code += ` else { ${this.block(s.orElse)} }`;
        return `${code}\n`;
      }
      case "numericFor":
        return this.numericFor(s);
      case "genericFor":
        return this.genericFor(s);
      case "function":
        return this.functionStat(s.path, s.method, s.func);
      case "localFunction": {
        const js = this.declare(s.name, true);
        return `let ${js}; ${js} = ${this.func(s.func)};\n`;
      }
      case "return":
        return this.returnStat(s.values);
      case "break":
        return "break;\n";
    }
  }

  private returnStat(values: Expr[]): string {
    const inFunction = this.functions.length > 1;
    const list = this.multiList(values);
    return inFunction ? `return ($D.n--, ${list});\n` : `return ${list};\n`;
  }

  private local(names: string[], values: Expr[]): string {
    if (names.length === 1 && values.length === 1) {
      const v = this.expr(values[0]!);
      return `let ${this.declare(names[0]!, this.isFixedValue(values[0]!))} = ${v};\n`;
    }
    // The values are emitted first: the new names are not theirs to see.
    const { setup, items } = this.spreadValues(values, names.length);
    const fixed = (i: number) => names.length === values.length && this.isFixedValue(values[i]!);
    const decls = names.map((n, i) => `${this.declare(n, fixed(i))} = ${items[i]}`);
    return `${setup}let ${decls.join(", ")};\n`;
  }

  /**
   * `values` evaluated in order, adjusted to `count`: `setup` statements that evaluate them into
   * temporaries, and the `count` expressions that read them.
   */
  private spreadValues(values: Expr[], count: number): { setup: string; items: string[] } {
    let setup = "";
    const items: string[] = [];
    values.forEach((v, i) => {
      const last = i === values.length - 1;
      if (last && isMulti(v) && items.length < count) {
        const t = this.temp();
        setup += `${t} = ${this.multi(v)};\n`;
        for (let k = 0; items.length < count; k++) items.push(`${t}[${k}]`);
        return;
      }
      const t = this.temp();
      setup += `${t} = ${this.expr(v)};\n`;
      items.push(t);
    });
    while (items.length < count) items.push("undefined");
    return { setup, items: items.slice(0, count) };
  }

  private assign(targets: AssignTarget[], values: Expr[]): string {
    if (targets.length === 1 && values.length === 1) return `${this.store(targets[0]!, this.expr(values[0]!))};\n`;
    // Lua evaluates the targets' tables and keys, then the values, then stores right to left.
    let setup = "";
    const places = targets.map((t) => {
      if (t.kind === "name") return t;
      const object = this.temp();
      const key = this.temp();
      setup += `${object} = ${this.expr(t.object)}; ${key} = ${this.expr(t.key)};\n`;
      return { kind: "place" as const, object, key };
    });
    const { setup: valueSetup, items } = this.spreadValues(values, targets.length);
    setup += valueSetup;
    for (let i = places.length - 1; i >= 0; i--) {
      const p = places[i]!;
      setup += p.kind === "name" ? `${this.store(p, items[i]!)};\n` : `$o.setIndex(${p.object}, ${p.key}, ${items[i]});\n`;
    }
    return setup;
  }

  private store(t: AssignTarget, value: string): string {
    if (t.kind === "name") {
      const local = this.lookup(t.name);
      if (local === undefined || local === "KEYS" || local === "ARGV") return `($o.bailGlobalSet(${JSON.stringify(t.name)}), ${value})`;
      const shared = this.libraryLocals?.get(local);
      if (shared !== undefined) shared.fixed = false;
      return `${local} = ${value}`;
    }
    if (t.key.kind === "string") return `$o.setFieldHashed(${this.expr(t.object)}, ${hashedName(t.key.value)}, ${value})`;
    return `$o.setIndex(${this.expr(t.object)}, ${this.expr(t.key)}, ${value})`;
  }

  private numericFor(s: Extract<Stat, { kind: "numericFor" }>): string {
    const v = this.temp();
    const limit = this.temp();
    const step = this.temp();
    const constantStep = s.step === null ? 1 : s.step.kind === "number" ? s.step.value : null;
    let code = `${v} = $o.forNumber(${this.expr(s.start)}); ${limit} = $o.forNumber(${this.expr(s.limit)}); `;
    code += `${step} = ${s.step === null ? "1" : `$o.forNumber(${this.expr(s.step)})`};\n`;
    const test = constantStep === null ? `(${step} > 0 ? ${v} <= ${limit} : ${v} >= ${limit})` : constantStep > 0 ? `${v} <= ${limit}` : `${v} >= ${limit}`;
    this.scopes.push(new Map());
    const name = this.declare(s.name);
    const body = this.block(s.body);
    this.scopes.pop();
    return `${code}for (; ${test}; ${v} += ${step}) { if (--$B.n < 0) $o.tick(); let ${name} = ${v}; ${body} }\n`;
  }

  private genericFor(s: Extract<Stat, { kind: "genericFor" }>): string {
    const f = this.temp();
    const state = this.temp();
    const control = this.temp();
    const step = this.temp();
    const { setup, items } = this.spreadValues(s.exprs, 3);
    let code = `${setup}${f} = ${items[0]}; ${state} = ${items[1]}; ${control} = ${items[2]};\n`;
    this.scopes.push(new Map());
    const names = s.names.map((n) => this.declare(n));
    const body = this.block(s.body);
    this.scopes.pop();
    const advance = `${step} = $o.callee(${f})(${state}, ${control});`;
    const bind = names.map((n, i) => `let ${n} = ${step}[${i}];`).join(" ");
    code += `for (;;) { if (--$B.n < 0) $o.tick(); ${advance} if (${step}[0] === undefined) break; ${control} = ${step}[0]; ${bind} ${body} }\n`;
    return code;
  }

  private functionStat(path: string[], method: string | null, func: FunctionExpr): string {
    const fn = this.func(func);
    if (path.length === 1 && method === null) return `${this.store({ kind: "name", name: path[0]!, line: func.line }, fn)};\n`;
    let object = this.name(path[0]!);
    const keys = method === null ? path.slice(1) : [...path.slice(1), method];
    for (const k of keys.slice(0, -1)) object = `$o.fieldHashed(${object}, ${hashedName(k)})`;
    return `$o.setFieldHashed(${object}, ${hashedName(keys.at(-1)!)}, ${fn});\n`;
  }

  private func(f: FunctionExpr): string {
    this.functions.push({ temps: 0, zeroSigns: 0 });
    this.scopes.push(new Map());
    const params = f.params.map((p) => this.declare(p));
    if (f.isVararg) {
      this.scopes.at(-1)!.set("...", "$va");
      params.push("...$va");
    }
    const body = this.block(f.body, false);
    this.scopes.pop();
    const scope = this.functions.pop()!;
    const entry = `if (++$D.n > ${callDepthMax}) $o.tooDeep(); if (--$B.n < 0) $o.tick();`;
    return `(function(${params.join(", ")}) { ${entry} ${this.tempDecls(scope)} ${body} $D.n--; return $L.none; })`;
  }

  /** A condition as a JavaScript boolean. */
  private cond(e: Expr): string {
    if (e.kind === "binary" && ["==", "~=", "<", "<=", ">", ">="].includes(e.op)) return this.expr(e);
    if (e.kind === "unary" && e.op === "not") return this.expr(e);
    if (e.kind === "true") return "true";
    return `$o.truthy(${this.expr(e)})`;
  }

  /** One value of `e`. */
  expr(e: Expr): string {
    switch (e.kind) {
      case "nil":
        return "undefined";
      case "true":
        return "true";
      case "false":
        return "false";
      case "number":
        return this.constant(e.value);
      case "string":
        return JSON.stringify(e.value);
      case "vararg":
        return `${this.vararg()}[0]`;
      case "function":
        return this.func(e);
      case "table":
        return this.table(e.items);
      case "binary": {
        const folded = foldedNumber(e);
        if (folded !== null) return this.constant(folded);
        return this.binary(e.op, e.left, e.right);
      }
      case "unary": {
        const folded = foldedNumber(e);
        if (folded !== null) return this.constant(folded);
        const x = this.expr(e.operand);
        if (e.op === "not") return `!$o.truthy(${x})`;
        return e.op === "-" ? `$o.unm(${x})` : `$o.len(${x})`;
      }
      case "name":
        return this.name(e.name);
      case "index":
        if (e.key.kind === "string") return this.field(e.object, e.key.value);
        return `$o.index(${this.expr(e.object)}, ${this.expr(e.key)})`;
      case "call":
      case "method":
        return `${this.call(e)}[0]`;
      case "paren":
        return this.expr(e.expr);
    }
  }

  /**
   * A number constant. Lua keeps one slot per value in a function's constants, 0 and -0 being
   * one value, so the sign of a zero is the sign of the function's first zero constant, in the
   * order Lua's code generator adds them — which this compiler does not follow: a function with
   * zeros of both signs is not compiled.
   */
  private constant(n: number): string {
    if (n === 0) {
      const scope = this.functions.at(-1)!;
      scope.zeroSigns |= Object.is(n, -0) ? negativeZero : positiveZero;
      if (scope.zeroSigns === (positiveZero | negativeZero)) throw new NotCompiled("a function with constants 0 and -0");
      return Object.is(n, -0) ? "-0" : "0";
    }
    return Number.isFinite(n) ? `(${n})` : n > 0 ? "Infinity" : "-Infinity";
  }

  private field(object: Expr, name: string): string {
    // A library's function, bound once: `redis.call`, `string.sub` …
    if (object.kind === "name" && this.lookup(object.name) === undefined && this.known.has(object.name) && this.knownFields(object.name, name)) {
      const key = `${object.name}.${name}`;
      let js = this.boundFields.get(key);
      if (js === undefined) {
        js = `F${this.boundFields.size}_${object.name}_${name}`;
        this.boundFields.set(key, js);
      }
      return js;
    }
    return `$o.fieldHashed(${this.expr(object)}, ${hashedName(name)})`;
  }

  private vararg(): string {
    const js = this.lookup("...");
    if (js === undefined) throw new NotCompiled("`...` outside a vararg function");
    return js;
  }

  private name(name: string): string {
    const local = this.lookup(name);
    if (local !== undefined) return local;
    if (!this.known.has(name)) return `$o.bailGlobal(${JSON.stringify(name)})`;
    let js = this.boundGlobals.get(name);
    if (js === undefined) {
      js = `G_${name}`;
      this.boundGlobals.set(name, js);
    }
    return js;
  }

  private binary(op: string, left: Expr, right: Expr): string {
    const a = this.expr(left);
    const b = this.expr(right);
    if (op === "==") return `(${a} === ${b})`;
    if (op === "~=") return `(${a} !== ${b})`;
    if (op === "and" || op === "or") {
      const t = this.temp();
      const falsy = `((${t} = ${a}) === undefined || ${t} === false)`;
      return op === "and" ? `(${falsy} ? ${t} : ${b})` : `(${falsy} ? ${b} : ${t})`;
    }
    return `${binaryHelpers[op]!}(${a}, ${b})`;
  }

  /** A table constructor, storing as Lua's OP_NEWTABLE, SETTABLE and SETLIST do. */
  private table(items: TableItem[]): string {
    if (items.length === 0) return "new $L.LuaTable(0, 0)";
    const positional = items.filter((i) => i.kind === "positional");
    const keyed = items.some((i) => i.kind === "keyed");
    if (keyed && positional.length > 0) throw new NotCompiled("a table constructor mixing [k] = v with positional items");
    const last = items.at(-1)!;
    const trailingMulti = last.kind === "positional" && isMulti(last.value);
    const arrayCount = positional.length - (trailingMulti ? 1 : 0);
    const t = this.temp();
    let code = `(${t} = $L.LuaTable.forConstructor(${arrayCount}, ${items.length - positional.length})`;
    let index = 0;
    for (const item of items) {
      if (item === last && trailingMulti) {
        code += `, $o.setList(${t}, ${index + 1}, ${this.multi(item.value)})`;
        continue;
      }
      if (item.kind === "positional") code += `, ${t}.setInt(${++index}, ${this.expr(item.value)})`;
      else if (item.kind === "named") code += `, $o.setFieldHashed(${t}, ${hashedName(item.name)}, ${this.expr(item.value)})`;
      else code += `, $o.setIndex(${t}, ${this.expr(item.key)}, ${this.expr(item.value)})`;
    }
    return `${code}, ${t})`;
  }

  /** A call: its results' array. */
  call(c: CallExpr): string {
    const args = this.argList(c.args);
    if (c.kind === "method") {
      const t = this.temp();
      return `(${t} = ${this.expr(c.object)}, $o.callee($o.fieldHashed(${t}, ${hashedName(c.name)}))(${t}${args === "" ? "" : `, ${args}`}))`;
    }
    return `$o.callee(${this.expr(c.callee)})(${args})`;
  }

  /** Arguments: each one value, the last all of its values. */
  private argList(args: Expr[]): string {
    return args.map((a, i) => (i === args.length - 1 && isMulti(a) ? `...${this.multi(a)}` : this.expr(a))).join(", ");
  }

  /** All values of `e`, as an array. */
  private multi(e: Expr): string {
    if (e.kind === "call" || e.kind === "method") return this.call(e);
    if (e.kind === "vararg") return this.vararg();
    return `[${this.expr(e)}]`;
  }

  /** A list's values as one array (return lists). */
  private multiList(values: Expr[]): string {
    if (values.length === 0) return "$L.none";
    if (values.length === 1 && isMulti(values[0]!)) return this.multi(values[0]!);
    return `[${this.argList(values)}]`;
  }
}

/**
 * The value of `e` if Lua 5.1's code generator folds it to a constant (lcode.c constfolding):
 * arithmetic and negation of number constants, through parentheses, except a division or
 * modulo by zero and a result that is NaN.
 */
function foldedNumber(e: Expr): number | null {
  if (e.kind === "number") return e.value;
  if (e.kind === "paren") return foldedNumber(e.expr);
  if (e.kind === "unary" && e.op === "-") {
    const v = foldedNumber(e.operand);
    return v === null ? null : -v;
  }
  if (e.kind !== "binary") return null;
  const a = foldedNumber(e.left);
  if (a === null) return null;
  const b = foldedNumber(e.right);
  if (b === null) return null;
  let r: number;
  switch (e.op) {
    case "+":
      r = a + b;
      break;
    case "-":
      r = a - b;
      break;
    case "*":
      r = a * b;
      break;
    case "/":
      if (b === 0) return null;
      r = a / b;
      break;
    case "%":
      if (b === 0) return null;
      r = a - Math.floor(a / b) * b;
      break;
    case "^": {
      // Folded only where the result is exact: elsewhere Lua's folding used C's pow, whose last
      // bit the run's bail leaves Lua to compute.
      const exact = exactPower(a, b);
      if (exact === null) return null;
      r = exact;
      break;
    }
    default:
      return null;
  }
  return Number.isNaN(r) ? null : r;
}

/** A constant field name and its Lua string hash, as a call's two arguments. */
function hashedName(name: string): string {
  return `${JSON.stringify(name)}, ${stringHash(name)}`;
}

function isMulti(e: Expr): boolean {
  return e.kind === "call" || e.kind === "method" || e.kind === "vararg";
}

/**
 * The factory's source for `chunk`. `known` are the globals the library has; `knownField(lib,
 * name)` whether library `lib` has field `name`. `library`: the chunk is a function library's
 * code (see the top of this file).
 */
export function compileChunk(chunk: Block, known: KnownGlobals, knownField: (library: string, name: string) => boolean, library = false): string {
  const emitter = new Emitter(known, knownField, library);
  const main = emitter.chunk(chunk);
  for (const shared of emitter.libraryLocals?.values() ?? []) {
    if (shared.used && !shared.fixed) throw new NotCompiled("a library's local that its functions share and that changes");
  }
  let bindings = "";
  for (const [name, js] of emitter.boundGlobals) bindings += `const ${js} = $G.get(${JSON.stringify(name)});\n`;
  for (const [key, js] of emitter.boundFields) {
    const [library, name] = key.split(".") as [string, string];
    bindings += `const ${js} = $G.get(${JSON.stringify(library)}).get(${JSON.stringify(name)});\n`;
  }
  return `(function($o, $G, $L, $B, $D) {\n"use strict";\n${bindings}return ${main};\n})`;
}
