// The Lua 5.1 lexer and parser of compiled scripts (lua-lexer.ts, lua-parser.ts) against the native
// Lua 5.1: generated programs — valid ones printed from generated syntax trees, the same broken by a
// few edits, and token soup — load in both or in neither (SCRIPT LOAD is the oracle); numerals and
// string literals read as the same values; the lines the parser gives operations are those of
// Lua's runtime errors. A printer of syntax trees (fully parenthesized, and with only the
// parentheses precedence needs) checks the round trip parse(print(tree)) = tree; fixed cases check
// precedence, associativity and the shapes of calls, methods and functions; every BullMQ script
// parses; arbitrary input parses or throws LuaSyntaxError, in bounded time.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readdirSync } from "node:fs";
import type { BinaryOp, Block, Expr, FunctionExpr, Stat, TableItem, UnaryOp } from "../../../../src/kv/scripting/compiled/lua-ast.ts";
import { LuaLexer } from "../../../../src/kv/scripting/compiled/lua-lexer.ts";
import { LuaSyntaxError, parseLua, syntaxLevelsMax } from "../../../../src/kv/scripting/compiled/lua-parser.ts";
import { harness } from "../../harness.ts";

const h = harness();

/** Multiplies every property's runs: LUA_PARSER_RUNS=20 for a local hunt. */
const runScale = Number(process.env.LUA_PARSER_RUNS ?? 1);
const runs = (n: number) => ({ numRuns: Math.round(n * runScale) });

/** Whether parseLua takes the source; anything thrown but LuaSyntaxError fails the test. */
function parses(source: string): boolean {
  try {
    parseLua(source);
    return true;
  } catch (e) {
    if (e instanceof LuaSyntaxError) return false;
    throw e;
  }
}

/** Whether the native Lua loads the source (only a compile error may refuse it). */
function luaLoads(source: string): boolean {
  const reply = h.run("SCRIPT", "LOAD", source);
  if (typeof reply === "string") return true;
  expect(reply).toMatchObject({ error: expect.stringContaining("Error compiling script") });
  return false;
}

function expectSameAcceptance(source: string): void {
  const lua = luaLoads(source);
  if (parses(source) !== lua) throw new Error(`Lua ${lua ? "loads" : "refuses"} ${JSON.stringify(source)}, parseLua does not agree`);
}

// ---- printing syntax trees ----

const reserved = new Set("and break do else elseif end false for function if in local nil not or repeat return then true until while".split(" "));
const isName = (s: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s) && !reserved.has(s);

const precedence: Record<BinaryOp, number> = {
  or: 1,
  and: 2,
  "<": 3,
  ">": 3,
  "<=": 3,
  ">=": 3,
  "~=": 3,
  "==": 3,
  "..": 5,
  "+": 6,
  "-": 6,
  "*": 7,
  "/": 7,
  "%": 7,
  "^": 10,
};
const rightAssociative = (op: BinaryOp) => op === ".." || op === "^";
const unaryPrecedence = 8;

function printString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const c = ch.charCodeAt(0);
    out += c >= 32 && c < 127 && ch !== '"' && ch !== "\\" ? ch : `\\${String(c).padStart(3, "0")}`;
  }
  return `${out}"`;
}

function printNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "1e999";
  if (Number.isInteger(value) && value < 2 ** 53 && value % 3 === 0) return `0x${value.toString(16)}`;
  return String(value);
}

/** Prints trees on one line; `minimal`: only the parentheses precedence needs, else around every operation. */
class Printer {
  constructor(private readonly minimal: boolean) {}

  block(body: Block): string {
    return body.map((s) => `${this.stat(s)};`).join(" ");
  }

  private list(exprs: Expr[]): string {
    return exprs.map((e) => this.expr(e)).join(", ");
  }

  private params(f: FunctionExpr, skipSelf: boolean): string {
    const names = skipSelf ? f.params.slice(1) : f.params;
    return [...names, ...(f.isVararg ? ["..."] : [])].join(", ");
  }

  private funcBody(f: FunctionExpr, skipSelf = false): string {
    return `(${this.params(f, skipSelf)}) ${this.block(f.body)} end`;
  }

  stat(s: Stat): string {
    switch (s.kind) {
      case "local":
        return `local ${s.names.join(", ")}${s.values.length > 0 ? ` = ${this.list(s.values)}` : ""}`;
      case "assign":
        return `${s.targets.map((t) => this.expr(t)).join(", ")} = ${this.list(s.values)}`;
      case "call":
        return this.expr(s.call);
      case "do":
        return `do ${this.block(s.body)} end`;
      case "while":
        return `while ${this.expr(s.cond)} do ${this.block(s.body)} end`;
      case "repeat":
        return `repeat ${this.block(s.body)} until ${this.expr(s.cond)}`;
      case "if": {
        const clauses = s.clauses.map((c, i) => `${i === 0 ? "if" : "elseif"} ${this.expr(c.cond)} then ${this.block(c.body)}`).join(" ");
        return `${clauses}${s.orElse === null ? "" : ` else ${this.block(s.orElse)}`} end`;
      }
      case "numericFor": {
        const step = s.step === null ? "" : `, ${this.expr(s.step)}`;
        return `for ${s.name} = ${this.expr(s.start)}, ${this.expr(s.limit)}${step} do ${this.block(s.body)} end`;
      }
      case "genericFor":
        return `for ${s.names.join(", ")} in ${this.list(s.exprs)} do ${this.block(s.body)} end`;
      case "function":
        return `function ${s.path.join(".")}${s.method === null ? "" : `:${s.method}`}${this.funcBody(s.func, s.method !== null)}`;
      case "localFunction":
        return `local function ${s.name}${this.funcBody(s.func)}`;
      case "return":
        return `return ${this.list(s.values)}`;
      case "break":
        return "break";
    }
  }

