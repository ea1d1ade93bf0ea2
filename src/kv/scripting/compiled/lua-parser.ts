/**
 * Lua 5.1's parser (lparser.c's grammar and checks), building the syntax tree of lua-ast.ts from
 * a script's source (bytes as a latin1 string; tokens from lua-lexer.ts). It accepts exactly what
 * the Lua that Redis embeds accepts, so that compiled scripts and the native Lua agree on which
 * scripts load: besides the grammar it makes 5.1's checks — `...` only in a vararg function,
 * `break` only in a loop and last in its block (as `return`), the "ambiguous syntax" of a call's
 * `(` on a line after its function, at most 200 active locals and 60 upvalues per function, at
 * most 200 syntax levels (nested blocks and subexpressions, counted as Lua counts them, from 1 as
 * the server loads a script), and Lua's bound on the targets of one assignment. The one limit it
 * does not check is the code generator's ("function or expression too complex": more than 250
 * registers, e.g. a call with 249 arguments), nor the sizes of code and constants.
 *
 * Lines (`line` of the nodes) are those Lua 5.1 gives the instruction that can fail there, so
 * that an error message can name the same line:
 * - a statement: the line of its first token;
 * - a call or method call: the line of its arguments' first token (`(`, `{`, or the end of the
 *   string), as OP_CALL's;
 * - a binary or unary operation: the line of the last token of its (right) operand, where Lua
 *   emits the operation;
 * - an index `a.b` / `a[k]`: the line of its last token (`b`, `]`) — Lua's, where the indexed
 *   value is taken as it is (returned, assigned, passed, indexed further); where it is the left
 *   operand of a binary operator Lua takes it at the operator's line instead, and in a method
 *   call `o:m(…)` it indexes `o` at the line of `m` (the node's line is the call's);
 * - a name, `...`, a table: the line of its token (the table's `{`);
 * - a function: `line` is Lua's linedefined (the `function` keyword in a function statement, the
 *   token after `function` or after the name in an expression or a local function — the same
 *   line unless a newline is between), `endLine` the line of its `end`.
 *
 * Recursion is bounded by the syntax-level limit (every recursive path passes through a block or
 * a subexpression), so any input parses or throws LuaSyntaxError in time linear in its length.
 */
import type { AssignTarget, BinaryOp, Block, Expr, FunctionExpr, Stat, TableItem, UnaryOp } from "./lua-ast.ts";
import { LuaLexer, LuaSyntaxError, type Token } from "./lua-lexer.ts";

export { LuaSyntaxError } from "./lua-lexer.ts";

/** Lua's LUAI_MAXCCALLS: the most nested blocks and subexpressions, with the level a load starts at. */
export const syntaxLevelsMax = 200;
/** Lua's C-call count when the server loads a script (measured: 197 nested parentheses load, 198 do not). */
const syntaxLevelAtLoad = 1;
/** Lua's LUAI_MAXVARS: active locals in one function, hidden loop variables included. */
export const localsMax = 200;
/** Lua's LUAI_MAXUPVALUES: outer locals one function refers to. */
export const upvaluesMax = 60;

