/**
 * The fixed 12-byte RTP header (RFC 3550 §5.1) fields a slot relay rewrites in place: payload
 * type, marker, sequence number, timestamp and SSRC. Extensions and payload are left as they are.
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

export function readRtpHeader(packet: Uint8Array): RtpHeader {
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  return {
    payloadType: packet[1]! & 0x7f,
    marker: (packet[1]! & 0x80) !== 0,
    sequenceNumber: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
  };
}

export function writeRtpHeader(packet: Uint8Array, header: RtpHeader): void {
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  packet[1] = (header.marker ? 0x80 : 0) | (header.payloadType & 0x7f);
  view.setUint16(2, header.sequenceNumber & 0xffff);
  view.setUint32(4, header.timestamp >>> 0);
  view.setUint32(8, header.ssrc >>> 0);
}
