/**
 * A lightweight voice-client stand-in for bench/media.ts: one UDP socket per participant that
 * sends Opus-shaped RTP at a fixed packet rate to its transport on the forwarding side and counts
 * what comes back on each slot. werift at 50 participants × 50 packets/s (SRTP in JavaScript) would
 * be the bottleneck of a 2-core machine, so this speaks plain RTP — the forwarding side opens
 * mediasoup PlainTransports (comedia) instead of WebRtcTransports.
 *
 * Each packet carries the ssrc-audio-level header extension (so mediasoup's audio-level observer,
 * and with it slot choice, works as it does with real clients) and, in its payload, the sender's
 * index and the packet's index, so a receiver knows exactly which source packet it got: loss is
 * counted against what was sent, not guessed from sequence numbers.
 */
import type { udp } from "bun";

/** Opus at 20 ms frames: 50 packets per second, 960 ticks of the 48 kHz clock each. */
export const opusPacketsPerSec = 50;
const opusFrameTicks = 960;
/** A 20 ms Opus frame of speech at ~32 kbit/s is about 80 bytes. */
const opusPayloadBytes = 80;
const rtpHeaderBytes = 12;
/** One-byte-header extension block (RFC 8285): 4-byte preamble + one 4-byte word for the level. */
const extensionBlockBytes = 8;
export const packetBytes = rtpHeaderBytes + extensionBlockBytes + opusPayloadBytes;
/** Payload: Opus TOC byte (SILK/CELT hybrid, 20 ms, mono), then our sender and packet indexes. */
const opusTocByte = 0x78;
const senderInPayload = 1;
const packetIndexInPayload = 3;
/** TOC byte, 16-bit sender index, 32-bit packet index. */
const payloadTagBytes = 7;
const sentPayloadOffset = rtpHeaderBytes + extensionBlockBytes;
export const benchPayloadType = 96;
export const audioLevelExtensionId = 1;
/** How often the send loop wakes; each wake sends every packet that is due (catching up after a stall). */
const sendTickMs = 2;

export interface SlotCount {
  /** Packets received on this slot (SSRC) whose packet index lies in the measured window. */
  inWindow: number;
  /** Sequence numbers that were not the previous one + 1, after the warm-up. */
  sequenceBreaks: number;
  lastSequence: number | null;
  /** The sender indexes seen on this slot in the measured window. */
  sources: Set<number>;
}

export class Participant {
  readonly slots = new Map<number, SlotCount>();
  /** Packets received after the warm-up that belong to no announced slot SSRC. */
  strays = 0;
  sent = 0;
  #socket: udp.Socket<"buffer"> | undefined;
  readonly #packet = Buffer.alloc(packetBytes);
  #sequence = Math.floor(Math.random() * 0x1_0000);
  #timestamp = Math.floor(Math.random() * 0x1_0000_0000);

  constructor(
    readonly index: number,
    readonly ssrc: number,
    /** Audio level sent, in −dBov (0 is loudest, 127 silence). */
    readonly levelDbov: number,
    /** Where this participant's transport listens. */
    readonly remotePort: number,
    readonly window: PacketWindow,
  ) {
    const p = this.#packet;
    p[0] = 0x90; // version 2, no padding, extension bit set, no CSRCs
    p[1] = benchPayloadType;
    p.writeUInt32BE(ssrc >>> 0, 8);
    p.writeUInt16BE(0xbede, 12);
    p.writeUInt16BE(1, 14); // one 32-bit word of extensions
    p[16] = (audioLevelExtensionId << 4) | 0; // id, length − 1 = 0
    p[17] = 0x80 | levelDbov; // voice-activity bit, level
    p[sentPayloadOffset] = opusTocByte;
    p.writeUInt16BE(index, sentPayloadOffset + senderInPayload);
  }

