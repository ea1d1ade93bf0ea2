/**
 * A connection's RESP2 output buffer. Replies to every command of one read are appended here and
 * written to the socket once (output coalesced per client); what the socket does not take stays
 * queued until it drains.
 */
import type { Reply } from "../kit/reply.ts";
import { formatDouble } from "../text/format-double.ts";
import { grownBuffer, type Latin1Buffer, writeBytes, writeIntLine, writeLatin1 } from "../text/write-bytes.ts";

/** First size of a connection's output buffer; it doubles as needed. */
const initialBufferBytes = 16 * 1024;
const crlf = 0x0a0d; // "\r\n" as a little-endian u16
const COLON = 0x3a;
const DOLLAR = 0x24;
const ASTERISK = 0x2a;
const PERCENT = 0x25; // RESP3 map
const TILDE = 0x7e; // RESP3 set
const GREATER = 0x3e; // RESP3 push
const EQUALS = 0x3d; // RESP3 verbatim string
/** A type byte, a minus, the 16 digits of a safe integer, and CRLF. */
const intLineBytesMax = 20;

export class RespWriter implements Reply {
  protocol: 2 | 3 = 2;
  buffer = Buffer.allocUnsafe(initialBufferBytes) as Latin1Buffer;
  /** Unsent output is buffer[start, length): the socket took what came before `start`. */
  start = 0;
  length = 0;
  /** Bytes the socket has taken since the connection opened. */
  consumedTotal = 0;
  /** Told of every error reply written (the server's error statistics). */
  onError: ((message: string) => void) | null = null;

  /** Bytes waiting for the socket. */
  get pendingBytes(): number {
    return this.length - this.start;
  }

  /** Bytes appended since the connection opened: a position in the output that moving data does not change. */
  get endTotal(): number {
    return this.consumedTotal + this.length - this.start;
  }

  private reserve(bytes: number): void {
    const needed = this.length + bytes;
    if (needed <= this.buffer.length) return;
    const pending = this.length - this.start;
    // Move the unsent bytes to the front rather than grow, when that makes room.
    if (pending + bytes <= this.buffer.length) {
      this.buffer.copy(this.buffer, 0, this.start, this.length);
    } else this.buffer = grownBuffer(this.buffer, this.start, this.length, pending + bytes);
    this.start = 0;
    this.length = pending;
  }

  /** Appends a latin1 string, one byte per char. */
  private raw(text: string): void {
    this.reserve(text.length);
    this.length = writeLatin1(this.buffer, this.length, text);
  }

  private line(prefix: string, text: string): void {
    this.reserve(text.length + 3);
    this.buffer[this.length++] = prefix.charCodeAt(0);
    this.length = writeLatin1(this.buffer, this.length, text);
    this.buffer.writeUInt16LE(crlf, this.length);
    this.length += 2;
  }

  /**
   * `<prefix><n>\r\n` for a safe integer n, with the digits written straight into the buffer:
   * lengths and counts head almost every reply, and making a string of each would cost an
   * allocation.
   */
  private intLine(prefix: number, n: number): void {
    this.reserve(intLineBytesMax);
    this.putIntLine(prefix, n);
  }

  /** intLine without the reserve, for a caller that reserved room for the whole reply. */
  private putIntLine(prefix: number, n: number): void {
    this.length = writeIntLine(this.buffer, this.length, prefix, n);
  }

  simple(text: string): void {
    this.line("+", text);
  }

  error(message: string, counted = false): void {
    if (!counted) this.onError?.(message);
    // A newline inside an error would end the line early and desynchronise the client.
    this.line("-", message.replace(/[\r\n]/g, " "));
  }

  integer(n: number | bigint): void {
    if (typeof n === "number" && Number.isSafeInteger(n)) this.intLine(COLON, n);
    else this.line(":", String(n));
  }

  bulk(value: string | null): void {
    if (value === null) {
      this.raw(this.protocol === 3 ? "_\r\n" : "$-1\r\n");
      return;
    }
    this.reserve(intLineBytesMax + value.length + 2);
    this.putIntLine(DOLLAR, value.length);
    this.length = writeLatin1(this.buffer, this.length, value);
    this.buffer.writeUInt16LE(crlf, this.length);
    this.length += 2;
  }

  bulkBytes(bytes: Uint8Array, from: number, to: number): void {
    this.reserve(intLineBytesMax + to - from + 2);
    this.putIntLine(DOLLAR, to - from);
    this.length = writeBytes(this.buffer, this.length, bytes, from, to);
    this.buffer.writeUInt16LE(crlf, this.length);
    this.length += 2;
  }

  array(length: number | null): void {
    if (length === null) this.raw(this.protocol === 3 ? "_\r\n" : "*-1\r\n");
    else this.intLine(ASTERISK, length);
  }

  map(pairs: number): void {
    if (this.protocol === 3) this.intLine(PERCENT, pairs);
    else this.intLine(ASTERISK, pairs * 2);
  }

  set(count: number): void {
    this.intLine(this.protocol === 3 ? TILDE : ASTERISK, count);
  }

  double(n: number, text = formatDouble(n)): void {
    if (this.protocol === 3) this.line(",", text);
    else this.bulk(text);
  }

  push(count: number): void {
    this.intLine(this.protocol === 3 ? GREATER : ASTERISK, count);
  }

  verbatim(text: string, format = "txt"): void {
    if (this.protocol === 2) return this.bulk(text);
    this.intLine(EQUALS, text.length + 4);
    this.raw(format);
    this.raw(":");
    this.raw(text);
    this.raw("\r\n");
  }

  boolean(value: boolean): void {
    if (this.protocol === 3) this.raw(value ? "#t\r\n" : "#f\r\n");
    else this.intLine(COLON, value ? 1 : 0);
  }

  bigNumber(digits: string): void {
    if (this.protocol === 3) this.line("(", digits);
    else this.bulk(digits);
  }

  /**
   * Appends already-encoded RESP, `bytes[from, to)`: a pub/sub message built once for many
   * subscribers, a script's reply that reads the same in RESP2 and RESP3 (commands/scripting.ts).
   */
  encoded(bytes: Uint8Array, from = 0, to = bytes.length): void {
    this.reserve(to - from);
    this.length = writeBytes(this.buffer, this.length, bytes, from, to);
  }

  /**
   * Drops what was appended after position `endTotal` (an earlier endTotal), if it has not been
   * sent: the reply of a command whose client asked for none (CLIENT REPLY OFF or SKIP).
   */
  discardFrom(endTotal: number): void {
    const at = this.start + (endTotal - this.consumedTotal);
    if (at >= this.start && at <= this.length) this.length = at;
  }

  /**
   * Drops the first `bytes` unsent bytes (they reached the socket). Nothing is copied: a slow
   * client's partial writes would otherwise move the whole backlog each time.
   */
  consume(bytes: number): void {
    this.consumedTotal += bytes;
    this.start += bytes;
    if (this.start >= this.length) this.start = this.length = 0;
  }
}