  /** An expression as the object of an index or a call: a prefix expression. */
  private prefix(e: Expr): string {
    const text = this.expr(e);
    return e.kind === "name" || e.kind === "index" || e.kind === "call" || e.kind === "method" || e.kind === "paren" ? text : `(${text})`;
  }

  private args(args: Expr[]): string {
    const only = args.length === 1 ? args[0]! : null;
    if (only?.kind === "string") return printString(only.value);
    if (only?.kind === "table") return this.expr(only);
    return `(${this.list(args)})`;
  }

  private item(item: TableItem): string {
    if (item.kind === "positional") return this.expr(item.value);
    if (item.kind === "named") return `${item.name} = ${this.expr(item.value)}`;
    return `[${this.expr(item.key)}] = ${this.expr(item.value)}`;
  }

  private operand(e: Expr, parenthesize: boolean): string {
    return parenthesize ? `(${this.expr(e)})` : this.expr(e);
  }

  expr(e: Expr): string {
    switch (e.kind) {
      case "nil":
      case "true":
      case "false":
        return e.kind;
      case "vararg":
        return "...";
      case "number":
        return printNumber(e.value);
      case "string":
        return printString(e.value);
      case "function":
        return `function${this.funcBody(e)}`;
      case "table":
        return `{${e.items.map((i) => this.item(i)).join(", ")}}`;
      case "binary": {
        if (!this.minimal) return `(${this.expr(e.left)} ${e.op} ${this.expr(e.right)})`;
        const p = precedence[e.op];
        const l = e.left;
        const r = e.right;
        const leftParens =
          (l.kind === "binary" && (precedence[l.op] < p || (precedence[l.op] === p && rightAssociative(e.op)))) || (l.kind === "unary" && p > unaryPrecedence);
        const rightParens = r.kind === "binary" && (precedence[r.op] < p || (precedence[r.op] === p && !rightAssociative(e.op)));
        return `${this.operand(l, leftParens)} ${e.op} ${this.operand(r, rightParens)}`;
      }
      case "unary": {
        if (!this.minimal) return `(${e.op} ${this.expr(e.operand)})`;
        const o = e.operand;
        return `${e.op} ${this.operand(o, o.kind === "binary" && precedence[o.op] < unaryPrecedence)}`;
      }
      case "name":
        return e.name;
      case "index":
        if (e.key.kind === "string" && isName(e.key.value)) return `${this.prefix(e.object)}.${e.key.value}`;
        return `${this.prefix(e.object)}[${this.expr(e.key)}]`;
      case "call":
        return `${this.prefix(e.callee)}${this.args(e.args)}`;
      case "method":
        return `${this.prefix(e.object)}:${e.name}${this.args(e.args)}`;
      case "paren":
        return `(${this.expr(e.expr)})`;
    }
  }
}

const fullPrinter = new Printer(false);
const minimalPrinter = new Printer(true);

/**
 * A tree with its parentheses reduced to those that mean something — around a call or `...`
 * last in a list of expressions, where they cut its values to one; never doubled — as printing
 * may add others (around an operation, or an object that is not a prefix expression).
 */
function canonical<T>(x: T, tail = false): T {
  if (Array.isArray(x)) return x.map((v) => canonical(v)) as T;
  if (x === null || typeof x !== "object") return x;
  const node = x as Record<string, unknown>;
  if (node.kind === "paren") {
    const inner = canonical(node.expr) as Expr;
    const truncates = inner.kind === "call" || inner.kind === "method" || inner.kind === "vararg";
    return (tail && truncates ? { kind: "paren", expr: inner } : inner) as T;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (!Array.isArray(v)) out[k] = canonical(v);
    else if (k === "args" || k === "values" || k === "exprs") out[k] = v.map((e, i) => canonical(e, i === v.length - 1));
    else if (k === "items")
      out[k] = (v as TableItem[]).map((item, i) => ({ ...canonical(item), value: canonical(item.value, item.kind === "positional" && i === v.length - 1) }));
    else out[k] = canonical(v);
  }
  return out as T;
}

// ---- generating syntax trees ----

const names = ["a", "b", "x", "y", "self", "arg", "_", "t1", "foo", "Bar"];
const nameArb = fc.constantFrom(...names);
const binaryOps: BinaryOp[] = ["or", "and", "<", ">", "<=", ">=", "~=", "==", "..", "+", "-", "*", "/", "%", "^"];
const unaryOps: UnaryOp[] = ["not", "-", "#"];
const byteChar = fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c));
const numberArb = fc.oneof(
  fc.nat(1000),
  fc.double({ min: 0, noNaN: true }).map((n) => Math.abs(n)),
  fc.constantFrom(0.5, 1e21, 5e-324, 2 ** 53 + 2, 1.7976931348623157e308, Number.POSITIVE_INFINITY, 0.1),
);
const stringArb = fc.oneof(nameArb, fc.string({ unit: byteChar, maxLength: 6 }));

const leafExpr: fc.Arbitrary<Expr> = fc.oneof(
  fc.constantFrom<Expr>({ kind: "nil" }, { kind: "true" }, { kind: "false" }, { kind: "vararg", line: 1 }),
  numberArb.map((value): Expr => ({ kind: "number", value })),
  stringArb.map((value): Expr => ({ kind: "string", value })),
  { weight: 3, arbitrary: nameArb.map((name): Expr => ({ kind: "name", name, line: 1 })) },
);

