/**
 * A string value that changes in place. Most strings are immutable latin1 JS strings, which is
 * the compact and fast form for SET/GET; but SETBIT, BITFIELD, PFADD and SETRANGE-like writes
 * change a few bytes of a possibly large value, and rebuilding a JS string for each would cost
 * O(length) per write. Those commands turn the value into a MutableString once, and it stays one.
 *
 * To every other command it is an ordinary string: TYPE says "string", GET returns its bytes
 * (decoded once and cached until the next change), OBJECT ENCODING says "raw" as Redis does for
 * a string it has grown in place.
 */
import { objectBytes, stringBytes, typedArrayBytes } from "../memory-sizes.ts";

const initialCapacityBytes = 16;
/** Redis's SDS_MAX_PREALLOC: growth beyond the length asked for stops doubling here. */
const preallocBytesMax = 1024 * 1024;

export class MutableString {
  readonly kind = "string";
  /** Capacity may exceed `length`; bytes past `length` are always zero. */
  private buffer: Uint8Array;
  private text: string | null = null;

  private constructor(
    buffer: Uint8Array,
    public length: number,
  ) {
    this.buffer = buffer;
  }

  static from(text: string): MutableString {
    const buffer = new Uint8Array(Math.max(initialCapacityBytes, text.length));
    buffer.set(Buffer.from(text, "latin1"));
    const value = new MutableString(buffer, text.length);
    value.text = text;
    return value;
  }

  static ofLength(length: number): MutableString {
    return new MutableString(new Uint8Array(Math.max(initialCapacityBytes, length)), length);
  }

  /** Estimated bytes (MEMORY USAGE): the buffer, its room to grow included, and the decoded copy if one is cached. */
  memoryBytes(): number {
    return objectBytes(4) + typedArrayBytes(this.buffer.byteLength) + (this.text === null ? 0 : stringBytes(this.text.length));
  }

  /** The live bytes. Writers must call `changed()` after writing through this view. */
  get bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** The byte at `index`, or 0 past the end: bit commands read a missing tail as zeros. */
  byteAt(index: number): number {
    return index < this.length ? this.buffer[index]! : 0;
  }

  /** Grows the string to at least `length` bytes, zero-filled, as SETBIT past the end does. */
  ensureLength(length: number): void {
    if (length <= this.length) return;
    if (length > this.buffer.length) {
      // As Redis's sdsMakeRoomFor: double while small, so a run of appends is amortised O(1) per
      // byte; past 1 MiB add 1 MiB, so a huge string never reserves as much again.
      const room = length < preallocBytesMax ? length * 2 : length + preallocBytesMax;
      const grown = new Uint8Array(room);
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.length = length;
    this.text = null;
  }

  /**
   * Writes the latin1 byte string `text` at byte `offset`, first growing the string with zeros if
   * it ends before that (SETRANGE, APPEND): O(text.length), amortised, however long the string.
   */
  write(offset: number, text: string): void {
    this.ensureLength(offset + text.length);
    Buffer.from(this.buffer.buffer, this.buffer.byteOffset, this.buffer.length).write(text, offset, "latin1");
    this.text = null;
  }

  /** Replaces the whole content. */
  assign(bytes: Uint8Array): void {
    if (bytes.length > this.buffer.length) this.buffer = new Uint8Array(bytes.length);
    else this.buffer.fill(0, bytes.length, this.length);
    this.buffer.set(bytes);
    this.length = bytes.length;
    this.text = null;
  }

  /** Drops the cached text after a write through `bytes`. */
  changed(): void {
    this.text = null;
  }

  /** The value as a latin1 byte string, what every string command reads. */
  toString(): string {
    this.text ??= latin1Text(this.bytes);
    return this.text;
  }

  clone(): MutableString {
    const copy = MutableString.ofLength(this.length);
    copy.buffer.set(this.bytes);
    return copy;
  }
}

/** Bytes `[from, to)` as the engine's latin1 byte string (one char per byte), without copying them first. */
export function latin1Text(bytes: Uint8Array, from = 0, to = bytes.length): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString("latin1");
}

/** The bytes of a string value in either form; a plain string is copied, a MutableString is not. */
export function bytesOf(value: string | MutableString): Uint8Array {
  return typeof value === "string" ? Buffer.from(value, "latin1") : value.bytes;
}
