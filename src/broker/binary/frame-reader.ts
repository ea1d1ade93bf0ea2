/**
 * Reading the binary protocol off a byte stream that arrives in pieces of any size: the client's
 * handshake first, then frames. Bytes are appended as they come; whole frames are taken out as
 * soon as they are there, so input split anywhere reads as the same frames as input in one
 * piece. A length past the bound is refused as soon as its four bytes are in, before any of the
 * frame is buffered. A frame's payload is a view into the reader's buffer, never overwritten.
 */
import { clientHandshakeHeaderBytes, type Frame, frameLengthOverheadBytes, magic, serverHandshakeHeaderBytes } from "./wire.ts";

/** A stream that cannot be read on: the connection is answered with the message and closed. */
export class WireError extends Error {
  override name = "WireError";
}

export interface ClientHandshake {
  /** Whether the first four bytes were "SV01". */
  magicOk: boolean;
  requested: number;
  token: Uint8Array;
}

export class FrameReader {
  private buffer = new Uint8Array(0);
  private start = 0;
  private end = 0;

  constructor(
    /** Largest payload a frame may carry, bytes. */
    private readonly payloadBytesMax: number,
    /** Largest handshake token, bytes (spec: 1024). */
    private readonly tokenBytesMax: number,
  ) {}

  /** The whole frame's bytes when its length is in, else 0 (only the frame phase has one). */
  private frameBytesWanted(): number {
    if (this.end - this.start < 4) return 0;
    const length = new DataView(this.buffer.buffer, this.buffer.byteOffset + this.start).getUint32(0);
    return length - frameLengthOverheadBytes <= this.payloadBytesMax ? 4 + length : 0;
  }

  /** Bytes received and not yet taken. */
  get buffered(): number {
    return this.end - this.start;
  }

  push(bytes: Uint8Array): void {
    if (this.end + bytes.length > this.buffer.length) {
      // Grown into a new buffer (the old one may hold payloads still in use), sized for the whole
      // frame being read when its length is known, so a large frame is copied once, not doubled up to.
      const live = this.end - this.start;
      const grown = new Uint8Array(Math.max(live + bytes.length, this.buffer.length * 2, 4096, this.frameBytesWanted()));
      grown.set(this.buffer.subarray(this.start, this.end));
      this.buffer = grown;
      this.start = 0;
      this.end = live;
    }
    this.buffer.set(bytes, this.end);
    this.end += bytes.length;
  }

  /**
   * The client's handshake once it is all there, else null. Bad magic is answered at once (the
   * rest may never come); a token longer than the bound is a WireError.
   */
  takeHandshake(): ClientHandshake | null {
    const have = this.end - this.start;
    if (have >= magic.length && !magic.every((b, i) => this.buffer[this.start + i] === b)) {
      return { magicOk: false, requested: 0, token: new Uint8Array(0) };
    }
    if (have < clientHandshakeHeaderBytes) return null;
    const view = new DataView(this.buffer.buffer, this.buffer.byteOffset + this.start);
    const requested = view.getUint32(4);
    const tokenLength = view.getUint32(8);
    if (tokenLength > this.tokenBytesMax) throw new WireError(`the handshake token has ${tokenLength} bytes; at most ${this.tokenBytesMax}`);
    if (have < clientHandshakeHeaderBytes + tokenLength) return null;
    const from = this.start + clientHandshakeHeaderBytes;
    const token = this.buffer.slice(from, from + tokenLength);
    this.start = from + tokenLength;
    return { magicOk: true, requested, token };
  }

  /** The server's handshake once it is all there, else null (the client's side). */
  takeServerHandshake(): { status: number; accepted: number; message: string } | null {
    const have = this.end - this.start;
    if (have >= magic.length && !magic.every((b, i) => this.buffer[this.start + i] === b)) throw new WireError("the server did not answer SV01");
    if (have < serverHandshakeHeaderBytes) return null;
    const view = new DataView(this.buffer.buffer, this.buffer.byteOffset + this.start);
    const messageLength = view.getUint32(9);
    if (messageLength > this.payloadBytesMax) throw new WireError(`the server's handshake message has ${messageLength} bytes`);
    if (have < serverHandshakeHeaderBytes + messageLength) return null;
    const from = this.start + serverHandshakeHeaderBytes;
    const message = new TextDecoder().decode(this.buffer.subarray(from, from + messageLength));
    const answer = { status: this.buffer[this.start + 4]!, accepted: view.getUint32(5), message };
    this.start = from + messageLength;
    return answer;
  }

  /** The next whole frame, else null. A length outside the bounds is a WireError. */
  takeFrame(): Frame | null {
    const have = this.end - this.start;
    if (have < 4) return null;
    const view = new DataView(this.buffer.buffer, this.buffer.byteOffset + this.start);
    const length = view.getUint32(0);
    if (length < frameLengthOverheadBytes)
      throw new WireError(`a frame's length is ${length}; it must be at least ${frameLengthOverheadBytes} (request id and opcode)`);
    if (length - frameLengthOverheadBytes > this.payloadBytesMax) {
      throw new WireError(`a frame carries ${length - frameLengthOverheadBytes} bytes of payload; at most ${this.payloadBytesMax} (--max-request-body-bytes)`);
    }
    if (have < 4 + length) return null;
    const frame: Frame = {
      requestId: view.getUint32(4),
      opcode: this.buffer[this.start + 8]!,
      // A view, not a copy: bytes before `start` are never written again (see below).
      payload: this.buffer.subarray(this.start + 9, this.start + 4 + length),
    };
    this.start += 4 + length;
    // Everything taken: the next bytes go to a new buffer, so the payloads handed out (whose
    // requests may still be running) keep theirs.
    if (this.start === this.end) {
      this.buffer = new Uint8Array(0);
      this.start = this.end = 0;
    }
    return frame;
  }
}