const exprMemo = new Map<number, fc.Arbitrary<Expr>>();
const blockMemo = new Map<number, fc.Arbitrary<Block>>();

function funcArb(depth: number, withSelf: boolean): fc.Arbitrary<FunctionExpr> {
  return fc
    .tuple(fc.array(nameArb, { maxLength: 3 }), fc.boolean(), blockArb(depth - 1))
    .map(([params, isVararg, body]) => ({ kind: "function", params: withSelf ? ["self", ...params] : params, isVararg, body, line: 1, endLine: 1 }));
}

function exprArb(depth: number): fc.Arbitrary<Expr> {
  if (depth <= 0) return leafExpr;
  const memo = exprMemo.get(depth);
  if (memo !== undefined) return memo;
  const sub = exprArb(depth - 1);
  const args = fc.array(sub, { maxLength: 3 });
  const item: fc.Arbitrary<TableItem> = fc.oneof(
    sub.map((value): TableItem => ({ kind: "positional", value })),
    fc.tuple(nameArb, sub).map(([name, value]): TableItem => ({ kind: "named", name, value })),
    fc.tuple(sub, sub).map(([key, value]): TableItem => ({ kind: "keyed", key, value })),
  );
  const arb = fc.oneof(
    { weight: 4, arbitrary: leafExpr },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.constantFrom(...binaryOps), sub, sub).map(([op, left, right]): Expr => ({ kind: "binary", op, left, right, line: 1 })),
    },
    fc.tuple(fc.constantFrom(...unaryOps), sub).map(([op, operand]): Expr => ({ kind: "unary", op, operand, line: 1 })),
    fc
      .tuple(
        sub,
        fc.oneof(
          sub,
          nameArb.map((value): Expr => ({ kind: "string", value })),
        ),
      )
      .map(([object, key]): Expr => ({ kind: "index", object, key, line: 1 })),
    fc.tuple(sub, args).map(([callee, a]): Expr => ({ kind: "call", callee, args: a, line: 1 })),
    fc.tuple(sub, nameArb, args).map(([object, name, a]): Expr => ({ kind: "method", object, name, args: a, line: 1 })),
    sub.map((expr): Expr => ({ kind: "paren", expr })),
    fc.array(item, { maxLength: 3 }).map((items): Expr => ({ kind: "table", items, line: 1 })),
    funcArb(depth, false),
  );
  exprMemo.set(depth, arb);
  return arb;
}

function callArb(depth: number) {
  const sub = exprArb(depth);
  const args = fc.array(sub, { maxLength: 2 });
  return fc.oneof(
    fc.tuple(sub, args).map(([callee, a]) => ({ kind: "call" as const, callee, args: a, line: 1 })),
    fc.tuple(sub, nameArb, args).map(([object, name, a]) => ({ kind: "method" as const, object, name, args: a, line: 1 })),
  );
}

function statArb(depth: number): fc.Arbitrary<Stat> {
  const e = exprArb(depth);
  const list = (min: number) => fc.array(e, { minLength: min, maxLength: 3 });
  const body = blockArb(depth - 1);
  const target = fc.oneof(
    nameArb.map((name) => ({ kind: "name" as const, name, line: 1 })),
    fc.tuple(e, e).map(([object, key]) => ({ kind: "index" as const, object, key, line: 1 })),
  );
  const simple: fc.Arbitrary<Stat>[] = [
    fc.tuple(fc.array(nameArb, { minLength: 1, maxLength: 3 }), list(0)).map(([n, values]): Stat => ({ kind: "local", names: n, values, line: 1 })),
    fc.tuple(fc.array(target, { minLength: 1, maxLength: 3 }), list(1)).map(([targets, values]): Stat => ({ kind: "assign", targets, values, line: 1 })),
    callArb(depth).map((call): Stat => ({ kind: "call", call, line: 1 })),
    list(0).map((values): Stat => ({ kind: "return", values, line: 1 })),
    fc.constant<Stat>({ kind: "break", line: 1 }),
  ];
  if (depth <= 0) return fc.oneof(...simple);
  const compound: fc.Arbitrary<Stat>[] = [
    body.map((b): Stat => ({ kind: "do", body: b })),
    fc.tuple(e, body).map(([cond, b]): Stat => ({ kind: "while", cond, body: b, line: 1 })),
    fc.tuple(body, e).map(([b, cond]): Stat => ({ kind: "repeat", body: b, cond, line: 1 })),
    fc
      .tuple(fc.array(fc.record({ cond: e, body }), { minLength: 1, maxLength: 3 }), fc.option(body))
      .map(([clauses, orElse]): Stat => ({ kind: "if", clauses, orElse, line: 1 })),
    fc
      .tuple(nameArb, e, e, fc.option(e), body)
      .map(([name, start, limit, step, b]): Stat => ({ kind: "numericFor", name, start, limit, step, body: b, line: 1 })),
    fc
      .tuple(fc.array(nameArb, { minLength: 1, maxLength: 3 }), list(1), body)
      .map(([n, exprs, b]): Stat => ({ kind: "genericFor", names: n, exprs, body: b, line: 1 })),
    fc
      .tuple(fc.array(nameArb, { minLength: 1, maxLength: 3 }), fc.option(nameArb))
      .chain(([path, method]) => funcArb(depth, method !== null).map((func): Stat => ({ kind: "function", path, method, func, line: 1 }))),
    fc.tuple(nameArb, funcArb(depth, false)).map(([name, func]): Stat => ({ kind: "localFunction", name, func, line: 1 })),
  ];
  return fc.oneof({ weight: 2, arbitrary: fc.oneof(...simple) }, fc.oneof(...compound));
}