/** Binary operators' priorities, left and right (Lua 5.1's `priority` table). */
const leftPriority: Record<BinaryOp, number> = {
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
const rightPriority: Record<BinaryOp, number> = { ...leftPriority, "..": 4, "^": 9 };
/** Unary operators bind tighter than every binary one but `^`. */
const unaryPriority = 8;

function binaryOp(kind: string): BinaryOp | null {
  return Object.hasOwn(leftPriority, kind) ? (kind as BinaryOp) : null;
}

function unaryOp(kind: string): UnaryOp | null {
  return kind === "not" || kind === "-" || kind === "#" ? kind : null;
}

/** Tokens that end a block. */
function blockFollows(kind: string): boolean {
  return kind === "else" || kind === "elseif" || kind === "end" || kind === "until" || kind === "eof";
}

/** A local variable while its function is parsed; upvalues are told apart by it. */
type LocalVar = { readonly name: string };

/** What the parser knows of a function it is in: its active locals, upvalues, loops. */
class FuncScope {
  readonly active: LocalVar[] = [];
  /** Declared by the statement being parsed, not active yet. */
  readonly pending: LocalVar[] = [];
  readonly upvalues = new Set<LocalVar>();
  loops = 0;

  constructor(
    readonly parent: FuncScope | null,
    /** Whether `...` may be used (its parameters end with `...`, or it is the main chunk). */
    public isVararg: boolean,
    /** Lua's linedefined, 0 for the main chunk. */
    readonly line: number,
  ) {}

  describe(): string {
    return this.parent === null ? "main function" : `function at line ${this.line}`;
  }
}

class Parser {
  private readonly lexer: LuaLexer;
  private token: Token;
  /** The token after `token`, when the table constructor has looked at it. */
  private ahead: Token | null = null;
  /** Lua's lastline: where the lexer stood when the last token was consumed. */
  private lastLine = 1;
  private level = syntaxLevelAtLoad;
  private scope = new FuncScope(null, true, 0);
  /** The line of the arguments funcArgs read last. */
  private argsLine = 0;

  constructor(source: string) {
    this.lexer = new LuaLexer(source);
    this.token = this.lexer.scan();
  }

  mainChunk(): Block {
    const body = this.chunk();
    if (this.token.kind !== "eof") this.error("'<eof>' expected");
    return body;
  }

  // ——— tokens ———

  /** Lua's linenumber: the line the lexer stands on. */
  private lexLine(): number {
    return this.ahead === null ? this.token.endLine : this.ahead.endLine;
  }

  private next(): void {
    this.lastLine = this.lexLine();
    if (this.ahead !== null) {
      this.token = this.ahead;
      this.ahead = null;
    } else {
      this.token = this.lexer.scan();
    }
  }

  private peek(): Token {
    if (this.ahead === null) this.ahead = this.lexer.scan();
    return this.ahead;
  }

  private error(message: string): never {
    throw new LuaSyntaxError(this.lexLine(), `${message} near '${this.lexer.nearText(this.token)}'`);
  }

  /** Whether the current token is `kind` (a method, so that TypeScript does not narrow it across `next`). */
  private at(kind: string): boolean {
    return this.token.kind === kind;
  }

  private testNext(kind: string): boolean {
    if (this.token.kind !== kind) return false;
    this.next();
    return true;
  }

  private checkNext(kind: string): void {
    if (this.token.kind !== kind) this.error(`'${kind}' expected`);
    this.next();
  }

  /** Consumes `what`, which closes `who` opened on `line`. */
  private checkMatch(what: string, who: string, line: number): void {
    if (this.token.kind === what) return this.next();
    if (line === this.lexLine()) this.error(`'${what}' expected`);
    this.error(`'${what}' expected (to close '${who}' at line ${line})`);
  }

  private checkName(): string {
    if (this.token.kind !== "name") this.error("'<name>' expected");
    const name = this.token.text;
    this.next();
    return name;
  }

  private enterLevel(): void {
    if (++this.level > syntaxLevelsMax) throw new LuaSyntaxError(this.lexLine(), "chunk has too many syntax levels");
  }

  // ——— scopes ———

  private declareLocal(name: string): void {
    const scope = this.scope;
    if (scope.active.length + scope.pending.length + 1 > localsMax)
      throw new LuaSyntaxError(this.lexLine(), `${scope.describe()} has more than ${localsMax} local variables`);
    scope.pending.push({ name });
  }

  /** Makes the first `count` pending locals active. */
  private activateLocals(count: number): void {
    const scope = this.scope;
    for (const local of scope.pending.splice(0, count)) scope.active.push(local);
  }

  /** Looks a name up as Lua's singlevar does, counting the upvalues it makes on the way. */
  private resolveName(name: string): void {
    this.resolveIn(this.scope, name);
  }

  private resolveIn(scope: FuncScope, name: string): LocalVar | undefined {
    const active = scope.active;
    for (let i = active.length - 1; i >= 0; i--) if (active[i]!.name === name) return active[i];
    if (scope.parent === null) return undefined;
    const local = this.resolveIn(scope.parent, name);
    if (local !== undefined && !scope.upvalues.has(local)) {
      if (scope.upvalues.size >= upvaluesMax) throw new LuaSyntaxError(this.lexLine(), `${scope.describe()} has more than ${upvaluesMax} upvalues`);
      scope.upvalues.add(local);
    }
    return local;
  }

  // ——— blocks and statements ———

  /** Statements up to a block's end (Lua's chunk): one syntax level. */
  private chunk(): Block {
    this.enterLevel();
    const body: Stat[] = [];
    let last = false;
    while (!last && !blockFollows(this.token.kind)) {
      const kind = this.token.kind;
      last = kind === "return" || kind === "break";
      body.push(this.statement());
      this.testNext(";");
    }
    this.level--;
    return body;
  }

  /** A block with its own locals. */
  private block(): Block {
    const mark = this.scope.active.length;
    const body = this.chunk();
    this.scope.active.length = mark;
    return body;
  }

  /** A loop's body: `break` may leave it. */
  private loopBlock(): Block {
    this.scope.loops++;
    const body = this.block();
    this.scope.loops--;
    return body;
  }

  private statement(): Stat {
    const line = this.token.line;
    switch (this.token.kind) {
      case "if":
        return this.ifStat(line);
      case "while":
        return this.whileStat(line);
      case "do": {
        this.next();
        const body = this.block();
        this.checkMatch("end", "do", line);
        return { kind: "do", body };
      }
      case "for":
        return this.forStat(line);
      case "repeat":
        return this.repeatStat(line);
      case "function":
        return this.functionStat(line);
      case "local":
        this.next();
        return this.testNext("function") ? this.localFunction(line) : this.localStat(line);
      case "return":
        return this.returnStat(line);
      case "break":
        this.next();
        if (this.scope.loops === 0) this.error("no loop to break");
        return { kind: "break", line };
      default:
        return this.exprStat(line);
    }
  }

  private ifStat(line: number): Stat {
    const clauses: { cond: Expr; body: Block }[] = [];
    do {
      this.next(); // `if` or `elseif`
      const cond = this.expr();
      this.checkNext("then");
      clauses.push({ cond, body: this.block() });
    } while (this.token.kind === "elseif");
    const orElse = this.testNext("else") ? this.block() : null;
    this.checkMatch("end", "if", line);
    return { kind: "if", clauses, orElse, line };
  }

  private whileStat(line: number): Stat {
    this.next();
    const cond = this.expr();
    this.checkNext("do");
    const body = this.loopBlock();
    this.checkMatch("end", "while", line);
    return { kind: "while", cond, body, line };
  }

  /** `repeat … until cond`: the condition sees the body's locals. */
  private repeatStat(line: number): Stat {
    this.next();
    const scope = this.scope;
    const mark = scope.active.length;
    scope.loops++;
    const body = this.chunk();
    this.checkMatch("until", "repeat", line);
    const cond = this.expr();
    scope.loops--;
    scope.active.length = mark;
    return { kind: "repeat", body, cond, line };
  }

  private forStat(line: number): Stat {
    const mark = this.scope.active.length;
    this.next();
    const name = this.checkName();
    let stat: Stat;
    if (this.token.kind === "=") stat = this.numericFor(name, line);
    else if (this.token.kind === "," || this.token.kind === "in") stat = this.genericFor(name, line);
    else this.error("'=' or 'in' expected");
    this.checkMatch("end", "for", line);
    this.scope.active.length = mark;
    return stat;
  }

  private numericFor(name: string, line: number): Stat {
    for (const hidden of ["(for index)", "(for limit)", "(for step)", name]) this.declareLocal(hidden);
    this.next(); // `=`
    const start = this.expr();
    this.checkNext(",");
    const limit = this.expr();
    const step = this.testNext(",") ? this.expr() : null;
    const body = this.forBody(1);
    return { kind: "numericFor", name, start, limit, step, body, line };
  }

  private genericFor(first: string, line: number): Stat {
    for (const hidden of ["(for generator)", "(for state)", "(for control)", first]) this.declareLocal(hidden);
    const names = [first];
    while (this.testNext(",")) {
      const name = this.checkName();
      this.declareLocal(name);
      names.push(name);
    }
    this.checkNext("in");
    const exprs = this.exprList();
    const body = this.forBody(names.length);
    return { kind: "genericFor", names, exprs, body, line };
  }

  /** `do body`: the three hidden control locals, then the loop's own. */
  private forBody(count: number): Block {
    this.activateLocals(3);
    this.checkNext("do");
    const mark = this.scope.active.length;
    this.activateLocals(count);
    const body = this.loopBlock();
    this.scope.active.length = mark;
    return body;
  }

  private functionStat(line: number): Stat {
    this.next();
    const path = [this.checkName()];
    this.resolveName(path[0]!);
    while (this.testNext(".")) path.push(this.checkName());
    const method = this.testNext(":") ? this.checkName() : null;
    const func = this.functionBody(method !== null, line);
    return { kind: "function", path, method, func, line };
  }

  private localFunction(line: number): Stat {
    const name = this.checkName();
    this.declareLocal(name);
    this.activateLocals(1);
    const func = this.functionBody(false, this.lexLine());
    return { kind: "localFunction", name, func, line };
  }

  private localStat(line: number): Stat {
    const names: string[] = [];
    do {
      const name = this.checkName();
      this.declareLocal(name);
      names.push(name);
    } while (this.testNext(","));
    const values = this.testNext("=") ? this.exprList() : [];
    this.activateLocals(names.length);
    return { kind: "local", names, values, line };
  }

  private returnStat(line: number): Stat {
    this.next();
    const kind = this.token.kind;
    const values = blockFollows(kind) || kind === ";" ? [] : this.exprList();
    return { kind: "return", values, line };
  }

  /** A call, or an assignment. */
  private exprStat(line: number): Stat {
    const first = this.primaryExpr();
    if (first.kind === "call" || first.kind === "method") return { kind: "call", call: first, line };
    const targets = [this.assignTarget(first)];
    while (this.testNext(",")) {
      const target = this.primaryExpr();
      // Lua bounds the targets by the syntax levels left (its assignment recursion).
      if (targets.length > syntaxLevelsMax - this.level)
        throw new LuaSyntaxError(this.lexLine(), `${this.scope.describe()} has more than ${syntaxLevelsMax - this.level} variables in assignment`);
      targets.push(this.assignTarget(target));
    }
    this.checkNext("=");
    const values = this.exprList();
    return { kind: "assign", targets, values, line };
  }

  private assignTarget(e: Expr): AssignTarget {
    if (e.kind === "name" || e.kind === "index") return e;
    return this.error("syntax error");
  }

  // ——— functions ———

  /** `(params) body end`; `line` is the function's linedefined. */
  private functionBody(needsSelf: boolean, line: number): FunctionExpr {
    const outer = this.scope;
    const params: string[] = [];
    this.checkNext("(");
    let isVararg = false;
    const scope = new FuncScope(outer, false, line);
    this.scope = scope;
    if (needsSelf) {
      this.declareLocal("self");
      this.activateLocals(1);
      params.push("self");
    }
    if (this.token.kind !== ")") {
      do {
        if (this.token.kind === "name") {
          const name = this.checkName();
          this.declareLocal(name);
          params.push(name);
        } else if (this.token.kind === "...") {
          this.next();
          this.declareLocal("arg"); // LUA_COMPAT_VARARG: a vararg function has a local `arg`
          isVararg = true;
        } else {
          this.error("<name> or '...' expected");
        }
      } while (!isVararg && this.testNext(","));
    }
    this.activateLocals(scope.pending.length);
    scope.isVararg = isVararg;
    this.checkNext(")");
    const body = this.chunk();
    const endLine = this.lexLine();
    this.checkMatch("end", "function", line);
    this.scope = outer;
    return { kind: "function", params, isVararg, body, line, endLine };
  }

  // ——— expressions ———

  private expr(): Expr {
    return this.subexpr(0);
  }

  private exprList(): Expr[] {
    const list = [this.expr()];
    while (this.testNext(",")) list.push(this.expr());
    return list;
  }

  /** Operands and operators binding tighter than `limit` (Lua's subexpr): one syntax level. */
  private subexpr(limit: number): Expr {
    this.enterLevel();
    let left: Expr;
    const uop = unaryOp(this.token.kind);
    if (uop !== null) {
      this.next();
      const operand = this.subexpr(unaryPriority);
      left = { kind: "unary", op: uop, operand, line: this.lastLine };
    } else {
      left = this.simpleExpr();
    }
    let op = binaryOp(this.token.kind);
    while (op !== null && leftPriority[op] > limit) {
      this.next();
      const right = this.subexpr(rightPriority[op]);
      left = { kind: "binary", op, left, right, line: this.lastLine };
      op = binaryOp(this.token.kind);
    }
    this.level--;
    return left;
  }

  private simpleExpr(): Expr {
    const token = this.token;
    switch (token.kind) {
      case "number":
        this.next();
        return { kind: "number", value: token.number };
      case "string":
        this.next();
        return { kind: "string", value: token.text };
      case "nil":
        this.next();
        return { kind: "nil" };
      case "true":
        this.next();
        return { kind: "true" };
      case "false":
        this.next();
        return { kind: "false" };
      case "...":
        if (!this.scope.isVararg) this.error("cannot use '...' outside a vararg function");
        this.next();
        return { kind: "vararg", line: token.line };
      case "{":
        return this.constructor_();
      case "function":
        this.next();
        return this.functionBody(false, this.lexLine());
      default:
        return this.primaryExpr();
    }
  }

  /** A name or parenthesized expression, then its suffixes: `.name`, `[key]`, `:name args`, `args`. */
  private primaryExpr(): Expr {
    let e = this.prefixExpr();
    for (;;) {
      switch (this.token.kind) {
        case ".": {
          this.next();
          const value = this.checkName();
          e = { kind: "index", object: e, key: { kind: "string", value }, line: this.lastLine };
          break;
        }
        case "[": {
          this.next();
          const key = this.expr();
          this.checkNext("]");
          e = { kind: "index", object: e, key, line: this.lastLine };
          break;
        }
        case ":": {
          this.next();
          const name = this.checkName();
          const args = this.funcArgs();
          e = { kind: "method", object: e, name, args, line: this.argsLine };
          break;
        }
        case "(":
        case "string":
        case "{": {
          const args = this.funcArgs();
          e = { kind: "call", callee: e, args, line: this.argsLine };
          break;
        }
        default:
          return e;
      }
    }
  }

  private prefixExpr(): Expr {
    const token = this.token;
    if (token.kind === "name") {
      this.next();
      this.resolveName(token.text);
      return { kind: "name", name: token.text, line: token.line };
    }
    if (token.kind === "(") {
      const line = this.lexLine();
      this.next();
      const expr = this.expr();
      this.checkMatch(")", "(", line);
      return { kind: "paren", expr };
    }
    return this.error("unexpected symbol");
  }

  /** A call's arguments: `(list)`, a table, or a string; their line in argsLine. */
  private funcArgs(): Expr[] {
    const line = this.lexLine();
    let args: Expr[];
    switch (this.token.kind) {
      case "(":
        if (line !== this.lastLine) this.error("ambiguous syntax (function call x new statement)");
        this.next();
        args = this.at(")") ? [] : this.exprList();
        this.checkMatch(")", "(", line);
        break;
      case "{":
        args = [this.constructor_()];
        break;
      case "string":
        args = [{ kind: "string", value: this.token.text }];
        this.next();
        break;
      default:
        return this.error("function arguments expected");
    }
    this.argsLine = line;
    return args;
  }

  /** `{ items }`, items separated by `,` or `;`, one optional at the end. */
  private constructor_(): Expr {
    const line = this.lexLine();
    this.checkNext("{");
    const items: TableItem[] = [];
    do {
      if (this.token.kind === "}") break;
      items.push(this.tableItem());
    } while (this.testNext(",") || this.testNext(";"));
    this.checkMatch("}", "{", line);
    return { kind: "table", items, line };
  }

  private tableItem(): TableItem {
    if (this.token.kind === "name") {
      if (this.peek().kind !== "=") return { kind: "positional", value: this.expr() };
      const name = this.checkName();
      this.next(); // `=`
      return { kind: "named", name, value: this.expr() };
    }
    if (this.token.kind === "[") {
      this.next();
      const key = this.expr();
      this.checkNext("]");
      this.checkNext("=");
      return { kind: "keyed", key, value: this.expr() };
    }
    return { kind: "positional", value: this.expr() };
  }
}

/**
 * The syntax tree of a Lua 5.1 chunk (`source`: its bytes, one character each); throws
 * LuaSyntaxError where Lua 5.1 would not load it.
 */
export function parseLua(source: string): Block {
  return new Parser(source).mainChunk();
}
