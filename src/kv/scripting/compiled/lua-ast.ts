/**
 * The syntax tree of a Lua 5.1 chunk, as lua-parser.ts builds it and lua-codegen.ts compiles it
 * to JavaScript. Strings are Lua's byte strings held as JavaScript strings of one character per
 * byte (latin1, 0–255), as kv holds keys and values; numbers are doubles, as in Lua 5.1. `line`
 * is the source line an expression or statement starts on (1-based), for the error messages
 * Lua writes ("user_script:3: …").
 */

export type Block = Stat[];

export type Expr =
  | { kind: "nil" }
  | { kind: "true" }
  | { kind: "false" }
  | { kind: "vararg"; line: number }
  | { kind: "number"; value: number }
  | { kind: "string"; value: string }
  | FunctionExpr
  | { kind: "table"; items: TableItem[]; line: number }
  | { kind: "binary"; op: BinaryOp; left: Expr; right: Expr; line: number }
  | { kind: "unary"; op: UnaryOp; operand: Expr; line: number }
  | { kind: "name"; name: string; line: number }
  /** `a.b` (key: a string expression), `a[k]`. */
  | { kind: "index"; object: Expr; key: Expr; line: number }
  | CallExpr
  /** `(e)`: one value of e, however many it gives. */
  | { kind: "paren"; expr: Expr };

/** `f(a)`, `f "s"`, `f {…}` (kind call), and `o:m(a)` (kind method). */
export type CallExpr = { kind: "call"; callee: Expr; args: Expr[]; line: number } | { kind: "method"; object: Expr; name: string; args: Expr[]; line: number };

export type FunctionExpr = {
  kind: "function";
  /** Parameter names, `self` first for `function a:m()`. */
  params: string[];
  /** Whether it ends with `...`. */
  isVararg: boolean;
  body: Block;
  /** The line of `function`, and of its `end`. */
  line: number;
  endLine: number;
};

/** A table constructor's item: `v` (positional), `name = v`, `[k] = v`. */
export type TableItem = { kind: "positional"; value: Expr } | { kind: "named"; name: string; value: Expr } | { kind: "keyed"; key: Expr; value: Expr };

export type BinaryOp = "or" | "and" | "<" | ">" | "<=" | ">=" | "~=" | "==" | ".." | "+" | "-" | "*" | "/" | "%" | "^";
export type UnaryOp = "not" | "-" | "#";

/** What an assignment may assign to. */
export type AssignTarget = { kind: "name"; name: string; line: number } | { kind: "index"; object: Expr; key: Expr; line: number };

export type Stat =
  | { kind: "local"; names: string[]; values: Expr[]; line: number }
  | { kind: "assign"; targets: AssignTarget[]; values: Expr[]; line: number }
  | { kind: "call"; call: CallExpr; line: number }
  | { kind: "do"; body: Block }
  | { kind: "while"; cond: Expr; body: Block; line: number }
  | { kind: "repeat"; body: Block; cond: Expr; line: number }
  /** `if c1 then b1 elseif c2 then b2 … else e end`. */
  | { kind: "if"; clauses: { cond: Expr; body: Block }[]; orElse: Block | null; line: number }
  | { kind: "numericFor"; name: string; start: Expr; limit: Expr; step: Expr | null; body: Block; line: number }
  | { kind: "genericFor"; names: string[]; exprs: Expr[]; body: Block; line: number }
  /** `function a.b.c:m() … end`: `path` is [a, b, c], `method` m or null. */
  | { kind: "function"; path: string[]; method: string | null; func: FunctionExpr; line: number }
  | { kind: "localFunction"; name: string; func: FunctionExpr; line: number }
  | { kind: "return"; values: Expr[]; line: number }
  | { kind: "break"; line: number };