function blockArb(depth: number): fc.Arbitrary<Block> {
  if (depth < 0) return fc.constant([]);
  const memo = blockMemo.get(depth);
  if (memo !== undefined) return memo;
  const arb = fc.array(statArb(depth), { maxLength: depth <= 0 ? 2 : 4 });
  blockMemo.set(depth, arb);
  return arb;
}

/** Makes a generated tree one Lua accepts: `return`/`break` last, `break` in loops, `...` in vararg functions. */
function legal(body: Block, inLoop: boolean, vararg: boolean): Block {
  const out: Stat[] = [];
  for (const s of body) {
    if (s.kind === "break" && !inLoop) continue;
    out.push(legalStat(s, inLoop, vararg));
    if (s.kind === "return" || s.kind === "break") break;
  }
  return out;
}

function legalStat(s: Stat, inLoop: boolean, vararg: boolean): Stat {
  const ex = (e: Expr) => legalExpr(e, vararg);
  const blk = (b: Block, loop = inLoop) => legal(b, loop, vararg);
  switch (s.kind) {
    case "local":
      return { ...s, values: s.values.map(ex) };
    case "assign":
      return { ...s, targets: s.targets.map((t) => (t.kind === "index" ? { ...t, object: ex(t.object), key: ex(t.key) } : t)), values: s.values.map(ex) };
    case "call":
      return { ...s, call: ex(s.call) as typeof s.call };
    case "do":
      return { ...s, body: blk(s.body) };
    case "while":
      return { ...s, cond: ex(s.cond), body: blk(s.body, true) };
    case "repeat":
      return { ...s, body: blk(s.body, true), cond: ex(s.cond) };
    case "if":
      return { ...s, clauses: s.clauses.map((c) => ({ cond: ex(c.cond), body: blk(c.body) })), orElse: s.orElse === null ? null : blk(s.orElse) };
    case "numericFor":
      return { ...s, start: ex(s.start), limit: ex(s.limit), step: s.step === null ? null : ex(s.step), body: blk(s.body, true) };
    case "genericFor":
      return { ...s, exprs: s.exprs.map(ex), body: blk(s.body, true) };
    case "function":
    case "localFunction":
      return { ...s, func: legalExpr(s.func, vararg) as FunctionExpr };
    case "return":
      return { ...s, values: s.values.map(ex) };
    case "break":
      return s;
  }
}

function legalExpr(e: Expr, vararg: boolean): Expr {
  const ex = (x: Expr) => legalExpr(x, vararg);
  switch (e.kind) {
    case "vararg":
      return vararg ? e : { kind: "nil" };
    case "function":
      return { ...e, body: legal(e.body, false, e.isVararg) };
    case "table":
      return {
        ...e,
        items: e.items.map((i) => (i.kind === "keyed" ? { ...i, key: ex(i.key), value: ex(i.value) } : { ...i, value: ex(i.value) })),
      };
    case "binary":
      return { ...e, left: ex(e.left), right: ex(e.right) };
    case "unary":
      return { ...e, operand: ex(e.operand) };
    case "index":
      return { ...e, object: ex(e.object), key: ex(e.key) };
    case "call":
      return { ...e, callee: ex(e.callee), args: e.args.map(ex) };
    case "method":
      return { ...e, object: ex(e.object), args: e.args.map(ex) };
    case "paren":
      return { ...e, expr: ex(e.expr) };
    default:
      return e;
  }
}

const programArb = blockArb(3).map((b) => legal(b, false, true));

// ---- broken programs ----

const snippets = [
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  "=",
  "==",
  ",",
  ";",
  ":",
  ".",
  "..",
  "...",
  "'",
  '"',
  "\\",
  "[[",
  "]]",
  "[=[",
  "]=]",
  "[==",
  "--",
  "--[[",
  "--[=[",
  "\n",
  "\r",
  "\r\n",
  " ",
  "end",
  "local",
  "function",
  "return",
  "break",
  "if",
  "then",
  "else",
  "elseif",
  "do",
  "while",
  "for",
  "in",
  "repeat",
  "until",
  "not",
  "and",
  "or",
  "nil",
  "true",
  "0x",
  "1e",
  "e",
  "x",
  "p",
  "1",
  "9",
  ".5",
  "\\300",
  "\\9",
  "\\n",
  "#",
  "~",
  "~=",
  "^",
  "-",
  "+",
  "<=",
  "@",
  "\0",
  "\xff",
  "goto",
  "self",
  "a",
  "f(",
  "f\n(",
  "x.y",
  "x:y",
  "::",
  "//",
  "&",
  "|",
  "<<",
];

/** Edits at chosen places: insert a snippet, delete a few characters, or both. */
const editsArb = fc.array(fc.tuple(fc.nat(), fc.constantFrom(...snippets), fc.constantFrom("insert", "delete", "replace"), fc.integer({ min: 1, max: 3 })), {
  minLength: 1,
  maxLength: 3,
});

function applyEdits(source: string, edits: [number, string, string, number][]): string {
  let s = source;
  for (const [at, snippet, how, count] of edits) {
    const i = at % (s.length + 1);
    const cut = how === "insert" ? 0 : count;
    s = s.slice(0, i) + (how === "delete" ? "" : snippet) + s.slice(i + cut);
  }
  return s;
}

