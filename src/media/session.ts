/**
 * One client's session: everything a (user, room) pair has in the media engine, in a router of
 * its own. A router per session (rather than per room) lets each client keep the Opus payload
 * type it offered — a mediasoup consumer sends with its router's payload type, and browsers pick
 * different ones (Chrome 111, Firefox 109, werift 96) — and closing the router closes everything
 * below it at once. Media between sessions of a room crosses Bun (see slot.ts), which is what lets
 * slots switch users at all.
 *
 * Inside the router: the client's WebRtcTransport (ICE-lite, DTLS), the producer of its send
 * m-line, a DirectTransport holding a consumer of that producer (its packets come to Bun to be
 * fanned out) and one relay producer per slot, and an audio-level observer on the producer.
 */
import type { types } from "mediasoup";
import { mediaAudioLevelIntervalMs, mediaSpeakingThresholdDbov } from "../core/limits.ts";
import { engineCall } from "./engine-call.ts";
import { writeAnswer } from "./sdp/answer.ts";
import type { ParsedOffer } from "./sdp/offer.ts";
import { random32, Slot } from "./slot.ts";
import type { Worker } from "./workers.ts";

export interface ListenConfig {
  /** Address the UDP sockets bind. */
  ip: string;
  /** Address put in the ICE candidates when it differs from `ip` (NAT, containers). */
  announcedAddress: string | undefined;
  portMin: number;
  portMax: number;
}

/**
 * The transport the client's media crosses: WebRTC (ICE-lite, DTLS, SRTP) for real clients; a
 * PlainTransport (plain RTP) only for bench/media.ts, whose load generator speaks no WebRTC.
 */
export type ClientTransport = types.WebRtcTransport | types.PlainTransport;

/** Everything Session.build needs besides the transport. */
export interface SessionArgs {
  id: number;
  user: string;
  room: string;
  offer: ParsedOffer;
  peers: readonly string[] | null;
  worker: Worker;
  events: SessionEvents;
}

export interface SessionEvents {
  /** A packet the client sent: fan it out to the slots this user feeds. */
  onPacket(session: Session, packet: Buffer): void;
  /** The client's audio level (dBov) over the last interval, or null once it fell silent. */
  onLevel(session: Session, level: number | null): void;
  /** The router is gone from under the session (its worker died). */
  onEngineLost(session: Session): void;
}

function opusCodec(payloadType: number, parameters: Record<string, string | number> = {}) {
  return { mimeType: "audio/opus", payloadType, clockRate: 48000, channels: 2, parameters, rtcpFeedback: [] };
}

/** `T` is the client transport's type: create() makes a WebRtcTransport, bench/media.ts a PlainTransport. */
export class Session<T extends ClientTransport = ClientTransport> {
  /** The users this session hears; null is the whole room. */
  peers: ReadonlySet<string> | null;
  readonly slots: Slot[] = [];
  producer: types.Producer | undefined;
  #closed = false;

