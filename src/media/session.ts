/**
 * One client's session: everything a (user, room) pair has in the media engine. It lives in its
 * room's router on one worker (room-router.ts): the client's WebRtcTransport (ICE-lite, DTLS), the
 * producer of its send m-line (observed by the router's audio-level observer) and one slot
 * consumer per recvonly m-line. Closing the transport closes all of them; the room's other
 * routers drop the producer's pipes when it closes.
 */
import type { types } from "mediasoup";
import { engineCall } from "./engine-call.ts";
import { opusCodec, type RoomRouter } from "./room-router.ts";
import { writeAnswer } from "./sdp/answer.ts";
import type { ParsedOffer } from "./sdp/offer.ts";
import { Slot } from "./slot.ts";
import { setSlotProducer } from "./worker-slot.ts";

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
  /** The room's router the session is placed in. */
  home: RoomRouter;
  /** Called once if the transport closes under the session (its worker died). */
  onEngineLost(session: Session): void;
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
    readonly home: RoomRouter,
    readonly transport: T,
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

  /** Calls `listener` once the transport closes: the session closed, or its worker died. */
  onTransportClose(listener: () => void): void {
    (this.transport as types.Transport).observer.once("close", listener);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.transport.close();
  }

  /**
   * Builds the session in its room's router and returns it with the SDP answer. Any failure
   * closes its transport, so a refused offer leaves nothing behind.
   */
  static async create(args: SessionArgs & { listen: ListenConfig }): Promise<{ session: Session; answer: string }> {
    const { offer, listen } = args;
    const session = await Session.build(args, async (router) => {
      const transport = await engineCall(
        "create transport",
        () =>
          router.createWebRtcTransport({
            listenInfos: [
              { protocol: "udp", ip: listen.ip, announcedAddress: listen.announcedAddress, portRange: { min: listen.portMin, max: listen.portMax } },
            ],
            enableUdp: true,
            enableTcp: false,
          }),
        { discard: (late) => late.close() },
      );
      try {
        await engineCall("connect transport", () => transport.connect({ dtlsParameters: { role: offer.clientDtlsRole, fingerprints: offer.fingerprints } }), {
          fromOffer: true,
        });
      } catch (error) {
        transport.close();
        throw error;
      }
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
   * The session in its room's router, on the client transport `openTransport` creates (and
   * connects) there. create() passes a WebRtcTransport; bench/media.ts passes a PlainTransport so
   * it can drive the same producer, observer and slots with plain RTP. Any failure closes the
   * transport, which leaves nothing behind.
   */
  static async build<T extends ClientTransport>(args: SessionArgs, openTransport: (router: types.Router) => Promise<T>): Promise<Session<T>> {
    const { offer, home } = args;
    const transport = await openTransport(home.router);
    try {
      const session = new Session(args.id, args.user, args.room, home, transport, args.peers);
      if (offer.send !== undefined) await session.#produce(offer.send);
      session.slots.push(...(await Promise.all(offer.slots.map((line) => session.#openSlot(line.mid, line.opus.payloadType, line.opus.parameters)))));
      session.onTransportClose(() => {
        if (!session.#closed) {
          session.#closed = true;
          args.onEngineLost(session);
        }
      });
      return session;
    } catch (error) {
      transport.close();
      throw error;
    }
  }

  async #produce(line: NonNullable<ParsedOffer["send"]>): Promise<void> {
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
    await engineCall("observe producer", () => this.home.observer.addProducer({ producerId: producer.id }));
  }

  /**
   * A slot: a consumer on the client's transport, created from the router's placeholder (consume()
   * needs some producer) and detached at once, which also makes it switchable and sets the payload
   * type it sends with to the client's.
   */
  async #openSlot(mid: string, payloadType: number, parameters: Record<string, string | number>): Promise<Slot> {
    const consumer = await engineCall(
      "create slot consumer",
      () =>
        this.transport.consume({
          producerId: this.home.placeholder.id,
          rtpCapabilities: {
            codecs: [{ kind: "audio", mimeType: "audio/opus", preferredPayloadType: payloadType, clockRate: 48000, channels: 2, parameters, rtcpFeedback: [] }],
            headerExtensions: [],
          },
        }),
      { fromOffer: true },
    );
    await engineCall("detach slot consumer", () => setSlotProducer(consumer, null, payloadType));
    return new Slot(mid, payloadType, consumer);
  }
}