const soupTokens = [
  ...snippets,
  "x = 1",
  "local a = 2",
  "return",
  "f()",
  "a.b",
  "t[1]",
  "{}",
  "'s'",
  "[[long]]",
  "1.5",
  "0xff",
  "1e5",
  "function() end",
  "do end",
  "a, b",
  " ",
  " ",
  "\n",
];
const soupArb = fc.array(fc.constantFrom(...soupTokens), { maxLength: 20 }).map((t) => t.join(""));

/** Redis reads a first line `#!` as the script's flags, not Lua: such sources are not compared. */
const notShebang = (s: string) => !s.startsWith("#!");

// ---- BullMQ ----

const bullmqDir = `${import.meta.dir}/../../../../node_modules/bullmq/dist/esm/scripts`;
const bullmqFiles = readdirSync(bullmqDir).filter((f) => f.endsWith(".js") && f !== "index.js");

async function bullmqScript(file: string): Promise<string> {
  const m = (await import(`${bullmqDir}/${file}`)) as Record<string, { content?: string }>;
  const content = Object.values(m)[0]?.content;
  if (typeof content !== "string") throw new Error(`${file} has no script`);
  // The script's bytes, one character each, as kv holds them.
  return Buffer.from(content, "utf8").toString("latin1");
}

// ---- tests ----

/** A compact rendering of an expression: (op a b), names bare, calls as call(f a). */
function sexpr(e: Expr): string {
  switch (e.kind) {
    case "binary":
      return `(${e.op} ${sexpr(e.left)} ${sexpr(e.right)})`;
    case "unary":
      return `(${e.op} ${sexpr(e.operand)})`;
    case "name":
      return e.name;
    case "number":
      return String(e.value);
    case "string":
      return JSON.stringify(e.value);
    case "paren":
      return `[${sexpr(e.expr)}]`;
    case "index":
      return `${sexpr(e.object)}.${sexpr(e.key)}`;
    case "call":
      return `call(${[e.callee, ...e.args].map(sexpr).join(" ")})`;
    case "method":
      return `method(${[e.object, ...e.args].map(sexpr).join(" ")} :${e.name})`;
    default:
      return e.kind;
  }
}

function returned(source: string): Expr {
  const [stat] = parseLua(source);
  if (stat?.kind !== "return") throw new Error("not a return");
  return stat.values[0]!;
}

describe("precedence and associativity", () => {
  const cases: [string, string][] = [
    ["1 + 2 * 3", "(+ 1 (* 2 3))"],
    ["1 * 2 + 3", "(+ (* 1 2) 3)"],
    ["1 - 2 - 3", "(- (- 1 2) 3)"],
    ["a .. b .. c", "(.. a (.. b c))"],
    ["2 ^ 3 ^ 2", "(^ 2 (^ 3 2))"],
    ["-x ^ 2", "(- (^ x 2))"],
    ["2 ^ -3", "(^ 2 (- 3))"],
    ["2 ^ -3 ^ 2", "(^ 2 (- (^ 3 2)))"],
    ["not a == b", "(== (not a) b)"],
    ["not not a", "(not (not a))"],
    ["- - a", "(- (- a))"],
    ["#t + 1", "(+ (# t) 1)"],
    ["a or b and c", "(or a (and b c))"],
    ["a and b or c", "(or (and a b) c)"],
    ["a < b == c", "(== (< a b) c)"],
    ["a .. b == c .. d", "(== (.. a b) (.. c d))"],
    ["1 + 2 .. 3", "(.. (+ 1 2) 3)"],
    ["a .. b + c", "(.. a (+ b c))"],
    ["a + b < c * d", "(< (+ a b) (* c d))"],
    ["a % b * c / d", "(/ (* (% a b) c) d)"],
    ["-a .. b", "(.. (- a) b)"],
    ["(a + b) * c", "(* [(+ a b)] c)"],
    ["a or b or c", "(or (or a b) c)"],
    ["a ~= b >= c <= d > e", "(> (<= (>= (~= a b) c) d) e)"],
  ];
  for (const [source, want] of cases) test(source, () => expect(sexpr(returned(`return ${source}`))).toBe(want));

  test("suffixes bind tighter than every operator", () => {
    expect(sexpr(returned("return -f(x).y:z(1)[2] ^ 2"))).toBe('(- (^ method(call(f x)."y" 1 :z).2 2))');
    expect(sexpr(returned("return a.b.c"))).toBe('a."b"."c"');
    expect(sexpr(returned("return f'x'{}"))).toBe('call(call(f "x") table)');
  });
});

