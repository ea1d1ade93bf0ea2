/**
 * A room's router on one worker: every session of the room placed on that worker has its
 * transport here, and every slot is a consumer here that the worker switches between the
 * producers present in this router (worker-slot.ts). A room's senders on other workers are piped
 * in (room.ts), so the producers present here are the local ones and the piped-in ones.
 *
 * Besides the sessions' transports the router holds:
 * - a placeholder producer on a DirectTransport that never sends: mediasoup's consume() needs a
 *   producer to create a consumer from, and a slot consumer is created from it and detached at
 *   once. No packet ever crosses the DirectTransport;
 * - one audio-level observer for the router's local producers (a sender's level is read where it
 *   arrives; piped-in producers are observed in their own router).
 */
import type { types } from "mediasoup";
import { mediaAudioLevelIntervalMs, mediaSpeakingThresholdDbov } from "../core/limits.ts";
import { engineCall } from "./engine-call.ts";
import type { Worker } from "./workers.ts";

/**
 * The Opus payload type inside every room router. Producers map their client's payload type to
 * it and each slot consumer sends with its own client's (worker-slot.ts), so clients that chose
 * different numbers share a router, and pipes between routers need no remapping.
 */
export const routerOpusPayloadType = 100;

/**
 * The observer reports up to this many speakers per interval. Users missing from a report are
 * taken as silent, so it must cover every local sender: mediasoup's limit (a 16-bit count).
 */
const levelEntriesMax = 0xffff;

export function opusCodec(payloadType: number, parameters: Record<string, string | number> = {}): types.RtpCodecParameters {
  return { mimeType: "audio/opus", payloadType, clockRate: 48000, channels: 2, parameters, rtcpFeedback: [] };
}

const random32 = (): number => crypto.getRandomValues(new Uint32Array(1))[0]!;

export class RoomRouter {
  /** Producers a slot here can be switched to: this router's senders and the piped-in ones. */
  readonly producerIds = new Set<string>();

  private constructor(
    readonly worker: Worker,
    readonly router: types.Router,
    readonly placeholder: types.Producer,
    readonly observer: types.AudioLevelObserver,
  ) {}

  get closed(): boolean {
    return this.router.closed;
  }

  /** A router for a room on `worker`, with its placeholder and observer. Any failure closes it. */
  static async open(worker: Worker): Promise<RoomRouter> {
    const router = await engineCall(
      "create router",
      () =>
        worker.createRouter({
          mediaCodecs: [{ kind: "audio", mimeType: "audio/opus", clockRate: 48000, channels: 2, preferredPayloadType: routerOpusPayloadType }],
        }),
      { discard: (late) => late.close() },
    );
    try {
      const direct = await engineCall("create direct transport", () => router.createDirectTransport());
      const placeholder = await engineCall("create placeholder producer", () =>
        direct.produce({
          kind: "audio",
          rtpParameters: { codecs: [opusCodec(routerOpusPayloadType)], headerExtensions: [], encodings: [{ ssrc: random32() }] },
        }),
      );
      const observer = await engineCall("create audio-level observer", () =>
        router.createAudioLevelObserver({ maxEntries: levelEntriesMax, threshold: mediaSpeakingThresholdDbov, interval: mediaAudioLevelIntervalMs }),
      );
      return new RoomRouter(worker, router, placeholder, observer);
    } catch (error) {
      router.close();
      throw error;
    }
  }

  close(): void {
    this.router.close();
  }
}
