/**
 * The SV01 binary protocol's wire format (spec: Binary protocol), as both the broker and the
 * client library (client.ts) read and write it. Integers are big-endian — network order, as
 * Kafka's protocol has them; the spec leaves byte order open. docs/broker.md has the layout with
 * a worked example.
 *
 *   handshake, client → server   magic "SV01" | features u32 | token_len u32 | token
 *   handshake, server → client   magic "SV01" | status u8 | features u32 | msg_len u32 | msg
 *   frame, either way            length u32 | request_id u32 | opcode u8 | payload
 *
 * `length` counts the bytes after itself (request id, opcode, payload). With gzip or lz4
 * negotiated the payload of every frame is compressed (compression.ts); the header is not.
 */

export const magic = new Uint8Array([0x53, 0x56, 0x30, 0x31]); // "SV01"

/** Feature bits of the handshake: gzip is the spec's, lz4 ours (compression.ts). */
export const features = { gzip: 0x1, lz4: 0x2 } as const;

export const handshakeStatus = { ok: 0, badMagic: 1, authFailed: 2, authRequired: 3 } as const;
export type HandshakeStatus = (typeof handshakeStatus)[keyof typeof handshakeStatus];

export const opcodes = {
  produce: 0x01,
  consume: 0x02,
  ping: 0x03,
  produceResponse: 0x81,
  consumeResponse: 0x82,
  pingResponse: 0x83,
  error: 0xff,
} as const;

/** Bytes of the client's handshake before its token: magic, features, token_len. */
export const clientHandshakeHeaderBytes = 12;
/** Bytes of the server's handshake before its message: magic, status, features, msg_len. */
export const serverHandshakeHeaderBytes = 13;
/** Bytes of a frame before its payload: length, request_id, opcode. */
export const frameHeaderBytes = 9;
/** What `length` counts beyond the payload: request_id and opcode. */
export const frameLengthOverheadBytes = 5;

/** i64's least value: a produce record's "no sequence". */
export const noSequence = -(2n ** 63n);

/** A frame as read off the wire, its payload still compressed if a codec was negotiated. */
export interface Frame {
  requestId: number;
  opcode: number;
  payload: Uint8Array;
}

/** A frame's bytes. */
export function encodeFrame(requestId: number, opcode: number, payload: Uint8Array): Uint8Array {
  return writeFrameHeader(withHeaderRoom(payload), requestId, opcode);
}

/**
 * `payload` in a new buffer with a frame header's room before it. Payloads encoded for sending
 * are made with that room already (the payload encoders leave it), so their header is written in
 * place and a megabyte of records is not copied into a second buffer; this is for the others.
 */
export function withHeaderRoom(payload: Uint8Array): Uint8Array {
  const framed = new Uint8Array(frameHeaderBytes + payload.length);
  framed.set(payload, frameHeaderBytes);
  return framed;
}

/**
 * Writes the header of the frame `frame` holds — its payload already in place after the first
 * frameHeaderBytes — and answers it: a payload encoded with room for its header is not copied.
 */
export function writeFrameHeader(frame: Uint8Array, requestId: number, opcode: number): Uint8Array {
  const view = new DataView(frame.buffer, frame.byteOffset, frameHeaderBytes);
  view.setUint32(0, frame.length - 4);
  view.setUint32(4, requestId);
  frame[8] = opcode;
  return frame;
}

export function encodeClientHandshake(requested: number, token: Uint8Array): Uint8Array {
  const out = new Uint8Array(clientHandshakeHeaderBytes + token.length);
  out.set(magic, 0);
  const view = new DataView(out.buffer);
  view.setUint32(4, requested);
  view.setUint32(8, token.length);
  out.set(token, clientHandshakeHeaderBytes);
  return out;
}

export function encodeServerHandshake(status: HandshakeStatus, accepted: number, message: string): Uint8Array {
  const text = new TextEncoder().encode(message);
  const out = new Uint8Array(serverHandshakeHeaderBytes + text.length);
  out.set(magic, 0);
  const view = new DataView(out.buffer);
  out[4] = status;
  view.setUint32(5, accepted);
  view.setUint32(9, text.length);
  out.set(text, serverHandshakeHeaderBytes);
  return out;
}