describe("shapes", () => {
  test("a method function gets self first; a dotted path; a local function", () => {
    expect(parseLua("function t.a.b:m(x, ...) end")).toEqual([
      {
        kind: "function",
        path: ["t", "a", "b"],
        method: "m",
        func: { kind: "function", params: ["self", "x"], isVararg: true, body: [], line: 1, endLine: 1 },
        line: 1,
      },
    ]);
    expect(parseLua("local function f(a)\nreturn a\nend")).toEqual([
      {
        kind: "localFunction",
        name: "f",
        func: {
          kind: "function",
          params: ["a"],
          isVararg: false,
          body: [{ kind: "return", values: [{ kind: "name", name: "a", line: 2 }], line: 2 }],
          line: 1,
          endLine: 3,
        },
        line: 1,
      },
    ]);
  });

  test("calls with a string or a table, method calls, parentheses, and statements", () => {
    expect(parseLua("f'a' o:m{1} (g())")).toHaveLength(2);
    expect(sexpr(returned("return (f())"))).toBe("[call(f)]");
    expect(parseLua("a.b, c[1] = 1, 2")[0]).toMatchObject({ kind: "assign", targets: [{ kind: "index" }, { kind: "index" }] });
    expect(parseLua("x = {1, y = 2; [3] = 4,}")[0]).toMatchObject({
      values: [{ kind: "table", items: [{ kind: "positional" }, { kind: "named", name: "y" }, { kind: "keyed" }] }],
    });
    expect(
      parseLua("for i = 1, 2 do end for k, v in pairs(t) do end while x do break end repeat local z until z if a then elseif b then else end do end"),
    ).toHaveLength(6);
  });

  test("string escapes and long strings", () => {
    const value = (src: string) => (returned(`return ${src}`) as { value: string }).value;
    expect(value(String.raw`'\a\b\f\n\r\t\v\\\"\'\q\x41\65\0659\255'`)).toBe("\x07\b\f\n\r\t\v\\\"'qx41AA9\xff");
    expect(value("'a\\\r\nb'")).toBe("a\nb");
    expect(value("[==[\nab]]c]=]\r\nd]==]")).toBe("ab]]c]=]\nd");
    expect(value("[[\r\n\n\rx]]")).toBe("\nx");
    expect(value("[=[a[[b]=]")).toBe("a[[b");
  });

  test("numerals as strtod reads them", () => {
    const value = (src: string) => (returned(`return ${src}`) as { value: number }).value;
    expect(value("0x1F")).toBe(31);
    expect(value("0x1p4")).toBe(16);
    expect(value("0X10P0")).toBe(16);
    expect(value("1e+2")).toBe(100);
    expect(value(".5")).toBe(0.5);
    expect(value("5.")).toBe(5);
    expect(value("08")).toBe(8);
    expect(value("1e400")).toBe(Number.POSITIVE_INFINITY);
    expect(value("0xffffffffffffffffff")).toBe(0xffffffffffffffffff);
    // strtod reads up to a NUL, which 5.1 takes for an exponent mark.
    expect(value("1\0e5")).toBe(1);
    expect(value("2.5\0-x")).toBe(2.5);
    for (const bad of ["1e", "0x", "1..2", "1.2.3", "3x", "0x1.5p1", "0x1p", "1_0", "00x1"]) expect(parses(`return ${bad}`)).toBe(false);
  });

  test("syntax errors name their line", () => {
    const error = (src: string) => {
      try {
        parseLua(src);
      } catch (e) {
        return e as LuaSyntaxError;
      }
      throw new Error("parsed");
    };
    expect(error("x = 1\ny = = 2")).toMatchObject({ line: 2, detail: "unexpected symbol near '='" });
    expect(error("f\n(1)")).toMatchObject({ line: 2, detail: "ambiguous syntax (function call x new statement) near '('" });
    expect(error("function f()\nreturn ...\nend")).toMatchObject({ line: 2 });
    expect(error("x = [[\n\n")).toMatchObject({ line: 3, detail: "unfinished long string near '<eof>'" });
    expect(error("#!lua\nreturn 1")).toMatchObject({ line: 1 });
    expect(error(`return ${"(".repeat(300)}1${")".repeat(300)}`).detail).toBe("chunk has too many syntax levels");
  });
});

describe("acceptance against the native Lua", () => {
  test("fixed cases at each check's edge", () => {
    const locals = (n: number) => Array.from({ length: n }, (_, i) => `local v${i}`).join(" ");
    const upvalues = (n: number) => `${locals(n)} return function() return ${Array.from({ length: n }, (_, i) => `v${i}`).join(",")} end`;
    const targets = (n: number) => `${Array.from({ length: n }, (_, i) => `a${i}`).join(",")} = 1`;
    const sources = [
      `return ${"(".repeat(197)}1${")".repeat(197)}`,
      `return ${"(".repeat(198)}1${")".repeat(198)}`,
      `${"do ".repeat(198)}${"end ".repeat(198)}`,
      `${"do ".repeat(199)}${"end ".repeat(199)}`,
      `return ${Array.from({ length: 198 }, () => "'a'").join("..")}`,
      `return ${Array.from({ length: 199 }, () => "'a'").join("..")}`,
      `return ${"function() return ".repeat(99)}1${" end".repeat(99)}`,
      `return ${"{".repeat(199)}${"}".repeat(199)}`,
      `return ${"- ".repeat(197)}1`,
      `return ${"- ".repeat(198)}1`,
      locals(200),
      locals(201),
      `for i = 1, 2 do ${locals(196)} end`,
      `for i = 1, 2 do ${locals(197)} end`,
      `for k, v in next, {} do ${locals(195)} end`,
      `for k, v in next, {} do ${locals(196)} end`,
      `local function f(a, ...) ${locals(198)} end`,
      `local function f(a, ...) ${locals(199)} end`,
      `local t = {} function t:m(a) ${locals(198)} end`,
      `local t = {} function t:m(a) ${locals(199)} end`,
      upvalues(60),
      upvalues(61),
      `local a local function f() local function g() return a end end ${locals(58)} return function() return a, f, ${Array.from({ length: 58 }, (_, i) => `v${i}`).join(",")} end`,
      targets(199),
      targets(200),
      `do do ${targets(197)} end end`,
      `do do ${targets(198)} end end`,
      "x = {a\n(1)}",
      "x = {a.b\n(1)}",
      "f{}\n(1)",
      "x = [[ [[ ]]",
      "x = [=[ [[ ]=]",
      "--[[ [[ ]]\nx = 1",
      "x = a[=1]",
      "return ...",
      "function f() return ... end",
      "function f(...) return function() return ... end end",
      "break",
      "while 1 do local function f() break end end",
      "while 1 do break x = 1 end",
      "repeat local x = 1 until x",
      "return;",
      "return 1;;",
      "do ; end",
      "(a) = 1",
      "(f())",
      "a:b().c = 1",
      "x = 'a\rb'",
      "x = '\\256'",
      "x = \x1b",
      "x = 1 \xa0",
      "x\xe9 = 1",
      "local a <const> = 1",
      "goto x",
      "x = a // b",
      "x = 0x1p+4",
      "return 'a' .\0 'b'",
      "return select('#', .\0\0)",
      "return 1\0+5",
      "return 1\0\0 + 2",
      "return 1\0\0\0",
      "return 1e\0",
      "return 0x10\0",
      "return 0\0x10",
      "return 'a' \0. 'b'",
      "",
      "-- only a comment",
      "--[==[ long\ncomment ]==] return 1",
    ];
    for (const source of sources) expectSameAcceptance(source);
  });

  test("generated programs load in both", () => {
    fc.assert(
      fc.property(programArb, (program) => {
        expectSameAcceptance(fullPrinter.block(program));
        expectSameAcceptance(minimalPrinter.block(program));
      }),
      runs(300),
    );
  });

  test("generated programs broken by a few edits load in both or in neither", () => {
    fc.assert(
      fc.property(programArb, editsArb, (program, edits) => {
        const source = applyEdits(minimalPrinter.block(program), edits);
        fc.pre(notShebang(source));
        expectSameAcceptance(source);
      }),
      runs(1500),
    );
  });

  test("token soup loads in both or in neither", () => {
    fc.assert(
      fc.property(soupArb, (source) => {
        fc.pre(notShebang(source));
        expectSameAcceptance(source);
      }),
      runs(1500),
    );
  });

  test("BullMQ's scripts broken by a few edits load in both or in neither", async () => {
    const scripts = await Promise.all(["moveToFinished-14.js", "addStandardJob-9.js", "moveToActive-11.js"].map(bullmqScript));
    fc.assert(
      fc.property(fc.constantFrom(...scripts), editsArb, (script, edits) => {
        const source = applyEdits(script, edits);
        fc.pre(notShebang(source));
        expectSameAcceptance(source);
      }),
      runs(300),
    );
  });
});

