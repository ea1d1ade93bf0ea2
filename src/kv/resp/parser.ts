/**
 * The RESP2 request parser: multibulk commands (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) and inline
 * commands (`GET k\r\n`), as Redis's processMultibulkBuffer and processInlineBuffer read them,
 * with the same limits and protocol-error messages.
 *
 * It is fed one read buffer at a time and returns every complete command in it. A command that is
 * cut off keeps its progress (the arguments already read, the length of the bulk being waited
 * for), so a large command arriving in many reads is never re-parsed from its start. Arguments come
 * out as latin1 strings: one char per byte, binary-safe.
 */

import { commandName } from "./command-names.ts";
import { spells } from "../text/recent-strings.ts";
import type { Latin1Buffer } from "../text/write-bytes.ts";
import { splitInlineArgs } from "../text/split-args.ts";

/** Longest inline command, or count line, without a newline (Redis's PROTO_INLINE_MAX_SIZE). */
export const inlineBytesMax = 64 * 1024;
/** Most arguments in one multibulk command (Redis 7 allows INT_MAX to an authenticated client). */
export const multibulkArgsMax = 2 ** 31 - 1;
/** Redis's default proto-max-bulk-len. */
export const bulkBytesMaxDefault = 512 * 1024 * 1024;

export interface ParseOutput {
  commands: string[][];
  /** Set when the stream broke the protocol; the connection answers it and closes. */
  error: string | null;
}

/** First size of a parser's input buffer; it doubles as needed. */
const bufferBytesMin = 16 * 1024;

