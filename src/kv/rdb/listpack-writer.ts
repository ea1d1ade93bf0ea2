/**
 * Writing a listpack, the container Redis 7 packs small collections and stream nodes into (the
 * reader is packed-lists.ts): a 4-byte total length and a 2-byte count, little-endian, then each
 * element — an encoding byte and its data, then that size again, written backwards — and 0xff.
 *
 * Elements are encoded as Redis's lpAppend encodes them: a string that is a canonical int64 in
 * decimal is stored as the integer, in the smallest of Redis's integer forms.
 */
import { isInt64, parseInt64 } from "../text/args.ts";
import { bytesOf } from "../types/string/bytes.ts";

const headerBytes = 6;
const end = 0xff;
/** Above this many elements the header's count reads "unknown", as Redis writes it. */
const countMax = 0xffff;

export class ListpackWriter {
  private readonly parts: Uint8Array[] = [];
  private bytes = headerBytes + 1;
  private count = 0;

  /** Appends a string, as an integer when it is a canonical int64. */
  string(text: string): void {
    const n = text.length <= 20 ? parseInt64(text) : null;
    if (n !== null && String(n) === text) return this.integer(n);
    const data = bytesOf(text);
    const length = data.length;
    let head: number[];
    if (length < 64) head = [0x80 | length];
    else if (length < 4096) head = [0xe0 | (length >> 8), length & 0xff];
    else head = [0xf0, length & 0xff, (length >> 8) & 0xff, (length >> 16) & 0xff, (length >>> 24) & 0xff];
    this.element(Uint8Array.from(head), data);
  }

  /** Appends an integer, in the smallest form that holds it. */
  integer(value: bigint | number): void {
    const n = BigInt(value);
    if (!isInt64(n)) throw new RangeError("a listpack integer is an int64");
    const v = Number(n);
    if (n >= 0n && n <= 127n) return this.element(Uint8Array.of(v));
    if (n >= -4096n && n <= 4095n) {
      const u = v < 0 ? v + 8192 : v;
      return this.element(Uint8Array.of(0xc0 | (u >> 8), u & 0xff));
    }
    const sized = (marker: number, byteCount: number) => {
      const out = new Uint8Array(1 + byteCount);
      out[0] = marker;
      let u = BigInt.asUintN(byteCount * 8, n);
      for (let i = 1; i <= byteCount; i++, u >>= 8n) out[i] = Number(u & 0xffn);
      this.element(out);
    };
    if (n >= -32_768n && n <= 32_767n) return sized(0xf1, 2);
    if (n >= -8_388_608n && n <= 8_388_607n) return sized(0xf2, 3);
    if (n >= -2_147_483_648n && n <= 2_147_483_647n) return sized(0xf3, 4);
    sized(0xf4, 8);
  }

  /** The listpack's bytes. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.bytes);
    const view = new DataView(out.buffer);
    view.setUint32(0, this.bytes, true);
    view.setUint16(4, Math.min(this.count, countMax), true);
    let at = headerBytes;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    out[at] = end;
    return out;
  }

  private element(head: Uint8Array, data?: Uint8Array): void {
    const size = head.length + (data?.length ?? 0);
    const back = backlen(size);
    this.parts.push(head);
    if (data !== undefined) this.parts.push(data);
    this.parts.push(back);
    this.bytes += size + back.length;
    this.count++;
  }
}

/** An element's size written backwards, 7 bits a byte, as Redis's lpEncodeBacklen writes it. */
function backlen(size: number): Uint8Array {
  if (size <= 127) return Uint8Array.of(size);
  const groups: number[] = [];
  const byteCount = size < 16_383 ? 2 : size < 2_097_151 ? 3 : size < 268_435_455 ? 4 : 5;
  for (let i = byteCount - 1; i >= 0; i--) groups.push(Math.floor(size / 128 ** i) % 128);
  // The first byte read going backwards (the last written) carries no continuation bit.
  return Uint8Array.from(groups.map((g, i) => (i === 0 ? g : g | 128)));
}
