/**
 * Lua 5.1's lexer (llex.c's rules), for lua-parser.ts: it turns a script's bytes, held as a
 * latin1 string of one character per byte, into tokens one at a time, exactly as the Lua that
 * Redis embeds reads them — so that a script the real Lua accepts reads here as the same tokens
 * with the same values, and one it rejects is rejected here too:
 * - names are [A-Za-z_][A-Za-z0-9_]* (the C locale: bytes above 127 are not letters);
 * - a numeral is read as Lua 5.1 reads it — digits and dots, an optional exponent mark and sign,
 *   then any letters, digits and underscores — and then converted as glibc's strtod converts it
 *   (decimal, or hexadecimal with an optional binary exponent `p`), the whole of it or it is a
 *   "malformed number";
 * - short strings know the escapes \a \b \f \n \r \t \v, \<newline>, \ddd (at most 3 decimal
 *   digits, at most 255) and take any other escaped character as itself (`\q` is `q`, `\x41` is
 *   `x41`: there is no \x, \z or \u in 5.1);
 * - long brackets `[==[ … ]==]` skip a newline right after the opening, turn every newline
 *   sequence (\n, \r, \r\n, \n\r) into \n, and reject `[[` inside `[[ … ]]` (LUA_COMPAT_LSTR 1);
 * - comments are `--` to the end of the line, or `--` and a long bracket;
 * - a NUL byte where 5.1 tests for a second or third dot, or for an exponent mark or its sign,
 *   is taken as one (its strchr finds the set's terminator), and a numeral's value is that of
 *   its text up to a NUL (strtod reads a C string): `1\0+5` is 1, `.\0` is `..`;
 * - lines count \n, \r, \r\n and \n\r as one newline each.
 * The lexer runs in one pass over the source with no regular expressions: linear time.
 */

/** A syntax error: Lua's message and the line it names (the lexer's line when it was found). */
export class LuaSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly detail: string,
  ) {
    super(`Lua syntax error at line ${line}: ${detail}`);
  }
}

/**
 * One token. `kind` is "name", "string", "number", "eof", a reserved word ("and", "end", …) or a
 * symbol ("==", "...", "(", …); a character Lua has no token for is a token of its own (kind: that
 * character), which no rule of the grammar accepts.
 */
export class Token {
  constructor(
    readonly kind: string,
    /** A name's characters, or a string's bytes (escapes resolved). */
    readonly text: string,
    /** A numeral's value. */
    readonly number: number,
    /** The line the token starts on. */
    readonly line: number,
    /** The line the lexer is on just after the token (Lua's `linenumber` while it is current). */
    readonly endLine: number,
    /** Where it is in the source, for error messages. */
    readonly start: number,
    readonly end: number,
  ) {}
}

const reservedWords = new Set([
  "and",
  "break",
  "do",
  "else",
  "elseif",
  "end",
  "false",
  "for",
  "function",
  "if",
  "in",
  "local",
  "nil",
  "not",
  "or",
  "repeat",
  "return",
  "then",
  "true",
  "until",
  "while",
]);

/** The longest source text an error message quotes (Lua quotes the whole token; this is enough). */
const nearTextMaxChars = 40;

/** Exponents of a hexadecimal numeral past which its value is infinite (any nonzero mantissa). */
const hexExponentInfinite = 4096;

const NUL = 0;
const LF = 10;
const CR = 13;
const SPACE = 32;
const QUOTE = 34;
const APOSTROPHE = 39;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const LESS = 60;
const EQUALS = 61;
const GREATER = 62;
const UPPER_E = 69;
const UPPER_P = 80;
const UPPER_X = 88;
const LEFT_BRACKET = 91;
const BACKSLASH = 92;
const RIGHT_BRACKET = 93;
const UNDERSCORE = 95;
const LOWER_E = 101;
const LOWER_P = 112;
const LOWER_X = 120;
const TILDE = 126;

/**
 * Lua 5.1 tests a character against a set with strchr, which also finds the set's terminating
 * NUL: where it looks for a second or third `.`, and for an exponent mark or its sign, a NUL byte
 * matches too (`.\0` is `..`; `1\0+5` is the numeral 1).
 */