  private constructor(
    readonly id: number,
    readonly user: string,
    readonly room: string,
    readonly router: types.Router,
    readonly transport: T,
    readonly direct: types.DirectTransport,
    peers: readonly string[] | null,
  ) {
    this.peers = peers === null ? null : new Set(peers);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** True when this session hears `user` (always false for itself). */
  hears(user: string): boolean {
    return user !== this.user && (this.peers === null || this.peers.has(user));
  }

  /** Slot mid → user, for the slots that have one. */
  slotMap(): Record<string, string> {
    const map: Record<string, string> = {};
    for (const s of this.slots) if (s.user !== null) map[s.mid] = s.user;
    return map;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.router.close();
  }

  /**
   * Builds the session in a router on `worker` and returns it with the SDP answer. Any failure
   * closes the router, so a refused offer leaves nothing behind.
   */
  static async create(args: SessionArgs & { listen: ListenConfig }): Promise<{ session: Session; answer: string }> {
    const { offer, listen } = args;
    const session = await Session.build(args, async (router) => {
      const transport = await engineCall("create transport", () =>
        router.createWebRtcTransport({
          listenInfos: [{ protocol: "udp", ip: listen.ip, announcedAddress: listen.announcedAddress, portRange: { min: listen.portMin, max: listen.portMax } }],
          enableUdp: true,
          enableTcp: false,
        }),
      );
      await engineCall("connect transport", () => transport.connect({ dtlsParameters: { role: offer.clientDtlsRole, fingerprints: offer.fingerprints } }), {
        fromOffer: true,
      });
      return transport;
    });
    try {
      const { transport } = session;
      const answer = writeAnswer({
        offer,
        sessionId: args.id,
        transport: {
          ice: transport.iceParameters,
          candidates: transport.iceCandidates.map((c) => ({
            foundation: c.foundation,
            priority: c.priority,
            address: c.address,
            protocol: c.protocol,
            port: c.port,
          })),
          fingerprints: transport.dtlsParameters.fingerprints,
        },
        slotStreams: new Map(session.slots.map((s) => [s.mid, { ssrc: s.ssrc, cname: s.consumer.rtpParameters.rtcp?.cname ?? `slot-${s.mid}` }])),
      });
      return { session, answer };
    } catch (error) {
      session.close();
      throw error;
    }
  }

  /**
   * The session's router and everything in it, on the client transport `openTransport` creates
   * (and connects) in that router. create() passes a WebRtcTransport; bench/media.ts passes a
   * PlainTransport so it can drive the same producer, tap, observer and slots with plain RTP.
   * Any failure closes the router.
   */
  static async build<T extends ClientTransport>(args: SessionArgs, openTransport: (router: types.Router) => Promise<T>): Promise<Session<T>> {
    const { offer, worker } = args;
    // The router's Opus payload type is the one the client receives on (see the module comment).
    const routerPayloadType = offer.slots[0]?.opus.payloadType ?? offer.send?.opus.payloadType ?? 100;
    const router = await engineCall(
      "create router",
      () =>
        worker.createRouter({
          mediaCodecs: [{ kind: "audio", mimeType: "audio/opus", clockRate: 48000, channels: 2, preferredPayloadType: routerPayloadType }],
        }),
      { fromOffer: true, discard: (late) => late.close() },
    );
    try {
      const transport = await openTransport(router);
      const direct = await engineCall("create direct transport", () => router.createDirectTransport());
      const session = new Session(args.id, args.user, args.room, router, transport, direct, args.peers);
      if (offer.send !== undefined) await session.#produce(offer.send, args.events);
      session.slots.push(...(await Promise.all(offer.slots.map((line) => session.#openSlot(line.mid, routerPayloadType, line.opus.parameters)))));
      router.observer.once("close", () => {
        if (!session.#closed) {
          session.#closed = true;
          args.events.onEngineLost(session);
        }
      });
      return session;
    } catch (error) {
      router.close();
      throw error;
    }
  }

  async #produce(line: NonNullable<ParsedOffer["send"]>, events: SessionEvents): Promise<void> {
    const producer = await engineCall(
      "create producer",
      () =>
        this.transport.produce({
          kind: "audio",
          rtpParameters: {
            mid: line.mid,
            codecs: [opusCodec(line.opus.payloadType, line.opus.parameters)],
            headerExtensions: line.extensions as types.RtpHeaderExtensionParameters[],
            encodings: line.ssrc === undefined ? [{}] : [{ ssrc: line.ssrc }],
            rtcp: { cname: line.cname ?? `${this.user}`, reducedSize: true },
          },
        }),
      { fromOffer: true },
    );
    this.producer = producer;
    const tap = await engineCall("tap producer", () => this.direct.consume({ producerId: producer.id, rtpCapabilities: this.router.rtpCapabilities }));
    tap.on("rtp", (packet) => events.onPacket(this, packet));
    const observer = await engineCall("create audio-level observer", () =>
      this.router.createAudioLevelObserver({ maxEntries: 1, threshold: mediaSpeakingThresholdDbov, interval: mediaAudioLevelIntervalMs }),
    );
    await engineCall("observe producer", () => observer.addProducer({ producerId: producer.id }));
    observer.on("volumes", (volumes) => events.onLevel(this, volumes[0]?.volume ?? null));
    observer.on("silence", () => events.onLevel(this, null));
  }

  async #openSlot(mid: string, payloadType: number, parameters: Record<string, string | number>): Promise<Slot> {
    const relaySsrc = random32();
    const relay = await engineCall(
      "create slot relay",
      () =>
        this.direct.produce({
          kind: "audio",
          rtpParameters: { codecs: [opusCodec(payloadType, parameters)], headerExtensions: [], encodings: [{ ssrc: relaySsrc }] },
        }),
      { fromOffer: true },
    );
    const consumer = await engineCall(
      "create slot consumer",
      () =>
        this.transport.consume({
          producerId: relay.id,
          rtpCapabilities: {
            codecs: [{ kind: "audio", mimeType: "audio/opus", preferredPayloadType: payloadType, clockRate: 48000, channels: 2, parameters, rtcpFeedback: [] }],
            headerExtensions: [],
          },
        }),
      { fromOffer: true },
    );
    return new Slot(mid, relaySsrc, payloadType, relay, consumer);
  }
}