/** First byte of a multibulk command; anything else starts an inline one. */
export const ASTERISK = 0x2a;
const DOLLAR = 0x24;
const CR = 0x0d;
const LF = 0x0a;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** Longest text string2ll reads (Redis's LONG_STR_SIZE - 1). */
const longTextBytesMax = 20;

/**
 * The integer in `bytes[from, to)` as Redis's string2ll reads it — "0", or an optional minus and
 * a digit 1-9 followed by digits, within int64 — or NaN. Beyond 2^53 the value is rounded, which
 * is harmless: such counts and lengths are far past every limit they are checked against.
 */
export function parseLongLong(bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  if (length === 0 || length > longTextBytesMax) return Number.NaN;
  if (length === 1 && bytes[from] === DIGIT_0) return 0;
  const negative = bytes[from] === MINUS;
  let i = negative ? from + 1 : from;
  if (i === to || bytes[i]! < DIGIT_0 + 1 || bytes[i]! > DIGIT_9) return Number.NaN;
  let value = 0;
  for (; i < to; i++) {
    const c = bytes[i]!;
    if (c < DIGIT_0 || c > DIGIT_9) return Number.NaN;
    value = value * 10 + (c - DIGIT_0);
  }
  // int64's range, compared in doubles: 2^63 is exact, and anything that rounds to it is past.
  if (value >= 2 ** 63 && !(negative && value === 2 ** 63)) return Number.NaN;
  return negative ? -value : value;
}

/**
 * What a connection needs from a request parser. RespParser is the reference; NativeRespParser
 * (native-parser.ts) scans natively and must behave identically.
 */
export interface RequestParser {
  /** Bytes received but not yet part of a complete command (the query buffer). */
  readonly pendingBytes: number;
  /** The bytes of the arguments read so far of a command cut off by the end of a read (CLIENT LIST's argv-mem). */
  readonly partialArgBytes: number;
  /** The input buffer's size, whatever it holds (CLIENT LIST's qbuf-free is what it has left). */
  readonly capacityBytes: number;
  /** Longest bulk accepted (proto-max-bulk-len); CONFIG SET changes it between reads. */
  bulkBytesMax: number;
  /** Takes the next read; returns every command it completes, and the protocol error if any. */
  feed(chunk: Uint8Array): ParseOutput;
}

/**
 * Arguments up to this long are checked against the last command's (RequestBuffer.argument): an
 * EVALSHA's SHA-1 (40 hex digits) among them, which a pipeline of one script repeats and the
 * script cache then finds by a string whose hash is already known.
 */
const repeatedArgBytesMax = 64;
/**
 * Arguments at positions below this are checked against the last command's (the name, at 0, is
 * interned instead). Wide enough for a script's keys: BullMQ's EVALSHAs name 8–14 queue keys
 * (positions 3–16) and repeat them in every call, and its arguments follow; with 4 positions its
 * parser made 33 strings a job, with 32 it makes 5.
 */
const repeatedArgPositions = 32;

/**
 * What both parsers keep between reads — the bytes not yet parsed and the progress of a command
 * cut off by the end of a read — and what they share: adding a read to the bytes, making the
 * strings of a command's arguments, and inline commands (rare: a person typing into redis-cli
 * or telnet).
 */
export abstract class RequestBuffer {
  protected buffer = Buffer.alloc(0) as Latin1Buffer;
  protected start = 0;
  protected end = 0;
  /** Arguments still expected by the multibulk command in progress; 0 when none is. */
  protected argsLeft = 0;
  /** The arguments of the command in progress read so far. */
  protected args: string[] = [];
  /** Length of the bulk being read, or -1 while its `$len` line is still to come. */
  protected bulkLength = -1;

  constructor(public bulkBytesMax = bulkBytesMaxDefault) {}

  /** The last command's short arguments by position (argument()). */
  private readonly lastArgs: (string | undefined)[] = new Array(repeatedArgPositions).fill(undefined);

  /**
   * The argument at `position` of a command, in buffer[from, to). The name (position 0) is
   * interned (command-names.ts); a later argument is the same string as the last command's
   * argument there when the bytes are the same. Pipelined commands often repeat an
   * argument (one list pushed to, one set added to, one value), and comparing the bytes costs
   * less than making a string (a native call, ~45 ns). They are compared from the end, where
   * keys that differ usually do, so a miss costs a byte or two.
   */
  protected argument(position: number, from: number, to: number): string {
    if (position === 0) return commandName(this.buffer, from, to);
    const length = to - from;
    const buffer = this.buffer;
    if (length <= repeatedArgBytesMax && position < repeatedArgPositions) {
      const last = this.lastArgs[position];
      if (last !== undefined && spells(last, buffer, from, to)) return last;
      const arg = buffer.latin1Slice(from, to);
      this.lastArgs[position] = arg;
      return arg;
    }
    return buffer.latin1Slice(from, to);
  }

  /** Bytes received but not yet part of a complete command (the query buffer). */
  get pendingBytes(): number {
    return this.end - this.start;
  }

  get partialArgBytes(): number {
    let bytes = 0;
    if (this.argsLeft > 0) for (const arg of this.args) bytes += arg.length;
    return bytes;
  }

  get capacityBytes(): number {
    return this.buffer.length;
  }

  protected append(chunk: Uint8Array): void {
    if (this.start === this.end) {
      this.start = this.end = 0;
    }
    if (this.end + chunk.length > this.buffer.length) {
      const live = this.end - this.start;
      const size = Math.max(this.buffer.length * 2, live + chunk.length, bufferBytesMin);
      const grown = live + chunk.length <= this.buffer.length ? this.buffer : (Buffer.allocUnsafe(size) as Latin1Buffer);
      this.buffer.copy(grown, 0, this.start, this.end);
      this.buffer = grown;
      this.start = 0;
      this.end = live;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  /**
   * One inline command, a line ending in LF or CRLF; undefined if incomplete, null for an empty
   * line. Throws ProtocolError.
   */
  protected inline(): string[] | null | undefined {
    const lf = this.buffer.indexOf(LF, this.start);
    // Redis finds the newline with strchr, which stops at a NUL: such a line never completes.
    const nul = lf === -1 ? -1 : this.buffer.indexOf(0, this.start);
    if (lf === -1 || lf >= this.end || (nul !== -1 && nul < lf)) {
      if (this.end - this.start > inlineBytesMax) throw new ProtocolError("too big inline request");
      return undefined;
    }
    const lineEnd = lf > this.start && this.buffer[lf - 1] === CR ? lf - 1 : lf;
    const line = this.buffer.latin1Slice(this.start, lineEnd);
    const lineBytes = lf + 1 - this.start;
    this.start = lf + 1;
    const args = splitInlineArgs(line);
    if (args === null) throw new ProtocolError("unbalanced quotes in request");
    if (args.length === 0) return null;
    // What it took in the query buffer, which its arguments do not tell (requestBytes).
    (args as InlineCommand).inlineBytes = lineBytes;
    return args;
  }
}

/** An inline command's arguments, with the bytes of its line. */
export type InlineCommand = string[] & { inlineBytes?: number };

/** The arguments between two commands: none, and frozen, so a stray push fails loudly. */
const noArgs: string[] = Object.freeze([]) as unknown as string[];

export class RespParser extends RequestBuffer implements RequestParser {
  feed(chunk: Uint8Array): ParseOutput {
    this.append(chunk);
    const commands: string[][] = [];
    try {
      while (this.start < this.end) {
        const command = this.argsLeft > 0 || this.buffer[this.start] === ASTERISK ? this.multibulk() : this.inline();
        if (command === undefined) break;
        if (command !== null) commands.push(command);
      }
    } catch (error) {
      if (error instanceof ProtocolError) return { commands, error: error.message };
      throw error;
    }
    return { commands, error: null };
  }

  /**
   * Reads a `<prefix><integer>\r\n` header line as Redis does: the line ends at the first CR (a
   * NUL before it hides it, as C's strchr does), the byte after the CR is skipped unread, and the
   * integer must be what string2ll accepts. Returns undefined if the line is incomplete, NaN for
   * a malformed integer.
   */
  private header(tooLong: string): number | undefined {
    const buffer = this.buffer;
    const from = this.start + 1;
    let cr = from;
    while (cr < this.end && buffer[cr] !== CR && buffer[cr] !== 0) cr++;
    // The CR and the byte after it must both have arrived.
    if (cr + 1 >= this.end || buffer[cr] !== CR) {
      if (this.end - this.start > inlineBytesMax) throw new ProtocolError(tooLong);
      return undefined;
    }
    this.start = cr + 2;
    return parseLongLong(buffer, from, cr);
  }

  /** One multibulk command; undefined if incomplete, null for an empty (*0 or *-1) one. */
  protected multibulk(): string[] | null | undefined {
    if (this.argsLeft === 0) {
      const count = this.header("too big mbulk count string");
      if (count === undefined) return undefined;
      if (!(count <= multibulkArgsMax)) throw new ProtocolError("invalid multibulk length");
      if (count <= 0) return null;
      this.argsLeft = count;
      this.args = [];
    }
    while (this.argsLeft > 0) {
      if (this.bulkLength === -1) {
        if (this.start >= this.end) return undefined;
        if (this.buffer[this.start] !== DOLLAR) throw new ProtocolError(expectedDollar(this.buffer[this.start]!));
        const length = this.header("too big bulk count string");
        if (length === undefined) return undefined;
        if (!(length >= 0 && length <= this.bulkBytesMax)) throw new ProtocolError("invalid bulk length");
        this.bulkLength = length;
      }
      // The bulk and the two bytes after it (a CRLF, which Redis skips unread) must have arrived.
      if (this.end - this.start < this.bulkLength + 2) return undefined;
      const end = this.start + this.bulkLength;
      this.args.push(this.argument(this.args.length, this.start, end));
      this.start += this.bulkLength + 2;
      this.bulkLength = -1;
      this.argsLeft--;
    }
    const args = this.args;
    // The next command starts its own array; until then nothing may be added to this one.
    this.args = noArgs;
    return args;
  }
}

/** The error a stream that broke the protocol is answered with; the connection then closes. */
export const protocolErrorMessage = (detail: string) => `ERR Protocol error: ${detail}`;

/** The detail for a bulk without its `$`, naming the byte found instead. */
export const expectedDollar = (byte: number) => `expected '$', got '${String.fromCharCode(byte)}'`;

export class ProtocolError extends Error {
  constructor(detail: string) {
    super(protocolErrorMessage(detail));
  }
}
