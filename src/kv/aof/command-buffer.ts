/**
 * Commands encoded as RESP multibulk requests (`*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n`), appended to a
 * growing byte buffer: the append-only file's format, which is what Redis writes too, so
 * `redis-check-aof` and redis-server itself can read our files.
 */
import { writeAll } from "../../core/write-all.ts";
import { type Latin1Buffer, writeBytes, writeIntLine, writeLatin1 } from "../resp/write-bytes.ts";

/** First size of a command buffer; it doubles as needed. */
const initialBufferBytes = 64 * 1024;

/** Bytes of `*<n>\r\n` or `$<n>\r\n` for n below 2^53. */
const headerBytesMax = 1 + 16 + 2;

const setHead = new TextEncoder().encode("*3\r\n$3\r\nSET\r\n");
/** push's commands have no fixed head: every argument is an item. */
const noHead: readonly string[] = [];

/** A buffer that spills to a file writes itself out each time it holds at least this much. */
const spillBytes = 1024 * 1024;

export class CommandBuffer {
  private buffer = Buffer.allocUnsafe(initialBufferBytes) as Latin1Buffer;
  length = 0;

  /**
   * `spillFd`: a file the buffer writes itself to, synchronously, after any command that leaves
   * it holding spillBytes or more (a rewrite's new file: a list of millions of items then passes
   * through a 1 MiB buffer instead of growing one to its whole size). -1: it only grows.
   */
  constructor(private readonly spillFd = -1) {}

  /** Appends one command. Arguments are latin1 byte strings, as the engine holds them. */
  push(argv: readonly string[]): void {
    this.pushItems(noHead, argv, 0, argv.length);
  }

  /** Appends an annotation line, `#<text>\r\n`, which loaders skip (Redis 7's `#TS:<seconds>`). */
  annotate(text: string): void {
    this.reserve(text.length + 3);
    const buffer = this.buffer;
    buffer[this.length] = 0x23;
    let at = writeLatin1(buffer, this.length + 1, text);
    buffer[at++] = 0x0d;
    buffer[at++] = 0x0a;
    this.length = at;
  }

  /** `$<length>\r\n<arg>\r\n`; the caller has reserved room. */
  private bulk(arg: string): void {
    const buffer = this.buffer;
    let at = writeLatin1(buffer, writeIntLine(buffer, this.length, 0x24, arg.length), arg);
    buffer[at++] = 0x0d;
    buffer[at++] = 0x0a;
    this.length = at;
  }

  /**
   * Appends one command: `head`, then the `count` items `items.at(from)`, `items.at(from + 1)`, …
   * A rewrite's RPUSH of a list chunk, encoded straight from the list rather than through an
   * argument array per chunk encoded in a second pass. With the spilling buffer and offsets kept
   * in locals (writeIntLine), 4M items go to a file in 68–79 ms; they took 170–200.
   */
  pushItems(head: readonly string[], items: { at(index: number): string | undefined }, from: number, count: number): void {
    let bytes = headerBytesMax;
    for (const arg of head) bytes += headerBytesMax + arg.length + 2;
    this.reserve(bytes);
    this.header(0x2a, head.length + count);
    for (const arg of head) this.bulk(arg);
    for (let i = from; i < from + count; i++) {
      const item = items.at(i)!;
      this.reserve(headerBytesMax + item.length + 2);
      this.bulk(item);
    }
    this.spillIfFull();
  }

  /**
   * Appends `SET key value`, both copied from `bytes` (a key table's slab): an append-only file
   * rewrite's usual command, made without a string for either.
   */
  pushSet(bytes: Uint8Array, keyAt: number, keyBytes: number, valueAt: number, valueBytes: number): void {
    this.reserve(setHead.length + 2 * headerBytesMax + keyBytes + valueBytes + 4);
    const buffer = this.buffer;
    buffer.set(setHead, this.length);
    this.length += setHead.length;
    this.copyBulk(bytes, keyAt, keyBytes);
    this.copyBulk(bytes, valueAt, valueBytes);
    this.spillIfFull();
  }

  private spillIfFull(): void {
    if (this.spillFd >= 0 && this.length >= spillBytes) this.writeTo(this.spillFd);
  }

  private copyBulk(bytes: Uint8Array, from: number, count: number): void {
    this.header(0x24, count);
    const buffer = this.buffer;
    let at = writeBytes(buffer, this.length, bytes, from, from + count);
    buffer[at++] = 0x0d;
    buffer[at++] = 0x0a;
    this.length = at;
  }

  /** The bytes pushed so far, as a copy, and an empty buffer for what comes next. */
  take(): Uint8Array {
    const bytes = Uint8Array.prototype.slice.call(this.buffer, 0, this.length);
    this.length = 0;
    return bytes;
  }

  /** Writes the bytes pushed so far to the file `fd`, synchronously, and empties the buffer. */
  writeTo(fd: number): void {
    writeAll(fd, this.buffer, this.length);
    this.length = 0;
  }

  private header(type: number, n: number): void {
    this.length = writeIntLine(this.buffer, this.length, type, n);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size) as Latin1Buffer;
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