describe("literals against the native Lua", () => {
  const numeralPiece = fc.constantFrom("0", "1", "7", "9", "a", "f", "F", "e", "E", "p", "P", "x", "X", ".", "+", "-", "_", "g", "\0");
  const numeralArb = fc.oneof(
    fc.tuple(fc.constantFrom("0", "0x", "0X", "1", ".", "00", "9"), fc.array(numeralPiece, { maxLength: 8 })).map(([a, b]) => a + b.join("")),
    fc.tuple(fc.stringMatching(/^[0-9]{1,25}$/), fc.stringMatching(/^[0-9]{0,25}$/), fc.integer({ min: -340, max: 320 })).map(([i, f, e]) => `${i}.${f}e${e}`),
    fc.tuple(fc.stringMatching(/^[0-9a-fA-F]{1,30}$/), fc.option(fc.nat(1100))).map(([m, p]) => `0x${m}${p === null ? "" : `p${p}`}`),
    fc.stringMatching(/^[0-9]{15,30}$/),
  );

  const bytesOf = (n: number) => {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, n);
    return String.fromCharCode(...new Uint8Array(view.buffer));
  };

  test("numerals: accepted alike, and of the same value", () => {
    fc.assert(
      fc.property(numeralArb, (raw) => {
        const text = /^[0-9]|^\.[0-9]/.test(raw) ? raw : `1${raw}`;
        const source = `return struct.pack('>d', ${text})`;
        expectSameAcceptance(source);
        if (!parses(source)) return;
        const token = new LuaLexer(text).scan();
        if (token.kind !== "number" || token.end !== text.length) return;
        expect(bytesOf(token.number)).toBe(h.run("EVAL", source, 0) as string);
      }),
      runs(1500),
    );
  });

  const stringPiece = fc.oneof(
    byteChar,
    fc.constantFrom(
      "\\",
      "\\\\",
      "\\n",
      "\\\n",
      "\\\r\n",
      "\\\n\r",
      "\\9",
      "\\25",
      "\\255",
      "\\256",
      "\\0",
      "\\x41",
      "\\z",
      "\\u{41}",
      "'",
      '"',
      "]",
      "]=]",
      "]]",
    ),
    fc.constantFrom("[", "[[", "[=[", "=", "\n", "\r", "\r\n", "\n\r", "a", "7"),
  );
  const brackets: [string, string][] = [
    ["'", "'"],
    ['"', '"'],
    ["[[", "]]"],
    ["[=[", "]=]"],
    ["[==[", "]==]"],
    ["[[\n", "]]"],
    ["[=[\r\n", "]=]"],
  ];
  const literalArb = fc
    .tuple(fc.constantFrom(...brackets), fc.array(stringPiece, { maxLength: 12 }))
    .map(([[open, close], pieces]) => `${open}${pieces.join("")}${close}`);

  test("string literals: accepted alike, and of the same bytes", () => {
    fc.assert(
      fc.property(literalArb, (literal) => {
        const source = `return ${literal}`;
        expectSameAcceptance(source);
        if (!parses(source)) return;
        const body = parseLua(source);
        const value = body.length === 1 && body[0]!.kind === "return" && body[0]!.values.length === 1 ? body[0]!.values[0] : undefined;
        if (value?.kind === "string") expect(value.value).toBe(h.run("EVAL", source, 0) as string);
      }),
      runs(1500),
    );
  });
});