function isDotOrNul(c: number): boolean {
  return c === DOT || c === NUL;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** C's isalnum or '_': what continues a name, and a numeral. */
function isWordChar(c: number): boolean {
  return isDigit(c) || isAlpha(c) || c === UNDERSCORE;
}

/** C's isspace in the C locale, newlines aside (the lexer counts those). */
function isBlank(c: number): boolean {
  return c === SPACE || c === 9 || c === 11 || c === 12;
}

/** The single-character escapes of short strings and the bytes they stand for. */
function simpleEscape(c: number): string | undefined {
  switch (c) {
    case 97: // a
      return "\x07";
    case 98: // b
      return "\b";
    case 102: // f
      return "\f";
    case 110: // n
      return "\n";
    case 114: // r
      return "\r";
    case 116: // t
      return "\t";
    case 118: // v
      return "\v";
    default:
      return undefined;
  }
}

/**
 * A numeral's value as Lua 5.1 gets it (luaO_str2d: strtod, the whole text or nothing), or
 * undefined when the text is not a number. The numeral's characters are those read_numeral
 * gathers, so only decimal and `0x` hexadecimal forms can be whole numbers here.
 */
export function numeralValue(text: string): number | undefined {
  const second = text.charCodeAt(1);
  if (text.charCodeAt(0) === ZERO && (second === LOWER_X || second === UPPER_X)) return hexNumeralValue(text);
  return decimalNumeralValue(text);
}

/** digits [. digits] [e [sign] digits], a digit somewhere before the exponent; strtod's rounding. */
function decimalNumeralValue(text: string): number | undefined {
  let i = 0;
  let digits = 0;
  while (isDigit(text.charCodeAt(i))) i++, digits++;
  if (text.charCodeAt(i) === DOT) {
    i++;
    while (isDigit(text.charCodeAt(i))) i++, digits++;
  }
  if (digits === 0) return undefined;
  const e = text.charCodeAt(i);
  if (e === LOWER_E || e === UPPER_E) {
    i++;
    const sign = text.charCodeAt(i);
    if (sign === PLUS || sign === MINUS) i++;
    const from = i;
    while (isDigit(text.charCodeAt(i))) i++;
    if (i === from) return undefined;
  }
  if (i !== text.length) return undefined;
  // JavaScript's conversion of a decimal numeral is correctly rounded, as glibc's strtod is.
  return Number(text);
}

/** 0x hexdigits [p digits] (a sign cannot be part of the numeral); exact, then rounded to nearest even. */
function hexNumeralValue(text: string): number | undefined {
  let i = 2;
  while (isHexDigit(text.charCodeAt(i))) i++;
  if (i === 2) return undefined;
  const mantissa = BigInt(`0x${text.slice(2, i)}`);
  let exponent = 0;
  const p = text.charCodeAt(i);
  if (p === LOWER_P || p === UPPER_P) {
    i++;
    const from = i;
    while (isDigit(text.charCodeAt(i))) {
      if (exponent <= hexExponentInfinite) exponent = exponent * 10 + text.charCodeAt(i) - ZERO;
      i++;
    }
    if (i === from) return undefined;
  }
  if (i !== text.length) return undefined;
  if (mantissa === 0n) return 0;
  if (exponent > hexExponentInfinite) return Number.POSITIVE_INFINITY;
  return Number(mantissa << BigInt(exponent));
}

/** Reads a source's tokens one by one (`scan`), from the first. */
export class LuaLexer {
  private pos = 0;
  /** The line the lexer is on (Lua's `linenumber`). */
  private lineNumber = 1;

  constructor(private readonly src: string) {}

  /** The next token; `eof` at the end, and again after it. */
  scan(): Token {
    const src = this.src;
    for (;;) {
      const start = this.pos;
      if (start >= src.length) return this.token("eof", start);
      const c = src.charCodeAt(start);
      switch (c) {
        case LF:
        case CR:
          this.newline();
          continue;
        case MINUS:
          if (src.charCodeAt(start + 1) !== MINUS) return this.symbol("-", start, 1);
          this.pos += 2;
          this.skipComment();
          continue;
        case LEFT_BRACKET:
          return this.leftBracket(start);
        case EQUALS:
          return this.maybeWithEquals(start, "=", "==");
        case LESS:
          return this.maybeWithEquals(start, "<", "<=");
        case GREATER:
          return this.maybeWithEquals(start, ">", ">=");
        case TILDE:
          return this.maybeWithEquals(start, "~", "~=");
        case QUOTE:
        case APOSTROPHE:
          return this.shortString(start, c);
        case DOT:
          return this.dot(start);
        default:
          if (isBlank(c)) {
            this.pos++;
            continue;
          }
          if (isDigit(c)) return this.numeral(start);
          if (isAlpha(c) || c === UNDERSCORE) return this.word(start);
          return this.symbol(src[start]!, start, 1);
      }
    }
  }

  /** The source text an error message quotes for a token. */
  nearText(token: Token): string {
    if (token.kind === "eof") return "<eof>";
    const text = this.src.slice(token.start, Math.min(token.end, token.start + nearTextMaxChars));
    return token.end - token.start > nearTextMaxChars ? `${text}…` : text;
  }

  private token(kind: string, start: number, line = this.lineNumber, text = "", number = 0): Token {
    return new Token(kind, text, number, line, this.lineNumber, start, this.pos);
  }

  private symbol(kind: string, start: number, length: number): Token {
    this.pos = start + length;
    return this.token(kind, start);
  }

  private maybeWithEquals(start: number, single: string, double: string): Token {
    if (this.src.charCodeAt(start + 1) === EQUALS) return this.symbol(double, start, 2);
    return this.symbol(single, start, 1);
  }

  private error(message: string, near: string): never {
    throw new LuaSyntaxError(this.lineNumber, `${message} near '${near}'`);
  }

  /** Steps over a newline sequence: \n, \r, \r\n or \n\r (Lua's inclinenumber). */
  private newline(): void {
    const first = this.src.charCodeAt(this.pos++);
    const second = this.src.charCodeAt(this.pos);
    if ((second === LF || second === CR) && second !== first) this.pos++;
    this.lineNumber++;
  }

  /**
   * At a `[` or `]`: steps over it and the `=` after it, and answers how many `=` there were when
   * the same bracket follows (left there), else -(count + 1) (Lua's skip_sep).
   */
  private skipSeparator(): number {
    const src = this.src;
    const bracket = src.charCodeAt(this.pos++);
    let count = 0;
    while (src.charCodeAt(this.pos) === EQUALS) this.pos++, count++;
    return src.charCodeAt(this.pos) === bracket ? count : -count - 1;
  }

  /** After `--`: a long comment if a long bracket opens here, else the rest of the line. */
  private skipComment(): void {
    const src = this.src;
    if (src.charCodeAt(this.pos) === LEFT_BRACKET) {
      const level = this.skipSeparator();
      if (level >= 0) {
        this.longBracket(level, false);
        return;
      }
    }
    for (;;) {
      const c = src.charCodeAt(this.pos);
      if (c === LF || c === CR || Number.isNaN(c)) return;
      this.pos++;
    }
  }

  private leftBracket(start: number): Token {
    const line = this.lineNumber;
    const level = this.skipSeparator();
    if (level >= 0) {
      const text = this.longBracket(level, true);
      return this.token("string", start, line, text);
    }
    if (level === -1) return this.token("[", start);
    return this.error("invalid long string delimiter", this.src.slice(start, this.pos));
  }

  /**
   * A long string's or comment's body, the lexer at the second bracket of its opening; answers
   * its text (empty for a comment). Lua's read_long_string.
   */
  private longBracket(level: number, keep: boolean): string {
    const src = this.src;
    this.pos++;
    const first = src.charCodeAt(this.pos);
    if (first === LF || first === CR) this.newline();
    let text = "";
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= src.length) return this.error(keep ? "unfinished long string" : "unfinished long comment", "<eof>");
      const c = src.charCodeAt(this.pos);
      if (c === RIGHT_BRACKET) {
        const bracketAt = this.pos;
        if (this.skipSeparator() === level) {
          this.pos++;
          return keep ? text + src.slice(runStart, bracketAt) : "";
        }
      } else if (c === LEFT_BRACKET) {
        if (this.skipSeparator() === level) {
          this.pos++;
          if (level === 0) this.error("nesting of [[...]] is deprecated", "[");
        }
      } else if (c === LF || c === CR) {
        if (keep) text += `${src.slice(runStart, this.pos)}\n`;
        this.newline();
        runStart = this.pos;
      } else {
        this.pos++;
      }
    }
  }

  /** A string in quotes `quote`, with its escapes (Lua's read_string). */
  private shortString(start: number, quote: number): Token {
    const src = this.src;
    const line = this.lineNumber;
    this.pos++;
    let text = "";
    let runStart = this.pos;
    for (;;) {
      if (this.pos >= src.length) return this.error("unfinished string", "<eof>");
      const c = src.charCodeAt(this.pos);
      if (c === quote) break;
      if (c === LF || c === CR) return this.error("unfinished string", src.slice(start, this.pos));
      if (c !== BACKSLASH) {
        this.pos++;
        continue;
      }
      text += src.slice(runStart, this.pos);
      this.pos++;
      text += this.escape(start);
      runStart = this.pos;
    }
    text += src.slice(runStart, this.pos);
    this.pos++;
    return this.token("string", start, line, text);
  }

  /** After a backslash in a short string: the bytes the escape stands for, the lexer after it. */
  private escape(stringStart: number): string {
    const src = this.src;
    if (this.pos >= src.length) return ""; // the string's loop reports it unfinished
    const c = src.charCodeAt(this.pos);
    const simple = simpleEscape(c);
    if (simple !== undefined) {
      this.pos++;
      return simple;
    }
    if (c === LF || c === CR) {
      this.newline();
      return "\n";
    }
    if (!isDigit(c)) {
      this.pos++;
      return src[this.pos - 1]!;
    }
    let value = 0;
    for (let i = 0; i < 3 && isDigit(src.charCodeAt(this.pos)); i++) value = value * 10 + src.charCodeAt(this.pos++) - ZERO;
    if (value > 255) this.error("escape sequence too large", src.slice(stringStart, this.pos));
    return String.fromCharCode(value);
  }

  /** `.`, `..`, `...`, or a numeral starting with a dot. */
  private dot(start: number): Token {
    const src = this.src;
    if (isDotOrNul(src.charCodeAt(start + 1))) {
      if (isDotOrNul(src.charCodeAt(start + 2))) return this.symbol("...", start, 3);
      return this.symbol("..", start, 2);
    }
    if (isDigit(src.charCodeAt(start + 1))) return this.numeral(start);
    return this.symbol(".", start, 1);
  }

  /** A numeral as read_numeral gathers it, then its value (luaO_str2d). */
  private numeral(start: number): Token {
    const src = this.src;
    let c = src.charCodeAt(this.pos);
    while (isDigit(c) || c === DOT) c = src.charCodeAt(++this.pos);
    if (c === LOWER_E || c === UPPER_E || c === NUL) {
      c = src.charCodeAt(++this.pos);
      if (c === PLUS || c === MINUS || c === NUL) c = src.charCodeAt(++this.pos);
    }
    while (isWordChar(c)) c = src.charCodeAt(++this.pos);
    const text = src.slice(start, this.pos);
    // strtod reads the numeral as a C string: up to its first NUL.
    const nul = text.indexOf("\0");
    const value = numeralValue(nul < 0 ? text : text.slice(0, nul));
    if (value === undefined) return this.error("malformed number", text);
    return this.token("number", start, this.lineNumber, "", value);
  }

  /** A name or a reserved word. */
  private word(start: number): Token {
    const src = this.src;
    while (isWordChar(src.charCodeAt(this.pos))) this.pos++;
    const text = src.slice(start, this.pos);
    return this.token(reservedWords.has(text) ? text : "name", start, this.lineNumber, text);
  }
}