  async open(): Promise<void> {
    this.#socket = await Bun.udpSocket({
      hostname: "127.0.0.1",
      socket: { data: (_socket, data) => this.#receive(data) },
    });
  }

  /** Sends the packet with index `packetIndex` (the sender's count since the start). */
  send(packetIndex: number): void {
    const p = this.#packet;
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + opusFrameTicks) >>> 0;
    p.writeUInt16BE(this.#sequence, 2);
    p.writeUInt32BE(this.#timestamp, 4);
    p.writeUInt32BE(packetIndex >>> 0, sentPayloadOffset + packetIndexInPayload);
    this.#socket!.send(p, this.remotePort, "127.0.0.1");
    this.sent += 1;
  }

  #receive(data: Buffer): void {
    if (data.length < rtpHeaderBytes || data[0]! >> 6 !== 2) return;
    const payloadType = data[1]! & 0x7f;
    // RTCP (sender reports) shares the port (rtcp-mux); RFC 5761 tells them apart by this byte.
    if (payloadType >= 64 && payloadType <= 95) return;
    if (!this.window.warmedUp) return;
    const ssrc = data.readUInt32BE(8);
    let slot = this.slots.get(ssrc);
    if (slot === undefined) {
      if (!this.window.expectedSsrcs.has(ssrc)) {
        this.strays += 1;
        return;
      }
      slot = { inWindow: 0, sequenceBreaks: 0, lastSequence: null, sources: new Set() };
      this.slots.set(ssrc, slot);
    }
    const sequence = data.readUInt16BE(2);
    if (slot.lastSequence !== null && sequence !== ((slot.lastSequence + 1) & 0xffff)) slot.sequenceBreaks += 1;
    slot.lastSequence = sequence;
    // The payload starts after the CSRCs and, when the X bit is set, the extension block (its
    // 4-byte preamble holds its length in 32-bit words).
    const csrcEnd = rtpHeaderBytes + 4 * (data[0]! & 0x0f);
    const hasExtension = (data[0]! & 0x10) !== 0;
    if (data.length < csrcEnd + 4) return;
    const payload = hasExtension ? csrcEnd + 4 + 4 * data.readUInt16BE(csrcEnd + 2) : csrcEnd;
    if (data.length < payload + payloadTagBytes) return;
    const sender = data.readUInt16BE(payload + senderInPayload);
    const packetIndex = data.readUInt32BE(payload + packetIndexInPayload);
    if (packetIndex >= this.window.firstIndex && packetIndex < this.window.endIndex) {
      slot.inWindow += 1;
      slot.sources.add(sender);
    }
  }

  close(): void {
    this.#socket?.close();
  }
}

/** The packet indexes that are measured: [firstIndex, endIndex), after a warm-up. */
export interface PacketWindow {
  warmedUp: boolean;
  firstIndex: number;
  endIndex: number;
  /** Every slot SSRC the forwarding side announced, over all participants. */
  expectedSsrcs: Set<number>;
}

/**
 * Sends `totalPackets` packets per participant at opusPacketsPerSec, each participant offset by
 * an even share of the 20 ms frame (real clients are not in phase). Calls `onIndex` whenever the
 * slowest participant reaches a new packet index, so the caller can open and close its window.
 */
export async function sendAll(participants: Participant[], totalPackets: number, onIndex: (index: number) => void): Promise<void> {
  const intervalMs = 1000 / opusPacketsPerSec;
  const start = performance.now();
  const next = new Array<number>(participants.length).fill(0);
  let lowest = 0;
  while (lowest < totalPackets) {
    const elapsed = performance.now() - start;
    for (const [i, p] of participants.entries()) {
      const phaseMs = (i * intervalMs) / participants.length;
      const due = Math.min(totalPackets, Math.floor((elapsed - phaseMs) / intervalMs) + 1);
      while (next[i]! < due) p.send(next[i]!++);
    }
    const nowLowest = Math.min(...next);
    if (nowLowest !== lowest) {
      lowest = nowLowest;
      onIndex(lowest);
    }
    await Bun.sleep(sendTickMs);
  }
}