describe("lines against the native Lua's runtime errors", () => {
  // One operation that fails at run time, its tokens laid out over lines at random: the line the
  // parser gives the operation is the one Lua's error names.
  const failing: string[][] = [
    ["u", "+", "t"],
    ["t", "-", "u"],
    ["(", "u", ")", "*", "(", "t", ")"],
    ["u", "/", "t", ".", "x"],
    ["t", "%", "2"],
    ["2", "^", "t"],
    ["t", "..", "u"],
    ["t", "<", "u"],
    ["u", "<=", "(", "t", ")"],
    ["-", "t"],
    ["-", "(", "t", ")"],
    ["#", "u"],
    ["u", "(", "1", ",", "2", ")"],
    ["u", "{", "}"],
    ["u", "'s'"],
    ["u", "[[\n\ns]]"],
    ["t", ".", "x", "(", ")"],
    ["u", ".", "x"],
    ["u", "[", "1", "]"],
    ["t", ":", "x", "(", ")"],
  ];

  /** The one operation in a returned expression: its line. */
  function operationLine(e: Expr): number | undefined {
    switch (e.kind) {
      case "binary":
      case "unary":
      case "call":
      case "method":
        return e.line;
      case "paren":
        return operationLine(e.expr);
      case "index":
        return operationLine(e.object) ?? e.line;
      default:
        return undefined;
    }
  }

  test("arithmetic, comparison, concatenation, length, calls and indexing", () => {
    fc.assert(
      fc.property(fc.nat(failing.length - 1), fc.array(fc.constantFrom(" ", "\n", "\n\n", "\r\n"), { minLength: 12, maxLength: 12 }), (which, gaps) => {
        const tokens = failing[which]!;
        const source = `local t = {} local u = 1\nreturn ${tokens.map((tok, i) => `${tok}${gaps[i]}`).join("")}`;
        expectSameAcceptance(source);
        if (!parses(source)) return;
        const reply = h.run("EVAL", source, 0) as { error: string };
        const luaLine = Number(/user_script:(\d+):/.exec(reply.error)?.[1]);
        const last = parseLua(source).at(-1);
        if (last?.kind !== "return") throw new Error("not a return");
        expect(operationLine(last.values[0]!)).toBe(luaLine);
      }),
      runs(400),
    );
  });
});

describe("round trip through a printer", () => {
  test("fully parenthesized and minimally parenthesized prints parse back to the tree", () => {
    fc.assert(
      fc.property(programArb, (program) => {
        const want = canonical(program);
        expect(canonical(parseLua(fullPrinter.block(program)))).toEqual(want);
        expect(canonical(parseLua(minimalPrinter.block(program)))).toEqual(want);
      }),
      runs(1000),
    );
  });
});

describe("BullMQ's scripts", () => {
  test("every script parses", async () => {
    expect(bullmqFiles.length).toBeGreaterThan(40);
    for (const file of bullmqFiles) {
      const script = await bullmqScript(file);
      expect(parseLua(script).length).toBeGreaterThan(0);
      expect(luaLoads(script)).toBe(true);
    }
  });

  test("the three of the job queue's hot path parse", async () => {
    for (const file of ["moveToFinished-14.js", "addStandardJob-9.js", "moveToActive-11.js"]) {
      const m = (await import(`bullmq/dist/esm/scripts/${file}`)) as Record<string, { content: string }>;
      expect(parseLua(Object.values(m)[0]!.content).length).toBeGreaterThan(0);
    }
  });
});

describe("arbitrary input", () => {
  const anyInput = fc.oneof(
    fc.string({ unit: byteChar, maxLength: 200 }),
    fc.string({ maxLength: 100 }),
    fc.string({ unit: "grapheme", maxLength: 50 }),
    soupArb,
    fc.tuple(programArb, editsArb).map(([p, e]) => applyEdits(fullPrinter.block(p), e)),
  );

  test("parses or throws LuaSyntaxError, never anything else", () => {
    fc.assert(
      fc.property(anyInput, (source) => {
        parses(source);
      }),
      runs(5000),
    );
  });

  test("deep nesting is refused past the syntax-level limit, quickly", () => {
    const deep = [
      "(".repeat(1_000_000),
      `return ${"{".repeat(500_000)}`,
      `x = ${"-".repeat(500_000)}`,
      "do ".repeat(500_000),
      `return ${"a..".repeat(300_000)}a`,
      `return ${"f(".repeat(300_000)}`,
      `return ${"function() return ".repeat(100_000)}`,
    ];
    for (const source of deep) {
      const started = performance.now();
      expect(() => parseLua(source)).toThrow(LuaSyntaxError);
      expect(performance.now() - started).toBeLessThan(1000);
    }
    expect(syntaxLevelsMax).toBe(200);
  });

  test("time grows linearly with the source", () => {
    const unit = "do local t = {a = 1, [2] = 'x', f = function(...) return ... end} t.a = t.a + #t .. 'y' end -- c\n";
    const time = (n: number) => {
      const source = unit.repeat(n);
      const started = performance.now();
      parseLua(source);
      return performance.now() - started;
    };
    time(2000);
    const small = time(5000);
    const large = time(40_000);
    expect(large).toBeLessThan(Math.max(small, 5) * 30);
    // Long tokens: a megabyte string, comment and numeral.
    for (const source of [
      `x = [[${"a".repeat(1 << 20)}]]`,
      `--[[${"\n".repeat(1 << 20)}]]`,
      `x = "${"\\65".repeat(1 << 18)}"`,
      `x = 0x${"f".repeat(1 << 18)}`,
    ]) {
      const started = performance.now();
      parseLua(source);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});
