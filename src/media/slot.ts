/**
 * One receive slot of a session: the client's recvonly m-line `mid`, fed by whichever user the
 * slot chooser puts there. A mediasoup Consumer cannot change its Producer, and a new consumer
 * would bring a new SSRC, so each slot is a fixed pair in the session's router: a relay producer
 * on the DirectTransport (fed by us, from Bun) and its consumer on the client's WebRtcTransport
 * (whose SSRC the answer announced). Packets of the current user are renumbered by an RtpRewriter
 * so the slot stays one continuous stream across changes of user.
 */
import type { types } from "mediasoup";
import { writeRtpHeader } from "./slots/rtp-header.ts";
import { RtpRewriter } from "./slots/rtp-rewriter.ts";

/** Opus: 48 kHz clock, 20 ms frames. */
const opusClockRate = 48_000;
const opusFrameTicks = 960;

export const random32 = (): number => crypto.getRandomValues(new Uint32Array(1))[0]!;

export class Slot {
  /** The user feeding this slot, or null when it is free. */
  user: string | null = null;
  readonly #rewriter = new RtpRewriter({
    clockRate: opusClockRate,
    frameTicks: opusFrameTicks,
    // RFC 3550 §5.1: initial sequence number and timestamp are random.
    initialSequenceNumber: random32() & 0xffff,
    initialTimestamp: random32(),
  });
  #forwarded = 0;

  constructor(
    readonly mid: string,
    /** SSRC and payload type of the relay producer (what we write into each packet). */
    readonly relaySsrc: number,
    readonly payloadType: number,
    readonly relay: types.Producer,
    /** The consumer on the client's transport; its SSRC is the one the client sees. */
    readonly consumer: types.Consumer,
  ) {}

  /** The SSRC the client receives this slot on: the consumer's, stable for the session's life. */
  get ssrc(): number {
    return this.consumer.rtpParameters.encodings![0]!.ssrc!;
  }

  get forwardedPackets(): number {
    return this.#forwarded;
  }

  assign(user: string | null): void {
    if (user === this.user) return;
    this.user = user;
    this.#rewriter.release();
  }

  /**
   * Sends one packet of the slot's current user (`source`: its session id). `packet` is rewritten
   * in place (the caller passes the same buffer to every slot the user feeds, with the numbers it
   * arrived with) and copied by mediasoup before this returns.
   */
  forward(source: number, packet: Buffer, sequenceNumber: number, timestamp: number, marker: boolean, nowMs: number): void {
    const rewriter = this.#rewriter;
    if (!rewriter.rewrite(source, sequenceNumber, timestamp, nowMs) || this.relay.closed) return;
    writeRtpHeader(packet, this.payloadType, marker || rewriter.marker, rewriter.sequenceNumber, rewriter.timestamp, this.relaySsrc);
    this.relay.send(packet);
    this.#forwarded += 1;
  }
}
