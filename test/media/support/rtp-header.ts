/**
 * The fixed 12-byte RTP header (RFC 3550 §5.1) fields the media tests read and write: payload
 * type, marker, sequence number, timestamp and SSRC, as plain bytes. Extensions and payload are
 * left as they are.
 */

/** Bytes of the fixed header; a shorter packet is not RTP. */
export const rtpFixedHeaderBytes = 12;

export interface RtpHeader {
  payloadType: number;
  marker: boolean;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

/** True when `packet` can be RTP version 2 with a whole fixed header. */
export function isRtp(packet: Uint8Array): boolean {
  return packet.length >= rtpFixedHeaderBytes && packet[0]! >> 6 === 2;
}

export const rtpMarker = (packet: Uint8Array): boolean => (packet[1]! & 0x80) !== 0;

export const rtpSequenceNumber = (packet: Uint8Array): number => (packet[2]! << 8) | packet[3]!;

export const rtpTimestamp = (packet: Uint8Array): number => readUint32(packet, 4);

function readUint32(packet: Uint8Array, at: number): number {
  return ((packet[at]! << 24) | (packet[at + 1]! << 16) | (packet[at + 2]! << 8) | packet[at + 3]!) >>> 0;
}

function writeUint32(packet: Uint8Array, at: number, value: number): void {
  packet[at] = value >>> 24;
  packet[at + 1] = value >>> 16;
  packet[at + 2] = value >>> 8;
  packet[at + 3] = value;
}

/** All the fixed header's fields at once, as an object (for tests and logs; forwarding reads them one by one). */
export function readRtpHeader(packet: Uint8Array): RtpHeader {
  return {
    payloadType: packet[1]! & 0x7f,
    marker: rtpMarker(packet),
    sequenceNumber: rtpSequenceNumber(packet),
    timestamp: rtpTimestamp(packet),
    ssrc: readUint32(packet, 8),
  };
}

export function writeRtpHeader(packet: Uint8Array, payloadType: number, marker: boolean, sequenceNumber: number, timestamp: number, ssrc: number): void {
  packet[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  packet[2] = sequenceNumber >>> 8;
  packet[3] = sequenceNumber;
  writeUint32(packet, 4, timestamp);
  writeUint32(packet, 8, ssrc);
}
